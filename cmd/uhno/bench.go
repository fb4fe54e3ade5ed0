package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"uhno/internal/config"
	"uhno/internal/datagen"
	"uhno/internal/experiment"
)

// benchOptions are the inputs of `uhno bench`, bound to its flags.
type benchOptions = experiment.BenchOptions

// newBenchCmd returns the `uhno bench` command; runF replaces benchRun in
// tests.
func newBenchCmd(out, errOut io.Writer, runF func(context.Context, *benchOptions) error) *cobra.Command {
	var dataDir string
	opts := &benchOptions{Env: env(out, errOut)}
	opts.Configure = func(task string) (config.Config, error) {
		req, err := withDescribed(loadRequest{Task: task}, dataDir)
		if err != nil {
			return config.Config{}, err
		}
		return loadConfig(req)
	}
	var presets strings.Builder
	for _, p := range experiment.BenchPresets() {
		fmt.Fprintf(&presets, "  %-10s %s\n", p.Name, p.About)
	}
	cmd := &cobra.Command{
		Use:   "bench [--preset NAME | --task T] [--model uhno|fno] [--mode M] [--params 0.62M] [--batch B] [--grid N] [--repeats R] [--warmup W] [--threads N] [--json FILE]",
		Short: "Measure parameters, FLOPs, step times and peak memory of U-HNO, its modes and the baselines",
		Long: `Measure what a model costs at a task's shape (paper Tables cost and
cost-spar): parameters, FLOPs per sample counted operation by operation
(forward and whole training step), the time of a training step (upload,
forward, loss, backward, AdamW) and of an inference forward, as min and
median over --repeats after --warmup discarded iterations, per step and
per sample, the achieved GFLOP/s, and the memory high-water mark (the
backend's device peak on a GPU; the process's peak resident set, VmHWM, on
the CPU, reset before each model's warm-up). No data are read: the batch
is random.

Presets (default burgers):
` + presets.String() + `
--task T measures U-HNO and FNO at the task's own grid and batch instead;
with a preset it keeps only that task's rows. --model keeps one model,
--mode sets U-HNO's ablation mode, --grid N (points per axis) and --batch
override the shape, --params scales U-HNO's width to a parameter budget
as "uhno train --params" does and matches FNO to it (without it, the
task configuration's size: the paper's text). cost-spar also prints the
overhead of SPAR: Full over mode F, ratio and percent of Full.

FLOPs follow fixed conventions (docs/DECISIONS.md, D-flop-conventions): 2 per
multiply-add, 5 N log2 N per real FFT of N points, 1 per elementwise
operation. The table goes to stdout; --json FILE writes every figure, the
per-operation breakdown and the machine (--json - writes the JSON to stdout
and the table to stderr).

--op-times N (CPU) times N more training steps operation by operation
and prints, per model, where a step goes: each operation's calls, ms per
step, share, GFLOP/s and GB/s (the least traffic the operation must make:
tensors read once, written once, gradients accumulated read and written;
a lower bound), and the rest of the step between the calls.`,
		Example: `  uhno bench
  uhno bench --preset cost-ns2d --params 0.62M
  uhno bench --preset cost-spar --params 0.62M --json cost-spar.json
  uhno bench --task ks --model uhno --mode F --repeats 20
  uhno bench --preset burgers --op-times 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tf, _, err := describedIn(dataDir)
			if err != nil {
				return err
			}
			if tf != nil {
				// A described task (uhno datagen --from): its shape,
				// channels and base task's settings.
				if opts.Preset != "" || (opts.Task != "" && opts.Task != tf.Base) {
					return fmt.Errorf("bench: --data %s holds a task described on %s's settings; give neither --preset nor another --task", dataDir, tf.Base)
				}
				opts.Task = tf.Base
			} else if dataDir != "" {
				return fmt.Errorf("bench: --data %s: no %s there; bench times a described task's shape (uhno datagen --from FILE --out DIR)", dataDir, datagen.TaskFileName)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return benchRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Preset, "preset", "", "named shape set: "+strings.Join(experiment.PresetNames(), ", ")+" (default burgers)")
	f.StringVar(&opts.Task, "task", "", "task: "+strings.Join(config.TaskNames(), ", "))
	f.StringVar(&dataDir, "data", "", "a task uhno datagen --from described (DIR with task.json): bench at its grid and channels")
	f.StringVar(&opts.Model, "model", "", "uhno or fno (default: both)")
	f.StringVar(&opts.Mode, "mode", "", "U-HNO ablation mode A..I or full (default: the task's model.ablation)")
	f.StringVar(&opts.Params, "params", "", "scale U-HNO's width to this parameter count, e.g. 0.62M, or text (Tab. per-task-hp exactly); FNO is matched to it")
	f.IntVar(&opts.Batch, "batch", 0, "batch size (default: the preset's or the task's)")
	f.IntVar(&opts.Grid, "grid", 0, "grid points per spatial axis (default: the preset's or the task's)")
	f.IntVar(&opts.Repeats, "repeats", 10, "timed iterations")
	f.IntVar(&opts.Warmup, "warmup", 2, "discarded iterations before the timed ones")
	f.IntVar(&opts.OpTimes, "op-times", 0, "also time N training steps operation by operation and print where the step goes (CPU only)")
	f.IntVar(&opts.Threads, "threads", 0, "CPU threads per operation (default: all cores)")
	f.StringVar(&opts.JSON, "json", "", "write the JSON report to this file (- for stdout)")
	f.BoolVar(&opts.Quiet, "quiet", false, "no progress bars")
	f.BoolVar(&opts.Graph, "graph", false, "on the GPU, time each training step as a replay of a recorded CUDA graph, as uhno train runs it (default: one host launch per kernel)")
	f.StringVar(&opts.Precision, "precision", "", "bf16 or fp32: bf16 autocasts the dense products on the CUDA backend, as uhno train --precision (default fp32; the CPU computes in float32)")
	return cmd
}

// benchRun hands the measurement to experiment.Bench.
func benchRun(ctx context.Context, opts *benchOptions) error { return experiment.Bench(ctx, opts) }
