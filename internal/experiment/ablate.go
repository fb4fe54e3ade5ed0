package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"uhno/internal/config"
	"uhno/internal/dist"
	"uhno/internal/dynamics"
	"uhno/internal/eval"
	"uhno/internal/flagcheck"
	"uhno/internal/model"
	"uhno/internal/runlock"
	"uhno/internal/runrec"
)

// AblateOptions are the inputs of an ablation or sweep (`uhno ablate`).
type AblateOptions struct {
	Env
	// Prepare, when set, checks and completes the shared settings before
	// any entry is configured (the command: its flags as uhno train's,
	// and the warm-up scaled to --steps).
	Prepare func() error
	// Configure resolves the configuration of one entry: the shared
	// settings (the command's --set flags and schedule), then mode and
	// the extra key=value settings of a sweep.
	Configure func(mode string, sets []string) (config.Config, error)
	Task      string
	Modes     string // "A-I", "A,C,F-H", "all"
	Sweep     string // key=v1,v2,...
	Dir       string
	// The settings of uhno train that shape a run, applied to every
	// entry (Sets, Steps, Warmup, Batch: as recorded in ablation.json
	// and its command line; Configure applies them).
	Sets      []string
	Steps     int
	Warmup    int
	WarmupSet bool
	Batch     int
	Params    string
	DataDir   string
	Threads   int
	Quiet     bool
	// NoFigures writes no PNG figures: neither the evaluations' nor the
	// ablation's degradation or sweep figure (the tables and JSON are
	// the same).
	NoFigures bool
	// Evaluation.
	Rollout   int
	Limit     int
	Resamples int
	Seed      uint64
	// LogEvery, ValEvery and CkptEvery are uhno train's run-control flags.
	LogEvery, ValEvery, CkptEvery int
	// DynamicsEvery is uhno train's --dynamics-every for every run;
	// DynamicsSet says it was given (a 3D task then keeps it on).
	DynamicsEvery int
	DynamicsSet   bool
	// Seeds are training seeds (--seeds): the whole ablation once per
	// seed, on the same data (seed 0's in Dir, seed s's in Dir/seed<s>),
	// then merged over the seeds into Dir/seeds (eval.MergeAblations).
	// Empty: one ablation at the configuration's seed.
	Seeds []int64
}

// parseModes reads --modes (model.ParseModes) as the modes' names.
func parseModes(spec string) ([]string, error) {
	ms, err := model.ParseModes(spec)
	if err != nil {
		return nil, fmt.Errorf("ablate: --modes %q: %w", spec, err)
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out, nil
}

// parseSweep reads --sweep key=v1,v2,...: the key and its values, each
// at least once and none twice.
func parseSweep(spec string) (string, []string, error) {
	key, list, ok := strings.Cut(spec, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.TrimSpace(list) == "" {
		return "", nil, fmt.Errorf("ablate: --sweep %q: want key=v1,v2,... (for example spar.rho0=0.1,0.3,0.5)", spec)
	}
	var vals []string
	seen := map[string]bool{}
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return "", nil, fmt.Errorf("ablate: --sweep %q: an empty value in the list", spec)
		}
		if seen[v] {
			return "", nil, fmt.Errorf("ablate: --sweep %q: value %s appears twice", spec, v)
		}
		seen[v] = true
		vals = append(vals, v)
	}
	return key, vals, nil
}

// ablateEntry is one run of an ablation: a mode (and a swept value).
type ablateEntry struct {
	mode, value, label string
	dir                string
	opts               TrainOptions
	cfg                config.Config
}

// Ablate trains and evaluates every entry and writes the outputs (with
// Seeds, once per seed and then the merge: ablateSeeds). Its phases:
// resolve the entries (ablatePlan), the data and the sizes (ablateData),
// train (ablateTrain), evaluate (ablateEvaluate), write.
func Ablate(ctx context.Context, opts *AblateOptions) error {
	if len(opts.Seeds) > 0 {
		return ablateSeeds(ctx, opts)
	}
	p, err := ablatePlan(opts)
	if err != nil {
		return err
	}
	in, out, nTest, err := ablateData(ctx, opts, p)
	if err != nil {
		return err
	}
	lk, err := runlock.Acquire(p.dir) // one ablation per directory; each run locks its own too
	if err != nil {
		return fmt.Errorf("ablate: %w", err)
	}
	defer lk.Release()
	if err := ablateTrain(ctx, opts, p, in, out); err != nil {
		return err
	}
	res, err := ablateEvaluate(ctx, opts, p, nTest)
	if err != nil {
		return err
	}
	return writeAblation(p.dir, res, opts.Out, opts.NoFigures)
}

