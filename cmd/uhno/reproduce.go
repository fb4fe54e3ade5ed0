package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"uhno/internal/atomicfile"
	"uhno/internal/config"
	"uhno/internal/eval"
	"uhno/internal/experiment"
	"uhno/internal/reproduce"
)

// reproduceOptions are the inputs of `uhno reproduce`: reproduce.RunOptions
// bound to its flags, and the flags that stay in the command (--slurm).
type reproduceOptions struct {
	reproduce.RunOptions
	Slurm string
	// args are the flags that define the grid, repeated in the Slurm jobs.
	args []string
}

func newReproduceCmd(out, errOut io.Writer, runF func(context.Context, *reproduceOptions) error) *cobra.Command {
	opts := &reproduceOptions{RunOptions: reproduce.RunOptions{Env: env(out, errOut), Cell: -1}}
	var tables, tasks, models []string
	var seeds []int64
	var modes string
	var schedules strings.Builder
	for _, s := range reproduce.Schedules {
		fmt.Fprintf(&schedules, "  %-7s %s\n", s.Name, s.About)
	}
	cmd := &cobra.Command{
		Use:   "reproduce [--tables LIST|all] [--tasks LIST|all] [--models LIST|all] [--schedule paper|cpu5k] [--steps N] [--params 0.62M] [--parallel N] [--dry-run] [--out DIR]",
		Short: "Regenerate the paper's tables: train every (task, model or mode) run, evaluate, bench and report, resumably",
		Long:  reproduceLong + schedules.String() + reproduceLongTail,
		Example: `  uhno reproduce --dry-run --schedule paper
  uhno reproduce --tasks burgers,darcy --models uhno,fno --steps 30 --params 0.06M
  uhno reproduce --schedule cpu5k --parallel 2 --out runs/reproduce
  uhno reproduce --schedule cpu5k --slurm reproduce.sh && bash reproduce.sh
  uhno reproduce --schedule cpu5k --cell 3; uhno reproduce --schedule cpu5k --finish
  uhno reproduce --tables main-acc --tasks ns2d --models uhno,fno --seeds 0,1,2 --schedule cpu5k
  uhno reproduce --tables main-acc,ablation-extra --tasks ac2d --models uhno,fno --modes A,F --seeds 0,1,2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Grid = reproduce.Options{Tables: tables, Tasks: tasks, Models: models, Seeds: seeds, Modes: modes}
			if _, err := reproduce.Plan(opts.Grid); err != nil { // a bad list: one line before anything else
				return fmt.Errorf("reproduce: %w", err)
			}
			if !cmd.Flags().Changed("cell") {
				opts.Cell = -1
			}
			if opts.DryRunRepeats < 1 {
				return fmt.Errorf("reproduce: --estimate-steps %d: want at least 1 timed step", opts.DryRunRepeats)
			}
			opts.Command = "uhno reproduce"
			cmd.Flags().Visit(func(f *pflag.Flag) {
				vals := []string{f.Value.String()}
				if sv, ok := f.Value.(interface{ GetSlice() []string }); ok {
					vals = sv.GetSlice()
				}
				for _, v := range vals {
					if f.Value.Type() == "bool" {
						opts.Command += " --" + f.Name
					} else {
						opts.Command += " --" + f.Name + " " + v
					}
				}
				if !slices.Contains([]string{"slurm", "cell", "finish", "dry-run", "estimate-steps", "parallel", "quiet"}, f.Name) {
					for _, v := range vals {
						opts.args = append(opts.args, "--"+f.Name+"="+v)
					}
				}
			})
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return reproduceRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&tables, "tables", nil, "tables: all or a comma-separated list of "+strings.Join(reproduce.TableNames, ", "))
	f.StringSliceVar(&tasks, "tasks", nil, "tasks: all (the paper's columns) or a comma-separated list of "+strings.Join(config.TaskNames(), ", ")+"; a regime named (burgers-shock) gets Tab. main-acc's cells and, with --modes, the ablation, ours only")
	f.StringSliceVar(&models, "models", nil, "models: all or a comma-separated list of "+strings.Join(reproduce.Models, ", ")+", fno-wider")
	f.Int64SliceVar(&seeds, "seeds", nil, "training seeds, e.g. 0,1,2: every cell once per seed on the same data and test split (seed 0's runs are the one-seed grid's; seed s's in <task>/seed<s>/), evaluations merged over the seeds")
	f.StringVar(&modes, "modes", "", "Tab. ablation-extra's modes beside Full: letters, ranges and lists (A-I, A,F); default all nine. given, a task named in --tasks gets them even where the paper has no ablation column")
	f.StringVar(&opts.Schedule, "schedule", reproduce.Schedules[0].Name, "named schedule: "+strings.Join(reproduce.ScheduleNames(), ", "))
	f.IntVar(&opts.Steps, "steps", 0, "optimizer steps of every run, overriding the schedule's (warm-up scaled)")
	f.StringVar(&opts.Params, "params", "0.62M", "scale U-HNO's width to this parameter count (the baselines matched to it); text: U-HNO at Tab. per-task-hp exactly")
	f.IntVar(&opts.Parallel, "parallel", 1, "trainings at once on this machine, the threads split between them")
	f.BoolVar(&opts.DryRun, "dry-run", false, "print the grid, parameter counts, data, what --out holds already and a measured time estimate of the steps left; train nothing")
	f.IntVar(&opts.DryRunRepeats, "estimate-steps", 1, "--dry-run: timed training steps per run for the estimate (the median; more steps, a steadier estimate)")
	f.StringVar(&opts.Dir, "out", "runs/reproduce", "output directory")
	f.StringVar(&opts.Slurm, "slurm", "", "write a Slurm submission script to this file (a job array of --cell, then --finish) and exit")
	f.IntVar(&opts.Cell, "cell", -1, "train this cell of the grid only (0-based, as --dry-run and --slurm list them)")
	f.BoolVar(&opts.Finish, "finish", false, "evaluate, bench and report once every cell is trained")
	f.StringArrayVar(&opts.Sets, "set", nil, "override one configuration key for every run, key=value (repeatable)")
	f.IntVar(&opts.Threads, "threads", 0, "CPU threads in all (default: all cores), split over --parallel")
	f.StringVar(&opts.DataDir, "data", "", "data directory (default: $UHNO_DATA or the user cache)")
	f.StringVar(&opts.PDEBench, "pdebench", "", "PDEBench's 3D-CFD HDF5 file for the cfd3d cells (indexed as uhno datagen --pdebench does)")
	f.IntVar(&opts.Limit, "trajectories", 0, "evaluate only the first N test trajectories (default: all)")
	f.IntVar(&opts.Resamples, "resamples", eval.DefaultResamples, "bootstrap resamples")
	f.Uint64Var(&opts.Seed, "seed", 0, "bootstrap seed")
	f.BoolVar(&opts.Quiet, "quiet", false, "no progress bars")
	f.BoolVar(&opts.NoFigures, "no-figures", false, "write no PNG figures (evaluations, ablations, report); figures are drawn when an evaluation is made, so a later run without the flag does not draw those of evaluations already made")
	return cmd
}

// reproduceRun configures every run as uhno train would (the built-in
// file, --set, the mode, --steps with the warm-up scaled) and hands the
// grid to reproduce.Run, or writes the Slurm script.
func reproduceRun(ctx context.Context, opts *reproduceOptions) error {
	o := opts.RunOptions
	o.BenchRepeats, o.BenchWarmup = 10, 2 // uhno bench's defaults
	described := ""
	tf, _, err := describedIn(o.DataDir)
	if err != nil {
		return err
	}
	if tf != nil {
		// A user's data file (uhno datagen --from): the grid is its base
		// task's column, trained and evaluated on the described data.
		switch {
		case len(o.Grid.Tasks) == 0:
			o.Grid.Tasks = []string{tf.Base}
		case len(o.Grid.Tasks) != 1 || o.Grid.Tasks[0] != tf.Base:
			return fmt.Errorf("reproduce: --data %s holds a task described on %s's settings; give --tasks %s or none", o.DataDir, tf.Base, tf.Base)
		}
		described = o.DataDir
	}
	o.Configure = func(task, mode string, steps int, sets []string) (config.Config, error) {
		c := trainOptions{TrainOptions: experiment.TrainOptions{Env: experiment.Env{Out: io.Discard, Err: io.Discard}, Steps: steps, DataDir: described},
			Mode: mode, Load: loadRequest{Task: task, Sets: sets}}
		if err := scaleWarmup(&c); err != nil {
			return config.Config{}, err
		}
		return loadTrain(&c)
	}
	if opts.Slurm == "" {
		return reproduce.Run(ctx, &o)
	}
	g, err := o.PlanGrid()
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("reproduce: --slurm: the path of this binary: %w", err)
	}
	var b strings.Builder
	if err := reproduce.WriteSlurm(&b, g, reproduce.SlurmOptions{Binary: bin, Args: opts.args, CPUsPerTask: o.Threads}); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(opts.Slurm, []byte(b.String()), 0o755); err != nil {
		return fmt.Errorf("reproduce: --slurm: %w", err)
	}
	fmt.Fprintf(o.Out, "reproduce: %d cells; submit with: bash %s\n", len(g.Runs), opts.Slurm)
	return nil
}

// reproduceLong and reproduceLongTail are `uhno reproduce --help`'s text,
// before and after the list of schedules.
const (
	reproduceLong = `Work out the runs the chosen tables need (Tab. main-acc, main-acc-h1,
stability, spectral, fno-wider, ablation-extra, cost), train each as an
ordinary run of uhno train (<out>/<task>/<model>; ablation modes in
<out>/<task>/ablate/<mode>, whose full is a link to ../uhno), evaluate each
task's runs side by side (<task>/eval, and <task>/eval-4x at 4x the
training horizon for Tab. stability), run uhno ablate's evaluation for
Tab. ablation-extra, bench Tab. cost (<out>/bench), and write one report
(<out>/report/report.md) beside the paper's values with the schedule, the
commit and the commands.

Resumable like uhno ablate: finished runs and current evaluations are
skipped, an interrupted run resumes, a run directory made with other
settings is refused naming the first difference, Ctrl-C stops after a
checkpoint. --parallel N trains N runs at once with the threads split;
training's bits do not depend on the split. On a 2-core machine two
1-thread copies of one model did 1.1-1.6x the steps of one 2-thread
training, two different models no more (docs/PERFORMANCE.md). --dry-run --parallel N times each step with N
runs at once and prints the wall time, so a machine's best N can be
read off before training.

Schedules (--schedule; --steps N overrides the steps, the warm-up scaled
as uhno train scales it):
`
	reproduceLongTail = `
--cell K trains cell K alone (the same flags plan the same grid) and
--finish evaluates, benches and reports once every cell is done, so any
scheduler can run the grid; --slurm FILE writes a Slurm script doing so
(a job array of --cell, then an afterok job of --finish). --dry-run prints
the grid, every run's parameter count beside U-HNO's, its data and an
estimate of its time from measured training steps on this machine (the
median of --estimate-steps, default 1; the machine should be quiet).
Without --cell or --finish, each task is evaluated as soon as its last run
is trained and the report is rewritten over the tasks done so far (an
interim report, said so at its top), so a grid of days shows each column
when it is ready; a task with Tab. ablation-extra's modes is evaluated
when its models are trained, and its ablation when the modes are. The
finish then skips those evaluations as current. On
a cluster, the same command with --tasks TASK --finish reports one task's
finished cells early.
3D-CFD needs PDEBench's file (--pdebench FILE, or one indexed by uhno
datagen --pdebench); without it the report lists the cells left out.

--seeds 0,1,2 trains every cell once per training seed: the seed changes
the initialisation and the batch order, never the data (one data file per
task, one test split; data.seed). Seed 0's runs are the one-seed grid's,
so a grid already trained is reused; seed s's runs, evaluations and
ablation live under <task>/seed<s>/. Each task's evaluations are merged
over the seeds into <task>/eval-seeds (and eval-4x-seeds): per model the
mean over seeds of each seed's mean, each seed's value and the spread
between them, and an interval from a bootstrap over seeds and test
trajectories, which holds the training variance; the report reads the
merge and ranks by the seed means. --cell, --slurm and --parallel cover
the seed axis (a seed's cells follow the one before's).

--modes A,F restricts Tab. ablation-extra to those modes beside Full
(default all nine). The modes are planned on the table's paper columns
(Burgers, NS-2D) and, with --modes, on every other task named in --tasks
(not all), whose ablation the report shows without paper values. A
regime of a paper equation (burgers-shock, burgers-paper) named in
--tasks gets Tab. main-acc's and main-acc-h1's cells as its own column,
without paper values:
  uhno reproduce --tables main-acc,ablation-extra --tasks burgers-shock --models uhno,fno --modes A,F --seeds 0,1,2 --schedule cpu5k`
)
