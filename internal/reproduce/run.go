package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"uhno/internal/config"
	"uhno/internal/datagen"
	"uhno/internal/dynamics"
	"uhno/internal/experiment"
	"uhno/internal/progress"
	"uhno/internal/report"
)

// Schedule is a named training schedule: the optimizer steps of every run
// (0: each task's configuration, configs/<task>.yaml) with the warm-up
// scaled to them as uhno train scales it (the paper's 1,000 of 20,000).
type Schedule struct {
	Name, About string
	Steps       int
}

// Schedules are the named schedules --schedule accepts; the first is the
// default. cpu5k is the schedule that fits a 2-core machine
// (docs/DECISIONS.md, D-reproduce-cpu5k).
var Schedules = []Schedule{
	{"paper", "each task's configs/<task>.yaml: 20,000 steps, warm-up 1,000, cosine (Sec. 4.1)", 0},
	{"cpu5k", "5,000 steps, warm-up 250 (the paper's 5%), cosine: a quarter of the paper's training, for CPU machines", 5000},
}

// ScheduleNames lists the schedules' names.
func ScheduleNames() []string {
	var out []string
	for _, s := range Schedules {
		out = append(out, s.Name)
	}
	return out
}

// RunOptions are the inputs of Run (`uhno reproduce`).
type RunOptions struct {
	experiment.Env
	// Grid selects the tables, tasks and models (Grid.CFD3D is set by
	// Run: --pdebench, or a PDEBench file indexed for cfd3d already).
	Grid Options
	// Configure resolves the configuration of one run of task: the
	// built-in file, then sets (--set), the ablation mode ("": the
	// configuration's), and steps (0: the configuration's) with the
	// warm-up scaled as uhno train scales it. With no sets and no steps
	// it is the task's built-in configuration (Tab. cost's shape).
	Configure func(task, mode string, steps int, sets []string) (config.Config, error)

	Dir      string // --out
	Schedule string // a name of Schedules ("": the first)
	Steps    int    // --steps, overrides the schedule's
	Params   string // U-HNO's parameter budget, "0.62M"
	// Sets are --set key=value for every run; TASK:key=value applies to
	// the runs of TASK only (a grid's tasks differ in shape).
	Sets     []string
	Parallel int // trainings at once (0, 1: one)
	Threads  int // CPU threads in all (0: all cores), split over Parallel
	DataDir  string
	PDEBench string // PDEBench's 3D-CFD file, indexed for cfd3d
	Quiet    bool

	// Cell >= 0 trains that cell alone; Finish evaluates, benches and
	// reports once every cell is done; DryRun prints the grid only.
	// Neither Cell nor Finish: all cells, then finish.
	Cell   int
	Finish bool
	DryRun bool
	// DryRunRepeats are the timed steps per (task, model) of the dry
	// run's estimate (0: 1, after one discarded step).
	DryRunRepeats int

	// Evaluation: test trajectories (0: all), bootstrap resamples, seed.
	Limit     int
	Resamples int
	Seed      uint64
	// BenchRepeats and BenchWarmup are uhno bench's --repeats (at least
	// 1) and --warmup for Tab. cost (the command: 10 and 2).
	BenchRepeats, BenchWarmup int
	// Command is the command line, recorded in the report.
	Command string
}

// planned is one run of the grid with its resolved configuration.
type planned struct {
	Cell
	dir    string // <Dir>/<Run.Dir>
	cfg    config.Config
	params string // U-HNO's budget
	state  experiment.State
}

// schedule returns the steps every run trains (0: the configuration's)
// and a description.
func (o *RunOptions) schedule() (int, string, error) {
	name := o.Schedule
	if name == "" {
		name = Schedules[0].Name
	}
	i := slices.IndexFunc(Schedules, func(s Schedule) bool { return s.Name == name })
	if i < 0 {
		return 0, "", fmt.Errorf("reproduce: --schedule %q: want one of %s", o.Schedule, strings.Join(ScheduleNames(), ", "))
	}
	s := Schedules[i]
	if o.Steps > 0 {
		return o.Steps, fmt.Sprintf("--steps %d (warm-up scaled from each task's configuration)", o.Steps), nil
	}
	return s.Steps, s.Name + ": " + s.About, nil
}

