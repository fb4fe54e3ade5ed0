package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"uhno/internal/config"
	"uhno/internal/data"
	"uhno/internal/datagen"
	"uhno/internal/dist"
	"uhno/internal/dynamics"
	"uhno/internal/model"
	"uhno/internal/runlock"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

// trainOptions are the inputs of `uhno train`.
type trainOptions struct {
	Out, Err io.Writer
	Load     loadRequest

	Model  string // uhno, fno or additive
	Mode   string // full, A..I
	Steps  int
	Warmup int
	// WarmupSet records that --warmup was given (0 is a valid value).
	WarmupSet bool
	Batch     int
	Params    string // parameter budget, "0.62M"
	Width     int    // FNO width override
	Dir       string // run directory
	Resume    string
	DataDir   string
	Threads   int
	Quiet     bool
	// Graph replays the training step as a CUDA graph where the backend
	// can record one (the GPU build); the CPU ignores it.
	Graph bool
	// StopAfter ends the run after this step with a checkpoint, as Ctrl-C
	// would (0: run to the end).
	StopAfter int
	// DryRun builds the model and prints the plan without touching data.
	DryRun bool
	// Precision is --precision: bf16, fp32, or "" for the task's default
	// (precision.go).
	Precision string

	LogEvery, ValEvery, CkptEvery, Keep, ValPairs int
	// DynamicsEvery and DynamicsTrajs set the training-dynamics probe
	// (dynamicsProbe): its interval in steps (0: off) and the number of
	// test trajectories it rolls out.
	DynamicsEvery, DynamicsTrajs int
	// DistTimeout bounds each collective of a data-parallel run
	// (dist.Options.Timeout).
	DistTimeout time.Duration

	// changed records which flags were given (resume refuses most).
	changed func(name string) bool
}

// newTrainCmd returns the `uhno train` command; runF replaces trainRun in
// tests.
func newTrainCmd(out, errOut io.Writer, runF func(context.Context, *trainOptions) error) *cobra.Command {
	opts := &trainOptions{Out: out, Err: errOut}
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
docs/DECISIONS.md, D-params-budget). FNO's width is matched to U-HNO's parameter count within
10% unless --width is given (the paper's FNO-wider uses 56).`,
		Example: `  uhno train --task burgers
  uhno train --task burgers --params 0.62M --model fno
  uhno train --task ks --mode C --steps 2000 --warmup 100 --out runs/ks-C
  uhno train --resume runs/burgers-uhno`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.changed = cmd.Flags().Changed
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
	f.StringVar(&opts.Model, "model", "uhno", "architecture: "+strings.Join(modelNames(), ", ")+" (additive: the flat hybrid of the gradient-angle diagnostic)")
	f.StringVar(&opts.Mode, "mode", "", "ablation mode A..I of Tab. ablation-setup, or full (default: model.ablation)")
	f.IntVar(&opts.Steps, "steps", 0, "optimizer steps (default: optim.steps)")
	f.IntVar(&opts.Warmup, "warmup", 0, "warm-up steps (default: optim.warmup)")
	f.IntVar(&opts.Batch, "batch", 0, "batch size (default: optim.batch)")
	f.StringVar(&opts.Params, "params", "", "scale U-HNO's width to this parameter count, e.g. 0.62M")
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
	f.IntVar(&opts.DynamicsEvery, "dynamics-every", defaultDynamicsEvery, "steps between training-dynamics records: rollout E_b per band, SPAR contrast and keep-ratio (the paper's cadence is 200; 0: off; default off in 3D)")
	f.IntVar(&opts.DynamicsTrajs, "dynamics-trajectories", dynamics.DefaultTrajectories, "test trajectories the training-dynamics rollout uses")
	f.BoolVar(&opts.DryRun, "dry-run", false, "build the model, print its parameter count beside U-HNO's and the training plan, and exit without generating or reading data")
	f.StringVar(&opts.Precision, "precision", "", "bf16 or fp32: bf16 autocasts the dense products on the CUDA backend (default: bf16 for cfd3d on the CUDA backend, fp32 otherwise; the CPU computes in float32; kept on --resume)")
	f.IntVar(&opts.StopAfter, "stop-after", 0, "stop after this step with a checkpoint, as Ctrl-C would (0: run to the end)")
	f.DurationVar(&opts.DistTimeout, "dist-timeout", dist.DefaultTimeout, "under mpirun or srun: how long a rank waits for the others in a collective before it stops the run with an error (a rank died or hangs)")
	return cmd
}

