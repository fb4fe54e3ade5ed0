package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"uhno/internal/config"
	"uhno/internal/datagen"
	"uhno/internal/dist"
	"uhno/internal/dynamics"
	"uhno/internal/experiment"
	"uhno/internal/flagcheck"
	"uhno/internal/model"
)

// trainOptions are the inputs of `uhno train`: experiment.TrainOptions
// bound to its flags, and the flags that become configuration keys
// (--config, --set, --mode, --warmup, --batch; trainLoad) or that stop
// before training (--dry-run).
type trainOptions struct {
	experiment.TrainOptions
	Load   loadRequest
	Mode   string // full, A..I
	Warmup int
	// WarmupSet records that --warmup was given (0 is a valid value).
	WarmupSet bool
	Batch     int
	// DryRun builds the model and prints the plan without touching data.
	DryRun bool
	// EstimateSteps is how many training steps --dry-run times (0: none).
	EstimateSteps int
}

// newTrainCmd returns the `uhno train` command; runF replaces trainRun in
// tests.
func newTrainCmd(out, errOut io.Writer, runF func(context.Context, *trainOptions) error) *cobra.Command {
	opts := &trainOptions{TrainOptions: experiment.TrainOptions{Env: env(out, errOut)}}
	cmd := &cobra.Command{
		Use:   "train --task NAME [--model uhno|fno] [--mode A..I] [--steps N] [--batch B] [--out DIR] [--resume DIR] [--params 0.62M]",
		Short: "Train U-HNO (any ablation mode) or one of the seven baselines on a task",
		Long: `Train U-HNO or the FNO baseline on a task with the paper's recipe (Sec. 4.1):
AdamW (lr 1e-3, weight decay 1e-4), linear warm-up then cosine annealing,
the loss MSE + lambda_H1 H1 + lambda_CBC CBC of Eq. loss, single-step
targets. The task's data are generated on first use (as "uhno datagen"
would) into the data cache ($UHNO_DATA, else <user cache dir>/uhno/data).

The run directory (--out, default runs/<task>-<model>) receives log.jsonl
(loss terms, learning rate, per-stage SPAR keep-ratio and contrast, every
--log-every steps; a held-out validation loss every --val-every steps) and
checkpoints step-NNNNNNNN/ (weights.safetensors, optimizer.safetensors,
state.json, manifest.json), written atomically every --ckpt-every steps and
at the end. Every --dynamics-every steps (the paper's 200; 0: off) the
model is rolled out on the first --dynamics-trajectories (128) test
trajectories and log.jsonl receives a "probe" record: the binned spectral
error E_b per band (low, mid, high) and relL2, and U-HNO's per-sample SPAR
contrast and keep-ratio per routing stage (paper App. "Training Dynamics
Details"; internal/dynamics reads and draws them; the weights do not
depend on it). Ctrl-C saves a checkpoint and exits; --resume DIR
continues the run exactly as if it had not stopped (also after a crash or
a kill: from the last complete checkpoint), with the settings stored in
its checkpoint. Run-control flags (--log-every, --val-every, --ckpt-every,
--keep, --threads, --graph, --dynamics-every, --dynamics-trajectories)
given with --resume replace the run's values; the others are refused. A resume refuses a data file that changed since
the run indexed it, and a running job stops if its data file is
truncated or rewritten under it.

Under an MPI launcher (mpirun -np N uhno train ..., or srun) the run is
data-parallel over the N processes: --batch stays the global batch and
must divide by N, each rank trains on its share of every batch, the
gradients are averaged over the ranks before AdamW (the update of one
process with the same batch, up to float32 summation order), and rank 0
alone writes the run directory. A rank that stops makes the others stop
within --dist-timeout; --resume continues from the last checkpoint with
any rank count that divides the batch. See README, "Data-parallel
training".

--params scales U-HNO's width C0 to a parameter budget (the paper's tables
state about 0.62M, while its text's architecture has several million; see
docs/DECISIONS.md, D-params-budget). --params text is the text's protocol:
U-HNO exactly at Tab. per-task-hp for the task (L, C0, K0, M; a --set that
changes one of them is refused), every baseline matched to its count (App.
C). FNO's width is matched to U-HNO's parameter count within 10% unless
--width is given (the paper's FNO-wider uses 56).

--dry-run prints the model, every parameter count, the memory plan and the
run's estimated time on this machine's backend from --estimate-steps timed
training steps (0: no timing), without touching any data.`,
		Example: `  uhno train --task burgers
  uhno train --task burgers --params 0.62M --model fno
  uhno train --task ns2d --params text --model fno --dry-run
  uhno train --task ks --mode C --steps 2000 --warmup 100 --out runs/ks-C
  uhno train --resume runs/burgers-uhno`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Changed = cmd.Flags().Changed
			opts.WarmupSet = cmd.Flags().Changed("warmup")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return trainRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Load.Task, "task", "", "task: "+strings.Join(config.TaskNames(), ", "))
	f.StringVar(&opts.Load.File, "config", "", "YAML or JSON file with keys to override")
	f.StringArrayVar(&opts.Load.Sets, "set", nil, "override one key, key=value (repeatable)")
	f.StringVar(&opts.Model, "model", "uhno", "architecture: "+strings.Join(model.Names(), ", ")+" (additive: the flat hybrid of the gradient-angle diagnostic)")
	f.StringVar(&opts.Mode, "mode", "", "ablation mode A..I of Tab. ablation-setup, or full (default: model.ablation)")
	f.IntVar(&opts.Steps, "steps", 0, "optimizer steps (default: optim.steps)")
	f.IntVar(&opts.Warmup, "warmup", 0, "warm-up steps (default: optim.warmup)")
	f.IntVar(&opts.Batch, "batch", 0, "batch size (default: optim.batch)")
	f.StringVar(&opts.Params, "params", "", "scale U-HNO's width to this parameter count, e.g. 0.62M; text: Tab. per-task-hp exactly (default: the configuration's width)")
	f.IntVar(&opts.Width, "width", 0, "FNO width (default: matched to U-HNO's parameter count)")
	f.StringVar(&opts.Dir, "out", "", "run directory (default: runs/<task>-<model>)")
	f.StringVar(&opts.Resume, "resume", "", "continue the run in this directory (or from this checkpoint)")
	f.StringVar(&opts.DataDir, "data", "", "data directory (default: $UHNO_DATA or the user cache)")
	f.IntVar(&opts.Threads, "threads", 0, "CPU threads per operation (default: all cores)")
	f.BoolVar(&opts.Quiet, "quiet", false, "no progress bars")
	f.BoolVar(&opts.Graph, "graph", true, "on the GPU, replay each training step as a recorded CUDA graph (--graph=false: launch every kernel from the host)")
	f.IntVar(&opts.LogEvery, "log-every", 10, "steps between log records")
	f.IntVar(&opts.ValEvery, "val-every", 500, "steps between validation losses (0: only at the end)")
	f.IntVar(&opts.CkptEvery, "ckpt-every", 1000, "steps between checkpoints (0: only at the end)")
	f.IntVar(&opts.Keep, "keep", 2, "checkpoints kept in the run directory")
	f.IntVar(&opts.ValPairs, "val-pairs", 256, "held-out pairs in the validation set")
	f.IntVar(&opts.DynamicsEvery, "dynamics-every", experiment.DefaultDynamicsEvery, "steps between training-dynamics records: rollout E_b per band, SPAR contrast and keep-ratio (the paper's cadence is 200; 0: off; default off in 3D)")
	f.IntVar(&opts.DynamicsTrajs, "dynamics-trajectories", dynamics.DefaultTrajectories, "test trajectories the training-dynamics rollout uses")
	f.BoolVar(&opts.DryRun, "dry-run", false, "build the model, print its parameter count beside U-HNO's and the training plan, and exit without generating or reading data")
	f.IntVar(&opts.EstimateSteps, "estimate-steps", 1, "--dry-run: training steps timed (after one discarded) for the run's estimated time; 0: no timing")
	f.StringVar(&opts.Precision, "precision", "", "bf16 or fp32: bf16 autocasts the dense products on the CUDA backend (default: bf16 for cfd3d on the CUDA backend, fp32 otherwise; the CPU computes in float32; kept on --resume)")
	f.IntVar(&opts.StopAfter, "stop-after", 0, "stop after this step with a checkpoint, as Ctrl-C would (0: run to the end)")
	f.DurationVar(&opts.DistTimeout, "dist-timeout", dist.DefaultTimeout, "under mpirun or srun: how long a rank waits for the others in a collective before it stops the run with an error (a rank died or hangs)")
	return cmd
}

