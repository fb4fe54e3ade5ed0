package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"uhno/internal/eval"
	"uhno/internal/experiment"
)

// predictOptions are the inputs of `uhno predict`, bound to its flags.
type predictOptions = experiment.PredictOptions

func newPredictCmd(out, errOut io.Writer, runF func(context.Context, *predictOptions) error) *cobra.Command {
	opts := &predictOptions{Env: env(out, errOut)}
	cmd := &cobra.Command{
		Use:   "predict --checkpoint RUN --input FILE [--dataset NAME] [--steps N] [--out FILE]",
		Short: "Roll a trained model out from your own initial conditions (HDF5 or .npy)",
		Long: `Apply a trained run (a run or step directory of uhno train) to initial
conditions of your own: roll the model out --steps steps (default: the
run's data.rollout) from the first H frames of every trajectory (H = the
run's data.history), exactly as uhno eval rolls out its test trajectories,
and write the trajectories in physical units.

Input (--input): an HDF5 file in uhno's layout or PDEBench's (1D/2D
"tensor" [n, frames, x...], 3D CFD's density, pressure, Vx, Vy, Vz
[n, frames, x, y, z]; --dataset NAME reads another dataset, comma-
separated for several fields), or a .npy array (float32 or float64, C
order) of shape [n, spatial...] or [n, frames, spatial...], with a
trailing channel axis when the run has several fields. The inputs are
normalised with the run's recorded statistics.

The grid may differ from the training grid where the model allows it (a
model trained at 128 applied at 256 or 64): FNO, F-FNO, LogLo-FNO, GNO
and the additive hybrid take any grid (their spectral convolutions keep
min(K0, N/2) modes); U-HNO and CNO need every axis divisible by 2^L (they
halve it L times), Conv-FNO by 2^(levels-1); WNO takes only the training
grid scaled by a power of two, because its wavelet levels and their
weights are tied to the training grid. Local convolutions (U-HNO's local
branch, CNO, Conv-FNO, GNO's neighbourhood) act over grid points, so on
another grid they see another physical width: expect larger errors away
from the training grid. Wrong axes, channels, too few history frames, a
grid the model cannot take and NaN or Inf in the input are refused with
one line naming the file and what the run expects.

Output (--out, default <input>_predict.h5 or .npy in the current folder):
by its extension, .npy [n, steps+1, spatial... (, channels)] float32, or
HDF5 in PDEBench's layout (tensor [n, steps+1, x...], or the five CFD
fields, with x-/y-/z-coordinate and t-coordinate). Frame 0 is the input's
last history frame, frames 1..steps the prediction. Trajectories are
processed --batch at a time, with a progress bar, and written as they
finish to a temporary file renamed at the end: the output is complete or
absent (Ctrl-C leaves nothing).

--reference FILE (often the input itself, when it holds the solver's later
frames) scores the prediction: relL2 against frames H..H+steps-1 of each
trajectory, per step and averaged over steps, with 95% bootstrap
intervals over trajectories. --test-split predicts only the trajectories
of the run's test split (for a file generated with the run's settings and
seed, e.g. uhno datagen --set pde.grid=256).`,
		Example: `  uhno predict --checkpoint runs/burgers-uhno --input ics.npy --out rollout.npy
  uhno predict --checkpoint runs/burgers-uhno --input 1D_Burgers_Sols_Nu0.001.hdf5 --steps 25 --out pred.h5
  uhno predict --checkpoint runs/burgers-fno --input burgers_256.h5 --test-split --reference burgers_256.h5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return predictRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Checkpoint, "checkpoint", "", "run or step directory of uhno train (required)")
	f.StringVar(&opts.Input, "input", "", "initial conditions: HDF5 (uhno's or PDEBench's layout) or .npy (required)")
	f.StringVar(&opts.Dataset, "dataset", "", "HDF5 dataset(s) holding the run's fields, comma-separated (default: the fields' names, tensor)")
	f.IntVar(&opts.Steps, "steps", 0, "rollout steps (default: the run's data.rollout)")
	f.StringVar(&opts.Output, "out", "", "output file, .h5/.hdf5 (PDEBench layout) or .npy (default: <input>_predict.h5 here)")
	f.IntVar(&opts.Batch, "batch", 32, "trajectories rolled out together")
	f.IntVar(&opts.Threads, "threads", 0, "CPU threads per operation (default: all cores)")
	f.StringVar(&opts.Reference, "reference", "", "file with the true later frames (read like --input); prints relL2 per step")
	f.BoolVar(&opts.TestSplit, "test-split", false, "predict only the trajectories of the run's test split")
	f.IntVar(&opts.Resamples, "resamples", eval.DefaultResamples, "bootstrap resamples of --reference's intervals")
	f.Uint64Var(&opts.Seed, "seed", 0, "bootstrap seed")
	f.BoolVar(&opts.Quiet, "quiet", false, "no progress bar")
	return cmd
}

// defaultPredictOut is the output for an input when --out is not given:
// <stem>_predict.npy for .npy input, <stem>_predict.h5 otherwise, in the
// current folder (the input's may be read-only).
func defaultPredictOut(input string) string {
	ext := ".h5"
	if strings.EqualFold(filepath.Ext(input), ".npy") {
		ext = ".npy"
	}
	return strings.TrimSuffix(filepath.Base(input), filepath.Ext(input)) + "_predict" + ext
}

// predictRun hands the run to experiment.Predict, with the default
// output file when --out is not given.
func predictRun(ctx context.Context, opts *predictOptions) error {
	if opts.Output == "" && opts.Input != "" {
		o := *opts
		o.Output = defaultPredictOut(opts.Input)
		opts = &o
	}
	return experiment.Predict(ctx, opts)
}
