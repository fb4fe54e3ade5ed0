package eval

import (
	"context"
	"fmt"
	"slices"

	"uhno/internal/data"
	"uhno/internal/model"
	"uhno/internal/tensor"
)

// Source is the test data a rollout runs on.
type Source struct {
	// Plan is the training run's sampling (fields, history H) on the data
	// file; the rollout reads whole trajectories through its dataset.
	Plan *data.Plan
	// Trajs are the test trajectories of the training run's split.
	Trajs []int
	// Stats normalises the model's inputs and de-normalises its outputs
	// exactly as in training (nil: the model works in physical units).
	// Metrics are computed in physical units.
	Stats *data.Stats
	// Grid is the layout of one predicted frame (Channels = the target
	// fields) with the task's grid spacing and boundary type, for the
	// metrics.
	Grid Grid
}

// RolloutOptions control Rollout.
type RolloutOptions struct {
	// Steps is the rollout length in steps of the training step size (25
	// in 1D, 10 in 2D, 20 in 3D by the paper's protocol); static data
	// (Darcy) takes a single prediction and ignores it.
	Steps int
	// Batch is the number of trajectories advanced together.
	Batch int
	// Rule and Lags are the crash rule and structure-function lags
	// (DefaultCrashRule, DefaultLags when zero).
	Rule CrashRule
	Lags []int
	// Progress, when set, is called after each batch with the number of
	// trajectories done and the total.
	Progress func(done, total int)
}

// Sample is one test trajectory kept whole for the figures: the truth and
// the prediction at every step (physical units, Grid layout) and the SPAR
// routing masks of the last step's prediction per stage (U-HNO only).
type Sample struct {
	Traj        int
	Truth, Pred [][]float32
	Stages      []string
	Masks       [][]float32
	MaskShapes  [][]int
}

// Outcome is what a rollout produced: the metrics of every test
// trajectory, in the order of Source.Trajs, and the first trajectory kept
// whole.
type Outcome struct {
	Steps   int
	Static  bool
	Trajs   []int
	Metrics []*TrajectoryMetrics
	Sample  *Sample
}

// RolloutSpan is the number of leading frames a rollout of steps steps
// from H history frames reads: H + steps.
func RolloutSpan(history, steps int) int { return history + steps }

// CheckRollout reports whether the plan's data are long enough for a
// rollout of steps steps, with an error naming both sides.
func CheckRollout(p *data.Plan, steps int) error {
	if p.Static() {
		return nil
	}
	if steps < 1 {
		return fmt.Errorf("eval: a rollout of %d steps, want >= 1", steps)
	}
	frames, h := p.Dataset().Frames(), p.History()
	if need := RolloutSpan(h, steps); need > frames {
		return fmt.Errorf("eval: a rollout of %d steps from %d history frames needs %d frames per trajectory; %s has %d (at most %d steps)",
			steps, h, need, p.Dataset().Path(), frames, frames-h)
	}
	return nil
}