// buildRecord is stored in every checkpoint (train.Config.Build): what is
// needed to rebuild the same model and data pipeline on resume.
type buildRecord struct {
	Model    string              `json:"model"` // uhno, fno or additive
	UHNO     *model.Spec         `json:"uhno,omitempty"`
	FNO      *model.FNOSpec      `json:"fno,omitempty"`
	Additive *model.AdditiveSpec `json:"additive,omitempty"`
	// Baseline is the spec of one of baselines() (Model names which), as
	// its model package type encodes it.
	Baseline json.RawMessage `json:"baseline,omitempty"`
	Data     string          `json:"data"`   // the data file, an absolute path (relative in older checkpoints: as given)
	Stride   int             `json:"stride"` // spatial subsampling on read
	ValPairs int             `json:"val_pairs"`
	// DataStamp fingerprints the data file as the run first indexed it
	// (size and sampled SHA-256, data.FileStamp); a resume refuses a file
	// that no longer matches. Absent in checkpoints of older versions.
	DataStamp *data.FileStamp `json:"data_stamp,omitempty"`
	// Control holds the run-control settings in effect when the
	// checkpoint was written; a resume restores them. Absent in
	// checkpoints of older versions.
	Control *runControl `json:"control,omitempty"`
	// Precision is the run's --precision, bf16 or fp32 (precision.go);
	// absent in checkpoints of older versions, which trained in fp32.
	Precision string `json:"precision,omitempty"`
	// Stats are the normalisation statistics the run trains with (the
	// training split's per-field mean and std). Eval, resume, ablate and
	// predict normalise with them, so a run needs nothing but its
	// checkpoint and its data file. Absent in checkpoints of older
	// versions (runStats then finds or recomputes them).
	Stats *data.Stats `json:"stats,omitempty"`
}

// runControl is the run-control settings of `uhno train`: how often to log,
// validate and checkpoint, how many checkpoints to keep, the CPU thread
// count and CUDA-graph replay. None changes the weights: the CPU backend
// gives the same bits for any thread count, graph replay computes what the
// direct loop does, and the intervals only choose when to look and save.
// A resumed run therefore keeps them unless the resume command line gives
// the flag, which then wins (and is recorded from then on), with one line
// saying so. Every other setting stays refused on resume
// (checkTrainFlags): --batch, --params, --set and the like change the
// math, and --val-pairs changes the validation set whose best value the
// run tracks. --stop-after, --out, --data, --quiet and --dist-timeout are
// not recorded: they belong to one invocation (where to stop this time,
// where to write, where the data cache is, whether to draw a progress
// bar, how long ranks wait for each other).
type runControl struct {
	LogEvery  int  `json:"log_every"`
	ValEvery  int  `json:"val_every"`
	CkptEvery int  `json:"ckpt_every"`
	Keep      int  `json:"keep"`
	Threads   int  `json:"threads"` // 0: all cores
	Graph     bool `json:"graph"`
	// DynamicsEvery and DynamicsTrajs are --dynamics-every (0: off) and
	// --dynamics-trajectories. Checkpoints of older versions record
	// neither (nil, 0); a resume of such a run takes the flags' values,
	// as it does for every setting without a record.
	DynamicsEvery *int `json:"dynamics_every,omitempty"`
	DynamicsTrajs int  `json:"dynamics_trajectories,omitempty"`
}

// controlOf returns the run-control settings of opts.
func controlOf(opts *trainOptions) *runControl {
	every := opts.DynamicsEvery
	return &runControl{LogEvery: opts.LogEvery, ValEvery: opts.ValEvery, CkptEvery: opts.CkptEvery,
		Keep: opts.Keep, Threads: opts.Threads, Graph: opts.Graph,
		DynamicsEvery: &every, DynamicsTrajs: opts.DynamicsTrajs}
}