// ablatePlanned is an ablation resolved from its options: where it
// goes, the swept key (empty for modes) and the entries, each with its
// configuration and training options.
type ablatePlanned struct {
	dir      string
	sweepKey string
	base     TrainOptions
	entries  []*ablateEntry
}

// ablatePlan checks the options and resolves the entries: the modes (or
// the sweep's values), each one's configuration and training options;
// a bad --params is refused here, before the data are generated.
func ablatePlan(opts *AblateOptions) (*ablatePlanned, error) {
	// Data parallelism is uhno train's alone: under a launcher every rank
	// would run and evaluate every mode into the same directories.
	if l, err := dist.Detect(os.Getenv); err == nil && l.Size > 1 {
		return nil, fmt.Errorf("ablate: started by %s as %d ranks, but uhno ablate does not run data-parallel; run it as one process, or train each mode with mpirun ... uhno train --mode X", l.Launcher, l.Size)
	}
	if err := flagcheck.Check("ablate",
		flagcheck.NonNeg("--steps", opts.Steps, "optim.steps"),
		flagcheck.NonNeg("--warmup", opts.Warmup, "optim.warmup"),
		flagcheck.NonNeg("--batch", opts.Batch, "optim.batch"),
		flagcheck.NonNeg("--threads", opts.Threads, "all cores"),
		flagcheck.NonNeg("--rollout", opts.Rollout, "the task's data.rollout"),
		flagcheck.NonNeg("--trajectories", opts.Limit, "all"),
		flagcheck.Positive("--resamples", opts.Resamples),
		flagcheck.NonNeg("--log-every", opts.LogEvery, "never"),
		flagcheck.NonNeg("--val-every", opts.ValEvery, "only at the end"),
		flagcheck.NonNeg("--ckpt-every", opts.CkptEvery, "only at the end"),
		flagcheck.NonNeg("--dynamics-every", opts.DynamicsEvery, "off"),
	); err != nil {
		return nil, err
	}
	sweepKey, sweepVals, modes, err := ablateModes(opts)
	if err != nil {
		return nil, err
	}
	p := &ablatePlanned{dir: cmp.Or(opts.Dir, defaultAblateDir(opts.Task, sweepKey)), sweepKey: sweepKey}

	// The shared schedule: uhno train's flags, the warm-up scaled once.
	p.base = TrainOptions{Env: opts.Env, Model: "uhno", Params: opts.Params, DataDir: opts.DataDir, Threads: opts.Threads,
		Quiet: opts.Quiet, Graph: true, LogEvery: opts.LogEvery, ValEvery: opts.ValEvery, CkptEvery: opts.CkptEvery,
		Keep: 2, ValPairs: 256, DynamicsEvery: opts.DynamicsEvery, DynamicsTrajs: dynamics.DefaultTrajectories}
	if opts.DynamicsSet {
		p.base.Changed = func(name string) bool { return name == "dynamics-every" }
	}
	if opts.Prepare != nil {
		if err := opts.Prepare(); err != nil {
			return nil, err
		}
	}
	add := func(mode, value string) error {
		e := &ablateEntry{mode: mode, value: value, label: model.Mode(mode).Label(), dir: filepath.Join(p.dir, mode), opts: p.base}
		var sets []string
		if sweepKey != "" {
			e.label = sweepKey + " = " + value
			e.dir = filepath.Join(p.dir, sweepKey+"="+value)
			sets = []string{sweepKey + "=" + value}
		}
		e.opts.Dir = e.dir
		cfg, err := opts.Configure(mode, sets)
		if err != nil {
			return err
		}
		// A bad --params is refused before the data are generated.
		if _, err := ParamsTarget(cfg, opts.Params); err != nil {
			return fmt.Errorf("ablate: %s: %w", e.label, err)
		}
		e.cfg = cfg
		e.opts.Configure = func(io.Writer) (config.Config, error) { return cfg, nil }
		p.entries = append(p.entries, e)
		return nil
	}
	for _, m := range modes {
		if sweepKey == "" {
			if err := add(m, ""); err != nil {
				return nil, err
			}
			continue
		}
		for _, v := range sweepVals {
			if err := add(m, v); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// ablateModes reads --modes and --sweep: the swept key and values (none
// for a modes ablation) and the modes, Full first.
func ablateModes(opts *AblateOptions) (sweepKey string, sweepVals, modes []string, err error) {
	if opts.Sweep == "" {
		spec := cmp.Or(opts.Modes, "all")
		modes, err = parseModes(spec)
		return "", nil, modes, err
	}
	if sweepKey, sweepVals, err = parseSweep(opts.Sweep); err != nil {
		return "", nil, nil, err
	}
	modes = []string{model.ModeFull}
	if opts.Modes != "" {
		if modes, err = parseModes(opts.Modes); err != nil {
			return "", nil, nil, err
		}
		if len(modes) > 2 {
			return "", nil, nil, fmt.Errorf("ablate: --sweep runs one mode over the values; --modes %q names %d", opts.Modes, len(modes)-1)
		}
		modes = modes[len(modes)-1:]
	}
	return sweepKey, sweepVals, modes, nil
}

// ablateData makes the data once (generated on first use as uhno train
// does), whose plan fixes the model's channels, and prints every entry's
// size before anything trains. It returns the channels and the number of
// test trajectories.
func ablateData(ctx context.Context, opts *AblateOptions, p *ablatePlanned) (in, out, nTest int, err error) {
	cfg0 := p.entries[0].cfg
	path, stride, dataDir, err := trainData(ctx, cfg0, &p.base, runrec.BuildRecord{})
	if err != nil {
		return 0, 0, 0, err
	}
	td, err := openTaskData(cfg0, path, stride, statsFrom{Sidecar: freshSidecar(path, dataDir)})
	if err != nil {
		return 0, 0, 0, err
	}
	in, out = td.plan.InputShape(1)[1], td.plan.TargetShape(1)[1]
	nTest = len(td.split.Test)
	td.ds.Close()
	var fullCount int
	specs := make([]model.Spec, len(p.entries))
	for i, e := range p.entries {
		spec, err := uhnoSpec(e.cfg, in, out, opts.Params)
		if err != nil {
			return 0, 0, 0, err
		}
		if spec, err = model.ResolveFlat(spec); err != nil {
			return 0, 0, 0, err
		}
		specs[i] = spec
		if e.mode == model.ModeFull && fullCount == 0 {
			fullCount = model.CountUHNO(spec)
		}
	}
	fmt.Fprintf(opts.Out, "ablate %s: %d runs of %d steps (warm-up %d, batch %d) in %s\n", cfg0.Task, len(p.entries),
		cfg0.Optim.Steps, cfg0.Optim.Warmup, cfg0.Optim.Batch, p.dir)
	for i, e := range p.entries {
		n := model.CountUHNO(specs[i])
		line := fmt.Sprintf("  %-14s %9s parameters", e.label, groupDigits(n))
		if fullCount > 0 && e.mode != model.ModeFull {
			line += fmt.Sprintf(" (%+.1f%% of Full)", 100*(float64(n)/float64(fullCount)-1))
		}
		if e.mode == model.ModeNoUShape {
			line += fmt.Sprintf(": %d flat blocks of width %d, matched to Full", specs[i].FlatBlocks, specs[i].FlatWidth)
		}
		fmt.Fprintln(opts.Out, line)
	}
	return in, out, nTest, nil
}

// ablateTrain trains every entry: finished runs are skipped, interrupted
// ones resumed. Every directory is checked before anything trains, so a
// directory of other settings stops the command before hours of work,
// not after.
func ablateTrain(ctx context.Context, opts *AblateOptions, p *ablatePlanned, in, out int) error {
	entries := p.entries
	states := make([]State, len(entries))
	for i, e := range entries {
		rec, err := PlanRecord(e.cfg, "uhno", in, out, opts.Params, 0)
		if err != nil {
			return err
		}
		if states[i], err = RunState(e.dir, e.cfg, rec); err != nil {
			return AsCommand("ablate", err)
		}
	}
	start := time.Now()
	trained := 0
	for i, e := range entries {
		head := fmt.Sprintf("ablate [%d/%d] %s", i+1, len(entries), e.label)
		if trained > 0 {
			per := time.Since(start) / time.Duration(trained)
			left := 0
			for _, st := range states[i:] {
				if st != RunDone {
					left++
				}
			}
			head += fmt.Sprintf(" (about %s left)", (per * time.Duration(left)).Round(time.Second))
		}
		switch states[i] {
		case RunDone:
			fmt.Fprintf(opts.Out, "%s: trained already (%s)\n", head, e.dir)
			continue
		case RunPartial:
			fmt.Fprintf(opts.Out, "%s: resuming %s\n", head, e.dir)
			ro := TrainOptions{Env: opts.Env, Model: "uhno", Resume: e.dir, Dir: e.dir, DataDir: opts.DataDir, Quiet: opts.Quiet,
				LogEvery: opts.LogEvery, ValEvery: opts.ValEvery, CkptEvery: opts.CkptEvery, Keep: 2, ValPairs: 256, Graph: true,
				DynamicsEvery: opts.DynamicsEvery, DynamicsTrajs: dynamics.DefaultTrajectories}
			if err := Train(ctx, &ro); err != nil {
				return err
			}
		default:
			fmt.Fprintf(opts.Out, "%s: training into %s\n", head, e.dir)
			o := e.opts
			if err := Train(ctx, &o); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("ablate: interrupted during %s; rerun the same command to continue", e.label)
		}
		trained++
	}

	return nil
}

// ablateEvaluate evaluates every entry (cached in
// <dir>/eval/<name>/results.json) and returns the ablation's results.
func ablateEvaluate(ctx context.Context, opts *AblateOptions, p *ablatePlanned, nTest int) (*eval.Ablation, error) {
	entries, dir, sweepKey, cfg0 := p.entries, p.dir, p.sweepKey, p.entries[0].cfg
	steps := cfg0.Data.Rollout
	if opts.Rollout > 0 {
		steps = opts.Rollout
	}
	wantTrajs := nTest
	if opts.Limit > 0 && opts.Limit < nTest {
		wantTrajs = opts.Limit
	}
	res := eval.Ablation{Format: eval.AblationFormat, Version: opts.Version, Task: cfg0.Task, Kind: "modes", SweepKey: sweepKey,
		Schedule: eval.AblationSchedule{Steps: cfg0.Optim.Steps, Warmup: cfg0.Optim.Warmup, Batch: cfg0.Optim.Batch,
			LR: cfg0.Optim.LR, Params: opts.Params, Sets: opts.Sets, Seed: cfg0.Seed},
		Command: ablateCommand(opts)}
	if sweepKey != "" {
		res.Kind = "sweep"
	}
	for i, e := range entries {
		evalDir := filepath.Join(dir, "eval", filepath.Base(e.dir))
		r, err := readEvalCache(evalDir, e.cfg.Optim.Steps, steps, wantTrajs, opts)
		if err != nil {
			return nil, err
		}
		if r == nil {
			fmt.Fprintf(opts.Out, "ablate: evaluating %s [%d/%d]\n", e.label, i+1, len(entries))
			eo := EvalOptions{Env: Env{Out: io.Discard, Err: opts.Err, Version: opts.Version, NewBackend: opts.NewBackend}, Checkpoints: []string{e.dir}, Rollout: opts.Rollout, HorizonMult: 1,
				Dir: evalDir, DataDir: opts.DataDir, Threads: opts.Threads, Limit: opts.Limit, Resamples: opts.Resamples,
				Seed: opts.Seed, Quiet: opts.Quiet, NoFigures: opts.NoFigures}
			if err := Eval(ctx, &eo); err != nil {
				return nil, err
			}
			if r, err = readEvalCache(evalDir, e.cfg.Optim.Steps, steps, wantTrajs, opts); err != nil {
				return nil, err
			}
			if r == nil {
				return nil, fmt.Errorf("ablate: %s: the evaluation just written does not match the run", evalDir)
			}
		}
		m := r.Models[0]
		res.Steps, res.Trajs, res.Data = r.Steps, r.Trajs, r.Data
		res.Entries = append(res.Entries, eval.AblationEntry{Mode: e.mode, Label: e.label, Value: e.value, Run: e.dir,
			Params: m.Params, Step: m.Step, TrainSeconds: trainSeconds(e.dir), Eval: m.Eval})
	}
	if sweepKey == "" {
		eval.DegradationFactors(res.Entries, model.ModeFull)
	}
	return &res, nil
}

// ablateRoot checks --seeds (distinct, not negative, not beside --set
// seed=...) and returns the ablation's directory: --out, else the default
// of the task and the swept key. Seed 0's runs go there, seed s's under
// seed<s>/.
func ablateRoot(opts *AblateOptions) (string, error) {
	for i, sd := range opts.Seeds {
		if sd < 0 || slices.Contains(opts.Seeds[:i], sd) {
			return "", fmt.Errorf("ablate: --seeds: %d: want distinct seeds >= 0, such as 0,1,2", sd)
		}
	}
	if len(opts.Seeds) > 0 {
		for _, set := range opts.Sets {
			if k, _, _ := strings.Cut(set, "="); k == "seed" {
				return "", fmt.Errorf("ablate: --set %s and --seeds both set the runs' seed; give --seeds alone", set)
			}
		}
	}
	sweepKey := ""
	if opts.Sweep != "" {
		k, _, err := parseSweep(opts.Sweep)
		if err != nil {
			return "", err
		}
		sweepKey = k
	}
	return cmp.Or(opts.Dir, defaultAblateDir(opts.Task, sweepKey)), nil
}

// defaultAblateDir is where an ablation goes without --out:
// runs/ablate-<task>, or runs/sweep-<task>-<key> for a sweep.
func defaultAblateDir(task, sweepKey string) string {
	if sweepKey != "" {
		return filepath.Join(RunsDir, "sweep-"+task+"-"+sweepKey)
	}
	return filepath.Join(RunsDir, "ablate-"+task)
}

// ablateSeeds is Ablate with opts.Seeds: the ablation at each seed (the
// seed set on every run, after the other settings), then their
// ablation.json files merged over the seeds into <dir>/seeds.
func ablateSeeds(ctx context.Context, opts *AblateOptions) error {
	dir, err := ablateRoot(opts)
	if err != nil {
		return err
	}
	var abs []eval.Ablation
	for _, sd := range opts.Seeds {
		o := *opts
		o.Seeds, o.Dir = nil, dir
		if sd != 0 {
			o.Dir = filepath.Join(dir, fmt.Sprintf("seed%d", sd))
		}
		seedSet := fmt.Sprintf("seed=%d", sd)
		o.Configure = func(mode string, sets []string) (config.Config, error) {
			return opts.Configure(mode, append(slices.Clone(sets), seedSet))
		}
		fmt.Fprintf(opts.Out, "ablate: seed %d into %s\n", sd, o.Dir)
		if err := Ablate(ctx, &o); err != nil {
			return err
		}
		raw, err := os.ReadFile(filepath.Join(o.Dir, eval.AblationFile))
		if err != nil {
			return fmt.Errorf("ablate: %w", err)
		}
		var a eval.Ablation
		if err := json.Unmarshal(raw, &a); err != nil {
			return fmt.Errorf("ablate: %s: %w", filepath.Join(o.Dir, eval.AblationFile), err)
		}
		abs = append(abs, a)
	}
	spec := eval.DefaultBootstrap
	spec.Resamples, spec.Seed = opts.Resamples, opts.Seed
	merged, err := eval.MergeAblations(abs, opts.Seeds, spec)
	if err != nil {
		return fmt.Errorf("ablate: %w", err)
	}
	merged.Command = ablateCommand(opts)
	if err := os.MkdirAll(filepath.Join(dir, "seeds"), 0o755); err != nil {
		return fmt.Errorf("ablate: %w", err)
	}
	return writeAblation(filepath.Join(dir, "seeds"), &merged, opts.Out, opts.NoFigures)
}
