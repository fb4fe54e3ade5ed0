package predict

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"uhno/internal/data"
	"uhno/internal/data/h5"
	"uhno/internal/eval"
	"uhno/internal/model"
	"uhno/internal/tensor"
)

// Model is a trained operator and what its run trained it with.
type Model struct {
	// Net is the network with its weights loaded, Backend where it runs.
	Net     model.Model
	Backend tensor.Backend
	// Fields are the fields the model reads and predicts, in channel
	// order, as package data names them ("tensor"; the five 3D CFD
	// fields). An autoregressive model predicts what it reads.
	Fields []string
	// History is H, the input frames per sample (data.history).
	History int
	// Constants are the constant inputs (data.constants), one channel
	// each after the H frames, read from the input file for each
	// trajectory; Coordinates appends one channel per grid axis after
	// them (data.coordinates). Both are the same at every step, as
	// training had them.
	Constants   []string
	Coordinates bool
	// Grid is the training grid; Domain the task's box per axis (for
	// coordinates when the input has none).
	Grid   []int
	Domain []float64
	// Stats normalise the inputs and de-normalise the predictions as in
	// training.
	Stats *data.Stats
	// Dt is the time between frames (0: unknown; the output's times then
	// come from the input's t-coordinate, or count frames).
	Dt float64
	// About is recorded in the HDF5 output's "uhno_model" attribute (the
	// checkpoint and its model), so a file says what made it.
	About string
}

// Options are the inputs of Run.
type Options struct {
	// Input is the file of initial conditions: .npy, anything else HDF5.
	Input string
	// Dataset names the HDF5 dataset(s) holding the fields, one per field,
	// comma-separated ("": the fields' own names, "tensor" for one field).
	Dataset string
	// Output is the file written: .npy, .h5 or .hdf5 (HDF5).
	Output string
	// Steps is the rollout length, Batch the trajectories rolled out
	// together.
	Steps, Batch int
	// Select, when set, picks the trajectories predicted, in that order,
	// given the number the input holds (default: all).
	Select func(n int) ([]int, error)
	// Reference, when set, is a file (possibly Input itself) whose frames
	// H..H+Steps-1 of each trajectory are the truth the prediction is
	// scored against (relL2 per step), read like Input.
	Reference string
	// Resamples and Seed are the reference scores' bootstrap
	// (eval.DefaultResamples and 0 when zero).
	Resamples int
	Seed      uint64
	// Progress, when set, is called after each batch with the trajectories
	// done and the total.
	Progress func(done, total int)
}

// Result says what Run wrote.
type Result struct {
	Output       string
	Trajectories int
	Steps        int
	Grid         []int
	// Score is the reference comparison (nil without Options.Reference).
	Score *Score
}

// Score is the relative L2 error of the prediction against the reference
// frames: mean over trajectories per step, and of the per-trajectory mean
// over steps, with percentile bootstrap intervals over trajectories.
type Score struct {
	PerStep []eval.Interval
	Mean    eval.Interval
}

// isNPY reports whether path is read or written as .npy.
func isNPY(path string) bool { return strings.EqualFold(filepath.Ext(path), ".npy") }

// expect describes the input a model takes, for error messages.
func (m *Model) expect(npy bool) string {
	ax := []string{"n"}
	if !npy || m.History > 1 {
		ax = append(ax, fmt.Sprintf("frames >= %d", m.History))
	} else {
		ax = append(ax, "(frames)")
	}
	for _, g := range m.Grid {
		ax = append(ax, fmt.Sprint(g))
	}
	if npy && len(m.Fields) > 1 {
		ax = append(ax, fmt.Sprint(len(m.Fields)))
	}
	return fmt.Sprintf("[%s] (%dD, %d field(s) %s, history %d; another grid of %d axes where the model takes it)",
		strings.Join(ax, ", "), len(m.Grid), len(m.Fields), strings.Join(m.Fields, ", "), m.History, len(m.Grid))
}