// resumeControl sets the run-control options of a resumed run: the
// recorded value of each, or the flag's where the resume command line
// gives it, printing one line for each recorded value so overridden.
// Without a record (a checkpoint of an older version) the flags' values
// are used, and a line says so.
func resumeControl(opts *trainOptions, ckDir string, rec *runControl) {
	if rec == nil {
		fmt.Fprintf(opts.Out, "resume: checkpoint %s records no run-control settings (an older uhno); using --log-every %d --val-every %d --ckpt-every %d --keep %d\n",
			ckDir, opts.LogEvery, opts.ValEvery, opts.CkptEvery, opts.Keep)
		return
	}
	given := func(name string) bool { return opts.changed != nil && opts.changed(name) }
	// Settings an older checkpoint does not record keep the flags' values.
	dynEvery, dynTrajs := opts.DynamicsEvery, opts.DynamicsTrajs
	if rec.DynamicsEvery != nil {
		dynEvery = *rec.DynamicsEvery
	}
	if rec.DynamicsTrajs > 0 {
		dynTrajs = rec.DynamicsTrajs
	}
	ints := []struct {
		name     string
		flag     *int
		recorded int
	}{
		{"log-every", &opts.LogEvery, rec.LogEvery},
		{"val-every", &opts.ValEvery, rec.ValEvery},
		{"ckpt-every", &opts.CkptEvery, rec.CkptEvery},
		{"keep", &opts.Keep, rec.Keep},
		{"threads", &opts.Threads, rec.Threads},
		{"dynamics-every", &opts.DynamicsEvery, dynEvery},
		{"dynamics-trajectories", &opts.DynamicsTrajs, dynTrajs},
	}
	for _, c := range ints {
		switch {
		case !given(c.name):
			*c.flag = c.recorded
		case *c.flag != c.recorded:
			fmt.Fprintf(opts.Out, "resume: --%s %d overrides the run's %d\n", c.name, *c.flag, c.recorded)
		}
	}
	switch {
	case !given("graph"):
		opts.Graph = rec.Graph
	case opts.Graph != rec.Graph:
		fmt.Fprintf(opts.Out, "resume: --graph=%t overrides the run's %t\n", opts.Graph, rec.Graph)
	}
}

// crashEnv names the fault-injection variable of `uhno train`, for tests:
// UHNO_TEST_CRASH_IN_CHECKPOINT=STAGE[@STEP] makes the process kill itself
// with SIGKILL (no clean-up, as a power cut or the OOM killer would) when
// a checkpoint save reaches STAGE (train.SaveStages: mid-weights,
// after-weights, after-optimizer, after-state, before-rename,
// before-latest, before-prune), in the checkpoint of step STEP or, without
// @STEP, in the first checkpoint this process writes. The crash tests use
// it to show that `latest` always names a complete checkpoint and that a
// resume continues bit for bit. Not for normal use.
const crashEnv = "UHNO_TEST_CRASH_IN_CHECKPOINT"

// crashHook returns the train.Config.SaveFault that crashEnv's value spec
// asks for (nil for an empty spec), or a one-line error for a bad spec.
func crashHook(spec string) (func(step int, stage string) error, error) {
	if spec == "" {
		return nil, nil
	}
	stage, stepText, hasStep := strings.Cut(spec, "@")
	step := 0
	bad := func() error {
		return fmt.Errorf("train: %s=%q: want STAGE[@STEP] with STAGE one of %s and STEP a positive step",
			crashEnv, spec, strings.Join(train.SaveStages(), ", "))
	}
	if !slices.Contains(train.SaveStages(), stage) {
		return nil, bad()
	}
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n < 1 {
			return nil, bad()
		}
		step = n
	}
	return func(at int, s string) error {
		if s != stage || (step != 0 && at != step) {
			return nil
		}
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Kill() // SIGKILL: the process ends here
		}
		time.Sleep(time.Minute)
		return fmt.Errorf("train: %s: the process survived SIGKILL", crashEnv)
	}, nil
}

// trainRun resolves the configuration (from the flags, or from the
// checkpoint on --resume), prepares the data and the model, and trains.
func trainRun(ctx context.Context, opts *trainOptions) error {
	if err := checkTrainFlags(opts); err != nil {
		return err
	}
	if opts.DryRun {
		return trainDryRun(opts)
	}
	saveFault, err := crashHook(os.Getenv(crashEnv))
	if err != nil {
		return err
	}
	comm, launch, err := dist.Open(dist.Options{Timeout: opts.DistTimeout})
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if comm.Size() == 1 {
		defer comm.Close()
		return trainRunComm(ctx, opts, comm, launch, saveFault)
	}
	// Ranks other than 0 print nothing but their errors; every error
	// names its rank. After an error MPI is not finalized (dist.Comm):
	// the process exits and the launcher ends the job.
	stderr := opts.Err
	if comm.Rank() != 0 {
		opts.Out, opts.Err, opts.Quiet = io.Discard, io.Discard, true
	}
	// A signal under a launcher usually means that the launcher is ending
	// the job (a rank died: Open MPI's mpirun then sends SIGTERM and soon
	// SIGKILL) while this rank waits in a collective and cannot return
	// an error: say so at once, on one line, with where to resume.
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			fmt.Fprintf(stderr, "uhno: rank %d of %d: train: interrupted (Ctrl-C, or the launcher ending the job because a rank stopped); stopping at the next step if every rank can; resume from the last checkpoint with --resume\n",
				comm.Rank(), comm.Size())
		case <-finished:
		}
	}()
	if err := trainRunComm(ctx, opts, comm, launch, saveFault); err != nil {
		return fmt.Errorf("rank %d of %d: %w", comm.Rank(), comm.Size(), err)
	}
	if err := comm.Close(); err != nil {
		return fmt.Errorf("rank %d of %d: train: finishing: %w", comm.Rank(), comm.Size(), err)
	}
	return nil
}

