package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"uhno/internal/bench"
	"uhno/internal/config"
	"uhno/internal/data"
	"uhno/internal/datagen"
	"uhno/internal/dist"
	"uhno/internal/model"
	"uhno/internal/runlock"
	"uhno/internal/runrec"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

// TrainOptions are the inputs of one training run (`uhno train`): a
// fresh run of Configure's configuration, or the resume of a run.
type TrainOptions struct {
	Env
	// Configure resolves a fresh run's configuration (the command's
	// flags, file and environment); it is not called on resume. errOut
	// is where it may print a note (silent on ranks other than 0).
	Configure func(errOut io.Writer) (config.Config, error)
	// Task is the --task given with Resume ("": none), which must be the
	// run's.
	Task string

	Model  string // a registered model (model.Names)
	Steps  int    // on resume: lengthen the run to this many steps (0: keep)
	Params string // parameter budget, "0.62M"
	Width  int    // FNO width override
	Dir    string // run directory
	Resume string
	// DataDir is the data folder ("": $UHNO_DATA or the user cache).
	DataDir string
	Threads int
	Quiet   bool
	// Graph replays the training step as a CUDA graph where the backend
	// can record one (the GPU build); the CPU ignores it.
	Graph bool
	// StopAfter ends the run after this step with a checkpoint, as Ctrl-C
	// would (0: run to the end).
	StopAfter int
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
	// SaveFault is train.Config.SaveFault, the crash hook of the fault
	// tests (nil: none).
	SaveFault func(step int, stage string) error

	// Changed reports which flags were given (a resume keeps the recorded
	// run control unless the flag is given); nil: none.
	Changed func(name string) bool
}

// controlOf returns the run-control settings of opts.
func controlOf(opts *TrainOptions) *runrec.RunControl {
	every := opts.DynamicsEvery
	return &runrec.RunControl{LogEvery: opts.LogEvery, ValEvery: opts.ValEvery, CkptEvery: opts.CkptEvery,
		Keep: opts.Keep, Threads: opts.Threads, Graph: opts.Graph,
		DynamicsEvery: &every, DynamicsTrajs: opts.DynamicsTrajs}
}

