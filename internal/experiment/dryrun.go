package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"uhno/internal/bench"
	"uhno/internal/config"
	"uhno/internal/datagen"
	"uhno/internal/model"
	"uhno/internal/runrec"
	"uhno/internal/train"
)

// DryRunOptions are the inputs of `uhno train --dry-run`.
type DryRunOptions struct {
	Env           // Out: where the plan goes; NewBackend: the backend timed
	Model  string // a registered model
	Params string // U-HNO's parameter budget ("": as configured; ParamsText)
	Width  int    // FNO's width (0: matched)
	// DataDir is the data folder ("": $UHNO_DATA or the user cache).
	DataDir string
	// EstimateSteps is how many training steps are timed (after one
	// discarded) for the run's time estimate; 0: no estimate.
	EstimateSteps int
	Threads       int // the timing's threads (0: all cores)
}

// DryRun is `uhno train --dry-run` of the configuration cfg: it builds
// the model the run would train (on a bench.Planner: building allocates the parameters and nothing else), prints its
// parameter count beside Full U-HNO's for the same task and budget, and
// the training plan, and returns without generating, reading or even
// opening any data. The channels come from the configuration's
// data.inputs, data.outputs and data.history, as `uhno bench` takes them.
func DryRun(ctx context.Context, cfg config.Config, opts DryRunOptions) error {
	if _, err := ParamsTarget(cfg, opts.Params); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	in, out := Channels(cfg)
	if in == 0 || out == 0 {
		return fmt.Errorf("train: --dry-run: the configuration of task %s names no data.inputs or data.outputs, so the model's channels are known only from its data file", cfg.Task)
	}
	// The model is built on a Planner: no memory, no initial values, so
	// even U-HNO at 128^3 (845M parameters) is planned in an instant.
	pl := &bench.Planner{}
	rec := runrec.BuildRecord{Record: model.Record{Model: opts.Model}}
	m, desc, err := buildModel(cfg, in, out, modelChoice{opts.Params, opts.Width}, &rec, pl)
	if err != nil {
		return err
	}
	if err := m.CheckGrid(cfg.PDE.Grid); err != nil {
		return err
	}
	// Full U-HNO of the same task and budget: the count every baseline is
	// matched to.
	full := cfg
	full.Model.Ablation = model.ModeFull
	spec, err := uhnoSpec(full, in, out, opts.Params)
	if err != nil {
		return err
	}
	n, ref := m.Params().Count(), model.CountUHNO(spec)
	fmt.Fprintf(opts.Out, "dry run: %s on %s (grid %v, %d input and %d output channels)\n", m.Name(), cfg.Task, cfg.PDE.Grid, in, out)
	fmt.Fprintf(opts.Out, "model: %s\n", desc)
	budget := "at this budget"
	if opts.Params == ParamsText {
		budget = "at the text's size (Tab. per-task-hp)"
	}
	fmt.Fprintf(opts.Out, "parameters: %s, Full U-HNO %s %s (C0 %d): %+.1f%%\n",
		groupDigits(n), budget, groupDigits(ref), spec.C0, 100*(float64(n)/float64(ref)-1))
	fmt.Fprintf(opts.Out, "plan: %d steps, warm-up %d then cosine to 0, peak lr %g, AdamW (betas %g, %g, weight decay %g), batch %d, seed %d\n",
		cfg.Optim.Steps, cfg.Optim.Warmup, cfg.Optim.LR, cfg.Optim.Betas[0], cfg.Optim.Betas[1], cfg.Optim.WeightDecay, cfg.Optim.Batch, cfg.Seed)
	lc := train.LossConfigFor(cfg)
	fmt.Fprintf(opts.Out, "loss: MSE + %g H1 + %g CBC (Eq. loss, mode %s; CBC only where the model has a branch pair)\n", lc.LambdaH1, lc.LambdaCBC, cfg.Model.Ablation)
	peak, err := dryRunMemory(opts.Out, cfg, pl, m, lc, in, out)
	if err != nil {
		return err
	}
	if err := dryRunTime(ctx, cfg, opts, peak); err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "data: %s\n", DataStatus(cfg, opts.DataDir))
	fmt.Fprintln(opts.Out, "nothing was generated, read or written (--dry-run)")
	return nil
}