// trainRunComm is trainRun as one rank of comm (alone when its size is
// 1).
func trainRunComm(ctx context.Context, opts *trainOptions, comm dist.Comm, launch dist.Launch, saveFault func(int, string) error) error {
	var (
		err    error
		cfg    config.Config
		rec    buildRecord
		runDir = opts.Dir
		ckDir  string
		extend bool // --resume with a longer --steps
	)
	if opts.Resume != "" {
		var st train.State
		st, ckDir, err = train.ReadState(opts.Resume)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(st.Build, &rec); err != nil || rec.Model == "" {
			return fmt.Errorf("train: checkpoint %s has no usable build record; it was not written by uhno train", ckDir)
		}
		if opts.Load.Task != "" && opts.Load.Task != st.Task {
			return fmt.Errorf("train: --resume %s is a run of task %s, not %s", opts.Resume, st.Task, opts.Load.Task)
		}
		cfg = st.Config
		// state.json is outside input too: its configuration passes the
		// same validation as one given on the command line.
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("train: checkpoint %s holds an invalid configuration: %w", ckDir, err)
		}
		if runDir == "" {
			runDir = filepath.Dir(ckDir)
		}
		if opts.Steps > 0 && opts.Steps != cfg.Optim.Steps {
			if opts.Steps < cfg.Optim.Steps {
				return fmt.Errorf("train: --steps %d with --resume %s: the run has %d steps, and --steps can only lengthen a run", opts.Steps, opts.Resume, cfg.Optim.Steps)
			}
			fmt.Fprintf(opts.Err, "train: lengthening the run from %d to %d steps: from step %d on the learning rate follows the cosine of a %d-step run; the result is not bit-identical to a run started with --steps %d, whose rate differed from step %d on\n",
				cfg.Optim.Steps, opts.Steps, st.Step+1, opts.Steps, opts.Steps, cfg.Optim.Warmup+1)
			cfg.Optim.Steps = opts.Steps
			extend = true
		}
		resumeControl(opts, ckDir, rec.Control)
	} else {
		if err := scaleWarmup(opts); err != nil {
			return err
		}
		var err error
		if cfg, err = loadConfig(trainLoad(opts)); err != nil {
			return err
		}
		rec.Model, rec.ValPairs = opts.Model, opts.ValPairs
	}

	size, rank := comm.Size(), comm.Rank()
	if size > 1 && cfg.Optim.Batch%size != 0 {
		return fmt.Errorf("train: the batch of %d (--batch, the global batch) does not split evenly over %d ranks; use a multiple of %d", cfg.Optim.Batch, size, size)
	}
	// Ranks sharing a node share its cores: by default each gets its
	// part of them (the thread count never changes the results).
	threads := opts.Threads
	if threads == 0 && launch.LocalSize > 1 {
		threads = max(1, runtime.NumCPU()/launch.LocalSize)
	}
	backend, closeBackend, err := openBackend(threads, opts.Err)
	if err != nil {
		return err
	}
	defer closeBackend()
	if err := setPrecision(backend, cfg.Task, opts.Precision, opts.Resume != "", &rec, opts.Out); err != nil {
		return err
	}
	reduceOnDevice, err := joinDevices(backend, comm, opts)
	if err != nil {
		return err
	}

	rec.Control = controlOf(opts)

	// Rank 0 generates the data on first use while the others wait, so
	// that only one process writes the cache.
	if rank > 0 {
		if err := comm.Barrier(); err != nil {
			return fmt.Errorf("train: waiting for rank 0 to prepare the data: %w", err)
		}
	}
	path, stride, dataDir, err := trainData(ctx, cfg, opts, rec)
	if err != nil {
		return err
	}
	if size > 1 && rank == 0 {
		if err := comm.Barrier(); err != nil {
			return fmt.Errorf("train: waiting for the other ranks: %w", err)
		}
	}
	// The data file is watched from here to the end of the run and, on
	// resume, checked against the stamp the run recorded before anything
	// is read from it (the statistics, the validation set).
	watch, err := data.WatchFile(path)
	if err != nil {
		if opts.Resume != "" {
			return fmt.Errorf("train: checkpoint %s was trained on %s, which cannot be read: %w", ckDir, path, err)
		}
		return fmt.Errorf("train: %w", err)
	}
	defer watch.Close()
	rec.Data, rec.Stride = path, stride
	switch {
	case opts.Resume == "":
		if abs, err := filepath.Abs(path); err == nil {
			rec.Data = abs // a resume from another working directory finds it
		}
		stamp := watch.Stamp()
		rec.DataStamp = &stamp
	case rec.DataStamp == nil:
		fmt.Fprintf(opts.Out, "resume: checkpoint %s records no fingerprint of its data file %s (an older uhno); not verified\n", ckDir, path)
	default:
		if err := rec.DataStamp.Match(path, watch.Stamp()); err != nil {
			return fmt.Errorf("train: cannot resume %s: %w; it is not the data the run was trained on (restore the file, or start a new run)", ckDir, err)
		}
	}
	from := statsFrom{Sidecar: freshSidecar(path, dataDir)}
	if opts.Resume != "" {
		from = runStats(rec, dataDir)
	}
	td, err := openTaskData(cfg, path, stride, from)
	if err != nil {
		return err
	}
	defer td.ds.Close()
	ds, split, plan, stats := td.ds, td.split, td.plan, td.stats
	rec.Stats = &stats // every later command that opens the run normalises with these
	batcher, err := data.NewBatcher(plan, split.Train, data.BatchOptions{Batch: cfg.Optim.Batch, Seed: uint64(cfg.Seed), Stats: &stats,
		Shards: size, Shard: rank})
	if err != nil {
		return err
	}
	val, err := train.NewValSet(plan, split.Test, &stats, rec.ValPairs, cfg.Optim.Batch, uint64(cfg.Seed))
	if err != nil {
		return err
	}

	in, out := plan.InputShape(1)[1], plan.TargetShape(1)[1]
	m, desc, err := buildModel(cfg, in, out, opts, &rec, backend)
	if err != nil {
		return err
	}
	if err := m.CheckGrid(ds.Grid()); err != nil {
		return err
	}
	if runDir == "" {
		name := m.Name() // uhno, uhno-A, ...
		if rec.Model != "uhno" {
			name = rec.Model // fno-wider builds an FNO: keep it apart from runs/<task>-fno
		}
		runDir = filepath.Join("runs", cfg.Task+"-"+name)
	}
	if rank == 0 { // the one writer of the run directory, until the command exits
		lk, err := runlock.Acquire(runDir)
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		defer lk.Release()
	}
	fmt.Fprintf(opts.Out, "%s on %s: %s\n", cfg.Task, backend.Name(), desc)
	valPairs := 0
	for _, vb := range val.Batches {
		valPairs += vb.InShape[0]
	}
	fmt.Fprintf(opts.Out, "data %s: %d training pairs, %d validation pairs; run directory %s\n",
		path, batcher.PairsPerEpoch(), valPairs, runDir)
	if size > 1 {
		th := "all cores"
		if threads > 0 {
			th = fmt.Sprintf("%d", threads)
		}
		fmt.Fprintf(opts.Out, "data parallel: %d ranks (%s), global batch %d = %d x %d per rank, threads per rank %s\n",
			size, launch.Launcher, cfg.Optim.Batch, size, cfg.Optim.Batch/size, th)
	}

	var probes []train.Probe
	if opts.Resume == "" && len(cfg.PDE.Grid) == 3 && opts.DynamicsEvery > 0 && (opts.changed == nil || !opts.changed("dynamics-every")) {
		fmt.Fprintf(opts.Out, "dynamics: off for a 3D task (each record would cost about a tenth of the run); --dynamics-every N turns it on\n")
		opts.DynamicsEvery = 0
		rec.Control = controlOf(opts)
	}
	if opts.DynamicsEvery > 0 && rank == 0 { // probes run on rank 0 (train.Config.Comm)
		p, line, err := dynamicsProbe(cfg, td, m, backend, opts.DynamicsEvery, opts.DynamicsTrajs)
		if err != nil {
			return err
		}
		probes = append(probes, p)
		fmt.Fprintln(opts.Out, line)
		if add, ok := m.(*model.Additive); ok {
			p, line, err := angleProbe(add, backend, val, opts.DynamicsEvery)
			if err != nil {
				return err
			}
			probes = append(probes, p)
			fmt.Fprintln(opts.Out, line)
		}
	}

	lossCfg := train.LossConfigFor(cfg)
	// The batches are read ahead on a goroutine of their own (identical
	// batches, in the same order): a 3D trajectory is read while steps run.
	batches := data.NewPrefetcher(batcher)
	defer batches.Close()
	tcfg := train.Config{
		Model: train.Adapt(m), Backend: backend, Train: batches, Val: val,
		Loss:     lossCfg,
		Schedule: train.Schedule{Peak: cfg.Optim.LR, Warmup: cfg.Optim.Warmup, Steps: cfg.Optim.Steps},
		Optim:    train.AdamW{Beta1: cfg.Optim.Betas[0], Beta2: cfg.Optim.Betas[1], Eps: cfg.Optim.AdamEps, WeightDecay: cfg.Optim.WeightDecay},
		LogEvery: opts.LogEvery, ValEvery: opts.ValEvery, CkptEvery: opts.CkptEvery, Keep: opts.Keep,
		Dir: runDir, Resume: opts.Resume, StopAfter: opts.StopAfter, Progress: !opts.Quiet, Graph: opts.Graph,
		DataSeed: uint64(cfg.Seed), Run: cfg, Version: version, Build: rec,
		DataGuard: watch, SaveFault: saveFault, Extend: extend, Probes: probes,
		Comm: comm, ReduceOnDevice: reduceOnDevice,
	}
	res, err := train.Run(ctx, tcfg, opts.Err)
	if err != nil {
		return err
	}
	if res.Step == res.ResumedFrom && !res.Interrupted {
		fmt.Fprintf(opts.Out, "the run was already complete at step %d; checkpoint %s\n", res.Step, res.Checkpoint)
		return nil
	}
	summary := fmt.Sprintf("step %d/%d: loss %.4g (mse %.4g, h1 %.4g", res.Step, res.Steps, res.Loss.Total, res.Loss.MSE, res.Loss.H1)
	if res.Loss.CBC != 0 {
		summary += fmt.Sprintf(", cbc %.4g", res.Loss.CBC)
	}
	summary += ")"
	if res.Val != nil {
		summary += fmt.Sprintf("; validation loss %.4g (mse %.4g), best %.4g at step %d", res.Val.Total, res.Val.MSE, res.BestVal, res.BestValStep)
	}
	fmt.Fprintf(opts.Out, "%s; %.2f steps/s over %s\n", summary, res.StepsPerSec, res.Elapsed.Round(1e7))
	if w := batches.Waited(); res.Elapsed > 0 && w > res.Elapsed/100 {
		fmt.Fprintf(opts.Out, "data: the steps waited %s for batches, %.1f%% of the time (reading is not keeping up)\n", w.Round(time.Millisecond), 100*w.Seconds()/res.Elapsed.Seconds())
	}
	if res.CommTime > 0 && res.Elapsed > 0 {
		fmt.Fprintf(opts.Out, "all-reduce (gradients, with host copies) took %s, %.1f%% of the time (rank 0)\n", res.CommTime.Round(time.Millisecond), 100*res.CommTime.Seconds()/res.Elapsed.Seconds())
	}
	if res.ProbeTime > 0 && res.Elapsed > 0 {
		fmt.Fprintf(opts.Out, "probes (training-dynamics records) took %s, %.1f%% of the time\n", res.ProbeTime.Round(time.Millisecond), 100*res.ProbeTime.Seconds()/res.Elapsed.Seconds())
	}
	if res.Interrupted {
		fmt.Fprintf(opts.Out, "stopped at step %d; checkpoint %s; continue with: uhno train --resume %s\n", res.Step, res.Checkpoint, runDir)
		return nil
	}
	fmt.Fprintf(opts.Out, "checkpoint %s\n", res.Checkpoint)
	return nil
}