// resumeControl sets the run-control options of a resumed run: the
// recorded value of each, or the flag's where the resume command line
// gives it, printing one line for each recorded value so overridden.
// Without a record (a checkpoint of an older version) the flags' values
// are used, and a line says so.
func resumeControl(opts *TrainOptions, ckDir string, rec *runrec.RunControl) {
	if rec == nil {
		fmt.Fprintf(opts.Out, "resume: checkpoint %s records no run-control settings (an older uhno); using --log-every %d --val-every %d --ckpt-every %d --keep %d\n",
			ckDir, opts.LogEvery, opts.ValEvery, opts.CkptEvery, opts.Keep)
		return
	}
	given := func(name string) bool { return opts.Changed != nil && opts.Changed(name) }
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

// Train resolves the configuration (Configure's, or the checkpoint's on
// resume), prepares the data and the model, and trains: alone, or as one
// rank of a data-parallel run when started by an MPI launcher.
func Train(ctx context.Context, opts *TrainOptions) error {
	saveFault := opts.SaveFault
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

// trainRunComm is Train as one rank of comm (alone when its size is
// 1).
func trainRunComm(ctx context.Context, opts *TrainOptions, comm dist.Comm, launch dist.Launch, saveFault func(int, string) error) (err error) {
	cfg, rec, runDir, ckDir, extend, err := trainResolve(opts)
	if err != nil {
		return err
	}
	defer func() { err = outOfMemoryNote(err, runDir) }()
	defer tensor.RecoverOutOfMemory(&err)

	size, rank := comm.Size(), comm.Rank()
	if size > 1 && cfg.Optim.Batch%size != 0 {
		return fmt.Errorf("train: the batch of %d (--batch, the global batch) does not split evenly over %d ranks; use a multiple of %d", cfg.Optim.Batch, size, size)
	}
	threads, backend, closeBackend, reduceOnDevice, err := trainBackend(opts, cfg, &rec, comm, launch)
	if err != nil {
		return err
	}
	defer closeBackend()

	rec.Control = controlOf(opts)

	path, stride, dataDir, watch, err := trainDataFile(ctx, opts, cfg, &rec, comm, ckDir)
	if err != nil {
		return err
	}
	defer watch.Close()
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
	val, err := train.NewValSet(plan, split.Test, &stats, rec.ValPairs, cfg.Optim.Batch, uint64(cfg.Data.Seed))
	if err != nil {
		return err
	}

	in, out := plan.InputShape(1)[1], plan.TargetShape(1)[1]
	m, desc, err := buildModel(cfg, in, out, modelChoice{opts.Params, opts.Width}, &rec, backend)
	if err != nil {
		return err
	}
	if err := m.CheckGrid(ds.Grid()); err != nil {
		return err
	}
	if err := checkDeviceMemory(backend, cfg, modelChoice{opts.Params, opts.Width}, rec, in, out, ds.Grid(), cfg.Optim.Batch/size); err != nil {
		return err
	}
	if runDir == "" {
		runDir = defaultRunDir(cfg.Task, rec.Model, m)
	}
	if rank == 0 { // the one writer of the run directory, until the command exits
		lk, err := runlock.Acquire(runDir)
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		defer lk.Release()
	}
	valPairs := 0
	for _, vb := range val.Batches {
		valPairs += vb.InShape[0]
	}
	task := cfg.Task
	if cfg.Data.Source == config.SourceDescribed {
		task = fmt.Sprintf("%s's settings on the described data (channels %s)", cfg.Task, strings.Join(cfg.Data.Inputs, ", "))
		if len(cfg.Data.Constants) > 0 {
			task = strings.TrimSuffix(task, ")") + "; constant inputs " + strings.Join(cfg.Data.Constants, ", ") + ")"
		}
	}
	fmt.Fprintf(opts.Out, "%s on %s: %s\ndata %s: %d training pairs, %d validation pairs; run directory %s\n",
		task, backend.Name(), desc, path, batcher.PairsPerEpoch(), valPairs, runDir)
	if size > 1 {
		th := "all cores"
		if threads > 0 {
			th = fmt.Sprintf("%d", threads)
		}
		fmt.Fprintf(opts.Out, "data parallel: %d ranks (%s), global batch %d = %d x %d per rank, threads per rank %s\n",
			size, launch.Launcher, cfg.Optim.Batch, size, cfg.Optim.Batch/size, th)
	}

	probes, err := trainProbes(opts, cfg, &rec, td, m, backend, val, rank)
	if err != nil {
		return err
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
		DataSeed: uint64(cfg.Seed), Run: cfg, Version: opts.Version, Build: rec,
		DataGuard: watch, SaveFault: saveFault, Extend: extend, Probes: probes,
		Comm: comm, ReduceOnDevice: reduceOnDevice,
	}
	res, err := train.Run(ctx, tcfg, opts.Err)
	if err != nil {
		return err
	}
	printTrainSummary(opts.Out, res, batches.Waited(), runDir)
	return nil
}

// defaultRunDir is a new run's directory when --out is not given:
// runs/<task>-<model's name> (uhno, uhno-A, ...; a baseline by its
// registered name, so that fno-wider, which builds an FNO, stays apart from
// runs/<task>-fno).
func defaultRunDir(task, modelName string, m model.Model) string {
	name := m.Name()
	if modelName != "uhno" {
		name = modelName
	}
	return filepath.Join("runs", task+"-"+name)
}

// checkDeviceMemory refuses, before the first step, a run whose training
// step cannot fit the device: the memory plan of one step at the rank's
// batch (bench.PlanStep on a second copy of the model built on a
// bench.Planner, the plan --dry-run prints), less the weights already on
// the device, against the device's free memory. The plan leaves out the
// backend's workspace (cuFFT plans, the allocator's size classes), so a
// step it passes can still run out; that failure is recovered into a
// one-line error by trainRunComm (tensor.RecoverOutOfMemory). Backends
// without device memory (the CPU) are not checked.
func checkDeviceMemory(backend tensor.Backend, cfg config.Config, choice modelChoice, rec runrec.BuildRecord, in, out int, grid []int, batch int) error {
	dm, ok := backend.(tensor.DeviceMemory)
	if !ok {
		return nil
	}
	free, total, err := dm.MemInfo()
	if err != nil {
		return nil // the device cannot say: the allocation will
	}
	pl := &bench.Planner{}
	m, _, err := buildModel(cfg, in, out, choice, &rec, pl)
	if err != nil {
		return err
	}
	plan, err := bench.PlanStep(pl, m, train.LossConfigFor(cfg), batch, in, out, grid)
	if err != nil {
		return fmt.Errorf("train: memory plan: %w", err)
	}
	if need := plan.Peak - plan.Weights; need > free {
		return fmt.Errorf("train: one training step at batch %d needs %s more on %s (the memory plan, as --dry-run prints it), which has %s free of %s: lower --batch or the model's size",
			batch, tensor.FormatBytes(need), backend.Name(), tensor.FormatBytes(free), tensor.FormatBytes(total))
	}
	return nil
}

// outOfMemoryNote adds to a run's out-of-memory error (recovered from the
// device backend's Alloc) that what was saved is intact.
func outOfMemoryNote(err error, runDir string) error {
	var oom *tensor.OutOfMemory
	if !errors.As(err, &oom) {
		return err
	}
	if runDir == "" {
		return fmt.Errorf("train: %w", err)
	}
	return fmt.Errorf("train: %w; the checkpoints already in %s are intact (uhno train --resume %s continues from the last)", err, runDir, runDir)
}

// trainBackend opens the run's backend with its thread count (ranks
// sharing a node share its cores: by default each gets its part of them;
// the thread count never changes the results), sets the run's precision
// (recorded in rec) and joins the ranks' devices. The caller calls
// closeBackend.
func trainBackend(opts *TrainOptions, cfg config.Config, rec *runrec.BuildRecord, comm dist.Comm, launch dist.Launch) (threads int, backend tensor.Backend, closeBackend func(), reduceOnDevice func(tensor.Storage, int) error, err error) {
	threads = opts.Threads
	if threads == 0 && launch.LocalSize > 1 {
		threads = max(1, runtime.NumCPU()/launch.LocalSize)
	}
	backend, closeBackend, err = opts.openBackend(threads)
	if err != nil {
		return 0, nil, nil, nil, err
	}
	if err := setPrecision(backend, cfg.Task, opts.Precision, opts.Resume != "", rec, opts.Out); err != nil {
		closeBackend()
		return 0, nil, nil, nil, err
	}
	reduceOnDevice, err = joinDevices(backend, comm, opts)
	if err != nil {
		closeBackend()
		return 0, nil, nil, nil, err
	}
	return threads, backend, closeBackend, reduceOnDevice, nil
}

// trainDataFile finds (or, on rank 0, generates) the run's data file
// while the other ranks wait, watches it from here to the end of the run,
// and records it in rec: a fresh run's absolute path and stamp, or on
// resume the check against the stamp the run recorded, before anything
// is read from it (the statistics, the validation set). The caller closes
// watch.
func trainDataFile(ctx context.Context, opts *TrainOptions, cfg config.Config, rec *runrec.BuildRecord, comm dist.Comm, ckDir string) (path string, stride int, dataDir string, watch *data.FileWatch, err error) {
	// Rank 0 generates the data on first use while the others wait, so
	// that only one process writes the cache.
	if comm.Rank() > 0 {
		if err := comm.Barrier(); err != nil {
			return "", 0, "", nil, fmt.Errorf("train: waiting for rank 0 to prepare the data: %w", err)
		}
	}
	path, stride, dataDir, err = trainData(ctx, cfg, opts, *rec)
	if err != nil {
		return "", 0, "", nil, err
	}
	if comm.Size() > 1 && comm.Rank() == 0 {
		if err := comm.Barrier(); err != nil {
			return "", 0, "", nil, fmt.Errorf("train: waiting for the other ranks: %w", err)
		}
	}
	// The data file is watched from here to the end of the run and, on
	// resume, checked against the stamp the run recorded before anything
	// is read from it (the statistics, the validation set).
	watch, err = data.WatchFile(path)
	if err != nil {
		if opts.Resume != "" {
			return "", 0, "", nil, fmt.Errorf("train: checkpoint %s was trained on %s, which cannot be read: %w", ckDir, path, err)
		}
		return "", 0, "", nil, fmt.Errorf("train: %w", err)
	}
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
			watch.Close()
			return "", 0, "", nil, fmt.Errorf("train: cannot resume %s: %w; it is not the data the run was trained on (restore the file, or start a new run)", ckDir, err)
		}
	}
	return path, stride, dataDir, watch, nil
}

