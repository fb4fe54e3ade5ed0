package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"uhno/internal/eval"
	"uhno/internal/experiment"
)

// evalOptions are the inputs of `uhno eval`, bound to its flags.
type evalOptions = experiment.EvalOptions

func newEvalCmd(out, errOut io.Writer, runF func(context.Context, *evalOptions) error) *cobra.Command {
	opts := &evalOptions{Env: env(out, errOut)}
	cmd := &cobra.Command{
		Use:   "eval [--checkpoint DIR ...] [--task NAME] [--rollout N] [--horizon-mult M] [--out DIR]",
		Short: "Roll trained models out on the test trajectories and report the paper's metrics",
		Long: `Evaluate one or more trained checkpoints (run directories or step
directories of uhno train) side by side on the test trajectories of their
run's split: an autoregressive rollout from the initial frames at the
training step size (25 steps in 1D, 10 in 2D, 20 in 3D: data.rollout;
--rollout N changes it, --horizon-mult 4 gives the long-horizon study of
Tab. stability), or a single prediction on Darcy. Without --checkpoint
it evaluates the default runs of uhno train for --task (runs/<task>-uhno
and runs/<task>-fno beside it, those that hold a checkpoint) or, without
--task, the run under runs/ whose checkpoint was written last, and says
which it chose.

Metrics (paper App. "Evaluation Metrics"), per trajectory and step, then
averaged over trajectories: relL2, relH1, the binned spectral error in
three radial-wavenumber thirds, the structure-function error, the energy
drift at the horizon, the rollout MSE and the crash rate. Intervals are
95% percentile bootstrap intervals over test trajectories (B = 10,000,
seeded) and Wilson intervals for the crash rate (App. bootstrap).

The output directory (default runs/eval-<task>) receives results.json
(every metric, interval and per-step curve, with the configuration and
checkpoint each came from), results.md (the paper's tables) and figures/
(PNG: space-time plots in 1D, snapshots at 0.25T, 0.5T and T in 2D, the
error growth along the rollout, U-HNO's routing masks per level, and the
panels of Fig. training-dynamics from the runs' logs: E_b per band, SPAR
contrast and keep-ratio, branch-gradient angles and loss terms over
training).

--test-data FILE evaluates on every trajectory of another file instead of
the run's test split: one made by uhno datagen with the run's solver
settings and frame spacing (checked, attribute by attribute), longer or
from another seed. Tab. stability needs it where a task's data are too
short for 4x the horizon (Burgers: 51 frames, 101 needed); uhno reproduce
makes that file itself.`,
		Example: `  uhno eval --checkpoint runs/burgers-uhno --checkpoint runs/burgers-fno
  uhno eval --task ns2d --checkpoint runs/ns2d-uhno --horizon-mult 4
  uhno datagen --task burgers --seed 1048576 --set pde.t_end=2 --set data.snapshots=101 --train 1 --test 199 --out ./long
  uhno eval --checkpoint runs/burgers-uhno --horizon-mult 4 --test-data ./long/burgers_seed1048576_n200_*.h5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Changed = cmd.Flags().Changed
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return evalRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Task, "task", "", "task the checkpoints must belong to (default: the first checkpoint's)")
	f.StringSliceVar(&opts.Checkpoints, "checkpoint", nil, "run or step directory of uhno train (repeatable, or comma-separated)")
	f.IntVar(&opts.Rollout, "rollout", 0, "rollout steps (default: the task's data.rollout)")
	f.IntVar(&opts.HorizonMult, "horizon-mult", 1, "multiply the rollout length (Tab. stability uses 4)")
	f.StringVar(&opts.Dir, "out", "", "output directory (default: runs/eval-<task>)")
	f.StringVar(&opts.DataDir, "data", "", "data directory (default: $UHNO_DATA or the user cache)")
	f.IntVar(&opts.Threads, "threads", 0, "CPU threads per operation (default: all cores)")
	f.IntVar(&opts.Batch, "batch", 0, "trajectories rolled out together (default: optim.batch)")
	f.IntVar(&opts.Limit, "trajectories", 0, "evaluate only the first N test trajectories (default: all)")
	f.StringVar(&opts.TestData, "test-data", "", "evaluate on every trajectory of this file (same solver settings and frame spacing as the run's data, e.g. longer for --horizon-mult)")
	f.IntVar(&opts.Resamples, "resamples", eval.DefaultResamples, "bootstrap resamples")
	f.Uint64Var(&opts.Seed, "seed", 0, "bootstrap seed")
	f.BoolVar(&opts.Quiet, "quiet", false, "no progress bars")
	f.BoolVar(&opts.NoFigures, "no-figures", false, "write no PNG figures")
	return cmd
}

// evalRun hands the evaluation to experiment.Eval.
func evalRun(ctx context.Context, opts *evalOptions) error { return experiment.Eval(ctx, opts) }