// Run plans the grid and does what opts ask: the dry run, one cell, the
// finish, or everything. Finished runs and current evaluations are
// skipped, an interrupted run resumes, and a run directory of other
// settings is refused before anything trains.
func Run(ctx context.Context, opts *RunOptions) error {
	if opts.Dir == "" {
		return fmt.Errorf("reproduce: no output directory (--out)")
	}
	if opts.Parallel < 0 || opts.Threads < 0 || opts.Steps < 0 || opts.Limit < 0 || opts.Resamples < 1 {
		return fmt.Errorf("reproduce: --parallel, --threads, --steps and --trajectories must not be negative, --resamples >= 1")
	}
	if opts.Finish && opts.Cell >= 0 {
		return fmt.Errorf("reproduce: --cell and --finish are separate steps; give one")
	}
	if opts.DataDir == "" {
		d, err := datagen.DefaultDir()
		if err != nil {
			return err
		}
		opts.DataDir = d
	}
	steps, about, err := opts.schedule()
	if err != nil {
		return err
	}
	grid, runs, err := opts.plan(steps)
	if err != nil {
		return err
	}
	if opts.DryRun {
		return opts.dryRun(ctx, grid, runs, about)
	}
	fmt.Fprintf(opts.Out, "reproduce: %d runs, %d evaluations, %d benches in %s; schedule %s\n",
		len(grid.Runs), len(grid.Evals), len(grid.Bench), opts.Dir, about)
	for _, m := range grid.Missing {
		fmt.Fprintf(opts.Out, "reproduce: not planned: %s\n", m)
	}
	// Every directory is checked before anything trains, so a directory
	// of other settings stops the command before hours of work.
	for _, p := range runs {
		if p.state, err = runState(p); err != nil {
			return err
		}
	}
	if err := linkFull(opts.Dir, grid); err != nil {
		return err
	}
	switch {
	case opts.Cell >= 0:
		if opts.Cell >= len(runs) {
			return fmt.Errorf("reproduce: --cell %d: the grid has cells 0 to %d", opts.Cell, len(runs)-1)
		}
		return opts.train(ctx, runs[opts.Cell:opts.Cell+1], nil)
	case opts.Finish:
		var open []string
		for _, p := range runs {
			if p.state != experiment.RunDone {
				open = append(open, fmt.Sprintf("%s (cell %d, %s)", p.Dir, slices.Index(runs, p), p.state))
			}
		}
		if len(open) > 0 {
			return fmt.Errorf("reproduce: --finish: %d of %d runs are not finished: %s; run their cells first",
				len(open), len(runs), strings.Join(open, ", "))
		}
	default:
		it := &interim{o: opts, g: grid, runs: runs, steps: steps, about: about, total: len(gridTasks(grid))}
		if err := opts.train(ctx, runs, it.taskDone); err != nil {
			return err
		}
	}
	return opts.finish(ctx, grid, runs, steps, about)
}