// trainResolve is a run's configuration and build record: a resumed
// run's, read from its checkpoint (--steps may lengthen it: extend), or a
// fresh one's from opts.Configure, with --params checked before any data
// are generated.
func trainResolve(opts *TrainOptions) (cfg config.Config, rec runrec.BuildRecord, runDir, ckDir string, extend bool, err error) {
	runDir = opts.Dir
	if opts.Resume == "" {
		if cfg, err = opts.Configure(opts.Err); err != nil {
			return cfg, rec, "", "", false, err
		}
		// A bad --params is refused before the data are generated.
		if _, err := ParamsTarget(cfg, opts.Params); err != nil {
			return cfg, rec, "", "", false, fmt.Errorf("train: %w", err)
		}
		rec.Model, rec.ValPairs = opts.Model, opts.ValPairs
		return cfg, rec, runDir, "", false, nil
	}
	// state.json is outside input too: its configuration passes the same
	// validation as one given on the command line (readRun).
	st, ckDir, rec, err := readRun("train", opts.Resume)
	if err != nil {
		return cfg, rec, "", "", false, err
	}
	if opts.Task != "" && opts.Task != st.Task {
		return cfg, rec, "", "", false, fmt.Errorf("train: --resume %s is a run of task %s, not %s", opts.Resume, st.Task, opts.Task)
	}
	cfg = st.Config
	if runDir == "" {
		runDir = filepath.Dir(ckDir)
	}
	if opts.Steps > 0 && opts.Steps != cfg.Optim.Steps {
		if opts.Steps < cfg.Optim.Steps {
			return cfg, rec, "", "", false, fmt.Errorf("train: --steps %d with --resume %s: the run has %d steps, and --steps can only lengthen a run", opts.Steps, opts.Resume, cfg.Optim.Steps)
		}
		fmt.Fprintf(opts.Err, "train: lengthening the run from %d to %d steps: from step %d on the learning rate follows the cosine of a %d-step run; the result is not bit-identical to a run started with --steps %d, whose rate differed from step %d on\n",
			cfg.Optim.Steps, opts.Steps, st.Step+1, opts.Steps, opts.Steps, cfg.Optim.Warmup+1)
		cfg.Optim.Steps = opts.Steps
		extend = true
	}
	resumeControl(opts, ckDir, rec.Control)
	return cfg, rec, runDir, ckDir, extend, nil
}

