package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"uhno/internal/config"
	"uhno/internal/dynamics"
	"uhno/internal/eval"
	"uhno/internal/experiment"
)

// ablateOptions are the inputs of `uhno ablate`, bound to its flags.
type ablateOptions = experiment.AblateOptions

func newAblateCmd(out, errOut io.Writer, runF func(context.Context, *ablateOptions) error) *cobra.Command {
	opts := &ablateOptions{Env: env(out, errOut)}
	var (
		dryRun        bool
		estimateSteps int
	)
	cmd := &cobra.Command{
		Use:   "ablate [--task NAME] [--modes A-I] [--sweep key=v1,v2,...] [--steps N] [--params 0.62M] [--out DIR]",
		Short: "Train and evaluate the paper's ablation modes (or a sweep of one setting) under one schedule",
		Long: `Run the ablation study of the paper (Sec. "Ablation Study", Tab.
ablation-setup, App. "Extended Ablations"): train Full U-HNO and each
requested mode under one shared schedule, evaluate each with the rollout
suite of uhno eval on the test trajectories, and tabulate each mode's
rollout MSE, relL2 and relH1 (95% bootstrap intervals) and its degradation
factor relative to Full.

--modes takes letters, ranges and lists: A-I, A,C,F-H, all. Full is always
run as the reference. Mode G (flat stack) is matched to Full's parameter
count; every mode's count is printed before training. The flags of uhno
train that shape a run (--steps, --warmup, --params, --batch, --set,
--data) apply to every mode; --steps without --warmup scales the warm-up
as uhno train does. Without --task: burgers.

--sweep key=v1,v2,... runs the same pipeline over one configuration value
instead (Full, or the one mode --modes names), e.g. --sweep
spar.rho0=0.1,0.2,0.3,0.4,0.5,0.6,0.7 for panel (f) of Fig.
training-dynamics, and draws the endpoint relL2 and relH1 against it.

The output directory (default runs/ablate-<task>, runs/sweep-<task>-<key>
for a sweep) holds one training run per entry (<dir>/<mode> or
<dir>/<key>=<value>, runs of uhno train), its evaluation (<dir>/eval/...),
ablation.json, ablation.md and figures/degradation.png (Fig.
burgers-ablation-bars) or figures/sweep.png. Rerunning the same command
skips finished runs and evaluations and resumes an interrupted run from
its last checkpoint; Ctrl-C stops after saving a checkpoint. A run
directory that holds a run with other settings is an error, not
overwritten. --dry-run prints every run (per seed) with its parameter
count, what the output directory holds already and the time of the steps
left, from Full's training step measured on this machine; it trains,
generates and writes nothing.`,
		Example: `  uhno ablate --modes A-I
  uhno ablate --modes A-I --params text --dry-run
  uhno ablate --modes A-I --steps 5000 --params 0.62M
  uhno ablate --modes A,F --task ks --steps 2000
  uhno ablate --sweep spar.rho0=0.1,0.3,0.5,0.7 --steps 2000 --params 0.62M`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.WarmupSet = cmd.Flags().Changed("warmup")
			opts.DynamicsSet = cmd.Flags().Changed("dynamics-every")
			// A described task (uhno datagen --from): its base task, not
			// --task's default.
			if tf, _, err := describedIn(opts.DataDir); err != nil {
				return err
			} else if tf != nil && !cmd.Flags().Changed("task") {
				opts.Task = tf.Base
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if dryRun {
				return experiment.AblateDryRun(cmd.Context(), ablateConfigure(opts), estimateSteps)
			}
			return ablateRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&dryRun, "dry-run", false, "print every run with its parameter count, what --out holds already and a measured time estimate of the steps left; train nothing")
	f.IntVar(&estimateSteps, "estimate-steps", 1, "--dry-run: timed training steps of Full for the estimate (the median; 0: no timing)")
	f.StringVar(&opts.Task, "task", "burgers", "task: "+strings.Join(config.TaskNames(), ", ")+" (with --data DIR of a described task: its base task)")
	f.StringVar(&opts.Modes, "modes", "", "modes to run beside Full: letters, ranges and lists (A-I, A,C,F-H, all); default all, or Full alone with --sweep")
	f.StringVar(&opts.Sweep, "sweep", "", "sweep one configuration key over values instead of the modes: key=v1,v2,...")
	f.StringVar(&opts.Dir, "out", "", "output directory (default: runs/ablate-<task>, or runs/sweep-<task>-<key>)")
	f.Int64SliceVar(&opts.Seeds, "seeds", nil, "training seeds, e.g. 0,1,2: the ablation once per seed on the same data (seed 0's in --out, seed s's in <out>/seed<s>), merged over the seeds into <out>/seeds")
	f.StringArrayVar(&opts.Sets, "set", nil, "override one configuration key for every run, key=value (repeatable)")
	f.IntVar(&opts.Steps, "steps", 0, "optimizer steps of every run (default: optim.steps)")
	f.IntVar(&opts.Warmup, "warmup", 0, "warm-up steps (default: optim.warmup, scaled to --steps)")
	f.IntVar(&opts.Batch, "batch", 0, "batch size (default: optim.batch)")
	f.StringVar(&opts.Params, "params", "", "scale U-HNO's width to this parameter count, e.g. 0.62M; text: Tab. per-task-hp exactly")
	f.StringVar(&opts.DataDir, "data", "", "data directory (default: $UHNO_DATA or the user cache)")
	f.IntVar(&opts.Threads, "threads", 0, "CPU threads per operation (default: all cores)")
	f.BoolVar(&opts.Quiet, "quiet", false, "no progress bars")
	f.BoolVar(&opts.NoFigures, "no-figures", false, "write no PNG figures (the evaluations' and the ablation's; tables and JSON are the same)")
	f.IntVar(&opts.Rollout, "rollout", 0, "rollout steps of the evaluation (default: the task's data.rollout)")
	f.IntVar(&opts.Limit, "trajectories", 0, "evaluate only the first N test trajectories (default: all)")
	f.IntVar(&opts.Resamples, "resamples", eval.DefaultResamples, "bootstrap resamples")
	f.Uint64Var(&opts.Seed, "seed", 0, "bootstrap seed")
	f.IntVar(&opts.LogEvery, "log-every", 10, "steps between log records of each run")
	f.IntVar(&opts.ValEvery, "val-every", 500, "steps between validation losses of each run")
	f.IntVar(&opts.CkptEvery, "ckpt-every", 1000, "steps between checkpoints of each run")
	f.IntVar(&opts.DynamicsEvery, "dynamics-every", experiment.DefaultDynamicsEvery, "steps between training-dynamics records of each run (the paper's cadence is 200; 0: off)")
	return cmd
}

// ablateRun hands the ablation to experiment.Ablate. Every entry is
// configured as `uhno train` would configure it with this command's
// flags: they are checked as train's, and --steps without --warmup
// scales the warm-up once.
func ablateRun(ctx context.Context, opts *ablateOptions) error {
	return experiment.Ablate(ctx, ablateConfigure(opts))
}

// ablateConfigure completes the options with the checks and the
// configuration of uhno train (ablateRun), for the ablation and its dry
// run alike.
func ablateConfigure(opts *ablateOptions) *ablateOptions {
	base := trainOptions{TrainOptions: experiment.TrainOptions{Env: opts.Env, Model: "uhno", Steps: opts.Steps, Params: opts.Params,
		DataDir: opts.DataDir, Threads: opts.Threads, Quiet: opts.Quiet, Graph: true, LogEvery: opts.LogEvery, ValEvery: opts.ValEvery,
		CkptEvery: opts.CkptEvery, Keep: 2, ValPairs: 256, DynamicsEvery: opts.DynamicsEvery, DynamicsTrajs: dynamics.DefaultTrajectories},
		Warmup: opts.Warmup, WarmupSet: opts.WarmupSet, Batch: opts.Batch, Load: loadRequest{Task: opts.Task, Sets: opts.Sets}}
	if opts.DynamicsSet {
		base.Changed = func(name string) bool { return name == "dynamics-every" }
	}
	o := *opts
	o.Prepare = func() error {
		if err := checkTrainFlags(&base); err != nil {
			return fmt.Errorf("ablate: %w", err)
		}
		return scaleWarmup(&base)
	}
	o.Configure = func(mode string, sets []string) (config.Config, error) {
		c := base
		c.Mode = mode
		c.Load.Sets = append(slices.Clone(base.Load.Sets), sets...)
		return loadTrain(&c)
	}
	return &o
}