// setsFor are the --set values that apply to task's runs: those without
// a task prefix, and those of TASK:key=value with the prefix removed.
func (o *RunOptions) setsFor(task string) []string {
	var out []string
	for _, s := range o.Sets {
		key, _, _ := strings.Cut(s, "=")
		if t, _, ok := strings.Cut(key, ":"); ok {
			if t == task {
				out = append(out, strings.TrimPrefix(s, t+":"))
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// PlanGrid plans the grid Run would run with these options (the 3D-CFD
// cells where --pdebench is given or a file is indexed), as --slurm needs.
func (o *RunOptions) PlanGrid() (*Grid, error) {
	if o.DataDir == "" {
		d, err := datagen.DefaultDir()
		if err != nil {
			return nil, err
		}
		o.DataDir = d
	}
	steps, _, err := o.schedule()
	if err != nil {
		return nil, err
	}
	g, _, err := o.plan(steps)
	return g, err
}

// plan plans the grid and configures every run.
func (o *RunOptions) plan(steps int) (*Grid, []*planned, error) {
	g := o.Grid
	if o.PDEBench != "" {
		cfg, err := o.Configure("cfd3d", "", steps, o.setsFor("cfd3d"))
		if err != nil {
			return nil, nil, err
		}
		if _, _, err := datagen.IndexPDEBench(datagen.Options{Config: cfg, Dir: o.DataDir}, o.PDEBench); err != nil {
			return nil, nil, fmt.Errorf("reproduce: --pdebench: %w", err)
		}
		g.CFD3D = true
	} else if _, err := datagen.ReadPDEBenchIndex(o.DataDir, "cfd3d"); err == nil {
		g.CFD3D = true
	}
	grid, err := Plan(g)
	if err != nil {
		return nil, nil, fmt.Errorf("reproduce: %w", err)
	}
	var runs []*planned
	for _, r := range grid.Runs {
		cfg, err := o.Configure(r.Task, r.Mode, steps, o.setsFor(r.Task))
		if err != nil {
			return nil, nil, fmt.Errorf("reproduce: %s: %w", r.Dir, err)
		}
		if _, err := experiment.ParamsTarget(cfg, o.Params); err != nil {
			return nil, nil, fmt.Errorf("reproduce: %s: %w", r.Dir, err)
		}
		runs = append(runs, &planned{Cell: r, dir: filepath.Join(o.Dir, r.Dir), cfg: cfg, params: o.Params})
	}
	return grid, runs, nil
}

// longDataPlan is the generator options of the longer test file e's
// evaluation needs when the task's own data are too short for its horizon
// (experiment.StabilityData: the same solver and frame spacing, another
// seed, in dataDir); ok is false when the task's data suffice.
func longDataPlan(runs []*planned, e Eval, dataDir string) (opt datagen.Options, ok bool, err error) {
	i := slices.IndexFunc(runs, func(p *planned) bool { return p.Task == e.Task })
	if e.HorizonMult < 2 || i < 0 {
		return datagen.Options{}, false, nil
	}
	opt, ok, err = experiment.StabilityData(runs[i].cfg, 0, e.HorizonMult)
	opt.Dir = dataDir
	return opt, ok, err
}

// stabilityData makes (or finds) the long test file of e's evaluation
// (longDataPlan) and returns its path; "" when the task's data suffice.
func (o *RunOptions) stabilityData(ctx context.Context, runs []*planned, e Eval) (string, error) {
	opt, ok, err := longDataPlan(runs, e, o.DataDir)
	if err != nil || !ok {
		return "", err
	}
	if !o.Quiet {
		opt.Progress = o.Err
	}
	fmt.Fprintf(o.Out, "reproduce: %s's data hold too few frames for %dx the horizon; test trajectories of %d frames (seed %d) for Tab. stability\n",
		e.Task, e.HorizonMult, opt.Config.Data.Snapshots, opt.Config.Data.Seed)
	res, err := datagen.Run(ctx, opt)
	if err != nil {
		return "", err
	}
	return res.Path, nil
}

// runState checks p's directory (experiment.RunState against the model
// record the run would train).
func runState(p *planned) (experiment.State, error) {
	in, out := experiment.Channels(p.cfg)
	rec, err := experiment.PlanRecord(p.cfg, p.Model, in, out, p.params, 0)
	if err != nil {
		return 0, fmt.Errorf("reproduce: %s: %w", p.Dir, err)
	}
	st, err := experiment.RunState(p.dir, p.cfg, rec)
	if err != nil {
		return 0, experiment.AsCommand("reproduce", err)
	}
	return st, nil
}

// ablateDir is where a task's ablation lives: its modes' runs
// (<task>/ablate/<mode>), Ablate's evaluations and ablation.json.
func ablateDir(task string) string { return task + "/ablate" }

// linkFull makes <task>/ablate/full a symbolic link to ../uhno for every
// task with ablation runs, so that Ablate finds Full trained in the
// grid's U-HNO run rather than training it twice.
func linkFull(dir string, g *Grid) error {
	for _, r := range g.Runs {
		if r.Mode != "A" {
			continue
		}
		link := filepath.Join(dir, ablateDir(r.Task), "full")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return fmt.Errorf("reproduce: %w", err)
		}
		target, err := os.Readlink(link)
		switch {
		case err == nil && target == filepath.Join("..", "uhno"):
			continue
		case err == nil:
			return fmt.Errorf("reproduce: %s links to %s, not ../uhno; remove it", link, target)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("reproduce: %s is not the link to ../uhno this command makes (%v); remove it", link, err)
		}
		if err := os.Symlink(filepath.Join("..", "uhno"), link); err != nil {
			return fmt.Errorf("reproduce: %w", err)
		}
	}
	return nil
}

// lockedWriter serialises the writes of parallel trainings.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// linePrefix writes whole lines to w, each led by prefix: the lines of
// one run of a --parallel grid, which interleave with the other runs'.
// A line is held until its newline (Flush writes a last partial one), so
// that the underlying lockedWriter receives it in one Write.
type linePrefix struct {
	mu     sync.Mutex
	prefix string
	w      io.Writer
	buf    []byte
}

func (l *linePrefix) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := slices.Index(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := append([]byte(l.prefix), l.buf[:i+1]...)
		l.buf = l.buf[i+1:]
		if _, err := l.w.Write(line); err != nil {
			return 0, err
		}
	}
}

// Flush writes a last line that has no newline, ending it with one.
func (l *linePrefix) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	line := append(append([]byte(l.prefix), l.buf...), '\n')
	l.buf = nil
	_, err := l.w.Write(line)
	return err
}

// split returns how many of n trainings run at once (--parallel, at most
// n) and the CPU threads each gets (--threads or all cores, divided
// between them, at least one).
func (o *RunOptions) split(n int) (par, threads int) {
	par = max(1, min(o.Parallel, n))
	threads = o.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	return par, max(1, threads/par)
}

// train trains the runs not finished yet, Parallel at a time with the
// threads split between them. One line per run start with the grid's
// estimate of the time left, plain progress lines over the grid, and the
// run's own bar (one training at a time; with --parallel each run's
// lines, its bar's plain lines included, are led by its name).
//
// taskDone, if not nil, is called once for each task all of whose runs
// (among runs) are trained, with withAblation true, when some run is left
// to train: before the trainings for a task trained already, else by the
// worker that finished its last run, while the other workers train on.
// A task with ablation modes among runs is also called once, withAblation
// false, when its other runs are trained and some of its modes are not.
// Its error stops the grid as a training error does.
func (o *RunOptions) train(ctx context.Context, runs []*planned, taskDone func(context.Context, experiment.Env, string, bool) error) error {
	var todo []*planned
	left := map[string]int{}     // untrained runs per task
	leftMain := map[string]int{} // of which not ablation modes
	for _, p := range runs {
		if p.state == experiment.RunDone {
			fmt.Fprintf(o.Out, "reproduce: %s: trained already\n", p.Dir)
			continue
		}
		todo = append(todo, p)
		left[p.Task]++
		if p.Mode == "" {
			leftMain[p.Task]++
		}
	}
	if len(todo) == 0 {
		return nil // the finish, next, evaluates everything
	}
	if taskDone != nil {
		var tasks []string
		for _, p := range runs {
			if leftMain[p.Task] == 0 && !slices.Contains(tasks, p.Task) {
				tasks = append(tasks, p.Task)
			}
		}
		for _, task := range tasks {
			if err := taskDone(ctx, o.Env, task, left[task] == 0); err != nil {
				return err
			}
		}
	}
	par, threads := o.split(len(todo))
	var mu sync.Mutex
	env := o.Env
	env.Out, env.Err = lockedWriter{&mu, o.Out}, lockedWriter{&mu, o.Err}
	off := false
	bar := progress.New(env.Err, len(todo), progress.Options{Description: "reproduce grid", Unit: "runs", Terminal: &off})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done int
		firstErr   error
		start      = time.Now()
		wg         sync.WaitGroup
		state      sync.Mutex
	)
	for w := 0; w < par; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				state.Lock()
				if next >= len(todo) || firstErr != nil {
					state.Unlock()
					return
				}
				p := todo[next]
				next++
				head := fmt.Sprintf("reproduce [%d/%d] %s", next, len(todo), p.Dir)
				if done > 0 {
					per := time.Since(start) / time.Duration(done)
					head += fmt.Sprintf(" (about %s left)", (per * time.Duration(len(todo)-done) / time.Duration(par)).Round(time.Second))
				}
				state.Unlock()
				verb := "training into"
				if p.state == experiment.RunPartial {
					verb = "resuming"
				}
				fmt.Fprintf(env.Out, "%s: %s %s\n", head, verb, p.dir)
				err := o.trainOne(ctx, env, p, threads, par > 1)
				if err == nil && ctx.Err() != nil {
					err = fmt.Errorf("reproduce: interrupted during %s; rerun the same command to continue", p.Dir)
				}
				state.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				last, lastMain := false, false
				if err == nil {
					done++
					bar.Add(1)
					left[p.Task]--
					last = left[p.Task] == 0
					if p.Mode == "" {
						leftMain[p.Task]--
						lastMain = leftMain[p.Task] == 0 && !last
					}
				}
				state.Unlock()
				if (last || lastMain) && taskDone != nil {
					if err := taskDone(ctx, env, p.Task, last); err != nil {
						state.Lock()
						if firstErr == nil {
							firstErr = err
							cancel()
						}
						state.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// trainOne trains (or resumes) one run as uhno train would; shared says
// that other runs train beside it (--parallel), so its lines are led by
// its name.
func (o *RunOptions) trainOne(ctx context.Context, env experiment.Env, p *planned, threads int, shared bool) (err error) {
	if shared && !o.Quiet {
		out, errOut := &linePrefix{prefix: p.Dir + ": ", w: env.Out}, &linePrefix{prefix: p.Dir + ": ", w: env.Err}
		env.Out, env.Err = out, errOut
		defer func() { err = errors.Join(err, out.Flush(), errOut.Flush()) }()
	}
	cfg := p.cfg
	t := experiment.TrainOptions{Env: env, Model: p.Model, Params: o.Params, Dir: p.dir, DataDir: o.DataDir, Threads: threads,
		Quiet: o.Quiet, Graph: true, LogEvery: 10, ValEvery: 500, CkptEvery: 1000, Keep: 2, ValPairs: 256,
		DynamicsEvery: experiment.DefaultDynamicsEvery, DynamicsTrajs: dynamics.DefaultTrajectories,
		Configure: func(io.Writer) (config.Config, error) { return cfg, nil }}
	if p.state == experiment.RunPartial {
		t.Resume = p.dir
		t.Configure = nil
	}
	return experiment.Train(ctx, &t)
}

// evaluateTask runs task's part of the finish: the ablation's
// evaluations (Tab. ablation-extra: experiment.Ablate over <task>/ablate,
// whose runs are all trained by now, Full through the link) and the
// side-by-side evaluations. withAblation false leaves the ablation out
// (its runs may still be training: Ablate would train them itself). It
// returns the directories the report reads and notes on what could not
// be evaluated. Current evaluations are skipped, so a second call costs
// seconds.
func (o *RunOptions) evaluateTask(ctx context.Context, env experiment.Env, g *Grid, runs []*planned, steps int, task string, withAblation bool) (inputs, notes []string, err error) {
	var modes []string
	for _, r := range g.Runs {
		if r.Task == task && r.Mode != "" {
			modes = append(modes, r.Mode)
		}
	}
	if len(modes) > 0 && withAblation {
		a := experiment.AblateOptions{Env: env, Task: task, Modes: strings.Join(modes, ","), Dir: filepath.Join(o.Dir, ablateDir(task)),
			Sets: o.setsFor(task), Steps: steps, Params: o.Params, DataDir: o.DataDir, Threads: o.Threads, Quiet: o.Quiet,
			Limit: o.Limit, Resamples: o.Resamples, Seed: o.Seed, LogEvery: 10, ValEvery: 500, CkptEvery: 1000,
			DynamicsEvery: experiment.DefaultDynamicsEvery,
			Configure: func(mode string, sets []string) (config.Config, error) {
				if mode == "full" {
					mode = "" // as the grid's U-HNO run is configured
				}
				return o.Configure(task, mode, steps, append(o.setsFor(task), sets...))
			}}
		fmt.Fprintf(env.Out, "reproduce: ablation of %s (Tab. ablation-extra) in %s\n", task, a.Dir)
		if err := experiment.Ablate(ctx, &a); err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, a.Dir)
	}
	for _, e := range g.Evals {
		if e.Task != task {
			continue
		}
		eo := experiment.EvalOptions{Env: env, HorizonMult: e.HorizonMult, Dir: filepath.Join(o.Dir, e.Dir), DataDir: o.DataDir,
			Threads: o.Threads, Limit: o.Limit, Resamples: o.Resamples, Seed: o.Seed, Quiet: o.Quiet, SkipCurrent: true}
		for _, r := range e.Runs {
			eo.Checkpoints = append(eo.Checkpoints, filepath.Join(o.Dir, r))
		}
		if e.HorizonMult > 1 {
			path, err := o.stabilityData(ctx, runs, e)
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, err
				}
				msg := fmt.Sprintf("%s (Tab. stability) not evaluated: %v", e.Dir, err)
				fmt.Fprintf(env.Out, "reproduce: %s\n", msg)
				notes = append(notes, msg)
				continue
			}
			eo.TestData = path
		}
		fmt.Fprintf(env.Out, "reproduce: evaluating %s at %dx the training horizon into %s\n", e.Task, e.HorizonMult, eo.Dir)
		if err := experiment.Eval(ctx, &eo); err != nil {
			if e.HorizonMult == 1 || ctx.Err() != nil {
				return nil, nil, err
			}
			// Tab. stability needs trajectories 4x the rollout long; the
			// data of a task may not hold them: said in the report.
			msg := fmt.Sprintf("%s (Tab. stability) not evaluated: %v", e.Dir, err)
			fmt.Fprintf(env.Out, "reproduce: %s\n", msg)
			notes = append(notes, msg)
			continue
		}
		inputs = append(inputs, eo.Dir)
	}
	for _, p := range runs {
		if p.Task == task && p.Mode == "" {
			inputs = append(inputs, p.dir)
		}
	}
	return inputs, notes, nil
}

