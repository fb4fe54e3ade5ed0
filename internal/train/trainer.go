package train

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"uhno/internal/dist"
	"uhno/internal/progress"
	"uhno/internal/tensor"
)

// Run trains cfg.Model and returns a summary. Each step: Tape.Reset, the
// batch to the device (FromHost), Forward, the loss of Eq. loss, Backward,
// one AdamW call on the flat buffers with the scheduled learning rate,
// ZeroGrad. It logs every LogEvery steps, validates every ValEvery steps,
// runs each of Probes at its steps (Probe) and checkpoints every CkptEvery
// steps and at the end. Cancelling ctx
// (Ctrl-C) saves a checkpoint at the current step boundary and returns
// with Result.Interrupted and no error; resuming from any checkpoint gives
// bit for bit the run that was never interrupted (the CPU backend is
// deterministic, and the checkpoint holds weights, moments, step and the
// data position). A non-finite loss (training or validation) or
// non-finite weights at a checkpoint stop the run with an error naming
// the step and the last checkpoint, and no checkpoint of the diverged
// weights; so do a failed checkpoint write (the previous checkpoint
// stays latest) and a data file that changed (Config.DataGuard).
//
// Run reads top to bottom as the training loop; the trainer's methods
// are its phases.
func Run(ctx context.Context, cfg Config, out io.Writer) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	tr, err := newTrainer(cfg, out)
	if err != nil {
		return Result{Steps: cfg.Schedule.Steps}, err
	}
	defer tr.release()
	if err := tr.resume(ctx); err != nil {
		return tr.res, err
	}
	if err := tr.open(ctx); err != nil {
		return tr.fail(err)
	}
	for tr.st.Step < tr.end() {
		if !tr.dp && ctx.Err() != nil {
			break
		}
		t := tr.st.Step + 1
		s, err := tr.step(ctx, t)
		if err != nil {
			return tr.fail(err)
		}
		if err := tr.log(t, s); err != nil {
			return tr.fail(err)
		}
		if err := tr.validate(t, s.lr); err != nil {
			return tr.fail(err)
		}
		// Probes before the checkpoint: the log holds their records when
		// the checkpoint of this step exists, so a resume from it neither
		// repeats nor loses them.
		if _, err := tr.probes.run(ctx, t, tr.probes.due(t)); err != nil {
			return tr.fail(err)
		}
		if (tr.cfg.CkptEvery > 0 && t%tr.cfg.CkptEvery == 0) || t == tr.cfg.Schedule.Steps {
			if err := tr.save(); err != nil {
				return tr.fail(err)
			}
		}
		if s.stop {
			break
		}
	}
	return tr.finish()
}

// trainer is one call of Run: the configuration, the model's flat
// buffers and AdamW's moments, the checkpoint State, the run directory's
// log and the step's tapes.
type trainer struct {
	cfg      Config
	out      io.Writer
	b        tensor.Backend
	ps       ParamSet
	params   []*tensor.Tensor
	pdata    tensor.Storage
	pgrad    tensor.Storage
	n        int
	m, v     tensor.Storage
	comm     dist.Comm
	root, dp bool // root writes the run directory; dp: the ranks reduce every step

	st  State
	res Result

	in, tgt []float32 // the host batch
	logf    *os.File
	// logw is logf, written a whole record at a time (one write per
	// Encode, unbuffered), so that a run's log is current while it runs
	// (tail -f, uhno report on a live run); io.Discard on other ranks.
	logw    io.Writer
	enc     *json.Encoder
	tp, vtp *tensor.Tape // the step's tape, and validation's
	graph   *graphStep
	bar     *progress.Bar
	barDone bool
	hooks   *saveHooks
	probes  *probeRunner
	red     *reducer

	start, lastLog       time.Time
	lastLogStep          int
	commSince, commTotal time.Duration
}

// stepOut is what one step leaves for the log, validation and the loop.
type stepOut struct {
	lr   float64
	vals LossValues
	aux  Aux
	spar *sparSums // the SPAR sums over the ranks (data parallel), else nil
	stop bool      // a rank was asked to stop after this step
}

