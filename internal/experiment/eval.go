package experiment

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"uhno/internal/config"
	"uhno/internal/data"
	"uhno/internal/datagen"
	"uhno/internal/dynamics"
	"uhno/internal/eval"
	"uhno/internal/flagcheck"
	"uhno/internal/progress"
	"uhno/internal/runlock"
	"uhno/internal/runrec"
	"uhno/internal/train"
)

// EvalOptions are the inputs of an evaluation (`uhno eval`): checkpoints
// evaluated side by side on the test trajectories of their run's split.
type EvalOptions struct {
	Env
	Task        string
	Checkpoints []string
	Rollout     int // steps (0: the task's data.rollout)
	HorizonMult int
	Dir         string
	DataDir     string
	Threads     int
	Batch       int
	Limit       int // test trajectories evaluated (0: all)
	// TestData, when set, is a file whose trajectories replace the run's
	// test split: the same solver settings and frame spacing, longer or
	// from another seed (evaldata.go; Tab. stability on short data).
	TestData  string
	Resamples int
	Seed      uint64
	Quiet     bool
	NoFigures bool
	// SkipCurrent leaves an evaluation in Dir alone when it is current:
	// of the same checkpoints at the same steps, with the same rollout,
	// horizon, trajectories and bootstrap (Current is then set).
	SkipCurrent bool
	// Current is set by Eval when SkipCurrent found Dir current.
	Current bool

	// Changed reports which flags were given; nil: none.
	Changed func(name string) bool
}

// Eval evaluates every checkpoint and writes the outputs. Its phases:
// the checkpoints (evalCheckpoints), the test set (evalTestSet), the
// rollouts (evalRollouts), the outputs (writeEval).
func Eval(ctx context.Context, opts *EvalOptions) error {
	if err := flagcheck.Check("eval",
		flagcheck.NonNeg("--rollout", opts.Rollout, "the task's data.rollout"),
		flagcheck.Positive("--horizon-mult", opts.HorizonMult),
		flagcheck.NonNeg("--threads", opts.Threads, "all cores"),
		flagcheck.NonNeg("--batch", opts.Batch, "optim.batch"),
		flagcheck.NonNeg("--trajectories", opts.Limit, "all"),
		flagcheck.Positive("--resamples", opts.Resamples),
	); err != nil {
		return err
	}
	if len(opts.Checkpoints) == 0 {
		cks, why, err := defaultCheckpoints(RunsDir, opts.Task)
		if err != nil {
			return err
		}
		opts.Checkpoints = cks
		if opts.Err != nil {
			fmt.Fprintf(opts.Err, "eval: no --checkpoint given; evaluating %s (%s)\n", strings.Join(cks, " and "), why)
		}
	}
	if opts.Task != "" && !slices.Contains(config.TaskNames(), opts.Task) {
		return fmt.Errorf("eval: --task %q: want one of %s", opts.Task, strings.Join(config.TaskNames(), ", "))
	}
	cks, err := evalCheckpoints(opts)
	if err != nil {
		return err
	}
	ts, err := evalTestSet(opts, cks)
	if err != nil {
		return err
	}
	defer ts.td.ds.Close()
	runDir := cmp.Or(opts.Dir, filepath.Join("runs", "eval-"+ts.cfg0.Task))
	if opts.SkipCurrent {
		want := evalWant{Data: ts.file, Steps: ts.steps, Trajs: len(ts.trajs), HorizonMult: opts.HorizonMult, Resamples: opts.Resamples, Seed: opts.Seed}
		for _, ck := range cks {
			want.Runs = append(want.Runs, evalRun{Checkpoint: ck.dir, Step: ck.st.Step})
		}
		r, err := currentResults(runDir, want)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if r != nil {
			opts.Current = true
			fmt.Fprintf(opts.Out, "eval: %s is current (the same checkpoints at the same steps, the same settings); not evaluated again\n", runDir)
			return nil
		}
	}
	lk, err := runlock.Acquire(runDir)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer lk.Release()
	ev, err := evalRollouts(ctx, opts, cks, ts)
	if err != nil {
		return err
	}
	return writeEval(opts, runDir, ts, ev)
}

// evalCheckpoint is one checkpoint to evaluate: the path given, its step
// directory, state and build record.
type evalCheckpoint struct {
	path, dir string
	st        train.State
	rec       runrec.BuildRecord
}