// gridTasks are the tasks of the grid's runs, in the paper's order.
func gridTasks(g *Grid) []string {
	var out []string
	for _, task := range config.PaperTaskNames() {
		if slices.ContainsFunc(g.Runs, func(r Cell) bool { return r.Task == task }) {
			out = append(out, task)
		}
	}
	return out
}

// interim is the hook of a whole-grid run (neither --cell nor --finish)
// that evaluates a task as soon as the last of its runs is trained and
// rewrites the report over the tasks evaluated so far, so that a grid of
// days shows each column when it is done rather than at the end. A task
// with Tab. ablation-extra's modes is evaluated twice: its side-by-side
// tables when its models' runs are trained (the modes train last and
// would hold the column back by nine runs), its ablation when the modes
// are. The finish evaluates every task again (skipping what is current),
// benches and writes the final report. A failed evaluation here is said
// and left to the finish: the other tasks' trainings go on.
type interim struct {
	o             *RunOptions
	g             *Grid
	runs          []*planned
	steps         int
	about         string
	mu            sync.Mutex // one evaluation at a time
	inputs, notes []string
	evaluated     []string // tasks evaluated whole
	partial       []string // tasks evaluated but for their ablation
	total         int
}

// taskDone evaluates task (without its ablation unless withAblation) and
// rewrites the report; env is the grid's (locked) output.
func (it *interim) taskDone(ctx context.Context, env experiment.Env, task string, withAblation bool) error {
	it.mu.Lock()
	defer it.mu.Unlock()
	o := it.o
	if withAblation {
		fmt.Fprintf(env.Out, "reproduce: every run of %s is trained: evaluating it now (the report grows a column)\n", task)
	} else {
		fmt.Fprintf(env.Out, "reproduce: every model's run of %s is trained, its ablation's are not: evaluating the models now (the report grows a column)\n", task)
	}
	in, notes, err := o.evaluateTask(ctx, env, it.g, it.runs, it.steps, task, withAblation)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		fmt.Fprintf(env.Out, "reproduce: evaluating %s failed: %v; training goes on, and the finish tries again\n", task, err)
		return nil
	}
	for _, d := range in {
		if !slices.Contains(it.inputs, d) {
			it.inputs = append(it.inputs, d)
		}
	}
	for _, n := range notes {
		if !slices.Contains(it.notes, n) {
			it.notes = append(it.notes, n)
		}
	}
	it.partial = slices.DeleteFunc(it.partial, func(s string) bool { return s == task })
	if withAblation {
		it.evaluated = append(it.evaluated, task)
	} else {
		it.partial = append(it.partial, task)
	}
	var pending, count string
	if len(it.partial) > 0 {
		pending = fmt.Sprintf("; the models of %s are evaluated too, their ablation still training", strings.Join(it.partial, ", "))
		count = fmt.Sprintf(", %s but the ablation", strings.Join(it.partial, ", "))
	}
	note := fmt.Sprintf("**This report is interim:** %d of the grid's %d tasks are trained and evaluated (the last: %s)%s; "+
		"the grid is still training, and its finish rewrites this report with every task and Tab. cost.\n\n",
		len(it.evaluated), it.total, task, pending)
	res, err := report.Write(report.Options{Inputs: it.inputs, Dir: filepath.Join(o.Dir, "report"), Version: o.Version,
		Command: o.Command, Notes: note + o.notes(it.g, it.runs, it.about, it.notes)})
	if err != nil {
		fmt.Fprintf(env.Out, "reproduce: interim report failed: %v; training goes on\n", err)
		return nil
	}
	fmt.Fprintf(env.Out, "reproduce: interim report in %s (%d of %d tasks%s)\n", res.Report, len(it.evaluated), it.total, count)
	return nil
}