// newTrainer sets up a fresh run's State and allocates AdamW's moments and
// the host batch.
func newTrainer(cfg Config, out io.Writer) (*trainer, error) {
	if out == nil {
		out = io.Discard
	}
	tr := &trainer{cfg: cfg, out: out, b: cfg.Backend, ps: cfg.Model.Params(), comm: cfg.Comm}
	tr.params = tr.ps.List()
	tr.pdata, tr.pgrad, tr.n = tr.ps.Flat()
	tr.res = Result{Steps: cfg.Schedule.Steps}
	if tr.comm == nil {
		tr.comm = dist.Single{}
	}
	tr.root, tr.dp = tr.comm.Rank() == 0, tr.comm.Size() > 1
	if !tr.root {
		tr.cfg.Probes, tr.cfg.Progress = nil, false
	}
	tr.st = State{
		Schedule: cfg.Schedule, Optim: cfg.Optim,
		// The checkpoint records the global batch: a resume with any
		// rank count that divides it continues the same run.
		Data:  DataState{Seed: cfg.DataSeed, Batch: cfg.Train.InputShape()[0] * tr.comm.Size()},
		Model: cfg.Model.Name(), Params: tr.n,
		Task: cfg.Run.Task, Config: cfg.Run, Version: cfg.Version,
	}
	if cfg.Build != nil {
		raw, err := json.Marshal(cfg.Build)
		if err != nil {
			return nil, fmt.Errorf("train: build record: %w", err)
		}
		tr.st.Build = raw
	}
	tr.m, tr.v = tr.b.Alloc(tr.n), tr.b.Alloc(tr.n)
	tr.in = make([]float32, tensor.Numel(cfg.Train.InputShape()))
	tr.tgt = make([]float32, tensor.Numel(cfg.Train.TargetShape()))
	return tr, nil
}

// release frees what the trainer holds, in the reverse order of taking it.
func (tr *trainer) release() {
	if tr.graph != nil {
		tr.graph.release()
	}
	if tr.vtp != nil {
		tr.vtp.Release()
	}
	if tr.tp != nil {
		tr.tp.Release()
	}
	if tr.logf != nil {
		tr.logf.Close()
	}
	tr.b.Free(tr.v)
	tr.b.Free(tr.m)
}

// resume restores weights, moments, step and data position from
// cfg.Resume and trims the log to the checkpoint's step; without Resume
// it refuses a directory that already holds a run. The ranks of a
// data-parallel run then check that they start from the same state.
func (tr *trainer) resume(ctx context.Context) error {
	cfg, b, st := tr.cfg, tr.b, &tr.st
	if cfg.Resume != "" {
		ck, dir, err := loadCheckpoint(cfg.Resume)
		if err != nil {
			return err
		}
		if err := checkCompatible(dir, ck.State, *st, cfg.Extend); err != nil {
			return err
		}
		if err := ck.restoreWeights(dir, tr.params, b, st.Model); err != nil {
			return err
		}
		if len(ck.M) != tr.n {
			return fmt.Errorf("train: checkpoint %s: %s holds %d moments, model %s has %d parameters", dir, OptimizerFile, len(ck.M), st.Model, tr.n)
		}
		b.Upload(tr.m, ck.M)
		b.Upload(tr.v, ck.V)
		st.Step, st.LR, st.Loss = ck.State.Step, ck.State.LR, ck.State.Loss
		st.BestVal, st.BestValStep = ck.State.BestVal, ck.State.BestValStep
		if err := skipBatches(ctx, cfg.Train, ck.State.Data.Drawn, tr.in, tr.tgt); err != nil {
			return err
		}
		st.Data.Drawn = ck.State.Data.Drawn
		tr.res.ResumedFrom, tr.res.Checkpoint = st.Step, dir
		if tr.root {
			if err := trimLog(filepath.Join(cfg.Dir, LogFile), st.Step); err != nil {
				return err
			}
		}
	} else if _, err := os.Stat(filepath.Join(cfg.Dir, LatestFile)); err == nil {
		return fmt.Errorf("train: %s already holds a run; resume it or choose another directory", cfg.Dir)
	}
	tr.res.Step = st.Step
	tr.res.Loss, tr.res.BestVal, tr.res.BestValStep = st.Loss, st.BestVal, st.BestValStep
	tr.ps.ZeroGrad()
	if tr.dp {
		if err := startTogether(tr.comm, b, st, tr.pdata, tr.m, tr.v, tr.n); err != nil {
			return err
		}
	}
	return nil
}