// DataStatus says where a run of cfg takes its data from, without
// touching it: a user's file described by uhno datagen --from, a PDEBench index, the generated file if it is already
// there, or the file that would be generated (dataDir "": $UHNO_DATA or
// the user cache), as uhno train looks them up.
func DataStatus(cfg config.Config, dataDir string) string {
	if cfg.Data.Source == config.SourceDescribed {
		return fmt.Sprintf("the user's file described in %s (%d trajectories to train, %d to test)", cfg.Data.File, cfg.Data.TrainTrajectories, cfg.Data.TestTrajectories)
	}
	dir := dataDir
	if dir == "" {
		d, err := datagen.DefaultDir()
		if err != nil {
			return "unknown (" + err.Error() + ")"
		}
		dir = d
	}
	if idx, err := datagen.ReadPDEBenchIndex(dir, cfg.Task); err == nil {
		return fmt.Sprintf("the PDEBench file %s (indexed in %s)", idx.Path, dir)
	}
	_, _, path, n, err := datagen.Plan(datagen.Options{Config: cfg, Dir: dir})
	if err != nil {
		return "cannot be planned: " + err.Error()
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Sprintf("%s (%d trajectories, present)", path, n)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("%s (%v)", path, err)
	}
	return fmt.Sprintf("%s (%d trajectories, generated on first use)", path, n)
}