// open opens an input (or reference) file and checks it against the model.
func (m *Model) open(path, dataset string, minFrames int) (source, error) {
	var src source
	if isNPY(path) {
		if dataset != "" {
			return nil, fmt.Errorf("predict: %s: --dataset applies to HDF5 input, not .npy", path)
		}
		s, err := openNPY(path, len(m.Grid), len(m.Fields), m.expect(true))
		if err != nil {
			return nil, err
		}
		src = s
	} else {
		s, err := openH5(path, m.Fields, dataset)
		if err != nil {
			return nil, err
		}
		src = s
	}
	fail := func(format string, a ...any) (source, error) {
		src.Close()
		return nil, fmt.Errorf("predict: %s: "+format, append([]any{src.Where()}, a...)...)
	}
	grid := src.Grid()
	if len(grid) != len(m.Grid) {
		return fail("shape %v has %d spatial axes, the run expects %s", src.Shape(), len(grid), m.expect(isNPY(path)))
	}
	if src.Frames() < minFrames {
		return fail("shape %v holds %d frame(s) per trajectory, need %d (history %d%s): the run expects %s", src.Shape(), src.Frames(), minFrames,
			m.History, map[bool]string{true: "", false: " plus the steps scored"}[minFrames == m.History], m.expect(isNPY(path)))
	}
	if err := m.Net.CheckGrid(grid); err != nil {
		return fail("grid %v (shape %v) does not fit the model, trained on %v: %s", grid, src.Shape(), m.Grid, strings.TrimPrefix(err.Error(), "model: "))
	}
	return src, nil
}

// sink is the output being written.
type sink interface {
	Write(i int, traj []float32) error
	Commit() error
	Discard()
}

// h5Sink writes PDEBench's layout through h5.Writer.
type h5Sink struct {
	w      *h5.Writer
	fields int
	pts    int
}

func (s *h5Sink) Write(i int, traj []float32) error {
	frames := len(traj) / (s.fields * s.pts)
	per := make([][]float32, s.fields)
	for c := range per {
		per[c] = make([]float32, frames*s.pts)
		for f := range frames {
			copy(per[c][f*s.pts:(f+1)*s.pts], traj[(f*s.fields+c)*s.pts:(f*s.fields+c+1)*s.pts])
		}
	}
	if err := s.w.Write(i, per); err != nil {
		return fmt.Errorf("predict: %s", strings.TrimPrefix(err.Error(), "h5: "))
	}
	return nil
}

func (s *h5Sink) Commit() error {
	if err := s.w.Commit(); err != nil {
		return fmt.Errorf("predict: %s", strings.TrimPrefix(err.Error(), "h5: "))
	}
	return nil
}

func (s *h5Sink) Discard() { s.w.Discard() }

// coords are the output's coordinates: the input's spatial ones when they
// fit its grid, else j L/N on the domain; the times of frame H-1 onwards.
func (m *Model) coords(src source, grid []int, steps int) map[string][]float32 {
	out := map[string][]float32{}
	for a, n := range grid {
		name := string("xyz"[a]) + "-coordinate"
		if c := src.Coord(name); len(c) == n {
			out[name] = c
			continue
		}
		l := 1.0
		if a < len(m.Domain) && m.Domain[a] > 0 {
			l = m.Domain[a]
		}
		c := make([]float32, n)
		for j := range c {
			c[j] = float32(float64(j) * l / float64(n))
		}
		out[name] = c
	}
	h := m.History
	tin := src.Coord("t-coordinate")
	dt := m.Dt
	if dt <= 0 && len(tin) >= 2 {
		dt = float64(tin[1] - tin[0])
	}
	if dt <= 0 {
		dt = 1
	}
	t0 := float64(h-1) * dt
	if len(tin) >= h {
		t0 = float64(tin[h-1])
	}
	t := make([]float32, steps+1)
	for k := range t {
		t[k] = float32(t0 + float64(k)*dt)
	}
	out["t-coordinate"] = t
	return out
}