// checkTrainFlags rejects flag combinations that cannot work.
func checkTrainFlags(opts *trainOptions) error {
	if !slices.Contains(model.Names(), opts.Model) {
		return fmt.Errorf("train: --model %q: want one of %s", opts.Model, strings.Join(model.Names(), ", "))
	}
	if err := flagcheck.Check("train",
		flagcheck.NonNeg("--steps", opts.Steps, "optim.steps"),
		flagcheck.NonNeg("--warmup", opts.Warmup, "optim.warmup"),
		flagcheck.NonNeg("--batch", opts.Batch, "optim.batch"),
		flagcheck.NonNeg("--width", opts.Width, "matched to U-HNO's parameter count"),
		flagcheck.NonNeg("--threads", opts.Threads, "all cores"),
		flagcheck.NonNeg("--log-every", opts.LogEvery, "never"),
		flagcheck.NonNeg("--val-every", opts.ValEvery, "only at the end"),
		flagcheck.NonNeg("--ckpt-every", opts.CkptEvery, "only at the end"),
		flagcheck.Positive("--keep", opts.Keep),
		flagcheck.Positive("--val-pairs", opts.ValPairs),
		flagcheck.NonNeg("--dynamics-every", opts.DynamicsEvery, "off"),
		flagcheck.Positive("--dynamics-trajectories", opts.DynamicsTrajs),
		flagcheck.NonNeg("--estimate-steps", opts.EstimateSteps, "no timing"),
		flagcheck.NonNeg("--stop-after", opts.StopAfter, "run to the end"),
	); err != nil {
		return err
	}
	// 0 where no flag was parsed (ablate's runs): dist.DefaultTimeout.
	if opts.DistTimeout < 0 || (opts.DistTimeout == 0 && opts.Changed != nil && opts.Changed("dist-timeout")) {
		return fmt.Errorf("train: --dist-timeout %s: want a positive duration such as 5m", opts.DistTimeout)
	}
	if err := experiment.CheckParams(opts.Params); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if opts.Width > 0 && opts.Model != "fno" {
		return fmt.Errorf("train: --width sets the FNO's width; use --params to size U-HNO")
	}
	if opts.Resume != "" {
		// The checkpoint holds the settings; changing them would not
		// continue the same run.
		for _, name := range []string{"config", "set", "model", "mode", "warmup", "batch", "params", "width", "val-pairs"} {
			if opts.Changed != nil && opts.Changed(name) {
				return fmt.Errorf("train: --%s cannot be combined with --resume: a resumed run keeps the settings of its checkpoint", name)
			}
		}
		return nil
	}
	if opts.Load.Task == "" && opts.Load.File == "" && os.Getenv(envPrefix+"_TASK") == "" && describedTask(opts.DataDir) == "" {
		return fmt.Errorf("train: no task given; pass --task NAME (one of %s), --data DIR of a task uhno datagen --from described, or --resume DIR", strings.Join(config.TaskNames(), ", "))
	}
	return nil
}