// trainProbes are the run's training-dynamics probes (--dynamics-every,
// on rank 0): the rollout probe, and for the additive model the angle
// probe. A fresh 3D run turns them off unless the flag was given, and
// records that in rec.
func trainProbes(opts *TrainOptions, cfg config.Config, rec *runrec.BuildRecord, td *taskData, m model.Model, backend tensor.Backend, val *train.ValSet, rank int) ([]train.Probe, error) {
	var probes []train.Probe
	if opts.Resume == "" && len(cfg.PDE.Grid) == 3 && opts.DynamicsEvery > 0 && (opts.Changed == nil || !opts.Changed("dynamics-every")) {
		fmt.Fprintf(opts.Out, "dynamics: off for a 3D task (each record would cost about a tenth of the run); --dynamics-every N turns it on\n")
		opts.DynamicsEvery = 0
		rec.Control = controlOf(opts)
	}
	if opts.DynamicsEvery > 0 && rank == 0 { // probes run on rank 0 (train.Config.Comm)
		p, line, err := dynamicsProbe(cfg, td, m, backend, opts.DynamicsEvery, opts.DynamicsTrajs)
		if err != nil {
			return nil, err
		}
		probes = append(probes, p)
		fmt.Fprintln(opts.Out, line)
		if add, ok := m.(*model.Additive); ok {
			p, line, err := angleProbe(add, backend, val, opts.DynamicsEvery)
			if err != nil {
				return nil, err
			}
			probes = append(probes, p)
			fmt.Fprintln(opts.Out, line)
		}
	}

	return probes, nil
}

