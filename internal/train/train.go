package train

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"uhno/internal/atomicfile"
	"uhno/internal/config"
	"uhno/internal/dist"
	"uhno/internal/progress"
	"uhno/internal/tensor"
)

// LogFile is the JSON-lines training log in the run directory.
const LogFile = "log.jsonl"

// Batches is the stream of training batches. Its order must be a pure
// function of its construction (seed, data) and the number of batches
// drawn: resuming replays the first Drawn batches to restore it.
// data.Batcher is such a stream (FromBatcher).
type Batches interface {
	// Next fills in [InputShape] and tgt [TargetShape] with the next batch.
	Next(in, tgt []float32) error
	// InputShape and TargetShape are the shapes of one batch, batch axis
	// first.
	InputShape() []int
	TargetShape() []int
}

// Skipper is implemented by batch streams that can move past n batches
// faster than drawing them; resuming uses it when present.
type Skipper interface {
	Skip(n int) error
}

// ValSet is a fixed held-out set evaluated every ValEvery steps. Each
// batch is In [InShape] and Tgt [TgtShape] (host values, normalised like
// the training batches).
type ValSet struct {
	Batches []ValBatch
}

// ValBatch is one validation batch.
type ValBatch struct {
	In, Tgt           []float32
	InShape, TgtShape []int
}

// AdamW holds the optimizer's constant hyper-parameters (paper Sec. 4.1:
// weight decay 1e-4; betas and eps are PyTorch's defaults, docs/DESIGN.md).
// The learning rate comes from the Schedule.
type AdamW struct {
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
}

// Config is one training run. Nothing in it comes from global state: the
// command line builds it from the resolved configuration.
type Config struct {
	Model    Model
	Backend  tensor.Backend
	Train    Batches
	Val      *ValSet // nil: no validation
	Loss     LossConfig
	Schedule Schedule
	Optim    AdamW

	// LogEvery, ValEvery and CkptEvery are intervals in steps (0: never).
	// A validation and a checkpoint also follow the last step.
	LogEvery, ValEvery, CkptEvery int
	// Keep is the number of checkpoints kept in Dir (at least 1).
	Keep int
	// Dir is the run directory: checkpoints and the log.
	Dir string
	// Resume names a checkpoint (a step directory or a run directory) to
	// continue from. The run then ends exactly as an uninterrupted one.
	Resume string
	// Extend lets Resume continue a checkpoint whose schedule is shorter
	// than Schedule (same peak and warm-up): a finished or running run
	// lengthened (uhno train --resume DIR --steps M). From the checkpoint
	// on the learning rate follows the longer cosine; the result is not
	// the bits of a run started with the longer schedule, whose rate
	// differed from the end of the warm-up on.
	Extend bool
	// StopAfter ends the run after this step as an interrupt would (a
	// checkpoint, Result.Interrupted); 0 runs to Schedule.Steps.
	StopAfter int
	// Progress draws a progress bar on the output writer.
	Progress bool
	// Probes are measurements run between steps and written to the log
	// (Probe: the cadence, what a probe may do, how errors and resume are
	// handled). They run in this process, the one writing the log.
	Probes []Probe
	// Graph replays the training step as a recorded graph when the backend
	// can record one (tensor.StepCapturer: CUDA graphs): after one direct
	// step, forward, loss and backward are captured once and each later
	// step is one replay plus the AdamW update. Results are those of the
	// direct loop. Ignored on backends without capture (the CPU).
	Graph bool

	// DataSeed and Batch describe the batch stream for the checkpoint.
	DataSeed uint64
	// Run is the resolved configuration, stored in every checkpoint.
	Run config.Config
	// Version is the uhno version, stored in every checkpoint.
	Version string
	// Build, when not nil, is stored (as JSON) in every checkpoint's
	// state.json under "build": the caller's record of how it built the
	// model and the data, for rebuilding them on resume (State.Build).
	Build any

	// DataGuard, when not nil, is asked after every batch is drawn and
	// before every checkpoint whether the data under the batch stream are
	// still those the run started with (data.FileWatch). A change stops
	// the run with its error before the step's update or the checkpoint,
	// so no weights trained on other data are saved.
	DataGuard DataGuard
	// SaveFault, when not nil, is called at each stage of every
	// checkpoint save (SaveStages) with the step being saved; an error it
	// returns fails the save there as an I/O error would. It is a
	// fault-injection seam for tests (uhno train's
	// UHNO_TEST_CRASH_IN_CHECKPOINT kills the process from it).
	SaveFault func(step int, stage string) error

	// Comm makes this process one rank of a data-parallel run when it
	// has more than one (nil: dist.Single, the process trains alone).
	// Train must then yield this rank's share of every global batch
	// (data.BatchOptions.Shards), and every rank must be given the same
	// Config otherwise. Each step the ranks' gradients, loss terms and
	// SPAR statistics are summed with one all-reduce and divided by the
	// rank count before AdamW: every loss term is a mean over the batch
	// (and nothing else in a step mixes samples), so the mean of the
	// ranks' mean gradients over equal shares is the gradient of the
	// global batch, and every rank takes the update one process would,
	// up to float32 summation order. Rank 0 alone writes the directory:
	// log, progress, probes and checkpoints. See docs/DESIGN.md, "Data
	// parallel".
	Comm dist.Comm

	// ReduceOnDevice, when set in a data-parallel run, sums the ranks'
	// gradients (the flat gradient buffer of n values) in place on the
	// device: the CUDA backend joined to NCCL (cuda.Backend.JoinRanks), so
	// the gradient never crosses to the host. The loss terms, SPAR
	// statistics and stop flag still go through Comm. nil: everything
	// goes through Comm with host copies.
	ReduceOnDevice func(grad tensor.Storage, n int) error

	// fsys replaces the checkpoint writer's file system in tests.
	fsys saveFS
}