// checkTrainFlags rejects flag combinations that cannot work.
func checkTrainFlags(opts *trainOptions) error {
	if !slices.Contains(modelNames(), opts.Model) {
		return fmt.Errorf("train: --model %q: want one of %s", opts.Model, strings.Join(modelNames(), ", "))
	}
	if opts.Steps < 0 || opts.Batch < 0 || opts.Width < 0 || opts.Warmup < 0 || opts.StopAfter < 0 {
		return fmt.Errorf("train: --steps, --warmup, --batch, --width and --stop-after must not be negative")
	}
	if opts.LogEvery < 0 || opts.ValEvery < 0 || opts.CkptEvery < 0 || opts.Keep < 1 || opts.ValPairs < 1 {
		return fmt.Errorf("train: --log-every, --val-every and --ckpt-every must be >= 0, --keep and --val-pairs >= 1")
	}
	// 0 where no flag was parsed (ablate's runs): dist.DefaultTimeout.
	if opts.DistTimeout < 0 || (opts.DistTimeout == 0 && opts.changed != nil && opts.changed("dist-timeout")) {
		return fmt.Errorf("train: --dist-timeout %s: want a positive duration such as 5m", opts.DistTimeout)
	}
	if opts.DynamicsEvery < 0 || opts.DynamicsTrajs < 1 {
		return fmt.Errorf("train: --dynamics-every must be >= 0 (0: off) and --dynamics-trajectories >= 1")
	}
	if opts.Width > 0 && opts.Model != "fno" {
		return fmt.Errorf("train: --width sets the FNO's width; use --params to size U-HNO")
	}
	if opts.Resume != "" {
		// The checkpoint holds the settings; changing them would not
		// continue the same run.
		for _, name := range []string{"config", "set", "model", "mode", "warmup", "batch", "params", "width", "val-pairs"} {
			if opts.changed != nil && opts.changed(name) {
				return fmt.Errorf("train: --%s cannot be combined with --resume: a resumed run keeps the settings of its checkpoint", name)
			}
		}
		return nil
	}
	if opts.Load.Task == "" && opts.Load.File == "" && os.Getenv(envPrefix+"_TASK") == "" {
		return fmt.Errorf("train: no task given; pass --task NAME (one of %s) or --resume DIR", strings.Join(config.TaskNames(), ", "))
	}
	return nil
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
	cfg, err := loadConfig(trainLoad(&base))
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
func trainLoad(opts *trainOptions) loadRequest {
	load := opts.Load
	load.Sets = append([]string(nil), load.Sets...)
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
	return load
}

// trainData returns the data file of the task and its read stride, and
// the data directory: a resumed run's recorded file; else a PDEBench file
// indexed by `uhno datagen --pdebench` (<data dir>/<task>.pdebench.json);
// else the generated file, generating it on first use.
func trainData(ctx context.Context, cfg config.Config, opts *trainOptions, rec buildRecord) (path string, stride int, dir string, err error) {
	dir = opts.DataDir
	if dir == "" {
		if dir, err = datagen.DefaultDir(); err != nil {
			return "", 0, "", err
		}
	}
	if rec.Data != "" {
		return rec.Data, rec.Stride, dir, nil
	}
	// The index is outside input: ReadPDEBenchIndex checks every value.
	idx, err := datagen.ReadPDEBenchIndex(dir, cfg.Task)
	switch {
	case err == nil:
		return idx.Path, idx.Stride, dir, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", 0, "", fmt.Errorf("train: %w", err)
	}
	dopt := datagen.Options{Config: cfg, Dir: dir}
	if !opts.Quiet {
		dopt.Progress = opts.Err
	}
	res, err := datagen.Run(ctx, dopt)
	if err != nil {
		return "", 0, "", err
	}
	if res.Generated > 0 {
		fmt.Fprintf(opts.Out, "generated %s: %d trajectories in %s\n", res.Path, res.Generated, res.Elapsed.Round(1e7))
	}
	return res.Path, 1, dir, nil
}

// buildModel builds the model a fresh run asks for (recording its spec in
// rec) or the one rec describes on resume, and describes it in one line
// with its parameter count.
func buildModel(cfg config.Config, in, out int, opts *trainOptions, rec *buildRecord, b tensor.Backend) (model.Model, string, error) {
	seed := uint64(cfg.Seed)
	if rec.UHNO == nil && rec.FNO == nil && rec.Additive == nil && rec.Baseline == nil { // a fresh run: derive the specs
		spec, err := model.SpecFromConfig(cfg, in, out)
		if err != nil {
			return nil, "", err
		}
		if opts.Params != "" {
			target, err := model.ParseCount(opts.Params)
			if err != nil {
				return nil, "", err
			}
			if spec, err = model.UHNOForBudget(spec, target); err != nil {
				return nil, "", err
			}
		}
		if rec.Model != "uhno" {
			switch spec.Mode {
			case model.ModeFull, model.ModeNoCBC, model.ModeNoH1, model.ModeMSE:
			default:
				return nil, "", fmt.Errorf("train: mode %s changes U-HNO's architecture; --model %s takes only the loss modes C, D and E", spec.Mode, rec.Model)
			}
		}
		switch bl, isBaseline := findBaseline(rec.Model); {
		case isBaseline:
			raw, err := bl.plan(spec, cfg.PDE.Grid, cfg.PDE.Boundary != "dirichlet")
			if err != nil {
				return nil, "", err
			}
			rec.Baseline = raw
		case rec.Model == "additive":
			as, err := model.AdditiveForBudget(model.AdditiveSpecFor(spec), model.CountUHNO(spec))
			if err != nil {
				return nil, "", err
			}
			rec.Additive = &as
		case rec.Model == "fno":
			fs := model.FNOSpecFor(spec, opts.Width)
			if opts.Width == 0 {
				if fs, err = model.FNOForBudget(fs, model.CountUHNO(spec)); err != nil {
					return nil, "", err
				}
			}
			rec.FNO = &fs
		default:
			rec.UHNO = &spec
		}
	}
	if rec.Baseline != nil {
		bl, ok := findBaseline(rec.Model)
		if !ok {
			return nil, "", fmt.Errorf("train: the checkpoint's model %q is not one this uhno builds (%s)", rec.Model, strings.Join(modelNames(), ", "))
		}
		return bl.build(b, rec.Baseline, seed)
	}
	if rec.Additive != nil {
		m, err := model.NewAdditive(b, *rec.Additive, seed)
		if err != nil {
			return nil, "", err
		}
		return m, fmt.Sprintf("additive (flat FNO + depthwise-conv hybrid), width %d, %d blocks, K0 %d: %s parameters", rec.Additive.Width,
			rec.Additive.Blocks, rec.Additive.K0, model.FormatCount(m.Params().Count())), nil
	}
	if rec.FNO != nil {
		m, err := model.NewFNO(b, *rec.FNO, seed)
		if err != nil {
			return nil, "", err
		}
		return m, fmt.Sprintf("fno, width %d, %d blocks, K0 %d: %s parameters", rec.FNO.Width, rec.FNO.Blocks, rec.FNO.K0,
			model.FormatCount(m.Params().Count())), nil
	}
	m, err := model.NewUHNO(b, *rec.UHNO, seed)
	if err != nil {
		return nil, "", err
	}
	s := m.Spec()
	return m, fmt.Sprintf("%s (mode %s), L %d, C0 %d, K0 %d: %s parameters", m.Name(), s.Mode, s.Levels, s.C0, s.K0,
		model.FormatCount(m.Params().Count())), nil
}

// ranksJoiner is a backend that all-reduces device buffers itself (the
// CUDA backend: NCCL on GPUs, the rank group under the emulator).
type ranksJoiner interface {
	JoinRanks(c dist.Comm, timeout time.Duration) error
	AllReduceSum(s tensor.Storage, n int) error
}

// joinDevices makes a data-parallel run's backend one rank of comm when
// it can all-reduce on the device, and returns that all-reduce for
// train.Config.ReduceOnDevice; nil keeps the gradients on MPI's host path
// (the CPU backend, or NCCL missing on some rank: said once, by rank 0).
func joinDevices(backend tensor.Backend, comm dist.Comm, opts *trainOptions) (func(tensor.Storage, int) error, error) {
	j, ok := backend.(ranksJoiner)
	if !ok || comm.Size() == 1 {
		return nil, nil
	}
	joinErr := j.JoinRanks(comm, opts.DistTimeout)
	// Every rank must take the same path, or the all-reduces would not
	// match.
	joined := []float32{1}
	if joinErr != nil {
		joined[0] = 0
	}
	if err := comm.AllReduceSum(joined); err != nil {
		return nil, fmt.Errorf("train: agreeing on the device all-reduce: %w", err)
	}
	if n := int(joined[0]); n != 0 && n != comm.Size() {
		return nil, fmt.Errorf("train: %d of the %d ranks joined the device all-reduce (NCCL), the others could not: %v", n, comm.Size(), joinErr)
	}
	if joinErr != nil {
		if comm.Rank() == 0 {
			fmt.Fprintf(opts.Out, "data parallel: the gradients go through MPI with host copies (%s)\n", oneLine(joinErr.Error()))
		}
		return nil, nil
	}
	if comm.Rank() == 0 {
		fmt.Fprintln(opts.Out, "data parallel: the gradients are all-reduced on the device")
	}
	return j.AllReduceSum, nil
}
