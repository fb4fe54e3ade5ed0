package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"uhno/internal/config"
	"uhno/internal/cpu"
	"uhno/internal/datagen"
	"uhno/internal/model"
	"uhno/internal/train"
)

// trainDryRun is `uhno train --dry-run`: it resolves the configuration,
// builds the model the run would train (on the CPU, whatever the build:
// building allocates the parameters and nothing else), prints its
// parameter count beside Full U-HNO's for the same task and budget, and
// the training plan, and returns without generating, reading or even
// opening any data. The channels come from the configuration's
// data.inputs, data.outputs and data.history, as `uhno bench` takes them.
func trainDryRun(opts *trainOptions) error {
	if opts.Resume != "" {
		return fmt.Errorf("train: --dry-run plans a new run; a resumed run's plan is its checkpoint (uhno train --resume %s shows it)", opts.Resume)
	}
	if err := scaleWarmup(opts); err != nil {
		return err
	}
	cfg, err := loadConfig(trainLoad(opts))
	if err != nil {
		return err
	}
	in := max(cfg.Data.History, 1) * len(cfg.Data.Inputs)
	out := len(cfg.Data.Outputs)
	if in == 0 || out == 0 {
		return fmt.Errorf("train: --dry-run: the configuration of task %s names no data.inputs or data.outputs, so the model's channels are known only from its data file", cfg.Task)
	}
	be := cpu.New(1)
	rec := buildRecord{Model: opts.Model}
	m, desc, err := buildModel(cfg, in, out, opts, &rec, be)
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
	spec, err := model.SpecFromConfig(full, in, out)
	if err != nil {
		return err
	}
	if opts.Params != "" {
		target, err := model.ParseCount(opts.Params)
		if err != nil {
			return err
		}
		if spec, err = model.UHNOForBudget(spec, target); err != nil {
			return err
		}
	}
	n, ref := m.Params().Count(), model.CountUHNO(spec)
	fmt.Fprintf(opts.Out, "dry run: %s on %s (grid %v, %d input and %d output channels)\n", m.Name(), cfg.Task, cfg.PDE.Grid, in, out)
	fmt.Fprintf(opts.Out, "model: %s\n", desc)
	fmt.Fprintf(opts.Out, "parameters: %s, Full U-HNO at this budget %s (C0 %d): %+.1f%%\n",
		groupDigits(n), groupDigits(ref), spec.C0, 100*(float64(n)/float64(ref)-1))
	fmt.Fprintf(opts.Out, "plan: %d steps, warm-up %d then cosine to 0, peak lr %g, AdamW (betas %g, %g, weight decay %g), batch %d, seed %d\n",
		cfg.Optim.Steps, cfg.Optim.Warmup, cfg.Optim.LR, cfg.Optim.Betas[0], cfg.Optim.Betas[1], cfg.Optim.WeightDecay, cfg.Optim.Batch, cfg.Seed)
	lc := train.LossConfigFor(cfg)
	fmt.Fprintf(opts.Out, "loss: MSE + %g H1 + %g CBC (Eq. loss, mode %s; CBC only where the model has a branch pair)\n", lc.LambdaH1, lc.LambdaCBC, cfg.Model.Ablation)
	fmt.Fprintf(opts.Out, "data: %s\n", dryRunData(cfg, opts))
	fmt.Fprintln(opts.Out, "nothing was generated, read or written (--dry-run)")
	return nil
}

// dryRunData says where the run's data would come from, without touching
// it: a PDEBench index, the generated file if it is already there, or the
// file that would be generated.
func dryRunData(cfg config.Config, opts *trainOptions) string {
	dir := opts.DataDir
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