// printTrainSummary prints how a run ended: the last losses, the speed,
// where the time went beside the steps, and the checkpoint (with how to
// continue an interrupted run).
func printTrainSummary(w io.Writer, res train.Result, waited time.Duration, runDir string) {
	if res.Step == res.ResumedFrom && !res.Interrupted {
		fmt.Fprintf(w, "the run was already complete at step %d; checkpoint %s\n", res.Step, res.Checkpoint)
		return
	}
	summary := fmt.Sprintf("step %d/%d: loss %.4g (mse %.4g, h1 %.4g", res.Step, res.Steps, res.Loss.Total, res.Loss.MSE, res.Loss.H1)
	if res.Loss.CBC != 0 {
		summary += fmt.Sprintf(", cbc %.4g", res.Loss.CBC)
	}
	summary += ")"
	if res.Val != nil {
		summary += fmt.Sprintf("; validation loss %.4g (mse %.4g), best %.4g at step %d", res.Val.Total, res.Val.MSE, res.BestVal, res.BestValStep)
	}
	fmt.Fprintf(w, "%s; %.2f steps/s over %s\n", summary, res.StepsPerSec, res.Elapsed.Round(1e7))
	if res.Elapsed > 0 && waited > res.Elapsed/100 {
		fmt.Fprintf(w, "data: the steps waited %s for batches, %.1f%% of the time (reading is not keeping up)\n", waited.Round(time.Millisecond), 100*waited.Seconds()/res.Elapsed.Seconds())
	}
	if res.CommTime > 0 && res.Elapsed > 0 {
		fmt.Fprintf(w, "all-reduce (gradients, with host copies) took %s, %.1f%% of the time (rank 0)\n", res.CommTime.Round(time.Millisecond), 100*res.CommTime.Seconds()/res.Elapsed.Seconds())
	}
	if res.ProbeTime > 0 && res.Elapsed > 0 {
		fmt.Fprintf(w, "probes (training-dynamics records) took %s, %.1f%% of the time\n", res.ProbeTime.Round(time.Millisecond), 100*res.ProbeTime.Seconds()/res.Elapsed.Seconds())
	}
	if res.Interrupted {
		fmt.Fprintf(w, "stopped at step %d; checkpoint %s; continue with: uhno train --resume %s\n", res.Step, res.Checkpoint, runDir)
		return
	}
	fmt.Fprintf(w, "checkpoint %s\n", res.Checkpoint)
}

// trainData returns the data file of the task and its read stride, and
// the data directory: a resumed run's recorded file; else a PDEBench file
// indexed by `uhno datagen --pdebench` (<data dir>/<task>.pdebench.json);
// else the generated file, generating it on first use.
func trainData(ctx context.Context, cfg config.Config, opts *TrainOptions, rec runrec.BuildRecord) (path string, stride int, dir string, err error) {
	dir = opts.DataDir
	if dir == "" {
		if dir, err = datagen.DefaultDir(); err != nil {
			return "", 0, "", err
		}
	}
	if rec.Data != "" {
		return rec.Data, rec.Stride, dir, nil
	}
	if cfg.Data.Source == config.SourceDescribed {
		// A user's file, described by uhno datagen --from: the
		// description is what the run reads (data.Open).
		return cfg.Data.File, 1, dir, nil
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
func joinDevices(backend tensor.Backend, comm dist.Comm, opts *TrainOptions) (func(tensor.Storage, int) error, error) {
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
			fmt.Fprintf(opts.Out, "data parallel: the gradients go through MPI with host copies (%s)\n", OneLine(joinErr.Error()))
		}
		return nil, nil
	}
	if comm.Rank() == 0 {
		fmt.Fprintln(opts.Out, "data parallel: the gradients are all-reduced on the device")
	}
	return j.AllReduceSum, nil
}