// open starts the run proper: the log (rank 0), the tapes, the progress
// bar, the checkpoint hooks, the step graph and the probes; a resumed
// run first runs the probes its checkpoint's step misses.
func (tr *trainer) open(ctx context.Context) error {
	cfg := tr.cfg
	tr.logw = io.Discard
	if tr.root {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		// A fresh run starts a fresh log: a run killed before its first
		// checkpoint leaves records that are no run's.
		logFlags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
		if cfg.Resume == "" {
			logFlags |= os.O_TRUNC
		}
		f, err := os.OpenFile(filepath.Join(cfg.Dir, LogFile), logFlags, 0o644)
		if err != nil {
			return fmt.Errorf("train: log: %w", err)
		}
		tr.logf, tr.logw = f, f
	}
	tr.enc = json.NewEncoder(tr.logw)
	tr.tp = tensor.NewTape(tr.b)
	if cfg.Progress {
		tr.bar = progress.New(tr.out, cfg.Schedule.Steps, progress.Options{Unit: "steps", Done: tr.st.Step})
	}
	tr.hooks = &saveHooks{fs: cfg.fsys}
	if cfg.SaveFault != nil {
		tr.hooks.after = func(stage string) error { return cfg.SaveFault(tr.st.Step, stage) }
	}
	// Validation runs on a tape of its own, so that it never releases the
	// buffers of a recorded step.
	tr.vtp = tensor.NewTape(tr.b)
	if capt, ok := tr.b.(tensor.StepCapturer); ok && cfg.Graph {
		tr.graph = newGraphStep(capt, tr.tp, cfg)
	}

	tr.start = time.Now()
	tr.probes = &probeRunner{probes: cfg.Probes, zeroGrad: tr.ps.ZeroGrad, enc: tr.enc, start: tr.start,
		lastCkpt: func() string { return tr.res.Checkpoint }}
	if tr.bar != nil {
		tr.probes.describe = tr.bar.Describe
	}
	if cfg.Resume != "" {
		// A probe of the checkpoint's step that has no record (interrupted
		// there, or added on resume) runs now, on that step's weights.
		missed, err := missingProbes(filepath.Join(cfg.Dir, LogFile), tr.st.Step, cfg.Probes)
		if err != nil {
			return err
		}
		if _, err := tr.probes.run(ctx, tr.st.Step, missed); err != nil {
			return err
		}
	}
	tr.lastLog, tr.lastLogStep = tr.start, tr.st.Step
	if tr.dp {
		tr.red = &reducer{comm: tr.comm, b: tr.b, grad: tr.pgrad, n: tr.n, device: cfg.ReduceOnDevice}
	}
	return nil
}

// end is the step the loop stops after: the schedule's last, or StopAfter.
func (tr *trainer) end() int {
	end := tr.cfg.Schedule.Steps
	if tr.cfg.StopAfter > 0 && tr.cfg.StopAfter < end {
		end = tr.cfg.StopAfter
	}
	return end
}