// finish evaluates every task (evaluateTask), runs the benches and writes
// the report.
func (o *RunOptions) finish(ctx context.Context, g *Grid, runs []*planned, steps int, about string) error {
	var inputs, notes []string
	for _, task := range gridTasks(g) {
		in, nt, err := o.evaluateTask(ctx, o.Env, g, runs, steps, task, true)
		if err != nil {
			return err
		}
		inputs, notes = append(inputs, in...), append(notes, nt...)
	}
	if len(g.Bench) > 0 {
		dir := filepath.Join(o.Dir, "bench")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("reproduce: %w", err)
		}
		for _, m := range g.Bench {
			file := filepath.Join(dir, "cost-"+m+".json")
			if _, err := os.Stat(file); err == nil {
				fmt.Fprintf(o.Out, "reproduce: %s: benched already\n", file)
				continue
			}
			b := experiment.BenchOptions{Env: o.Env, Preset: "cost-ns2d", Model: m, Params: o.Params, Threads: o.Threads,
				Repeats: max(o.BenchRepeats, 1), Warmup: o.BenchWarmup, JSON: file, Quiet: o.Quiet,
				Configure: func(task string) (config.Config, error) { return o.Configure(task, "", 0, nil) }}
			fmt.Fprintf(o.Out, "reproduce: Tab. cost: benching %s into %s\n", m, file)
			if err := experiment.Bench(ctx, &b); err != nil {
				return err
			}
		}
		inputs = append(inputs, dir)
	}
	res, err := report.Write(report.Options{Inputs: inputs, Dir: filepath.Join(o.Dir, "report"), Version: o.Version,
		Command: o.Command, Notes: o.notes(g, runs, about, notes)})
	if err != nil {
		return err
	}
	// One line per ranking with reversals, then each other claim; the
	// report states every reversal.
	for _, c := range res.Summary {
		fmt.Fprintf(o.Out, "contradicts the paper: %s\n", c)
	}
	fmt.Fprintf(o.Out, "reproduce: report in %s, %d figures\n", res.Report, len(res.Figures))
	return nil
}

