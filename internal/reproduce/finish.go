package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"uhno/internal/atomicfile"
	"uhno/internal/config"
	"uhno/internal/datagen"
	"uhno/internal/eval"
	"uhno/internal/experiment"
	"uhno/internal/report"
)

// Evaluation and report: each task evaluated once its runs are trained
// (the interim report), then the finish (every evaluation, Tab. cost's
// bench, the report and its reproduction notes).

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

// evaluateTask runs task's part of the finish, for every seed: the
// ablation's evaluations (Tab. ablation-extra: experiment.Ablate over
// <task>/ablate, whose runs are all trained by now, Full through the
// link) and the side-by-side evaluations, then with several seeds each
// evaluation merged over them (the report reads the merge instead of the
// seeds' evaluations). withAblation false leaves the ablation out
// (its runs may still be training: Ablate would train them itself). It
// returns the directories the report reads and notes on what could not
// be evaluated. Current evaluations are skipped, so a second call costs
// seconds.
func (o *RunOptions) evaluateTask(ctx context.Context, env experiment.Env, g *Grid, runs []*planned, steps int, task string, withAblation bool) (inputs, notes []string, err error) {
	var ablations []string
	for _, seed := range g.Seeds {
		in, err := o.ablateTask(ctx, env, g, steps, task, seed, withAblation)
		if err != nil {
			return nil, nil, err
		}
		ablations = append(ablations, in...)
	}
	if len(ablations) > 1 { // one per seed: the report reads their merge
		dir, err := o.mergeAblations(task, g.Seeds, ablations)
		if err != nil {
			return nil, nil, err
		}
		ablations = []string{dir}
	}
	inputs = append(inputs, ablations...)
	merged := map[string]bool{} // per-seed evaluations a merge stands for
	for _, e := range g.Evals {
		if e.Task != task {
			continue
		}
		dir, note, err := o.evaluate(ctx, env, runs, e)
		if err != nil {
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, note)
			continue
		}
		inputs = append(inputs, dir)
	}
	for _, m := range g.Merges {
		if m.Task != task {
			continue
		}
		dir, note, err := o.merge(m)
		if err != nil {
			return nil, nil, err
		}
		if note != "" {
			notes = append(notes, note)
			continue
		}
		for _, e := range m.Evals {
			merged[filepath.Join(o.Dir, e)] = true
		}
		inputs = append(inputs, dir)
	}
	inputs = slices.DeleteFunc(inputs, func(d string) bool { return merged[d] })
	for _, p := range runs {
		if p.Task == task && p.Mode == "" {
			inputs = append(inputs, p.dir)
		}
	}
	return inputs, notes, nil
}

// ablateTask runs Tab. ablation-extra's evaluation of task at seed
// (experiment.Ablate over its ablate directory), when the grid has its
// modes and withAblation; it returns the directory the report reads.
func (o *RunOptions) ablateTask(ctx context.Context, env experiment.Env, g *Grid, steps int, task string, seed int64, withAblation bool) ([]string, error) {
	var modes []string
	for _, r := range g.Runs {
		if r.Task == task && r.Seed == seed && r.Mode != "" {
			modes = append(modes, r.Mode)
		}
	}
	if len(modes) == 0 || !withAblation {
		return nil, nil
	}
	a := experiment.AblateOptions{Env: env, Task: task, Modes: strings.Join(modes, ","), Dir: filepath.Join(o.Dir, ablateDir(task, seed)),
		Sets: o.setsFor(task), Steps: steps, Params: o.Params, DataDir: o.DataDir, Threads: o.Threads, Quiet: o.Quiet,
		NoFigures: o.NoFigures, Limit: o.Limit, Resamples: o.Resamples, Seed: o.Seed, LogEvery: 10, ValEvery: 500, CkptEvery: 1000,
		DynamicsEvery: experiment.DefaultDynamicsEvery,
		Configure: func(mode string, sets []string) (config.Config, error) {
			if mode == "full" {
				mode = "" // as the grid's U-HNO run is configured
			}
			return o.Configure(task, mode, steps, append(o.runSets(Cell{Task: task, Seed: seed}), sets...))
		}}
	fmt.Fprintf(env.Out, "reproduce: ablation of %s (Tab. ablation-extra) in %s\n", task, a.Dir)
	if err := experiment.Ablate(ctx, &a); err != nil {
		return nil, err
	}
	return []string{a.Dir}, nil
}

// mergeAblations merges task's ablations at seeds (their directories
// dirs, in seeds' order) into <task>/ablate-seeds (eval.MergeAblations)
// and returns that directory.
func (o *RunOptions) mergeAblations(task string, seeds []int64, dirs []string) (string, error) {
	var abs []eval.Ablation
	for _, d := range dirs {
		path := filepath.Join(d, eval.AblationFile)
		raw, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("reproduce: %w", err)
		}
		var a eval.Ablation
		if err := json.Unmarshal(raw, &a); err != nil {
			return "", fmt.Errorf("reproduce: %s: %w", path, err)
		}
		abs = append(abs, a)
	}
	spec := eval.DefaultBootstrap
	spec.Resamples, spec.Seed = o.Resamples, o.Seed
	merged, err := eval.MergeAblations(abs, seeds, spec)
	if err != nil {
		return "", fmt.Errorf("reproduce: %s's ablation over seeds: %w", task, err)
	}
	dir := filepath.Join(o.Dir, task, "ablate-seeds")
	if err := writeJSON(dir, eval.AblationFile, merged); err != nil {
		return "", err
	}
	fmt.Fprintf(o.Out, "reproduce: %s's ablation over seeds %v into %s\n", task, seeds, dir)
	return dir, nil
}