// step takes update t: the next batch, forward, loss, backward (and the
// all-reduce of a data-parallel run), AdamW and ZeroGrad.
func (tr *trainer) step(ctx context.Context, t int) (stepOut, error) {
	cfg, b, tp := tr.cfg, tr.b, tr.tp
	s := stepOut{lr: cfg.Schedule.LR(t)}
	if err := cfg.Train.Next(tr.in, tr.tgt); err != nil {
		return s, fmt.Errorf("train: step %d: batch: %w", t, err)
	}
	tr.st.Data.Drawn++
	if cfg.DataGuard != nil {
		if err := cfg.DataGuard.Check(false); err != nil {
			return s, fmt.Errorf("train: step %d: %w; the step was not taken, last checkpoint %s", t, err, orNone(tr.res.Checkpoint))
		}
	}
	var terms Terms
	if tr.graph != nil {
		if err := tr.graph.step(tr.in, tr.tgt); err != nil {
			return s, fmt.Errorf("train: step %d: %w", t, err)
		}
		terms, s.aux = tr.graph.terms, tr.graph.aux
	} else {
		tp.Reset()
		x := tp.FromHost(tr.in, cfg.Train.InputShape()...)
		y := tp.FromHost(tr.tgt, cfg.Train.TargetShape()...)
		var pred *tensor.Tensor
		pred, s.aux = cfg.Model.Forward(tp, x)
		terms = cfg.Loss.Loss(tp, pred, y, s.aux)
	}
	s.vals = terms.Values(b)
	if tr.dp {
		// Each rank's gradient reaches pgrad in the backward pass; the
		// all-reduce replaces it, the loss terms and the SPAR
		// statistics by their means over the ranks, and carries
		// whether any rank was asked to stop (Ctrl-C), so that all
		// stop after the same step.
		if tr.graph == nil {
			tp.Backward(terms.Total)
		}
		t0 := time.Now()
		var err error
		s.vals, s.spar, s.stop, err = tr.red.reduce(s.vals, s.aux.Stats, ctx.Err() != nil)
		took := time.Since(t0)
		tr.commSince += took
		tr.commTotal += took
		if err != nil {
			return s, fmt.Errorf("train: step %d: %w; the run stopped, last checkpoint %s", t, err, orNone(tr.res.Checkpoint))
		}
	}
	if !s.vals.finite() {
		return s, fmt.Errorf("train: step %d: loss is %g (mse %g, h1 %g, cbc %g); the weights diverged, last checkpoint %s",
			t, s.vals.Total, s.vals.MSE, s.vals.H1, s.vals.CBC, orNone(tr.res.Checkpoint))
	}
	if tr.graph == nil && !tr.dp {
		tp.Backward(terms.Total)
	}
	b.AdamW(tr.pdata, tr.pgrad, tr.m, tr.v, tr.n, tensor.AdamWHyper{
		LR: s.lr, Beta1: cfg.Optim.Beta1, Beta2: cfg.Optim.Beta2, Eps: cfg.Optim.Eps,
		WeightDecay: cfg.Optim.WeightDecay, Step: t,
	})
	tr.ps.ZeroGrad()
	tr.st.Step, tr.st.LR, tr.st.Loss = t, s.lr, s.vals
	tr.res.Step, tr.res.Loss = t, s.vals
	return s, nil
}

// log updates the progress bar and, every LogEvery steps, writes the
// training record of step t.
func (tr *trainer) log(t int, s stepOut) error {
	if tr.bar != nil {
		tr.bar.Describe(fmt.Sprintf("step %d loss %.3e mse %.3e h1 %.3e cbc %.3e lr %.2e", t, s.vals.Total, s.vals.MSE, s.vals.H1, s.vals.CBC, s.lr))
		tr.bar.Set(t)
	}
	if tr.cfg.LogEvery <= 0 || t%tr.cfg.LogEvery != 0 {
		return nil
	}
	now := time.Now()
	rec := LogRecord{Kind: KindTrain, Step: t, LossValues: s.vals, LR: s.lr,
		StepsPerS:  float64(t-tr.lastLogStep) / now.Sub(tr.lastLog).Seconds(),
		ElapsedSec: now.Sub(tr.start).Seconds()}
	spar := s.spar
	if spar == nil {
		spar = sumSPAR(tr.b, s.aux.Stats)
	}
	rec.Rho, rec.Contrast = spar.means()
	if tr.dp {
		rec.AllReduceShare = tr.commSince.Seconds() / now.Sub(tr.lastLog).Seconds()
		tr.commSince = 0
	}
	if err := tr.enc.Encode(rec); err != nil {
		return fmt.Errorf("train: log: %w", err)
	}
	tr.lastLog, tr.lastLogStep = now, t
	return nil
}

// validate evaluates the validation set after step t, every ValEvery
// steps and at the schedule's end, keeps the best loss and logs it.
func (tr *trainer) validate(t int, lr float64) error {
	cfg := tr.cfg
	if cfg.Val == nil || len(cfg.Val.Batches) == 0 || !((cfg.ValEvery > 0 && t%cfg.ValEvery == 0) || t == cfg.Schedule.Steps) {
		return nil
	}
	val, err := validate(tr.vtp, cfg, tr.comm)
	if err != nil {
		return fmt.Errorf("train: step %d: validation: %w; the run stopped, last checkpoint %s", t, err, orNone(tr.res.Checkpoint))
	}
	if !val.finite() {
		return fmt.Errorf("train: step %d: validation loss is %g (mse %g, h1 %g, cbc %g); the weights diverged on held-out data, last checkpoint %s",
			t, val.Total, val.MSE, val.H1, val.CBC, orNone(tr.res.Checkpoint))
	}
	st := &tr.st
	tr.res.Val = &val
	if st.BestValStep == 0 || val.Total < st.BestVal {
		st.BestVal, st.BestValStep = val.Total, t
	}
	tr.res.BestVal, tr.res.BestValStep = st.BestVal, st.BestValStep
	if err := tr.enc.Encode(LogRecord{Kind: KindVal, Step: t, LossValues: val, LR: lr, ElapsedSec: time.Since(tr.start).Seconds()}); err != nil {
		return fmt.Errorf("train: log: %w", err)
	}
	return nil
}

