package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"uhno/internal/config"
	"uhno/internal/data"
	"uhno/internal/datagen"
	"uhno/internal/dynamics"
	"uhno/internal/eval"
	"uhno/internal/eval/figure"
	"uhno/internal/progress"
	"uhno/internal/runlock"
	"uhno/internal/train"
)

// evalOptions are the inputs of `uhno eval`.
type evalOptions struct {
	Out, Err    io.Writer
	Task        string
	Checkpoints []string
	Rollout     int // steps (0: the task's data.rollout)
	HorizonMult int
	Dir         string
	DataDir     string
	Threads     int
	Batch       int
	Limit       int // test trajectories evaluated (0: all)
	Resamples   int
	Seed        uint64
	Quiet       bool
	NoFigures   bool

	changed func(name string) bool
}

func newEvalCmd(out, errOut io.Writer, runF func(context.Context, *evalOptions) error) *cobra.Command {
	opts := &evalOptions{Out: out, Err: errOut}
	cmd := &cobra.Command{
		Use:   "eval [--checkpoint DIR ...] [--task NAME] [--rollout N] [--horizon-mult M] [--out DIR]",
		Short: "Roll trained models out on the test trajectories and report the paper's metrics",
		Long: `Evaluate one or more trained checkpoints (run directories or step
directories of uhno train) side by side on the test trajectories of their
run's split: an autoregressive rollout from the initial frames at the
training step size (25 steps in 1D, 10 in 2D, 20 in 3D: data.rollout;
--rollout N changes it, --horizon-mult 4 gives the long-horizon study of
Tab. stability), or a single prediction on Darcy. Without --checkpoint
it evaluates the default runs of uhno train for --task (runs/<task>-uhno
and runs/<task>-fno beside it, those that hold a checkpoint) or, without
--task, the run under runs/ whose checkpoint was written last, and says
which it chose.

Metrics (paper App. "Evaluation Metrics"), per trajectory and step, then
averaged over trajectories: relL2, relH1, the binned spectral error in
three radial-wavenumber thirds, the structure-function error, the energy
drift at the horizon, the rollout MSE and the crash rate. Intervals are
95% percentile bootstrap intervals over test trajectories (B = 10,000,
seeded) and Wilson intervals for the crash rate (App. bootstrap).

The output directory (default runs/eval-<task>) receives results.json
(every metric, interval and per-step curve, with the configuration and
checkpoint each came from), results.md (the paper's tables) and figures/
(PNG: space-time plots in 1D, snapshots at 0.25T, 0.5T and T in 2D, the
error growth along the rollout, U-HNO's routing masks per level, and the
panels of Fig. training-dynamics from the runs' logs: E_b per band, SPAR
contrast and keep-ratio, branch-gradient angles and loss terms over
training).`,
		Example: `  uhno eval --checkpoint runs/burgers-uhno --checkpoint runs/burgers-fno
  uhno eval --task ns2d --checkpoint runs/ns2d-uhno --horizon-mult 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.changed = cmd.Flags().Changed
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return evalRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Task, "task", "", "task the checkpoints must belong to (default: the first checkpoint's)")
	f.StringSliceVar(&opts.Checkpoints, "checkpoint", nil, "run or step directory of uhno train (repeatable, or comma-separated)")
	f.IntVar(&opts.Rollout, "rollout", 0, "rollout steps (default: the task's data.rollout)")
	f.IntVar(&opts.HorizonMult, "horizon-mult", 1, "multiply the rollout length (Tab. stability uses 4)")
	f.StringVar(&opts.Dir, "out", "", "output directory (default: runs/eval-<task>)")
	f.StringVar(&opts.DataDir, "data", "", "data directory (default: $UHNO_DATA or the user cache)")
	f.IntVar(&opts.Threads, "threads", 0, "CPU threads per operation (default: all cores)")
	f.IntVar(&opts.Batch, "batch", 0, "trajectories rolled out together (default: optim.batch)")
	f.IntVar(&opts.Limit, "trajectories", 0, "evaluate only the first N test trajectories (default: all)")
	f.IntVar(&opts.Resamples, "resamples", eval.DefaultResamples, "bootstrap resamples")
	f.Uint64Var(&opts.Seed, "seed", 0, "bootstrap seed")
	f.BoolVar(&opts.Quiet, "quiet", false, "no progress bars")
	f.BoolVar(&opts.NoFigures, "no-figures", false, "write no PNG figures")
	return cmd
}

// evalFormat versions results.json.
const evalFormat = "uhno-eval/1"

// evalResults is results.json.
type evalResults struct {
	Format      string       `json:"format"`
	Version     string       `json:"uhno_version"`
	Task        string       `json:"task"`
	Steps       int          `json:"rollout_steps"`
	HorizonMult int          `json:"horizon_mult"`
	Data        string       `json:"data"`
	Trajs       int          `json:"test_trajectories"`
	Models      []evalRecord `json:"models"`
}

// evalRecord is one evaluated checkpoint.
type evalRecord struct {
	Label      string        `json:"label"`
	Model      string        `json:"model"`
	Params     int           `json:"params"`
	Checkpoint string        `json:"checkpoint"`
	Step       int           `json:"step"`
	Config     config.Config `json:"config"`
	Elapsed    float64       `json:"elapsed_s"`
	Eval       eval.Summary  `json:"evaluation"`
}

// evalRun evaluates every checkpoint and writes the outputs.
func evalRun(ctx context.Context, opts *evalOptions) error {
	if len(opts.Checkpoints) == 0 {
		cks, why, err := defaultCheckpoints(runsDir, opts.Task)
		if err != nil {
			return err
		}
		opts.Checkpoints = cks
		if opts.Err != nil {
			fmt.Fprintf(opts.Err, "eval: no --checkpoint given; evaluating %s (%s)\n", strings.Join(cks, " and "), why)
		}
	}
	if opts.Rollout < 0 || opts.HorizonMult < 1 || opts.Batch < 0 || opts.Limit < 0 || opts.Resamples < 1 {
		return fmt.Errorf("eval: --rollout, --batch and --trajectories must not be negative, --horizon-mult and --resamples >= 1")
	}
	if opts.Task != "" && !slices.Contains(config.TaskNames(), opts.Task) {
		return fmt.Errorf("eval: --task %q: want one of %s", opts.Task, strings.Join(config.TaskNames(), ", "))
	}
	type loaded struct {
		path, dir string
		st        train.State
		rec       buildRecord
	}
	var cks []loaded
	for _, path := range opts.Checkpoints {
		st, dir, err := train.ReadState(path)
		if err != nil {
			return asCommand("eval", err)
		}
		if err := st.Config.Validate(); err != nil {
			return fmt.Errorf("eval: checkpoint %s holds an invalid configuration: %w", dir, err)
		}
		var rec buildRecord
		if err := json.Unmarshal(st.Build, &rec); err != nil || rec.Model == "" {
			return fmt.Errorf("eval: checkpoint %s has no usable build record; it was not written by uhno train", dir)
		}
		task := opts.Task
		if task == "" && len(cks) > 0 {
			task = cks[0].st.Task
		}
		if task != "" && st.Task != task {
			other := "--task " + task
			if opts.Task == "" {
				other = fmt.Sprintf("checkpoint %s (task %s)", cks[0].dir, task)
			}
			return fmt.Errorf("eval: checkpoint %s is a model of task %s, but %s", dir, st.Task, other)
		}
		if len(cks) > 0 {
			if err := sameEvalData(cks[0].dir, cks[0].st.Config, cks[0].rec, dir, st.Config, rec); err != nil {
				return err
			}
		}
		cks = append(cks, loaded{path: path, dir: dir, st: st, rec: rec})
	}
	cfg0 := cks[0].st.Config
	steps := cfg0.Data.Rollout
	if opts.Rollout > 0 {
		steps = opts.Rollout
	}
	steps *= opts.HorizonMult
	dataDir := opts.DataDir // only looked in for the statistics of a run of an older uhno
	if dataDir == "" {
		dataDir, _ = datagen.DefaultDir() // no cache directory: nothing to look in
	}
	if _, err := os.Stat(cks[0].rec.Data); err != nil {
		return fmt.Errorf("eval: checkpoint %s was trained on %s, which is not there (%v); generate it again with uhno datagen --task %s",
			cks[0].dir, cks[0].rec.Data, err, cfg0.Task)
	}
	for _, ck := range cks { // the data file must be the one each run trained on, as a resume checks
		if ck.rec.DataStamp == nil {
			continue
		}
		now, err := data.StampFile(ck.rec.Data)
		if err != nil {
			return fmt.Errorf("eval: checkpoint %s: %w", ck.dir, err)
		}
		if err := ck.rec.DataStamp.Match(ck.rec.Data, now); err != nil {
			return fmt.Errorf("eval: checkpoint %s: %w; it is not the data the run was trained on (restore the file, or train again)", ck.dir, err)
		}
	}
	td, err := openTaskData(cfg0, cks[0].rec.Data, cks[0].rec.Stride, runStats(cks[0].rec, dataDir))
	if err != nil {
		return err
	}
	defer td.ds.Close()
	if td.plan.Static() {
		if opts.changed != nil && (opts.changed("rollout") || opts.changed("horizon-mult")) {
			return fmt.Errorf("eval: task %s is a single prediction (a -> u); --rollout and --horizon-mult do not apply", cfg0.Task)
		}
		steps = 1
	} else if err := eval.CheckRollout(td.plan, steps); err != nil {
		if opts.HorizonMult > 1 {
			return fmt.Errorf("%w; --horizon-mult %d needs trajectories that long (regenerate the data with more snapshots)", err, opts.HorizonMult)
		}
		return err
	}
	trajs := td.split.Test
	if len(trajs) == 0 {
		return fmt.Errorf("eval: %s has no test trajectories in the split of checkpoint %s (data.test_trajectories = %d)",
			cks[0].rec.Data, cks[0].dir, cfg0.Data.TestTrajectories)
	}
	if opts.Limit > 0 && opts.Limit < len(trajs) {
		trajs = trajs[:opts.Limit]
	}
	grid, err := metricGrid(cfg0, td)
	if err != nil {
		return err
	}
	runDir := opts.Dir
	if runDir == "" {
		runDir = filepath.Join("runs", "eval-"+cfg0.Task)
	}
	lk, err := runlock.Acquire(runDir)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer lk.Release()

	backend, closeBackend, err := openBackend(opts.Threads, opts.Err)
	if err != nil {
		return err
	}
	defer closeBackend()
	in, out := td.plan.InputShape(1)[1], td.plan.TargetShape(1)[1]
	res := evalResults{Format: evalFormat, Version: version, Task: cfg0.Task, Steps: steps, HorizonMult: opts.HorizonMult,
		Data: cks[0].rec.Data, Trajs: len(trajs)}
	var rows []eval.Row
	var samples []*eval.Sample
	var dyn []dynamics.Run // the training-dynamics records of the evaluated runs
	labels := map[string]int{}
	for _, ck := range cks {
		rec := ck.rec
		m, desc, err := buildModel(ck.st.Config, in, out, &trainOptions{}, &rec, backend)
		if err != nil {
			return err
		}
		st, dir, err := train.LoadWeights(ck.dir, train.Adapt(m), backend)
		if err != nil {
			return asCommand("eval", err)
		}
		label := fmt.Sprintf("%s (%s)", m.Name(), strings.TrimSpace(strings.TrimSuffix(formatParams(m.Params().Count()), " parameters")))
		if labels[label]++; labels[label] > 1 {
			label += fmt.Sprintf(" #%d", labels[label])
		}
		fmt.Fprintf(opts.Out, "%s: %s, checkpoint %s (step %d)\n", label, desc, dir, st.Step)
		batch := opts.Batch
		if batch == 0 {
			batch = ck.st.Config.Optim.Batch
		}
		ropt := eval.RolloutOptions{Steps: steps, Batch: batch}
		var bar *progress.Bar
		if !opts.Quiet {
			bar = progress.New(opts.Err, len(trajs), progress.Options{Description: label, Unit: "trajectories"})
			ropt.Progress = func(done, _ int) { bar.Set(done) }
		}
		start := time.Now()
		o, err := eval.Rollout(ctx, m, backend, eval.Source{Plan: td.plan, Trajs: trajs, Stats: &td.stats, Grid: grid}, ropt)
		if err != nil {
			return err
		}
		sum := eval.Summarize(o, eval.BootstrapSpec{Resamples: opts.Resamples, Level: eval.DefaultLevel, Seed: opts.Seed})
		res.Models = append(res.Models, evalRecord{Label: label, Model: m.Name(), Params: m.Params().Count(), Checkpoint: dir,
			Step: st.Step, Config: ck.st.Config, Elapsed: time.Since(start).Seconds(), Eval: sum})
		rows = append(rows, eval.Row{Name: label, Summary: sum})
		samples = append(samples, o.Sample)
		if r, ok := runDynamics(dir, label, opts.Err); ok {
			dyn = append(dyn, r)
		}
	}

	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("eval: encoding results: %w", err)
	}
	if err := writeFileAtomic(filepath.Join(runDir, "results.json"), append(raw, '\n')); err != nil {
		return err
	}
	intro := fmt.Sprintf("Task %s, %d test trajectories of %s, ", cfg0.Task, len(trajs), filepath.Base(cks[0].rec.Data))
	if td.plan.Static() {
		intro += "single prediction a -> u."
	} else {
		intro += fmt.Sprintf("rollout of %d steps from %d history frame(s).", steps, td.plan.History())
	}
	intro += fmt.Sprintf(" Values are means over trajectories with 95%% percentile bootstrap intervals (B = %d, seed %d); crash rates with Wilson 95%% intervals.", opts.Resamples, opts.Seed)
	var md bytes.Buffer
	if err := eval.WriteTables(&md, intro, rows); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(runDir, "results.md"), md.Bytes()); err != nil {
		return err
	}
	fmt.Fprint(opts.Out, md.String())
	if !opts.NoFigures {
		figs, err := evalFigures(filepath.Join(runDir, "figures"), cfg0, td, rows, samples)
		if err != nil {
			return err
		}
		if len(dyn) > 0 {
			files, err := dynamics.Figures(filepath.Join(runDir, "figures"), dyn)
			if err != nil {
				return err
			}
			figs += len(files)
		}
		fmt.Fprintf(opts.Out, "%d figures in %s\n", figs, filepath.Join(runDir, "figures"))
	}
	fmt.Fprintf(opts.Out, "results in %s and %s\n", filepath.Join(runDir, "results.json"), filepath.Join(runDir, "results.md"))
	return nil
}

// runDynamics reads the training log of the run a checkpoint (a step
// directory) belongs to, for the training-dynamics figures (Fig.
// training-dynamics, drawn by dynamics.Figures). ok is false when the run
// has no log or the log no records to draw; a log that cannot be read is
// a warning, not a failure of the evaluation.
func runDynamics(stepDir, label string, warn io.Writer) (dynamics.Run, bool) {
	path := filepath.Join(filepath.Dir(stepDir), train.LogFile)
	if _, err := os.Stat(path); err != nil {
		return dynamics.Run{}, false
	}
	s, err := dynamics.Read(path)
	if err != nil {
		if warn != nil {
			fmt.Fprintf(warn, "eval: warning: no training-dynamics figures for %s: %v\n", label, err)
		}
		return dynamics.Run{}, false
	}
	if len(s.Dynamics) == 0 && len(s.Angles) == 0 && len(s.Train) == 0 {
		return dynamics.Run{}, false
	}
	return dynamics.Run{Label: label, Series: s}, true
}

// sameEvalData refuses to put two checkpoints side by side when they were
// trained on different data, splits or sampling: their test sets or inputs
// would differ. The error names both sides.
func sameEvalData(dirA string, a config.Config, ra buildRecord, dirB string, b config.Config, rb buildRecord) error {
	diff := func(key string, va, vb any) error {
		return fmt.Errorf("eval: checkpoints %s and %s differ in %s (%v vs %v); evaluate them separately", dirA, dirB, key, va, vb)
	}
	switch {
	case ra.Data != rb.Data:
		return diff("data file", ra.Data, rb.Data)
	case ra.Stride != rb.Stride:
		return diff("read stride", ra.Stride, rb.Stride)
	case a.Seed != b.Seed:
		return diff("seed (the split)", a.Seed, b.Seed)
	case a.Data.TrainTrajectories != b.Data.TrainTrajectories || a.Data.TestTrajectories != b.Data.TestTrajectories:
		return diff("data.train_trajectories/test_trajectories",
			fmt.Sprint(a.Data.TrainTrajectories, "/", a.Data.TestTrajectories), fmt.Sprint(b.Data.TrainTrajectories, "/", b.Data.TestTrajectories))
	case a.Data.History != b.Data.History:
		return diff("data.history", a.Data.History, b.Data.History)
	case !slices.Equal(a.Data.Inputs, b.Data.Inputs) || !slices.Equal(a.Data.Outputs, b.Data.Outputs):
		return diff("data.inputs/outputs", fmt.Sprint(a.Data.Inputs, a.Data.Outputs), fmt.Sprint(b.Data.Inputs, b.Data.Outputs))
	case !slices.Equal(a.PDE.Grid, b.PDE.Grid):
		return diff("pde.grid", a.PDE.Grid, b.PDE.Grid)
	}
	return nil
}

// metricGrid is the layout of one predicted frame with the task's grid
// spacing (domain / N per axis) and boundary.
func metricGrid(cfg config.Config, td *taskData) (eval.Grid, error) {
	shape := td.ds.Grid()
	g := eval.Grid{Channels: len(td.plan.TargetChannels()), Shape: shape, Periodic: cfg.PDE.Boundary != "dirichlet"}
	if len(cfg.PDE.Domain) != len(shape) {
		return g, fmt.Errorf("eval: pde.domain has %d axes, the data grid %v has %d", len(cfg.PDE.Domain), shape, len(shape))
	}
	for i, n := range shape {
		g.Spacing = append(g.Spacing, cfg.PDE.Domain[i]/float64(n))
	}
	return g, g.Validate()
}

// formatParams is a parameter count in the short form of --params.
func formatParams(n int) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// writeFileAtomic writes data to path through a temporary file in the
// same directory and a rename, so a reader never sees a partial file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("eval: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("eval: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// evalFigures writes the PNG figures and returns how many: per model the
// space-time plot (1D) or the snapshots at 0.25T, 0.5T and T (2D, 3D: the
// middle slice of the last axis), and the routing masks of U-HNO's last
// predicted frame (1D, 2D); and one error-growth plot of all models.
func evalFigures(dir string, cfg config.Config, td *taskData, rows []eval.Row, samples []*eval.Sample) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("eval: %w", err)
	}
	shape := td.ds.Grid()
	pts := td.ds.Points()
	n := 0
	for i, s := range samples {
		if s == nil || len(s.Pred) == 0 {
			continue
		}
		name := fileLabel(rows[i].Name)
		first := func(frames [][]float32) [][]float32 { // channel 0 of each frame
			out := make([][]float32, len(frames))
			for t, f := range frames {
				out[t] = f[:pts]
			}
			return out
		}
		truth, pred := first(s.Truth), first(s.Pred)
		steps := len(pred)
		title := fmt.Sprintf("%s, %s, test trajectory %d", cfg.Task, rows[i].Name, s.Traj)
		switch len(shape) {
		case 1:
			if steps > 1 {
				if err := figure.SpaceTime(filepath.Join(dir, name+"_spacetime.png"), title, flatten(truth), flatten(pred),
					steps, shape[0], 0, cfg.PDE.Domain[0], 1, float64(steps)); err != nil {
					return n, err
				}
				n++
			}
		default:
			nx, ny := shape[0], shape[1]
			slice := func(f []float32) []float32 { // 3D: the middle slice of the last axis
				if len(shape) == 2 {
					return f
				}
				nz, out := shape[2], make([]float32, nx*ny)
				for j := range out {
					out[j] = f[j*nz+nz/2]
				}
				return out
			}
			idx, labels := snapshotSteps(steps)
			var ts, ps [][]float32
			for _, k := range idx {
				ts, ps = append(ts, slice(truth[k])), append(ps, slice(pred[k]))
			}
			if err := figure.Snapshots(filepath.Join(dir, name+"_snapshots.png"), title, ts, ps, labels, nx, ny); err != nil {
				return n, err
			}
			n++
		}
		if len(s.Masks) > 0 && len(shape) <= 2 {
			if err := figure.RoutingMasks(filepath.Join(dir, name+"_routing.png"),
				fmt.Sprintf("%s: SPAR masks g (1 = Fourier) at step %d", title, steps),
				pred[steps-1], shape, s.Masks, s.MaskShapes, s.Stages); err != nil {
				return n, err
			}
			n++
		}
	}
	if len(shape) == 1 && rows[0].Summary.Steps > 1 {
		if k, err := bandEnergyFigure(filepath.Join(dir, "motivation_bands.png"), cfg, samples, pts); err != nil {
			return n, err
		} else {
			n += k
		}
	}
	if rows[0].Summary.Steps > 1 {
		var panels []figure.LinePanel
		for _, r := range rows {
			lp := figure.LinePanel{Title: r.Name, XLabel: "rollout step", YLabel: "E_b", LogY: true}
			for b, m := range []string{eval.MetricBandLow, eval.MetricBandMid, eval.MetricBandHigh} {
				c := r.Summary.Curves[m]
				x := make([]float64, len(c.Mean))
				for t := range x {
					x[t] = float64(t + 1)
				}
				lp.Lines = append(lp.Lines, figure.Line{Name: strings.TrimPrefix(m, "band_") + " band", X: x, Y: c.Mean, Colour: b})
			}
			panels = append(panels, lp)
		}
		if err := figure.LinePanels(filepath.Join(dir, "band_growth.png"),
			fmt.Sprintf("%s: binned spectral error E_b per band along the rollout (mean over test trajectories)", cfg.Task), 3, panels); err != nil {
			return n, err
		}
		n++
	}
	if rows[0].Summary.Steps > 1 {
		var series []figure.Series
		for _, r := range rows {
			c := r.Summary.Curves[eval.MetricRelL2]
			x := make([]float64, len(c.Mean))
			for t := range x {
				x[t] = float64(t + 1)
			}
			series = append(series, figure.Series{Name: r.Name, X: x, Y: c.Mean, Low: c.Low, High: c.High})
		}
		if err := figure.Curves(filepath.Join(dir, "error_growth.png"), fmt.Sprintf("%s: relL2 along the rollout (95%% bootstrap band)", cfg.Task),
			"rollout step", "relL2", true, series); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// bandEnergyWindow is the window of the local band energy (points).
const bandEnergyWindow = 32

// bandEnergyFigure draws Fig. motivation (a) for a 1D task: the first
// model's test trajectory (its truth, channel 0) and where its low-, mid-
// and high-band energy lies along the rollout (eval.LocalBandEnergy). It
// writes nothing, returning 0, when the grid is narrower than the window.
func bandEnergyFigure(path string, cfg config.Config, samples []*eval.Sample, pts int) (int, error) {
	var s *eval.Sample
	for _, x := range samples {
		if x != nil && len(x.Truth) > 0 {
			s = x
			break
		}
	}
	if s == nil || pts < bandEnergyWindow {
		return 0, nil
	}
	steps := len(s.Truth)
	field := make([]float32, 0, steps*pts)
	var bands [3][]float32
	for _, f := range s.Truth {
		field = append(field, f[:pts]...)
		e := eval.LocalBandEnergy(f[:pts], bandEnergyWindow)
		for b := range bands {
			for _, v := range e[b] {
				bands[b] = append(bands[b], float32(v))
			}
		}
	}
	title := fmt.Sprintf("%s, test trajectory %d: local band energy (Hann window of %d points; Fig. motivation (a))", cfg.Task, s.Traj, bandEnergyWindow)
	if err := figure.BandEnergy(path, title, field, bands, steps, pts, 0, cfg.PDE.Domain[0], 1, float64(steps)); err != nil {
		return 0, err
	}
	return 1, nil
}

// snapshotSteps are the 0-based indices of the steps at 0.25T, 0.5T and
// T of a rollout of steps steps (fewer when steps < 3).
func snapshotSteps(steps int) ([]int, []string) {
	var idx []int
	var labels []string
	for _, q := range []struct {
		f float64
		l string
	}{{0.25, "0.25T"}, {0.5, "0.5T"}, {1, "T"}} {
		k := max(int(math.Ceil(q.f*float64(steps)))-1, 0)
		if len(idx) > 0 && idx[len(idx)-1] == k {
			continue
		}
		idx = append(idx, k)
		labels = append(labels, fmt.Sprintf("%s (step %d)", q.l, k+1))
	}
	return idx, labels
}

// flatten joins frames into one row-major [steps, n] slice.
func flatten(frames [][]float32) []float32 {
	var out []float32
	for _, f := range frames {
		out = append(out, f...)
	}
	return out
}

// fileLabel turns a row label into a file name part.
func fileLabel(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// runsDir is where uhno train puts its runs by default (--out).
const runsDir = "runs"

// defaultCheckpoints picks the runs `uhno eval` evaluates when no
// --checkpoint is given: with a task, the default run directories of
// uhno train for it, runs/<task>-uhno and runs/<task>-fno beside it, those
// that hold a checkpoint; without one, the run under runs/ whose latest
// checkpoint was written last. why says which rule chose them.
func defaultCheckpoints(root, task string) (cks []string, why string, err error) {
	hasRun := func(dir string) bool {
		st, err := os.Stat(filepath.Join(dir, train.LatestFile))
		return err == nil && st.Mode().IsRegular()
	}
	if task != "" {
		for _, m := range []string{"uhno", "fno"} {
			if dir := filepath.Join(root, task+"-"+m); hasRun(dir) {
				cks = append(cks, dir)
			}
		}
		if len(cks) == 0 {
			return nil, "", fmt.Errorf("eval: no --checkpoint given and no run of task %s in %s/ (looked for %s and %s); pass --checkpoint DIR",
				task, root, filepath.Join(root, task+"-uhno"), filepath.Join(root, task+"-fno"))
		}
		return cks, "the default runs of task " + task, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("eval: no --checkpoint given, and %s/ cannot be read: %w", root, err)
	}
	var newest string
	var when time.Time
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		st, err := os.Stat(filepath.Join(dir, train.LatestFile))
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if newest == "" || st.ModTime().After(when) {
			newest, when = dir, st.ModTime()
		}
	}
	if newest == "" {
		return nil, "", fmt.Errorf("eval: no --checkpoint given and no run in %s/; train one (uhno train --task burgers) or pass --checkpoint DIR", root)
	}
	return []string{newest}, "the run in " + root + "/ written last", nil
}