// describedTask is the task description in dir, when `uhno datagen --from
// FILE --out dir` wrote one there ("" otherwise).
func describedTask(dir string) string {
	if dir == "" {
		return ""
	}
	path, err := filepath.Abs(filepath.Join(dir, datagen.TaskFileName))
	if err != nil {
		return ""
	}
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return path
}

// scaleWarmup gives a fresh run with --steps and no --warmup (neither
// the flag nor a --set of optim.warmup) the configuration's warm-up scaled
// to the new length, the paper's 1,000 of 20,000 steps by default, and
// says so: a short run (--steps 200) would otherwise be refused for a
// warm-up longer than itself, and a longer or shorter one would warm up
// for a different share of its schedule than the paper's.
func scaleWarmup(opts *trainOptions) error {
	if opts.Steps <= 0 || opts.WarmupSet {
		return nil
	}
	for _, kv := range opts.Load.Sets {
		if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == "optim.warmup" {
			return nil
		}
	}
	base := *opts
	base.Steps = 0
	cfg, err := loadTrain(&base)
	if err != nil {
		return err
	}
	if cfg.Optim.Steps <= 0 || cfg.Optim.Steps == opts.Steps {
		return nil
	}
	w := int(math.Round(float64(cfg.Optim.Warmup) * float64(opts.Steps) / float64(cfg.Optim.Steps)))
	w = min(w, opts.Steps-1)
	opts.Warmup, opts.WarmupSet = w, true
	fmt.Fprintf(opts.Err, "train: --steps %d without --warmup: warm-up %d steps (the configuration's %d of %d, scaled)\n",
		opts.Steps, w, cfg.Optim.Warmup, cfg.Optim.Steps)
	return nil
}