// Commit is the VCS revision the binary was built from, as the Go
// toolchain records it ("unknown" when it records none).
func Commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "unknown", ""
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = " (with uncommitted changes)"
			}
		}
	}
	return rev + dirty
}

// notes is the report's section on the reproduction: the schedule, the
// commit, the commands and what is missing.
func (o *RunOptions) notes(g *Grid, runs []*planned, about string, extra []string) string {
	var b strings.Builder
	b.WriteString("## Reproduction (uhno reproduce)\n\n")
	fmt.Fprintf(&b, "uhno %s, commit %s. Schedule %s", o.Version, Commit(), about)
	switch o.Params {
	case experiment.ParamsText:
		b.WriteString("; U-HNO at the paper's text's size (Tab. per-task-hp, --params text), the baselines matched to its count (App. C)")
	case "":
	default:
		fmt.Fprintf(&b, "; U-HNO's budget %s (the baselines matched to it)", o.Params)
	}
	if len(o.Sets) > 0 {
		fmt.Fprintf(&b, "; --set %s on every run", strings.Join(o.Sets, " --set "))
	}
	b.WriteString(".\n\n| cell | run | tables | steps | warm-up | batch |\n|---|---|---|---|---|---|\n")
	for i, p := range runs {
		fmt.Fprintf(&b, "| %d | `%s` | %s | %d | %d | %d |\n", i, p.Dir, strings.Join(p.Tables, ", "),
			p.cfg.Optim.Steps, p.cfg.Optim.Warmup, p.cfg.Optim.Batch)
	}
	b.WriteString("\nCommands: ")
	if o.Command != "" {
		fmt.Fprintf(&b, "`%s` (every cell, then the evaluations, benches and this report); ", o.Command)
	}
	b.WriteString("on a cluster, `uhno reproduce ... --slurm FILE` writes a job array of `--cell K` and a final `--finish`.\n\n")
	if len(g.Missing) > 0 || len(extra) > 0 {
		b.WriteString("Not reproduced here:\n\n")
		for _, m := range append(slices.Clone(g.Missing), extra...) {
			fmt.Fprintf(&b, "- %s\n", m)
		}
		b.WriteString("\n")
	}
	return b.String()
}