// save writes a checkpoint (rank 0) after the ranks have checked that
// their weights agree; every rank learns whether it was written.
func (tr *trainer) save() error {
	if !tr.dp {
		return tr.write()
	}
	st := &tr.st
	if err := checkSameWeights(tr.comm, tr.b, tr.pdata, tr.n); err != nil {
		return fmt.Errorf("train: step %d: %w; no checkpoint written, last checkpoint %s", st.Step, err, orNone(tr.res.Checkpoint))
	}
	err := tr.write()
	failed := []float32{0}
	if err != nil {
		failed[0] = 1
	}
	if cerr := tr.comm.AllReduceSum(failed); cerr != nil && err == nil {
		err = fmt.Errorf("train: step %d: %w; last checkpoint %s", st.Step, cerr, orNone(tr.res.Checkpoint))
	}
	if err == nil && failed[0] != 0 {
		err = fmt.Errorf("train: step %d: another rank could not write or check the checkpoint (its error says why); last checkpoint %s", st.Step, orNone(tr.res.Checkpoint))
	}
	if err == nil && !tr.root {
		tr.res.Checkpoint = filepath.Join(tr.cfg.Dir, StepDirName(st.Step))
	}
	return err
}

// write checks the data and, on rank 0, flushes the log to the disk and
// saves the checkpoint of the current step.
func (tr *trainer) write() error {
	cfg, st := tr.cfg, &tr.st
	if cfg.DataGuard != nil {
		if err := cfg.DataGuard.Check(true); err != nil {
			return fmt.Errorf("train: step %d: %w; no checkpoint written, last checkpoint %s", st.Step, err, orNone(tr.res.Checkpoint))
		}
	}
	if !tr.root {
		return nil
	}
	// The log reaches the disk before the checkpoint does, so that
	// the log of a run killed after it holds every record up to the
	// checkpoint's step (resuming trims the ones after).
	if err := tr.logf.Sync(); err != nil {
		return fmt.Errorf("train: step %d: log: %w; no checkpoint written, last checkpoint %s", st.Step, err, orNone(tr.res.Checkpoint))
	}
	b, n := tr.b, tr.n
	path, err := saveCheckpoint(cfg.Dir, *st, tr.params, tensor.ToHost(b, tensor.NewTensor(tr.m, n)), tensor.ToHost(b, tensor.NewTensor(tr.v, n)), b, cfg.Keep, tr.hooks)
	if err != nil {
		return err
	}
	tr.res.Checkpoint = path
	return nil
}

// finish fills in the Result's timings and, when the loop stopped before
// the schedule's end (ctx or StopAfter), saves where it is unless this
// step was just saved.
func (tr *trainer) finish() (Result, error) {
	res := &tr.res
	res.Elapsed = time.Since(tr.start)
	res.ProbeTime = tr.probes.spent
	res.CommTime = tr.commTotal
	if done := tr.st.Step - res.ResumedFrom; done > 0 {
		res.StepsPerSec = float64(done) / res.Elapsed.Seconds()
	}
	tr.finishBar()
	if tr.st.Step < tr.cfg.Schedule.Steps {
		res.Interrupted = true
		if res.Checkpoint == "" || res.Checkpoint != filepath.Join(tr.cfg.Dir, StepDirName(tr.st.Step)) {
			if err := tr.save(); err != nil {
				return *res, err
			}
		}
	}
	return *res, nil
}

// fail ends the progress bar and returns the Result so far with err.
func (tr *trainer) fail(err error) (Result, error) {
	tr.finishBar()
	return tr.res, err
}

func (tr *trainer) finishBar() {
	if tr.bar != nil && !tr.barDone {
		tr.bar.Exit()
		tr.barDone = true
	}
}