// Run predicts opt.Steps steps from the first History frames of each
// trajectory of opt.Input and writes the trajectories to opt.Output (see
// the package documentation). It returns ctx's error when cancelled,
// leaving no output.
func Run(ctx context.Context, m Model, opt Options) (*Result, error) {
	if opt.Steps < 1 || opt.Batch < 1 {
		return nil, fmt.Errorf("predict: %d steps in batches of %d, want both >= 1", opt.Steps, opt.Batch)
	}
	if m.History < 1 {
		m.History = 1
	}
	if err := checkOutput(opt); err != nil {
		return nil, err
	}
	src, err := m.open(opt.Input, opt.Dataset, m.History)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	grid := src.Grid()
	trajs, err := selectTrajectories(src, opt.Select)
	if err != nil {
		return nil, err
	}
	ref, err := m.openReference(opt, src)
	if err != nil {
		return nil, err
	}
	if ref != nil {
		defer ref.Close()
	}

	c, h, steps := len(m.Fields), m.History, opt.Steps
	pts := 1
	for _, g := range grid {
		pts *= g
	}
	frameLen := c * pts
	out, err := m.createSink(opt, src, grid, len(trajs), steps)
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			out.Discard()
		}
	}()

	inCh := m.inputChannels(grid)
	inLen := len(inCh) * pts
	st := eval.NewStepper(m.Net, m.Backend, inCh, m.Fields, grid, m.Stats)
	defer st.Close()
	var rel [][]float64 // [step][trajectory]
	if ref != nil {
		rel = make([][]float64, steps)
	}
	for lo := 0; lo < len(trajs); lo += opt.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		group := trajs[lo:min(lo+opt.Batch, len(trajs))]
		nb := len(group)
		x := make([]float32, nb*inLen)
		outs := make([][]float32, nb)
		var truth [][]float32
		if ref != nil {
			truth = make([][]float32, nb)
		}
		for k, i := range group {
			xk := x[k*inLen : (k+1)*inLen]
			if err := src.Read(xk[:h*frameLen], i, 0, h); err != nil {
				return nil, err
			}
			if err := m.fixedInputs(xk[h*frameLen:], src, i, grid, pts); err != nil {
				return nil, err
			}
			outs[k] = make([]float32, (steps+1)*frameLen)
			copy(outs[k], xk[(h-1)*frameLen:h*frameLen])
			if ref != nil {
				truth[k] = make([]float32, steps*frameLen)
				if err := ref.Read(truth[k], i, h, steps); err != nil {
					return nil, err
				}
			}
		}
		err := st.Run(ctx, x, nb, steps, func(t int, phys []float32, _ model.Aux) error {
			for k := range nb {
				p := phys[k*frameLen : (k+1)*frameLen]
				copy(outs[k][t*frameLen:], p)
				if ref != nil {
					rel[t-1] = append(rel[t-1], eval.RelL2(p, truth[k][(t-1)*frameLen:t*frameLen]))
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for k := range group {
			if err := out.Write(lo+k, outs[k]); err != nil {
				return nil, err
			}
		}
		if opt.Progress != nil {
			opt.Progress(lo+nb, len(trajs))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := out.Commit(); err != nil {
		return nil, err
	}
	done = true
	res := &Result{Output: opt.Output, Trajectories: len(trajs), Steps: steps, Grid: grid}
	if ref != nil {
		res.Score = score(rel, opt.Resamples, opt.Seed)
	}
	return res, nil
}

// inputChannels are the model's input channels, as training laid them
// out: the fields of each of the H history frames, then the constant
// inputs, then one coordinate channel per grid axis when the run has them.
func (m Model) inputChannels(grid []int) (inCh []string) {
	for range m.History {
		inCh = append(inCh, m.Fields...)
	}
	for _, c := range m.Constants {
		inCh = append(inCh, data.ConstantChannel(c))
	}
	if m.Coordinates {
		for a := range grid {
			inCh = append(inCh, data.CoordinateChannel(a))
		}
	}
	return inCh
}

// fixedInputs fills dst, the input channels after the history frames, for
// trajectory i of src: its constant inputs, then the coordinates.
func (m Model) fixedInputs(dst []float32, src source, i int, grid []int, pts int) error {
	for j, c := range m.Constants {
		if err := src.Constant(dst[j*pts:(j+1)*pts], c, i); err != nil {
			return err
		}
	}
	if m.Coordinates {
		for a := range grid {
			at := (len(m.Constants) + a) * pts
			data.FillCoordinate(dst[at:at+pts], grid, a)
		}
	}
	return nil
}

// checkOutput refuses a missing output file or one that is an input.
func checkOutput(opt Options) error {
	if opt.Output == "" {
		return fmt.Errorf("predict: no output file")
	}
	if a, err1 := filepath.Abs(opt.Output); err1 == nil {
		for _, in := range []string{opt.Input, opt.Reference} {
			if b, err2 := filepath.Abs(in); err2 == nil && in != "" && a == b {
				return fmt.Errorf("predict: the output %s is an input file", opt.Output)
			}
		}
	}
	return nil
}

// openReference opens opt.Reference, the true trajectories the prediction
// is scored against (nil without one): the input's grid, at least as many
// trajectories, frames for the history and every step.
func (m Model) openReference(opt Options, src source) (source, error) {
	if opt.Reference == "" {
		return nil, nil
	}
	ref, err := m.open(opt.Reference, opt.Dataset, m.History+opt.Steps)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(ref.Grid(), src.Grid()) || ref.Len() < src.Len() {
		ref.Close()
		return nil, fmt.Errorf("predict: reference %s has %d trajectories on grid %v, the input %s %d on %v",
			ref.Where(), ref.Len(), ref.Grid(), src.Where(), src.Len(), src.Grid())
	}
	return ref, nil
}

// selectTrajectories are the trajectories of src to predict: opt.Select's
// choice (nil: all), each checked to be in the file.
func selectTrajectories(src source, sel func(int) ([]int, error)) ([]int, error) {
	var trajs []int
	if sel != nil {
		var err error
		if trajs, err = sel(src.Len()); err != nil {
			return nil, fmt.Errorf("predict: %s: %w", src.Where(), err)
		}
	} else {
		trajs = make([]int, src.Len())
		for i := range trajs {
			trajs[i] = i
		}
	}
	for _, i := range trajs {
		if i < 0 || i >= src.Len() {
			return nil, fmt.Errorf("predict: %s: trajectory %d requested, the file holds %d", src.Where(), i, src.Len())
		}
	}
	if len(trajs) == 0 {
		return nil, fmt.Errorf("predict: %s: no trajectories to predict", src.Where())
	}
	return trajs, nil
}

// createSink opens the output of n trajectories of steps steps on grid:
// a .npy array or an HDF5 file in PDEBench's layout, with the input, its
// checksum and the model in its attributes.
func (m Model) createSink(opt Options, src source, grid []int, n, steps int) (sink, error) {
	c := len(m.Fields)
	if isNPY(opt.Output) {
		w, err := createNPY(opt.Output, n, steps+1, c, grid)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	pts := 1
	for _, g := range grid {
		pts *= g
	}
	spec := h5.Spec{Datasets: m.Fields, Coords: m.coords(src, grid, steps),
		Attrs: map[string]any{"uhno_input": opt.Input, "uhno_history": m.History}}
	if m.About != "" {
		spec.Attrs["uhno_model"] = m.About
	}
	if st, err := data.StampFile(opt.Input); err == nil {
		spec.Attrs["uhno_input_sha256"] = st.SHA256
	}
	for range m.Fields {
		spec.Shapes = append(spec.Shapes, append([]int{steps + 1}, grid...))
	}
	w, err := h5.Create(opt.Output, spec, n)
	if err != nil {
		return nil, fmt.Errorf("predict: %s", strings.TrimPrefix(err.Error(), "h5: "))
	}
	return &h5Sink{w: w, fields: c, pts: pts}, nil
}

// score bootstraps the relL2 values, [step][trajectory].
func score(rel [][]float64, resamples int, seed uint64) *Score {
	if resamples < 1 {
		resamples = eval.DefaultResamples
	}
	s := &Score{}
	n := len(rel[0])
	mean := make([]float64, n)
	for _, v := range rel {
		s.PerStep = append(s.PerStep, eval.Bootstrap(v, resamples, eval.DefaultLevel, seed))
		for j, x := range v {
			mean[j] += x / float64(len(rel))
		}
	}
	s.Mean = eval.Bootstrap(mean, resamples, eval.DefaultLevel, seed)
	return s
}