// DataGuard checks that a run's data have not changed under it.
type DataGuard interface {
	// Check returns an error naming the file when it changed. full asks
	// for the thorough check (before a checkpoint), otherwise a quick one
	// (every step).
	Check(full bool) error
}

// Result summarises a run.
type Result struct {
	// Step is the last update done; Steps the schedule's length.
	Step, Steps int
	// Loss holds the terms of the last update.
	Loss LossValues
	// Val is the last validation loss (nil without validation).
	Val         *LossValues
	BestVal     float64
	BestValStep int
	Checkpoint  string // the last checkpoint written (or resumed from)
	Interrupted bool   // stopped by ctx or StopAfter before Steps
	Elapsed     time.Duration
	StepsPerSec float64 // updates per second of this process
	// ResumedFrom is the step of the checkpoint resumed from (0: fresh).
	ResumedFrom int
	// ProbeTime is the wall time the probes took in this process
	// (included in Elapsed).
	ProbeTime time.Duration
	// CommTime is the wall time of the per-step gradient all-reduce,
	// host copies included (0 when training alone; included in Elapsed).
	CommTime time.Duration
}

// The kinds of the loss records of the log; probe records are ProbeKind.
const (
	KindTrain = "train" // every Config.LogEvery steps
	KindVal   = "val"   // every Config.ValEvery steps and at the end
)

// LogRecord is a loss record of the JSON-lines log (LogFile), one line:
// the format's one definition, which its readers (internal/report,
// internal/dynamics, uhno's tests) decode into. Lines of other kinds
// (ProbeRecord) share Kind and Step. Fields added later decode as zero
// values from older logs.
type LogRecord struct {
	Kind string `json:"kind"` // KindTrain or KindVal
	Step int    `json:"step"`
	LossValues
	LR         float64   `json:"lr"`                 // of this step (0 at the last)
	Rho        []float64 `json:"rho,omitempty"`      // mean keep-ratio per routing level
	Contrast   []float64 `json:"contrast,omitempty"` // mean SPAR contrast per level
	StepsPerS  float64   `json:"steps_per_s,omitempty"`
	ElapsedSec float64   `json:"elapsed_s"`
	// AllReduceShare is the share of the wall time since the previous
	// record spent in the gradient all-reduce (data-parallel runs only).
	AllReduceShare float64 `json:"allreduce_share,omitempty"`
}

