package experiment

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"uhno/internal/config"
	"uhno/internal/model"
	"uhno/internal/train"
)

// AblateDryRun is `uhno ablate --dry-run`: every run the ablation (or
// sweep) would train, at each of opts.Seeds (or the configuration's seed),
// with its parameter count beside Full's, what its directory holds
// already, its steps left and their time, and the data it needs. The time
// is Full U-HNO's training step measured on this machine at the runs'
// grid, batch and budget (the median of estimateSteps after one
// discarded; 0: not timed) times the steps left, every mode timed as Full
// as uhno reproduce --dry-run does. The channels come from the
// configuration, as uhno train --dry-run takes them. Nothing is
// generated, read, trained or written.
func AblateDryRun(ctx context.Context, opts *AblateOptions, estimateSteps int) error {
	root, err := ablateRoot(opts)
	if err != nil {
		return err
	}
	rows, timeCfg, timeLabel, err := ablateDryRows(opts, root)
	if err != nil {
		return err
	}
	// Full's count, the reference of the other modes (a sweep's entries
	// are all of one mode: no reference).
	fullN := 0
	for _, r := range rows {
		if r.e.mode == model.ModeFull {
			fullN = r.n
			break
		}
	}
	var step time.Duration
	cfg0 := rows[0].e.cfg
	anyLeft := slices.ContainsFunc(rows, func(r ablateDryRow) bool { return r.left > 0 })
	timed := ""
	if estimateSteps > 0 && anyLeft {
		b := BenchOptions{Env: opts.Env, Task: timeCfg.Task, Model: "uhno", Params: opts.Params, Repeats: estimateSteps, Warmup: 1,
			Threads: opts.Threads, Quiet: true, Configure: func(string) (config.Config, error) { return timeCfg, nil }}
		rep, err := Measure(ctx, &b, io.Discard)
		if err != nil {
			return fmt.Errorf("ablate: --dry-run: timing a step: %w", err)
		}
		r := rep.Results[0]
		step = time.Duration(r.Train.MedianMS * float64(time.Millisecond))
		timed = fmt.Sprintf("%s a step (%s's, measured on this machine: %s backend, %d threads, median of %d step(s) after one discarded; every run timed as it)",
			step.Round(time.Millisecond), timeLabel, r.Backend, rep.Threads, estimateSteps)
	}
	fmt.Fprintf(opts.Out, "ablate --dry-run: %d runs of %d steps (warm-up %d, batch %d) on %s in %s\n",
		len(rows), cfg0.Optim.Steps, cfg0.Optim.Warmup, cfg0.Optim.Batch, cfg0.Task, root)
	tw := tabwriter.NewWriter(opts.Out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "seed\trun\tparameters\tvs Full\ton disk\tsteps left\testimate")
	var total time.Duration
	var done, partial int
	for _, r := range rows {
		vs := "-"
		if fullN > 0 && r.e.mode != model.ModeFull {
			vs = fmt.Sprintf("%+.1f%%", 100*(float64(r.n)/float64(fullN)-1))
		}
		est := "-"
		switch {
		case r.left == 0:
			est = "finished"
		case step > 0:
			d := step * time.Duration(r.left)
			total += d
			est = Duration(d)
		}
		switch r.state {
		case RunDone:
			done++
		case RunPartial:
			partial++
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%s\n", r.e.cfg.Seed, r.e.label, groupDigits(r.n), vs, r.state, r.left, est)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if done+partial > 0 {
		fmt.Fprintf(opts.Out, "already there: %d of %d runs finished, %d unfinished (resumed from their checkpoints); the estimates are of the steps left\n", done, len(rows), partial)
	}
	if timed != "" {
		fmt.Fprintf(opts.Out, "time: %s; about %s of training, one run after another (evaluations not included)\n", timed, Duration(total))
	}
	fmt.Fprintf(opts.Out, "data: %s\n", DataStatus(cfg0, opts.DataDir))
	fmt.Fprintln(opts.Out, "nothing was generated, read, trained or written (--dry-run)")
	return nil
}

// ablateDryRow is one run of an ablation's dry run: its entry, parameter
// count, state on disk and steps left.
type ablateDryRow struct {
	e       *ablateEntry
	n, left int
	state   State
}

// ablateDryRows plans every run of the ablation at each seed (as
// ablateSeeds would run them) with its count and what its directory
// holds, and returns the configuration whose step is timed: Full's (a
// sweep's first run's) and its label.
func ablateDryRows(opts *AblateOptions, root string) (rows []ablateDryRow, timeCfg config.Config, timeLabel string, err error) {
	var (
		fullCfg   *config.Config // Full's, the first found
		fullLabel string
		in, out   int
	)
	one := []int64{-1} // the configuration's own seed
	if len(opts.Seeds) > 0 {
		one = opts.Seeds
	}
	for i, sd := range one {
		o := *opts
		o.Seeds, o.Dir = nil, root
		if sd >= 0 {
			if sd != 0 {
				o.Dir = filepath.Join(root, fmt.Sprintf("seed%d", sd))
			}
			set := fmt.Sprintf("seed=%d", sd)
			o.Configure = func(mode string, sets []string) (config.Config, error) {
				return opts.Configure(mode, append(slices.Clone(sets), set))
			}
		}
		if i > 0 {
			o.Prepare = nil // the shared settings are checked and scaled once (idempotent, but it prints)
		}
		p, err := ablatePlan(&o)
		if err != nil {
			return nil, config.Config{}, "", err
		}
		if i == 0 {
			in, out = Channels(p.entries[0].cfg)
			if in == 0 || out == 0 {
				return nil, config.Config{}, "", fmt.Errorf("ablate: --dry-run: the configuration of task %s names no data.inputs or data.outputs, so the model's channels are known only from its data file", p.entries[0].cfg.Task)
			}
		}
		for _, e := range p.entries {
			spec, err := uhnoSpec(e.cfg, in, out, opts.Params)
			if err != nil {
				return nil, config.Config{}, "", err
			}
			if spec, err = model.ResolveFlat(spec); err != nil {
				return nil, config.Config{}, "", err
			}
			rec, err := PlanRecord(e.cfg, "uhno", in, out, opts.Params, 0)
			if err != nil {
				return nil, config.Config{}, "", err
			}
			st, err := RunState(e.dir, e.cfg, rec)
			if err != nil {
				return nil, config.Config{}, "", AsCommand("ablate", err)
			}
			r := ablateDryRow{e: e, n: model.CountUHNO(spec), state: st, left: e.cfg.Optim.Steps}
			switch st {
			case RunDone:
				r.left = 0
			case RunPartial:
				s, _, err := train.ReadState(e.dir)
				if err != nil {
					return nil, config.Config{}, "", AsCommand("ablate", err)
				}
				r.left = max(0, e.cfg.Optim.Steps-s.Step)
			}
			if e.mode == model.ModeFull && fullCfg == nil {
				c := e.cfg
				fullCfg, fullLabel = &c, e.label
			}
			rows = append(rows, r)
		}
	}
	timeCfg, timeLabel = rows[0].e.cfg, rows[0].e.label
	if fullCfg != nil {
		timeCfg, timeLabel = *fullCfg, fullLabel
	}
	return rows, timeCfg, timeLabel, nil
}