// evalCheckpoints reads every checkpoint and checks that they are of one
// task (--task, or the first's) and were trained on the same data.
func evalCheckpoints(opts *EvalOptions) ([]evalCheckpoint, error) {
	var cks []evalCheckpoint
	for _, path := range opts.Checkpoints {
		st, dir, rec, err := readRun("eval", path)
		if err != nil {
			return nil, err
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
			return nil, fmt.Errorf("eval: checkpoint %s is a model of task %s, but %s", dir, st.Task, other)
		}
		if len(cks) > 0 {
			if err := sameEvalData(cks[0].dir, cks[0].st.Config, cks[0].rec, dir, st.Config, rec); err != nil {
				return nil, err
			}
		}
		cks = append(cks, evalCheckpoint{path: path, dir: dir, st: st, rec: rec})
	}
	return cks, nil
}

// testSet is what the checkpoints are evaluated on: the first
// checkpoint's configuration, the opened data (or --test-data), the
// file, the rollout steps, the test trajectories and the metrics' grid.
type testSet struct {
	cfg0  config.Config
	td    *taskData
	file  string
	steps int
	trajs []int
	grid  eval.Grid
}

// evalTestSet opens the test data of the checkpoints cks: the data file
// each was trained on, checked against its stamp as a resume checks it,
// or --test-data; and works out the rollout and the trajectories. The
// caller closes ts.td.ds.
func evalTestSet(opts *EvalOptions, cks []evalCheckpoint) (ts *testSet, err error) {
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
		return nil, fmt.Errorf("eval: checkpoint %s was trained on %s, which is not there (%v); generate it again with uhno datagen --task %s",
			cks[0].dir, cks[0].rec.Data, err, cfg0.Task)
	}
	for _, ck := range cks { // the data file must be the one each run trained on, as a resume checks
		if ck.rec.DataStamp == nil {
			continue
		}
		now, err := data.StampFile(ck.rec.Data)
		if err != nil {
			return nil, fmt.Errorf("eval: checkpoint %s: %w", ck.dir, err)
		}
		if err := ck.rec.DataStamp.Match(ck.rec.Data, now); err != nil {
			return nil, fmt.Errorf("eval: checkpoint %s: %w; it is not the data the run was trained on (restore the file, or train again)", ck.dir, err)
		}
	}
	td, err := openTaskData(cfg0, cks[0].rec.Data, cks[0].rec.Stride, runStats(cks[0].rec, dataDir))
	if err != nil {
		return nil, err
	}
	testFile := cks[0].rec.Data
	if opts.TestData != "" {
		if testFile, err = filepath.Abs(opts.TestData); err != nil {
			td.ds.Close()
			return nil, fmt.Errorf("eval: --test-data: %w", err)
		}
		long, err := evalTestData(cfg0, td.ds, testFile, cks[0].rec.Stride, td.stats)
		td.ds.Close()
		if err != nil {
			return nil, err
		}
		td = long
	}
	defer func() {
		if err != nil {
			td.ds.Close()
		}
	}()
	if td.plan.Static() {
		if opts.Changed != nil && (opts.Changed("rollout") || opts.Changed("horizon-mult")) {
			return nil, fmt.Errorf("eval: task %s is a single prediction (a -> u); --rollout and --horizon-mult do not apply", cfg0.Task)
		}
		steps = 1
	} else if err := eval.CheckRollout(td.plan, steps); err != nil {
		if opts.HorizonMult > 1 {
			return nil, fmt.Errorf("%w; --horizon-mult %d needs trajectories that long (give a longer test file made by the same solver with --test-data; uhno datagen --task %s --set pde.t_end=... --set data.snapshots=... makes one)", err, opts.HorizonMult, cfg0.Task)
		}
		return nil, err
	}
	trajs := td.split.Test
	if len(trajs) == 0 {
		return nil, fmt.Errorf("eval: %s has no test trajectories in the split of checkpoint %s (data.test_trajectories = %d)",
			testFile, cks[0].dir, cfg0.Data.TestTrajectories)
	}
	if opts.Limit > 0 && opts.Limit < len(trajs) {
		trajs = trajs[:opts.Limit]
	}
	grid, err := metricGrid(cfg0, td)
	if err != nil {
		return nil, err
	}
	return &testSet{cfg0: cfg0, td: td, file: testFile, steps: steps, trajs: trajs, grid: grid}, nil
}