// trainLoad turns --mode, --steps, --warmup and --batch into --set flags
// applied after the user's, so the configuration validates them.
func trainLoad(opts *trainOptions) (loadRequest, error) {
	load := opts.Load
	load.Sets = append([]string(nil), load.Sets...)
	load, err := withDescribed(load, opts.DataDir)
	if err != nil {
		return load, err
	}
	if opts.Mode != "" {
		mode := opts.Mode
		if strings.EqualFold(mode, "full") {
			mode = "full"
		} else {
			mode = strings.ToUpper(mode)
		}
		load.Sets = append(load.Sets, "model.ablation="+mode)
	}
	if opts.Steps > 0 {
		load.Sets = append(load.Sets, fmt.Sprintf("optim.steps=%d", opts.Steps))
	}
	if opts.WarmupSet {
		load.Sets = append(load.Sets, fmt.Sprintf("optim.warmup=%d", opts.Warmup))
	}
	if opts.Batch > 0 {
		load.Sets = append(load.Sets, fmt.Sprintf("optim.batch=%d", opts.Batch))
	}
	return load, nil
}

// loadTrain is loadConfig(trainLoad(opts)).
func loadTrain(opts *trainOptions) (config.Config, error) {
	req, err := trainLoad(opts)
	if err != nil {
		return config.Config{}, err
	}
	return loadConfig(req)
}

// trainRun checks the flags and hands the run to experiment.Train (or
// experiment.DryRun for --dry-run).
func trainRun(ctx context.Context, opts *trainOptions) error {
	if err := checkTrainFlags(opts); err != nil {
		return err
	}
	if opts.DryRun {
		return trainDryRun(ctx, opts)
	}
	saveFault, err := experiment.CrashHook(os.Getenv(experiment.CrashEnv))
	if err != nil {
		return err
	}
	o := opts.TrainOptions
	o.Task, o.SaveFault = opts.Load.Task, saveFault
	o.Configure = func(errOut io.Writer) (config.Config, error) {
		c := *opts
		c.Err = errOut
		if err := scaleWarmup(&c); err != nil {
			return config.Config{}, err
		}
		return loadTrain(&c)
	}
	return experiment.Train(ctx, &o)
}

// trainDryRun is `uhno train --dry-run`: the configuration of a new run,
// planned by experiment.DryRun.
func trainDryRun(ctx context.Context, opts *trainOptions) error {
	if opts.Resume != "" {
		return fmt.Errorf("train: --dry-run plans a new run; a resumed run's plan is its checkpoint (uhno train --resume %s shows it)", opts.Resume)
	}
	if err := scaleWarmup(opts); err != nil {
		return err
	}
	cfg, err := loadTrain(opts)
	if err != nil {
		return err
	}
	return experiment.DryRun(ctx, cfg, experiment.DryRunOptions{Env: opts.Env, Model: opts.Model, Params: opts.Params, Width: opts.Width,
		DataDir: opts.DataDir, EstimateSteps: opts.EstimateSteps, Threads: opts.Threads})
}

// env is what every experiment takes from this binary: where to print,
// the version and the backend of this build (newBackend).
func env(out, errOut io.Writer) experiment.Env {
	return experiment.Env{Out: out, Err: errOut, Version: version, NewBackend: newBackend}
}