// validate checks the parts of a Config that do not depend on data.
func (c *Config) validate() error {
	switch {
	case c.Model == nil || c.Backend == nil || c.Train == nil:
		return errors.New("train: Config needs a Model, a Backend and a Train stream")
	case c.Dir == "":
		return errors.New("train: Config needs a run directory (Dir)")
	case c.StopAfter < 0 || c.LogEvery < 0 || c.ValEvery < 0 || c.CkptEvery < 0:
		return errors.New("train: negative interval or StopAfter")
	}
	if err := c.Schedule.Validate(); err != nil {
		return err
	}
	if err := validateProbes(c.Probes); err != nil {
		return err
	}
	if len(c.Train.InputShape()) < 3 || len(c.Train.TargetShape()) != len(c.Train.InputShape()) {
		return fmt.Errorf("train: batch shapes %v -> %v, want [B, C, grid...] both", c.Train.InputShape(), c.Train.TargetShape())
	}
	return nil
}

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
func Run(ctx context.Context, cfg Config, out io.Writer) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	if out == nil {
		out = io.Discard
	}
	b := cfg.Backend
	ps := cfg.Model.Params()
	params := ps.List()
	pdata, pgrad, n := ps.Flat()
	res := Result{Steps: cfg.Schedule.Steps}
	comm := cfg.Comm
	if comm == nil {
		comm = dist.Single{}
	}
	// root writes the run directory; dp: the ranks reduce every step.
	root, dp := comm.Rank() == 0, comm.Size() > 1
	if !root {
		cfg.Probes, cfg.Progress = nil, false
	}

	st := State{
		Schedule: cfg.Schedule, Optim: cfg.Optim,
		// The checkpoint records the global batch: a resume with any
		// rank count that divides it continues the same run.
		Data:  DataState{Seed: cfg.DataSeed, Batch: cfg.Train.InputShape()[0] * comm.Size()},
		Model: cfg.Model.Name(), Params: n,
		Task: cfg.Run.Task, Config: cfg.Run, Version: cfg.Version,
	}
	if cfg.Build != nil {
		raw, err := json.Marshal(cfg.Build)
		if err != nil {
			return res, fmt.Errorf("train: build record: %w", err)
		}
		st.Build = raw
	}
	m, v := b.Alloc(n), b.Alloc(n)
	defer b.Free(m)
	defer b.Free(v)

	in := make([]float32, tensor.Numel(cfg.Train.InputShape()))
	tgt := make([]float32, tensor.Numel(cfg.Train.TargetShape()))

	if cfg.Resume != "" {
		ck, dir, err := loadCheckpoint(cfg.Resume)
		if err != nil {
			return res, err
		}
		if err := checkCompatible(dir, ck.State, st, cfg.Extend); err != nil {
			return res, err
		}
		if err := ck.restoreWeights(dir, params, b, st.Model); err != nil {
			return res, err
		}
		if len(ck.M) != n {
			return res, fmt.Errorf("train: checkpoint %s: %s holds %d moments, model %s has %d parameters", dir, OptimizerFile, len(ck.M), st.Model, n)
		}
		b.Upload(m, ck.M)
		b.Upload(v, ck.V)
		st.Step, st.LR, st.Loss = ck.State.Step, ck.State.LR, ck.State.Loss
		st.BestVal, st.BestValStep = ck.State.BestVal, ck.State.BestValStep
		if err := skipBatches(ctx, cfg.Train, ck.State.Data.Drawn, in, tgt); err != nil {
			return res, err
		}
		st.Data.Drawn = ck.State.Data.Drawn
		res.ResumedFrom, res.Checkpoint = st.Step, dir
		if root {
			if err := trimLog(filepath.Join(cfg.Dir, LogFile), st.Step); err != nil {
				return res, err
			}
		}
	} else if _, err := os.Stat(filepath.Join(cfg.Dir, LatestFile)); err == nil {
		return res, fmt.Errorf("train: %s already holds a run; resume it or choose another directory", cfg.Dir)
	}
	res.Step = st.Step
	res.Loss, res.BestVal, res.BestValStep = st.Loss, st.BestVal, st.BestValStep
	ps.ZeroGrad()
	if dp {
		if err := startTogether(comm, b, &st, pdata, m, v, n); err != nil {
			return res, err
		}
	}

	logw := bufio.NewWriter(io.Discard)
	var logf *os.File
	if root {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return res, fmt.Errorf("train: %w", err)
		}
		// A fresh run starts a fresh log: a run killed before its first
		// checkpoint leaves records that are no run's.
		logFlags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
		if cfg.Resume == "" {
			logFlags |= os.O_TRUNC
		}
		f, err := os.OpenFile(filepath.Join(cfg.Dir, LogFile), logFlags, 0o644)
		if err != nil {
			return res, fmt.Errorf("train: log: %w", err)
		}
		defer f.Close()
		logf, logw = f, bufio.NewWriter(f)
	}
	defer logw.Flush()
	enc := json.NewEncoder(logw)

	tp := tensor.NewTape(b)
	defer tp.Release()

	end := cfg.Schedule.Steps
	if cfg.StopAfter > 0 && cfg.StopAfter < end {
		end = cfg.StopAfter
	}
	var bar *progress.Bar
	if cfg.Progress {
		bar = progress.New(out, cfg.Schedule.Steps, progress.Options{Unit: "steps"})
		bar.Set(st.Step)
	}
	finishBar := func() {
		if bar != nil {
			bar.Exit()
		}
	}

	hooks := &saveHooks{fs: cfg.fsys}
	if cfg.SaveFault != nil {
		hooks.after = func(stage string) error { return cfg.SaveFault(st.Step, stage) }
	}
	write := func() error {
		if cfg.DataGuard != nil {
			if err := cfg.DataGuard.Check(true); err != nil {
				return fmt.Errorf("train: step %d: %w; no checkpoint written, last checkpoint %s", st.Step, err, orNone(res.Checkpoint))
			}
		}
		if !root {
			return nil
		}
		// The log reaches the disk before the checkpoint does, so that
		// the log of a run killed after it holds every record up to the
		// checkpoint's step (resuming trims the ones after).
		if err := logw.Flush(); err != nil {
			return fmt.Errorf("train: step %d: log: %w; no checkpoint written, last checkpoint %s", st.Step, err, orNone(res.Checkpoint))
		}
		if err := logf.Sync(); err != nil {
			return fmt.Errorf("train: step %d: log: %w; no checkpoint written, last checkpoint %s", st.Step, err, orNone(res.Checkpoint))
		}
		path, err := saveCheckpoint(cfg.Dir, st, params, tensor.ToHost(b, tensor.NewTensor(m, n)), tensor.ToHost(b, tensor.NewTensor(v, n)), b, cfg.Keep, hooks)
		if err != nil {
			return err
		}
		res.Checkpoint = path
		return nil
	}
	// save writes a checkpoint (rank 0) after the ranks have checked
	// that their weights agree; every rank learns whether it was written.
	save := func() error {
		if !dp {
			return write()
		}
		if err := checkSameWeights(comm, b, pdata, n); err != nil {
			return fmt.Errorf("train: step %d: %w; no checkpoint written, last checkpoint %s", st.Step, err, orNone(res.Checkpoint))
		}
		err := write()
		failed := []float32{0}
		if err != nil {
			failed[0] = 1
		}
		if cerr := comm.AllReduceSum(failed); cerr != nil && err == nil {
			err = fmt.Errorf("train: step %d: %w; last checkpoint %s", st.Step, cerr, orNone(res.Checkpoint))
		}
		if err == nil && failed[0] != 0 {
			err = fmt.Errorf("train: step %d: another rank could not write or check the checkpoint (its error says why); last checkpoint %s", st.Step, orNone(res.Checkpoint))
		}
		if err == nil && !root {
			res.Checkpoint = filepath.Join(cfg.Dir, StepDirName(st.Step))
		}
		return err
	}

	// Validation runs on a tape of its own, so that it never releases the
	// buffers of a recorded step.
	vtp := tensor.NewTape(b)
	defer vtp.Release()
	var graph *graphStep
	if capt, ok := b.(tensor.StepCapturer); ok && cfg.Graph {
		graph = newGraphStep(capt, tp, cfg)
		defer graph.release()
	}

	start := time.Now()
	probes := &probeRunner{probes: cfg.Probes, zeroGrad: ps.ZeroGrad, enc: enc, start: start,
		lastCkpt: func() string { return res.Checkpoint }}
	if bar != nil {
		probes.describe = bar.Describe
	}
	if cfg.Resume != "" {
		// A probe of the checkpoint's step that has no record (interrupted
		// there, or added on resume) runs now, on that step's weights.
		missed, err := missingProbes(filepath.Join(cfg.Dir, LogFile), st.Step, cfg.Probes)
		if err != nil {
			return res, err
		}
		if _, err := probes.run(ctx, st.Step, missed); err != nil {
			finishBar()
			return res, err
		}
	}
	lastLog, lastLogStep := start, st.Step
	var (
		red                  *reducer
		commSince, commTotal time.Duration
	)
	if dp {
		red = &reducer{comm: comm, b: b, grad: pgrad, n: n, device: cfg.ReduceOnDevice}
	}
	for st.Step < end {
		if !dp && ctx.Err() != nil {
			break
		}
		t := st.Step + 1
		lr := cfg.Schedule.LR(t)

		if err := cfg.Train.Next(in, tgt); err != nil {
			finishBar()
			return res, fmt.Errorf("train: step %d: batch: %w", t, err)
		}
		st.Data.Drawn++
		if cfg.DataGuard != nil {
			if err := cfg.DataGuard.Check(false); err != nil {
				finishBar()
				return res, fmt.Errorf("train: step %d: %w; the step was not taken, last checkpoint %s", t, err, orNone(res.Checkpoint))
			}
		}
		var (
			terms Terms
			aux   Aux
		)
		if graph != nil {
			if err := graph.step(in, tgt); err != nil {
				finishBar()
				return res, fmt.Errorf("train: step %d: %w", t, err)
			}
			terms, aux = graph.terms, graph.aux
		} else {
			tp.Reset()
			x := tp.FromHost(in, cfg.Train.InputShape()...)
			y := tp.FromHost(tgt, cfg.Train.TargetShape()...)
			var pred *tensor.Tensor
			pred, aux = cfg.Model.Forward(tp, x)
			terms = cfg.Loss.Loss(tp, pred, y, aux)
		}
		vals := terms.Values(b)
		var spar *sparSums
		stop := false
		if dp {
			// Each rank's gradient reaches pgrad in the backward pass; the
			// all-reduce replaces it, the loss terms and the SPAR
			// statistics by their means over the ranks, and carries
			// whether any rank was asked to stop (Ctrl-C), so that all
			// stop after the same step.
			if graph == nil {
				tp.Backward(terms.Total)
			}
			t0 := time.Now()
			var err error
			vals, spar, stop, err = red.reduce(vals, aux.Stats, ctx.Err() != nil)
			took := time.Since(t0)
			commSince += took
			commTotal += took
			if err != nil {
				finishBar()
				return res, fmt.Errorf("train: step %d: %w; the run stopped, last checkpoint %s", t, err, orNone(res.Checkpoint))
			}
		}
		if !vals.finite() {
			finishBar()
			return res, fmt.Errorf("train: step %d: loss is %g (mse %g, h1 %g, cbc %g); the weights diverged, last checkpoint %s",
				t, vals.Total, vals.MSE, vals.H1, vals.CBC, orNone(res.Checkpoint))
		}
		if graph == nil && !dp {
			tp.Backward(terms.Total)
		}
		b.AdamW(pdata, pgrad, m, v, n, tensor.AdamWHyper{
			LR: lr, Beta1: cfg.Optim.Beta1, Beta2: cfg.Optim.Beta2, Eps: cfg.Optim.Eps,
			WeightDecay: cfg.Optim.WeightDecay, Step: t,
		})
		ps.ZeroGrad()
		st.Step, st.LR, st.Loss = t, lr, vals
		res.Step, res.Loss = t, vals

		if bar != nil {
			bar.Describe(fmt.Sprintf("step %d loss %.3e mse %.3e h1 %.3e cbc %.3e lr %.2e", t, vals.Total, vals.MSE, vals.H1, vals.CBC, lr))
			bar.Set(t)
		}
		if cfg.LogEvery > 0 && t%cfg.LogEvery == 0 {
			now := time.Now()
			rec := LogRecord{Kind: KindTrain, Step: t, LossValues: vals, LR: lr,
				StepsPerS:  float64(t-lastLogStep) / now.Sub(lastLog).Seconds(),
				ElapsedSec: now.Sub(start).Seconds()}
			if spar == nil {
				spar = sumSPAR(b, aux.Stats)
			}
			rec.Rho, rec.Contrast = spar.means()
			if dp {
				rec.AllReduceShare = commSince.Seconds() / now.Sub(lastLog).Seconds()
				commSince = 0
			}
			if err := enc.Encode(rec); err != nil {
				finishBar()
				return res, fmt.Errorf("train: log: %w", err)
			}
			lastLog, lastLogStep = now, t
		}
		if cfg.Val != nil && len(cfg.Val.Batches) > 0 && ((cfg.ValEvery > 0 && t%cfg.ValEvery == 0) || t == cfg.Schedule.Steps) {
			val, err := validate(vtp, cfg, comm)
			if err != nil {
				finishBar()
				return res, fmt.Errorf("train: step %d: validation: %w; the run stopped, last checkpoint %s", t, err, orNone(res.Checkpoint))
			}
			if !val.finite() {
				finishBar()
				return res, fmt.Errorf("train: step %d: validation loss is %g (mse %g, h1 %g, cbc %g); the weights diverged on held-out data, last checkpoint %s",
					t, val.Total, val.MSE, val.H1, val.CBC, orNone(res.Checkpoint))
			}
			res.Val = &val
			if st.BestValStep == 0 || val.Total < st.BestVal {
				st.BestVal, st.BestValStep = val.Total, t
			}
			res.BestVal, res.BestValStep = st.BestVal, st.BestValStep
			if err := enc.Encode(LogRecord{Kind: KindVal, Step: t, LossValues: val, LR: lr, ElapsedSec: time.Since(start).Seconds()}); err != nil {
				finishBar()
				return res, fmt.Errorf("train: log: %w", err)
			}
		}
		// Probes before the checkpoint: the log holds their records when
		// the checkpoint of this step exists, so a resume from it neither
		// repeats nor loses them.
		if _, err := probes.run(ctx, t, probes.due(t)); err != nil {
			finishBar()
			return res, err
		}
		if (cfg.CkptEvery > 0 && t%cfg.CkptEvery == 0) || t == cfg.Schedule.Steps {
			if err := save(); err != nil {
				finishBar()
				return res, err
			}
		}
		if stop {
			break
		}
	}
	res.Elapsed = time.Since(start)
	res.ProbeTime = probes.spent
	res.CommTime = commTotal
	if done := st.Step - res.ResumedFrom; done > 0 {
		res.StepsPerSec = float64(done) / res.Elapsed.Seconds()
	}
	finishBar()
	if st.Step < cfg.Schedule.Steps {
		// Interrupted (ctx) or stopped early (StopAfter): save where we are
		// unless this step was just saved.
		res.Interrupted = true
		if res.Checkpoint == "" || res.Checkpoint != filepath.Join(cfg.Dir, StepDirName(st.Step)) {
			if err := save(); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// validate returns the mean loss terms over the validation batches, with
// the tape's recording off. The tape's memory is reused; training state is
// untouched. In a data-parallel run rank r evaluates the batches i with
// i mod size = r and the sums are all-reduced, so every rank returns the
// same values.
func validate(tp *tensor.Tape, cfg Config, comm dist.Comm) (LossValues, error) {
	tp.SetGrad(false)
	defer tp.SetGrad(true)
	var sum [4]float64
	for i, vb := range cfg.Val.Batches {
		if i%comm.Size() != comm.Rank() {
			continue
		}
		tp.Reset()
		x := tp.FromHost(vb.In, vb.InShape...)
		y := tp.FromHost(vb.Tgt, vb.TgtShape...)
		pred, aux := cfg.Model.Forward(tp, x)
		v := cfg.Loss.Loss(tp, pred, y, aux).Values(cfg.Backend)
		sum[0] += v.Total
		sum[1] += v.MSE
		sum[2] += v.H1
		sum[3] += v.CBC
	}
	tp.Reset()
	if comm.Size() > 1 {
		if err := comm.AllReduceSum64(sum[:]); err != nil {
			return LossValues{}, err
		}
	}
	k := float64(len(cfg.Val.Batches))
	return LossValues{Total: sum[0] / k, MSE: sum[1] / k, H1: sum[2] / k, CBC: sum[3] / k}, nil
}

// skipBatches moves the stream past the first n batches.
func skipBatches(ctx context.Context, src Batches, n int, in, tgt []float32) error {
	if s, ok := src.(Skipper); ok {
		if err := s.Skip(n); err != nil {
			return fmt.Errorf("train: resume: skipping %d batches: %w", n, err)
		}
		return nil
	}
	for i := range n {
		if i%1024 == 0 && ctx.Err() != nil {
			return fmt.Errorf("train: resume: interrupted while replaying the data order (%d of %d batches)", i, n)
		}
		if err := src.Next(in, tgt); err != nil {
			return fmt.Errorf("train: resume: replaying batch %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}

// checkCompatible refuses a checkpoint of another task, model, parameter
// count, schedule, optimizer or batch stream: resuming it could not give
// the uninterrupted run. With extend, a schedule that only grew longer
// (same peak and warm-up) is accepted (Config.Extend). Errors name both
// sides.
func checkCompatible(dir string, ck, now State, extend bool) error {
	mismatch := func(what string, a, b any) error {
		return fmt.Errorf("train: checkpoint %s is from another run: %s %v there, %v here", dir, what, a, b)
	}
	switch {
	case ck.Task != now.Task:
		return mismatch("task", q(ck.Task), q(now.Task))
	case ck.Model != now.Model:
		return mismatch("model", q(ck.Model), q(now.Model))
	case ck.Params != now.Params:
		return mismatch("parameter count", ck.Params, now.Params)
	case extend && ck.Schedule.Peak == now.Schedule.Peak && ck.Schedule.Warmup == now.Schedule.Warmup && ck.Schedule.Steps <= now.Schedule.Steps:
		// a lengthened run: checked below like any other
		if ck.Optim != now.Optim {
			return mismatch("AdamW settings", fmt.Sprintf("%+v", ck.Optim), fmt.Sprintf("%+v", now.Optim))
		}
		if ck.Data.Seed != now.Data.Seed || ck.Data.Batch != now.Data.Batch {
			return mismatch("data seed and batch", fmt.Sprintf("%d, %d", ck.Data.Seed, ck.Data.Batch), fmt.Sprintf("%d, %d", now.Data.Seed, now.Data.Batch))
		}
	case ck.Schedule != now.Schedule:
		return mismatch("schedule (lr, warmup, steps)", fmt.Sprintf("%g, %d, %d", ck.Schedule.Peak, ck.Schedule.Warmup, ck.Schedule.Steps),
			fmt.Sprintf("%g, %d, %d", now.Schedule.Peak, now.Schedule.Warmup, now.Schedule.Steps))
	case ck.Optim != now.Optim:
		return mismatch("AdamW settings", fmt.Sprintf("%+v", ck.Optim), fmt.Sprintf("%+v", now.Optim))
	case ck.Data.Seed != now.Data.Seed || ck.Data.Batch != now.Data.Batch:
		return mismatch("data seed and batch", fmt.Sprintf("%d, %d", ck.Data.Seed, ck.Data.Batch), fmt.Sprintf("%d, %d", now.Data.Seed, now.Data.Batch))
	case ck.Step > now.Schedule.Steps:
		return mismatch("step", ck.Step, fmt.Sprintf("a run of %d steps", now.Schedule.Steps))
	}
	return nil
}

func q(s string) string { return fmt.Sprintf("%q", s) }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// trimLog drops log records after step (written after the checkpoint a
// run resumes from), so the log of a resumed run reads as one run.
func trimLog(path string, step int) error {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("train: log: %w", err)
	}
	var kept []byte
	for line := range bytes.Lines(raw) {
		var r struct {
			Step int `json:"step"`
		}
		if json.Unmarshal(line, &r) != nil || r.Step > step {
			break // a torn last line, or the records after the checkpoint
		}
		kept = append(kept, line...)
	}
	if len(kept) == len(raw) {
		return nil
	}
	if err := atomicfile.WriteFile(path, kept, 0o644); err != nil {
		return fmt.Errorf("train: log: %w", err)
	}
	return nil
}