// evalDone is what the rollouts gave: results.json's contents, the rows
// of the tables, a sample per model for the figures and the training
// dynamics of the runs that logged them.
type evalDone struct {
	res     eval.Results
	rows    []eval.Row
	samples []*eval.Sample
	dyn     []dynamics.Run
}

// evalRollouts rolls every checkpoint out on the test set and summarises
// it.
func evalRollouts(ctx context.Context, opts *EvalOptions, cks []evalCheckpoint, ts *testSet) (*evalDone, error) {
	backend, closeBackend, err := opts.openBackend(opts.Threads)
	if err != nil {
		return nil, err
	}
	defer closeBackend()
	td, cfg0, steps, trajs := ts.td, ts.cfg0, ts.steps, ts.trajs
	in, out := td.plan.InputShape(1)[1], td.plan.TargetShape(1)[1]
	ev := &evalDone{res: eval.Results{Format: eval.ResultsFormat, Version: opts.Version, Task: cfg0.Task, Steps: steps, HorizonMult: opts.HorizonMult,
		Data: ts.file, Trajs: len(trajs)}}
	labels := map[string]int{}
	for _, ck := range cks {
		rec := ck.rec
		m, desc, err := buildModel(ck.st.Config, in, out, modelChoice{}, &rec, backend)
		if err != nil {
			return nil, err
		}
		st, dir, err := train.LoadWeights(ck.dir, train.Adapt(m), backend)
		if err != nil {
			return nil, AsCommand("eval", err)
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
		o, err := eval.Rollout(ctx, m, backend, eval.Source{Plan: td.plan, Trajs: trajs, Stats: &td.stats, Grid: ts.grid}, ropt)
		if err != nil {
			return nil, err
		}
		sum := eval.Summarize(o, eval.BootstrapSpec{Resamples: opts.Resamples, Level: eval.DefaultLevel, Seed: opts.Seed})
		builtC0, _ := rec.UHNOWidth()
		ev.res.Models = append(ev.res.Models, eval.ResultsModel{Label: label, Model: m.Name(), Params: m.Params().Count(), Checkpoint: dir,
			Step: st.Step, Config: ck.st.Config, BuiltC0: builtC0, Elapsed: time.Since(start).Seconds(), Eval: sum})
		ev.rows = append(ev.rows, eval.Row{Name: label, Summary: sum})
		ev.samples = append(ev.samples, o.Sample)
		if r, ok := runDynamics(dir, label, opts.Err); ok {
			ev.dyn = append(ev.dyn, r)
		}
	}
	return ev, nil
}

// writeEval writes results.json, results.md and the figures into runDir
// and prints the tables.
func writeEval(opts *EvalOptions, runDir string, ts *testSet, ev *evalDone) error {
	cfg0, td, steps, trajs, testFile, res, rows, samples, dyn := ts.cfg0, ts.td, ts.steps, ts.trajs, ts.file, ev.res, ev.rows, ev.samples, ev.dyn
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("eval: encoding results: %w", err)
	}
	if err := writeFile("eval", filepath.Join(runDir, eval.ResultsFile), append(raw, '\n')); err != nil {
		return err
	}
	intro := fmt.Sprintf("Task %s, %d test trajectories of %s, ", cfg0.Task, len(trajs), filepath.Base(testFile))
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
	if err := writeFile("eval", filepath.Join(runDir, "results.md"), md.Bytes()); err != nil {
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
	fmt.Fprintf(opts.Out, "results in %s and %s\n", filepath.Join(runDir, eval.ResultsFile), filepath.Join(runDir, "results.md"))
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
func sameEvalData(dirA string, a config.Config, ra runrec.BuildRecord, dirB string, b config.Config, rb runrec.BuildRecord) error {
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
	case a.Data.Coordinates != b.Data.Coordinates:
		return diff("data.coordinates (the models' input channels)", a.Data.Coordinates, b.Data.Coordinates)
	case !slices.Equal(a.Data.Constants, b.Data.Constants):
		return diff("data.constants (the models' input channels)", a.Data.Constants, b.Data.Constants)
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
