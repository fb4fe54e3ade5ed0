package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"uhno/internal/atomicfile"
	"uhno/internal/config"
	"uhno/internal/dist"
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
// weight decay 1e-4; betas and eps are PyTorch's defaults, docs/DECISIONS.md D-adamw-defaults).
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
	// log, progress, probes and checkpoints. See the package documentation, "Data
	// parallel in detail".
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
