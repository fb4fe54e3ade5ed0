package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"uhno/internal/config"
	"uhno/internal/datagen"
	"uhno/internal/experiment"
	"uhno/internal/flagcheck"
)

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
	Params   string // U-HNO's parameter budget ("0.62M"), or "text": Tab. per-task-hp exactly
	// Sets are --set key=value for every run; TASK:key=value applies to
	// the runs of TASK only (a grid's tasks differ in shape).
	Sets     []string
	Parallel int // trainings at once (0, 1: one)
	Threads  int // CPU threads in all (0: all cores), split over Parallel
	DataDir  string
	PDEBench string // PDEBench's 3D-CFD file, indexed for cfd3d
	Quiet    bool
	// NoFigures: the evaluations, ablations and report write no PNG
	// (their tables and JSON are the same).
	NoFigures bool

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

// Run plans the grid and does what opts ask: the dry run, one cell, the
// finish, or everything. Finished runs and current evaluations are
// skipped, an interrupted run resumes, and a run directory of other
// settings is refused before anything trains.
func Run(ctx context.Context, opts *RunOptions) error {
	if opts.Dir == "" {
		return fmt.Errorf("reproduce: no output directory (--out)")
	}
	if err := flagcheck.Check("reproduce",
		flagcheck.NonNeg("--steps", opts.Steps, "the schedule's"),
		flagcheck.NonNeg("--parallel", opts.Parallel, "one"),
		flagcheck.NonNeg("--threads", opts.Threads, "all cores"),
		flagcheck.NonNeg("--trajectories", opts.Limit, "all"),
		flagcheck.Positive("--resamples", opts.Resamples),
	); err != nil {
		return err
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

// runSets are the --set values of run r: setsFor its task, and with
// --seeds its training seed.
func (o *RunOptions) runSets(r Cell) []string {
	sets := o.setsFor(r.Task)
	if len(o.Grid.Seeds) > 0 {
		sets = append(sets, fmt.Sprintf("seed=%d", r.Seed))
	}
	return sets
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
	if len(g.Seeds) > 0 {
		for _, set := range o.Sets {
			key, _, _ := strings.Cut(set, "=")
			if _, k, ok := strings.Cut(key, ":"); key == "seed" || (ok && k == "seed") {
				return nil, nil, fmt.Errorf("reproduce: --set %s and --seeds both set the runs' seed; give --seeds alone", set)
			}
		}
	}
	grid, err := Plan(g)
	if err != nil {
		return nil, nil, fmt.Errorf("reproduce: %w", err)
	}
	var runs []*planned
	for _, r := range grid.Runs {
		cfg, err := o.Configure(r.Task, r.Mode, steps, o.runSets(r))
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

// ablateDir is where a task's ablation at seed lives: its modes' runs
// (<task>/ablate/<mode>, under <task>/seed<s>/ for a seed s > 0),
// Ablate's evaluations and ablation.json.
func ablateDir(task string, seed int64) string { return seedDir(task, seed) + "/ablate" }

// linkFull makes <task>/ablate/full a symbolic link to ../uhno for every
// task with ablation runs, so that Ablate finds Full trained in the
// grid's U-HNO run rather than training it twice.
func linkFull(dir string, g *Grid) error {
	for _, r := range g.Runs {
		if r.Mode == "" {
			continue
		}
		link := filepath.Join(dir, ablateDir(r.Task, r.Seed), "full")
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
