package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"uhno/internal/bench"
	"uhno/internal/config"
	"uhno/internal/datagen"
	"uhno/internal/experiment"
	"uhno/internal/model"
	"uhno/internal/train"
)

// dryRun prints the grid: every run with its parameter count beside Full
// U-HNO's, the data it needs and whether it is there, and its time
// estimated from a short measured training step of each distinct (task,
// model) on this machine (experiment.Measure, at the run's grid, batch
// and budget; an ablation mode is estimated by U-HNO's step) over the
// steps it has left: a run the output directory holds finished is not
// timed, an unfinished one counts from its checkpoint; the total.
// Nothing is trained, generated or written.
func (o *RunOptions) dryRun(ctx context.Context, g *Grid, runs []*planned, about string) error {
	fmt.Fprintf(o.Out, "reproduce --dry-run: %d runs, %d evaluations, %d benches in %s\nschedule %s\n",
		len(g.Runs), len(g.Evals), len(g.Bench), o.Dir, about)
	repeats := max(o.DryRunRepeats, 1)
	left, finished, partial, err := stepsLeft(runs)
	if err != nil {
		return err
	}
	todo := len(runs) - finished
	// With --parallel N each step is timed as the grid will run it: N
	// identical measurements at once, each on its share of the threads
	// (on 2 cores two 1-thread copies of one model did 1.1-1.6x the steps
	// of one 2-thread training, two different models no more:
	// docs/PERFORMANCE.md), and the step time is the slowest of their
	// medians. Copies of one model are what it can time; a grid that
	// pairs different models may do less well than it says.
	par, threads := o.split(todo)
	if par == 1 {
		threads = o.Threads
	}
	stepTime := map[string]time.Duration{}
	measure := func(p *planned) (time.Duration, error) {
		key := p.Task + "/" + p.Model
		if d, ok := stepTime[key]; ok {
			return d, nil
		}
		medians := make([]float64, par)
		errs := make([]error, par)
		var wg sync.WaitGroup
		for i := range par {
			wg.Go(func() {
				b := experiment.BenchOptions{Env: o.Env, Task: p.Task, Model: p.Model, Params: o.Params, Repeats: repeats, Warmup: 1,
					Threads: threads, Quiet: true,
					Configure: func(string) (config.Config, error) { return p.cfg, nil }}
				rep, err := experiment.Measure(ctx, &b, io.Discard)
				if err != nil {
					errs[i] = err
					return
				}
				medians[i] = rep.Results[0].Train.MedianMS
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return 0, err
		}
		d := time.Duration(slices.Max(medians) * float64(time.Millisecond))
		stepTime[key] = d
		return d, nil
	}
	tw := tabwriter.NewWriter(o.Out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\trun\tparameters\tvs Full U-HNO\tsteps\tsteps left\tstep\testimate\tdata")
	var total time.Duration
	for i, p := range runs {
		n, full, err := counts(p)
		if err != nil {
			return err
		}
		step, est := "-", "finished"
		if left[i] > 0 {
			d, err := measure(p)
			if err != nil {
				return fmt.Errorf("reproduce: --dry-run: timing %s: %w", p.Dir, err)
			}
			e := d * time.Duration(left[i])
			total += e
			step, est = d.Round(time.Millisecond).String(), experiment.Duration(e)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%+.1f%%\t%d\t%d\t%s\t%s\t%s\n", i, p.Dir, n, 100*(float64(n)/float64(full)-1),
			p.cfg.Optim.Steps, left[i], step, est, experiment.DataStatus(p.cfg, o.DataDir))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if finished+partial > 0 {
		fmt.Fprintf(o.Out, "in %s already: %d of %d runs finished, %d unfinished (resumed from their checkpoints); the estimates are of the steps left\n",
			o.Dir, finished, len(runs), partial)
	}
	if par == 1 {
		th := "all cores"
		if threads > 0 {
			th = fmt.Sprintf("%d threads", threads)
		}
		fmt.Fprintf(o.Out, "total: about %s of training on this machine (%s; one run at a time; each step time the median of %d measured training step(s) after one discarded, ablation modes timed as U-HNO; evaluations and benches not included)\n",
			experiment.Duration(total), th, repeats)
	} else {
		fmt.Fprintf(o.Out, "total: about %s of training on this machine with --parallel %d, %s of run time in all (%d thread(s) per run; each step time the slowest of %d runs timed at once, each the median of %d measured training step(s) after one discarded, ablation modes timed as U-HNO; the wall time assumes the runs pack evenly; evaluations and benches not included)\n",
			experiment.Duration(total/time.Duration(par)), par, experiment.Duration(total), threads, par, repeats)
	}
	for _, e := range g.Evals {
		fmt.Fprintf(o.Out, "evaluation %s: %d runs at %dx the training horizon%s\n", e.Dir, len(e.Runs), e.HorizonMult, longData(runs, e, o.DataDir))
	}
	if len(g.Bench) > 0 {
		fmt.Fprintf(o.Out, "Tab. cost: uhno bench --preset cost-ns2d of %v into %s/bench\n", g.Bench, o.Dir)
	}
	for _, m := range g.Missing {
		fmt.Fprintf(o.Out, "not planned: %s\n", m)
	}
	fmt.Fprintln(o.Out, "nothing was trained, generated or written (--dry-run)")
	return nil
}

// stepsLeft is what the output directory holds already: each run's steps
// left (a finished run costs nothing and is not timed, an unfinished one
// its remaining steps: the grid resumes it) and how many runs are
// finished and unfinished. A directory of other settings is refused now,
// as the run itself would refuse it.
func stepsLeft(runs []*planned) (left []int, finished, partial int, err error) {
	left = make([]int, len(runs))
	for i, p := range runs {
		st, err := runState(p)
		if err != nil {
			return nil, 0, 0, err
		}
		left[i] = p.cfg.Optim.Steps
		switch st {
		case experiment.RunDone:
			left[i] = 0
			finished++
		case experiment.RunPartial:
			s, _, err := train.ReadState(p.dir)
			if err != nil {
				return nil, 0, 0, experiment.AsCommand("reproduce", err)
			}
			left[i] = max(0, p.cfg.Optim.Steps-s.Step)
			partial++
		}
	}
	return left, finished, partial, nil
}

// counts are a run's parameter count and that of Full U-HNO of its task
// and budget, the count the baselines are matched to (built on a
// bench.Planner: no memory).
func counts(p *planned) (n, full int, err error) {
	in, out := experiment.Channels(p.cfg)
	count := func(cfg config.Config, name string) (int, error) {
		rec, err := experiment.PlanRecord(cfg, name, in, out, p.params, 0)
		if err != nil {
			return 0, err
		}
		m, _, err := model.Build(&bench.Planner{}, rec, 0)
		if err != nil {
			return 0, err
		}
		return m.Params().Count(), nil
	}
	if n, err = count(p.cfg, p.Model); err != nil {
		return 0, 0, fmt.Errorf("reproduce: %s: %w", p.Dir, err)
	}
	fc := p.cfg
	fc.Model.Ablation = model.ModeFull
	if full, err = count(fc, "uhno"); err != nil {
		return 0, 0, fmt.Errorf("reproduce: %s: %w", p.Dir, err)
	}
	return n, full, nil
}

// longData describes the longer test file an evaluation beyond the
// task's own data needs (longDataPlan), or "".
func longData(runs []*planned, e Eval, dataDir string) string {
	opt, ok, err := longDataPlan(runs, e, dataDir)
	if err != nil {
		return "; no longer test data: " + err.Error()
	}
	if !ok {
		return ""
	}
	_, _, path, n, err := datagen.Plan(opt)
	if err != nil {
		return "; no longer test data: " + err.Error()
	}
	status := "generated on first use"
	if _, err := os.Stat(path); err == nil {
		status = "present"
	}
	return fmt.Sprintf(", on %d test trajectories of %d frames (seed %d): %s (%s)", n, opt.Config.Data.Snapshots, opt.Config.Data.Seed, path, status)
}