// dryRunMemory prints the memory plan of one training step (bench.PlanStep)
// at the configuration's batch: the parts, the tape's bytes per grid
// level, the peak in float32 and with the tape in bf16; for 3D tasks also
// the weights per level and the largest cubic grid whose step fits this
// machine's memory at batch 1.
func dryRunMemory(w io.Writer, cfg config.Config, pl *bench.Planner, m model.Model, lc train.LossConfig, in, out int) (peak int64, err error) {
	plan, err := bench.PlanStep(pl, m, lc, cfg.Optim.Batch, in, out, cfg.PDE.Grid)
	if err != nil {
		return 0, fmt.Errorf("train: --dry-run: memory plan: %w", err)
	}
	fmt.Fprintf(w, "memory of one training step at batch %d (uhno's buffers; backend workspace not included):\n", plan.Batch)
	fmt.Fprintf(w, "  weights %s, gradients %s, AdamW moments %s, batch %s (float32)\n",
		gib(plan.Weights), gib(plan.Grads), gib(plan.Moments), gib(plan.Data))
	if cfg.Dim == 3 {
		var parts []string
		for _, g := range plan.WeightGroups {
			parts = append(parts, g.Name+" "+gib(g.Bytes))
		}
		fmt.Fprintf(w, "  weights by part: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "  %-14s %12s %12s\n", "tape, grid", "forward", "backward")
	for _, g := range plan.Grids {
		fmt.Fprintf(w, "  %-14s %12s %12s\n", gridName(g.Grid), gib(g.Forward), gib(g.Backward))
	}
	fmt.Fprintf(w, "  %-14s %12s %12s\n", "other", gib(plan.Other.Forward), gib(plan.Other.Backward))
	fmt.Fprintf(w, "  peak %s in float32, %s with the tape in bf16 (float32 master weights, gradients and AdamW)\n", gib(plan.Peak), gib(plan.PeakBF16))
	if spec, err := config.LookupTask(cfg.Task); err == nil && spec.PaperMemory != "" {
		fmt.Fprintln(w, "  "+spec.PaperMemory)
	}
	if cfg.Dim != 3 {
		return plan.Peak, nil
	}
	total, err := bench.MachineMemory()
	if err != nil {
		fmt.Fprintf(w, "  largest grid: not planned (%v)\n", err)
		return plan.Peak, nil
	}
	n32, n16, err := largestCube(pl, m, lc, in, out, cfg.PDE.Grid, total)
	if err != nil {
		return 0, fmt.Errorf("train: --dry-run: memory plan: %w", err)
	}
	fmt.Fprintf(w, "  largest cubic grid within this machine's %s at batch 1: %s in float32, %s with the tape in bf16\n", gib(total), cube(n32), cube(n16))
	return plan.Peak, nil
}

// dryRunTime prints the run's estimated training time on this backend:
// the median of opts.EstimateSteps measured training steps (after one
// discarded) of the model the run would train, at its grid, batch and
// budget, times its steps (as uhno reproduce --dry-run estimates). A step
// whose planned peak (float32) exceeds this machine's memory is not run.
func dryRunTime(ctx context.Context, cfg config.Config, opts DryRunOptions, peak int64) error {
	if opts.EstimateSteps <= 0 {
		return nil
	}
	if total, err := bench.MachineMemory(); err == nil && peak > total {
		fmt.Fprintf(opts.Out, "time: not measured: one training step needs %s, this machine has %s\n", gib(peak), gib(total))
		return nil
	}
	b := BenchOptions{Env: opts.Env, Task: cfg.Task, Model: opts.Model, Params: opts.Params, Width: opts.Width,
		Repeats: opts.EstimateSteps, Warmup: 1, Threads: opts.Threads, Quiet: true,
		Configure: func(string) (config.Config, error) { return cfg, nil }}
	rep, err := Measure(ctx, &b, io.Discard)
	if err != nil {
		return fmt.Errorf("train: --dry-run: timing a step: %w", err)
	}
	r := rep.Results[0]
	step := time.Duration(r.Train.MedianMS * float64(time.Millisecond))
	fmt.Fprintf(opts.Out, "time: %s per training step on this machine (%s backend, %d threads; median of %d step(s) after one discarded), about %s for %d steps (validation and checkpoints not included)\n",
		step.Round(time.Millisecond), r.Backend, rep.Threads, opts.EstimateSteps, Duration(step*time.Duration(cfg.Optim.Steps)), cfg.Optim.Steps)
	return nil
}

// Duration prints an estimated duration: hours or minutes to one
// decimal or none, seconds below a minute.
func Duration(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%.1f h", d.Hours())
	case d >= time.Minute:
		return fmt.Sprintf("%.0f min", d.Minutes())
	}
	return d.Round(100 * time.Millisecond).String()
}

// largestCube returns the largest N (a multiple of the model's smallest
// admissible step, up to 4 times the task's grid) whose training step at
// batch 1 on an N^3 grid peaks within limit bytes, in float32 and with
// the tape in bf16 (0: none fits).
func largestCube(pl *bench.Planner, m model.Model, lc train.LossConfig, in, out int, grid []int, limit int64) (n32, n16 int, err error) {
	top := 4 * max(grid[0], grid[1], grid[2])
	for n := 2; n <= top; n += 2 {
		g := []int{n, n, n}
		if m.CheckGrid(g) != nil {
			continue
		}
		l := lc
		l.Spacing = []float64{1 / float64(n), 1 / float64(n), 1 / float64(n)}
		p, err := bench.PlanStep(pl, m, l, 1, in, out, g)
		if err != nil {
			return 0, 0, err
		}
		if p.Peak <= limit {
			n32 = n
		}
		if p.PeakBF16 <= limit {
			n16 = n
		}
		if p.PeakBF16 > limit {
			break
		}
	}
	return n32, n16, nil
}

// gib formats bytes in GiB (MiB below one GiB).
func gib(b int64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}

// gridName writes a grid as 128x128x128.
func gridName(g []int) string {
	parts := make([]string, len(g))
	for i, n := range g {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, "x")
}

// cube writes N^3, or "none" for 0.
func cube(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprintf("%d^3", n)
}