// writeJSON writes v as indented JSON to dir/name, atomically, making
// dir.
func writeJSON(dir, name string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("reproduce: %s: %w", filepath.Join(dir, name), err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, name), append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("reproduce: %w", err)
	}
	return nil
}

// evaluate runs one side-by-side evaluation (skipped when current). It
// returns its directory, or a note when Tab. stability's evaluation
// cannot be made (the data are too short and no longer file could be
// had).
func (o *RunOptions) evaluate(ctx context.Context, env experiment.Env, runs []*planned, e Eval) (dir, note string, err error) {
	eo := experiment.EvalOptions{Env: env, HorizonMult: e.HorizonMult, Dir: filepath.Join(o.Dir, e.Dir), DataDir: o.DataDir,
		Threads: o.Threads, Limit: o.Limit, Resamples: o.Resamples, Seed: o.Seed, Quiet: o.Quiet, NoFigures: o.NoFigures, SkipCurrent: true}
	for _, r := range e.Runs {
		eo.Checkpoints = append(eo.Checkpoints, filepath.Join(o.Dir, r))
	}
	kept, err := keptRuns(eo.Dir, filepath.Dir(eo.Dir), eo.Checkpoints)
	if err != nil {
		return "", "", err
	}
	planned := slices.Clone(eo.Checkpoints)
	if len(kept) > 0 {
		fmt.Fprintf(env.Out, "reproduce: %s keeps %s, evaluated there before and finished, beside the planned runs\n", e.Dir, strings.Join(kept, ", "))
		eo.Checkpoints = append(eo.Checkpoints, kept...)
		byModelOrder(eo.Checkpoints)
	}
	if e.HorizonMult > 1 {
		path, err := o.stabilityData(ctx, runs, e)
		if err != nil {
			if ctx.Err() != nil {
				return "", "", err
			}
			msg := fmt.Sprintf("%s (Tab. stability) not evaluated: %v", e.Dir, err)
			fmt.Fprintf(env.Out, "reproduce: %s\n", msg)
			return "", msg, nil
		}
		eo.TestData = path
	}
	fmt.Fprintf(env.Out, "reproduce: evaluating %s at %dx the training horizon into %s\n", e.Task, e.HorizonMult, eo.Dir)
	err = experiment.Eval(ctx, &eo)
	if err != nil && len(kept) > 0 && ctx.Err() == nil {
		// A kept run the evaluation cannot take beside the planned ones
		// (another data file, say) must not stop the grid: the planned
		// runs are what was asked for.
		fmt.Fprintf(env.Out, "reproduce: %s with the kept runs: %v; evaluating the planned runs alone\n", e.Dir, err)
		eo.Checkpoints = planned
		err = experiment.Eval(ctx, &eo)
	}
	if err != nil {
		if e.HorizonMult == 1 || ctx.Err() != nil {
			return "", "", err
		}
		// Tab. stability needs trajectories 4x the rollout long; the
		// data of a task may not hold them: said in the report.
		msg := fmt.Sprintf("%s (Tab. stability) not evaluated: %v", e.Dir, err)
		fmt.Fprintf(env.Out, "reproduce: %s\n", msg)
		return "", msg, nil
	}
	return eo.Dir, "", nil
}

// merge writes m's evaluation over seeds (eval.MergeSeeds of the seeds'
// results.json) into its directory and returns it, or a note when a
// seed's evaluation is missing (Tab. stability's, which may not be
// made).
func (o *RunOptions) merge(m Merge) (dir, note string, err error) {
	var results []eval.Results
	for _, e := range m.Evals {
		path := filepath.Join(o.Dir, e, eval.ResultsFile)
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Sprintf("%s not merged over seeds: %s has no evaluation", m.Dir, e), nil
		} else if err != nil {
			return "", "", fmt.Errorf("reproduce: %w", err)
		}
		var r eval.Results
		if err := json.Unmarshal(raw, &r); err != nil {
			return "", "", fmt.Errorf("reproduce: %s: %w", path, err)
		}
		results = append(results, r)
	}
	if dropped := commonModels(results); len(dropped) > 0 {
		fmt.Fprintf(o.Out, "reproduce: %s leaves out %s, not evaluated at every seed\n", m.Dir, strings.Join(dropped, ", "))
	}
	spec := eval.DefaultBootstrap
	spec.Resamples, spec.Seed = o.Resamples, o.Seed
	merged, err := eval.MergeSeeds(results, m.Seeds, spec)
	if err != nil {
		return "", "", fmt.Errorf("reproduce: %s: %w", m.Dir, err)
	}
	dir = filepath.Join(o.Dir, m.Dir)
	if err := writeJSON(dir, eval.ResultsFile, merged); err != nil {
		return "", "", err
	}
	fmt.Fprintf(o.Out, "reproduce: %s over seeds %v into %s\n", strings.Join(m.Evals, ", "), m.Seeds, dir)
	return dir, "", nil
}

// gridTasks are the tasks of the grid's runs, in the paper's order.
func gridTasks(g *Grid) []string {
	var out []string
	for _, task := range config.TaskNames() {
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
		Command: o.Command, Notes: note + o.notes(it.g, it.runs, it.about, it.notes), NoFigures: o.NoFigures})
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
		Command: o.Command, Notes: o.notes(g, runs, about, notes), NoFigures: o.NoFigures})
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