// Rollout evaluates model m autoregressively on the test trajectories of
// src (paper Sec. 4, "Evaluation"): the first H frames of each trajectory
// go in (normalised as in training), the prediction of the next frame is
// fed back in place of the oldest input frame, and every predicted frame
// is scored against the truth in physical units with TrajectoryMetrics.
// Static data (Darcy) get a single prediction a -> u. Trajectories are
// advanced in batches with gradient recording off, streaming: only the
// current batch's frames are held, apart from the kept Sample.
func Rollout(ctx context.Context, m model.Model, b tensor.Backend, src Source, opt RolloutOptions) (*Outcome, error) {
	p := src.Plan
	static := p.Static()
	steps := opt.Steps
	if static {
		steps = 1
	}
	if err := CheckRollout(p, steps); err != nil {
		return nil, err
	}
	if opt.Batch < 1 {
		return nil, fmt.Errorf("eval: rollout batch %d, want >= 1", opt.Batch)
	}
	if len(src.Trajs) == 0 {
		return nil, fmt.Errorf("eval: %s: no test trajectories to roll out", p.Dataset().Path())
	}
	if err := src.Grid.Validate(); err != nil {
		return nil, err
	}
	inCh, outCh := p.InputChannels(), p.TargetChannels()
	h := p.History()
	nIn := (len(inCh) - fixedChannels(inCh)) / h
	if !static && !slices.Equal(inCh[:nIn], outCh) {
		return nil, fmt.Errorf("eval: an autoregressive rollout needs the predicted fields to be the input fields; the model maps %v to %v", inCh[:nIn], outCh)
	}
	if src.Grid.Channels != len(outCh) || src.Grid.Len() != len(outCh)*p.Dataset().Points() {
		return nil, fmt.Errorf("eval: metric grid of %d channels on %v does not fit the data's %d target fields on %v",
			src.Grid.Channels, src.Grid.Shape, len(outCh), p.Dataset().Grid())
	}
	rule := opt.Rule
	if rule == (CrashRule{}) {
		rule = DefaultCrashRule
	}

	pts := p.Dataset().Points()
	inLen, outLen := len(inCh)*pts, len(outCh)*pts
	span := 1
	if !static {
		span = RolloutSpan(h, steps)
	}
	resident := p.Resident()
	blockLen := p.BlockLen(span)
	// u0 is the last input frame of the target fields (the state the
	// rollout starts from): resident indices of the target fields.
	outIdx := make([]int, len(outCh))
	for j, f := range outCh {
		outIdx[j] = slices.Index(resident, f)
	}

	out := &Outcome{Steps: steps, Static: static, Trajs: slices.Clone(src.Trajs)}
	st := NewStepper(m, b, inCh, outCh, p.Dataset().Grid(), src.Stats)
	defer st.Close()

	for lo := 0; lo < len(src.Trajs); lo += opt.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		group := src.Trajs[lo:min(lo+opt.Batch, len(src.Trajs))]
		nb := len(group)
		blocks := make([][]float32, nb)
		x := make([]float32, nb*inLen)
		mets := make([]*TrajectoryMetrics, nb)
		for k, tr := range group {
			blocks[k] = make([]float32, blockLen)
			if err := p.ReadBlock(blocks[k], tr, 0, span); err != nil {
				return nil, err
			}
			tgt := make([]float32, outLen)
			p.PairFrom(blocks[k], 0, x[k*inLen:(k+1)*inLen], tgt)
			var u0 []float32
			if !static {
				u0 = frameOf(blocks[k], h-1, outIdx, len(resident), pts)
			}
			mets[k] = NewTrajectoryMetrics(src.Grid, u0, steps, rule, opt.Lags)
		}
		keep := lo == 0
		if keep {
			out.Sample = &Sample{Traj: group[0]}
		}
		truth := make([]float32, outLen)
		scratchIn := make([]float32, inLen)
		err := st.Run(ctx, x, nb, steps, func(t int, phys []float32, aux model.Aux) error {
			for k := range group {
				p.PairFrom(blocks[k], t-1, scratchIn, truth)
				pk := phys[k*outLen : (k+1)*outLen]
				mets[k].Add(t, pk, truth)
				if keep && k == 0 {
					out.Sample.Truth = append(out.Sample.Truth, slices.Clone(truth))
					out.Sample.Pred = append(out.Sample.Pred, slices.Clone(pk))
				}
			}
			if keep && t == steps {
				keepMasks(out.Sample, b, aux)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out.Metrics = append(out.Metrics, mets...)
		if opt.Progress != nil {
			opt.Progress(lo+nb, len(src.Trajs))
		}
	}
	return out, nil
}

// Stepper advances batches of model inputs autoregressively: the rollout
// of Rollout, shared with uhno predict (package predict) so that a
// prediction from a trajectory's first frames is the evaluation's rollout
// bit for bit.
type Stepper struct {
	m            model.Model
	b            tensor.Backend
	tp           *tensor.Tape
	inCh, outCh  []string
	grid         []int
	stats        *data.Stats
	inLen, outLn int
}

// NewStepper prepares the rollout of m on backend b for inputs of the
// channels inCh (H frames of the input fields, frame-major) predicting
// outCh on grid, normalised with stats (nil: the model works in physical
// units). Close releases its tape.
func NewStepper(m model.Model, b tensor.Backend, inCh, outCh []string, grid []int, stats *data.Stats) *Stepper {
	pts := 1
	for _, g := range grid {
		pts *= g
	}
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	return &Stepper{m: m, b: b, tp: tp, inCh: slices.Clone(inCh), outCh: slices.Clone(outCh), grid: slices.Clone(grid),
		stats: stats, inLen: len(inCh) * pts, outLn: len(outCh) * pts}
}

// Close releases the stepper's tape.
func (s *Stepper) Close() { s.tp.Release() }

// Run rolls nb samples out steps steps. x holds their input windows in
// physical units, [nb, len(inCh), grid...]; Run normalises it in place and
// then shifts it as the rollout goes: after step t the oldest frame is
// dropped and the (normalised) prediction appended, so step t+1 sees the
// last H frames; constant and coordinate channels after the frames stay. each is called after every step t = 1..steps with the
// prediction de-normalised to physical units, [nb, len(outCh), grid...],
// valid during the call, and the model's diagnostics of that step; an
// error from each stops the rollout. A rollout of more than one step needs
// the predicted fields to be the input fields (outCh = the last frame's
// channels of inCh); that is checked by the callers.
func (s *Stepper) Run(ctx context.Context, x []float32, nb, steps int, each func(t int, phys []float32, aux model.Aux) error) error {
	if len(x) != nb*s.inLen {
		panic(fmt.Sprintf("eval: Stepper.Run: %d input values for %d samples of %d", len(x), nb, s.inLen))
	}
	pts := s.inLen / len(s.inCh)
	if s.stats != nil {
		s.stats.Normalize(x, s.inCh, pts)
	}
	inLen, outLen := s.inLen, s.outLn
	// The window is the history frames; constant and coordinate channels
	// after it stay as they are.
	win := inLen - fixedChannels(s.inCh)*pts
	for t := 1; t <= steps; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.tp.Reset()
		xt := s.tp.FromHost(x, append([]int{nb, len(s.inCh)}, s.grid...)...)
		pred, aux := s.m.Forward(s.tp, xt)
		y := tensor.ToHost(s.b, pred)
		phys := slices.Clone(y)
		if s.stats != nil {
			s.stats.Denormalize(phys, s.outCh, pts)
		}
		if err := each(t, phys, aux); err != nil {
			return err
		}
		if t < steps {
			shiftWindow(x, y, nb, inLen, outLen, win)
		}
	}
	return nil
}

// shiftWindow advances nb input windows of inLen values by one step: in
// each, the first win values (the history frames) drop their oldest frame
// and take y's prediction (outLen values a sample) as the newest; the
// values after win (constant and coordinate channels) stay.
func shiftWindow(x, y []float32, nb, inLen, outLen, win int) {
	for k := range nb {
		xk := x[k*inLen : k*inLen+win]
		copy(xk, xk[outLen:])
		copy(xk[win-outLen:], y[k*outLen:(k+1)*outLen])
	}
}

// fixedChannels counts the constant and coordinate channels at the end of
// the input channels (data.IsFixed): the same at every rollout step.
func fixedChannels(inCh []string) int {
	n := 0
	for n < len(inCh) && data.IsFixed(inCh[len(inCh)-1-n]) {
		n++
	}
	return n
}

// frameOf copies frame f of the given resident fields out of a block laid
// out [frames, fields, points].
func frameOf(block []float32, f int, idx []int, fields, pts int) []float32 {
	u := make([]float32, len(idx)*pts)
	for j, i := range idx {
		o := (f*fields + i) * pts
		copy(u[j*pts:(j+1)*pts], block[o:o+pts])
	}
	return u
}

// keepMasks copies the first sample's routing mask of every SPAR stage.
func keepMasks(s *Sample, b tensor.Backend, aux model.Aux) {
	for i, mk := range aux.Masks {
		all := tensor.ToHost(b, mk)
		n := mk.SpatialSize()
		s.Stages = append(s.Stages, aux.Stages[i])
		s.Masks = append(s.Masks, slices.Clone(all[:n]))
		s.MaskShapes = append(s.MaskShapes, slices.Clone(mk.Shape[2:]))
	}
}
