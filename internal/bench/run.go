package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

// Case is one model to benchmark at one task shape.
type Case struct {
	// Name labels the table row, e.g. "uhno C0=10".
	Name string
	// Task is the task whose shape this is (for the report only).
	Task string
	// Model was built on Backend.
	Model   model.Model
	Backend tensor.Backend
	// Input and Target are the batch shapes [B, Cin, grid...] and
	// [B, Cout, grid...].
	Input, Target []int
	// Loss is the training objective (train.LossConfigFor of the task).
	Loss train.LossConfig
}

// Options say how many steps to run and how.
type Options struct {
	// Warmup steps (each a training step and an inference forward) are run
	// and discarded before the Repeats timed ones (Repeats >= 1).
	Warmup, Repeats int
	// Optim is the AdamW step (Step is set by Run, counting from 1).
	Optim tensor.AdamWHyper
	// Seed draws the random input and target batch.
	Seed uint64
	// Progress, when set, is called after the counting pass and after
	// every warm-up and timed iteration with done of total.
	Progress func(done, total int)
	// OpTimes, when > 0, times that many more training steps operation by
	// operation through a timing Counter, after the timed steps
	// (Result.OpTimes; CPU backend only: GPU calls return before their
	// work is done).
	OpTimes int
	// Graph times each training step as a replay of a recorded graph
	// where the backend can record one (tensor.StepCapturer: CUDA graphs),
	// as `uhno train` runs its steps by default (graph.go); elsewhere (the
	// CPU) it changes nothing. Result.Graph says whether it applied.
	Graph bool
}

// Result is what Run measured for one Case. Times are milliseconds of
// wall-clock time; a "step" is one batch.
type Result struct {
	Name    string `json:"name"`
	Task    string `json:"task,omitempty"`
	Model   string `json:"model"` // model.Model.Name: "uhno", "uhno-F", "fno"
	Backend string `json:"backend"`
	// Precision is the backend's precision when it has a setting (the
	// CUDA backend: fp32, or bf16 autocast), else empty.
	Precision string `json:"precision,omitempty"`
	// Graph: the training steps were replayed as a recorded graph
	// (Options.Graph on a backend that records).
	Graph   bool  `json:"graph,omitempty"`
	Input   []int `json:"input_shape"`
	Batch   int   `json:"batch"`
	Params  int   `json:"params"`
	Warmup  int   `json:"warmup"`
	Repeats int   `json:"repeats"`

	FLOPs FLOPs `json:"flops"`
	// Train is one whole training step: upload the batch, forward, loss,
	// backward, AdamW, clear the gradients, read the loss back. Infer is
	// upload, forward with recording off, read the prediction back.
	Train Timing `json:"train"`
	Infer Timing `json:"infer"`
	// TrainGFLOPS and InferGFLOPS are the achieved rates at the median
	// times: FLOPs.TrainStep and FLOPs.Inference over them.
	TrainGFLOPS float64 `json:"train_gflops_per_s"`
	InferGFLOPS float64 `json:"infer_gflops_per_s"`

	Memory Memory `json:"memory"`
	// Ops is the per-operation breakdown of the counting pass.
	Ops []OpCount `json:"ops"`
	// OpTimes is the per-operation time of a training step (Options.OpTimes
	// steps, one untimed before them): per step, each operation's calls,
	// FLOPs and wall-clock nanoseconds (NS), on the CPU. OpSteps is the
	// number of steps averaged.
	OpTimes []OpCount `json:"op_times,omitempty"`
	OpSteps int       `json:"op_steps,omitempty"`
	// OpStepMS is the mean wall-clock time of those steps: the operations'
	// time plus the rest (tape, allocation, Go between the calls).
	OpStepMS float64 `json:"op_step_ms,omitempty"`
}

// FLOPs are the counts of one step of the whole batch (flops.go gives
// the conventions), and per sample.
type FLOPs struct {
	Forward   int64 `json:"forward"`
	Loss      int64 `json:"loss"`
	Backward  int64 `json:"backward"`
	Optimizer int64 `json:"optimizer"`
	// TrainStep = Forward + Loss + Backward + Optimizer.
	TrainStep int64 `json:"train_step"`
	// Inference is the forward with recording off; it equals Forward.
	Inference int64 `json:"inference"`
	// FFT parts of TrainStep and Inference (their convention-dependent
	// share, see FFTFlopsPerPoint).
	TrainFFT     int64 `json:"train_step_fft"`
	InferenceFFT int64 `json:"inference_fft"`
	// Per sample: Inference / B and TrainStep / B.
	ForwardPerSample float64 `json:"forward_per_sample"`
	TrainPerSample   float64 `json:"train_step_per_sample"`
}

// Timing summarises the repeats of one kind of step.
type Timing struct {
	MinMS             float64   `json:"min_ms"`
	MedianMS          float64   `json:"median_ms"`
	MinPerSampleMS    float64   `json:"min_ms_per_sample"`
	MedianPerSampleMS float64   `json:"median_ms_per_sample"`
	SamplesMS         []float64 `json:"samples_ms"`
}

// Memory is the high-water mark over the warm-up and timed steps (from a
// MemoryReporter: since the backend was created, the counting pass
// included).
type Memory struct {
	// PeakBytes is the high-water mark; 0 when none was available.
	PeakBytes int64 `json:"peak_bytes"`
	// Source says what PeakBytes is: "<backend> device high-water mark"
	// (MemoryReporter), "VmHWM" (process resident set, reset before the
	// warm-up), "VmHWM since process start" (the reset failed) or
	// "unavailable".
	Source string `json:"source"`
	// BaselineBytes is the resident set just before the warm-up (model,
	// optimizer state and runtime included), for VmHWM sources; 0
	// otherwise.
	BaselineBytes int64 `json:"baseline_bytes,omitempty"`
}

// Run benchmarks c: one inference forward and one training step through a
// Counter (the FLOP counts, at the model's weights as given), then
// opt.Warmup untimed and opt.Repeats timed iterations of (training step,
// inference forward) on c.Backend itself. The model is trained by these
// steps (AdamW on a fixed random batch); its weights change.
func Run(ctx context.Context, c Case, opt Options) (Result, error) {
	if err := check(c, opt); err != nil {
		return Result{}, err
	}
	be := c.Backend
	s := newStepper(c, opt)
	defer s.release()
	total := 1 + opt.Warmup + opt.Repeats
	progress := func(done int) {
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}

	counts, err := s.count()
	if err != nil {
		return Result{}, err
	}
	progress(1)

	res := Result{Name: c.Name, Task: c.Task, Model: c.Model.Name(), Backend: be.Name(), Input: slices.Clone(c.Input),
		Batch: c.Input[0], Params: c.Model.Params().Count(), Warmup: opt.Warmup, Repeats: opt.Repeats, Ops: counts}
	res.FLOPs = sumFLOPs(counts, res.Batch)

	mr, devicePeak := be.(MemoryReporter)
	res.Memory.Source = "unavailable"
	if !devicePeak {
		reset := ResetPeakRSS()
		if _, cur, err := PeakRSS(); err == nil {
			res.Memory.BaselineBytes = cur
			res.Memory.Source = "VmHWM since process start"
			if reset {
				res.Memory.Source = "VmHWM"
			}
		}
	}

	tp := tensor.NewTape(be)
	defer tp.Release()
	nop := func(string) {}
	trainStep := func() error { return s.train(tp, be, nop) }
	if capt, ok := be.(tensor.StepCapturer); ok && opt.Graph {
		g := newGraphed(capt, be, c)
		defer g.release(be)
		trainStep = func() error { return g.train(s, be) }
		res.Graph = true
	}
	trainMS := make([]float64, 0, opt.Repeats)
	inferMS := make([]float64, 0, opt.Repeats)
	for i := range opt.Warmup + opt.Repeats {
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("bench: %s: %w", c.Name, err)
		}
		t0 := time.Now()
		if err := trainStep(); err != nil {
			return Result{}, err
		}
		t1 := time.Now()
		s.infer(tp, be, nop)
		t2 := time.Now()
		if i >= opt.Warmup {
			trainMS = append(trainMS, ms(t1.Sub(t0)))
			inferMS = append(inferMS, ms(t2.Sub(t1)))
		}
		progress(2 + i)
	}
	res.Train = timing(trainMS, res.Batch)
	res.Infer = timing(inferMS, res.Batch)
	res.TrainGFLOPS = gflops(res.FLOPs.TrainStep, res.Train.MedianMS)
	res.InferGFLOPS = gflops(res.FLOPs.Inference, res.Infer.MedianMS)

	if opt.OpTimes > 0 {
		if res.OpTimes, res.OpStepMS, err = s.timeOps(ctx, opt.OpTimes); err != nil {
			return Result{}, err
		}
		res.OpSteps = opt.OpTimes
	}
	if devicePeak {
		res.Memory = Memory{PeakBytes: mr.PeakBytes(), Source: be.Name() + " device high-water mark"}
	} else if res.Memory.Source != "unavailable" {
		if peak, _, err := PeakRSS(); err == nil {
			res.Memory.PeakBytes = peak
		}
	}
	return res, nil
}

// check rejects cases Run cannot drive, before anything runs (Forward
// panics on a shape the model does not take).
func check(c Case, opt Options) error {
	switch {
	case c.Model == nil || c.Backend == nil:
		return fmt.Errorf("bench: %s: no model or no backend", c.Name)
	case opt.Repeats < 1 || opt.Warmup < 0:
		return fmt.Errorf("bench: %s: %d repeats and %d warm-up steps, want >= 1 and >= 0", c.Name, opt.Repeats, opt.Warmup)
	case opt.OpTimes < 0 || (opt.OpTimes > 0 && c.Backend.Name() != "cpu"):
		return fmt.Errorf("bench: %s: --op-times %d on the %s backend: want >= 0, and timing per operation needs the CPU backend (GPU calls return before their work is done)",
			c.Name, opt.OpTimes, c.Backend.Name())
	case len(c.Input) < 3 || len(c.Input) != len(c.Target) || c.Input[0] < 1 || c.Input[0] != c.Target[0] ||
		!slices.Equal(c.Input[2:], c.Target[2:]):
		return fmt.Errorf("bench: %s: input %v and target %v are not batches of fields on one grid", c.Name, c.Input, c.Target)
	case len(c.Loss.Spacing) != len(c.Input)-2:
		return fmt.Errorf("bench: %s: the loss has %d grid spacings for %d spatial axes", c.Name, len(c.Loss.Spacing), len(c.Input)-2)
	}
	if err := c.Model.CheckGrid(c.Input[2:]); err != nil {
		return fmt.Errorf("bench: %s: %w", c.Name, err)
	}
	return nil
}

// stepper runs the training step and the inference forward of one Case on
// any tape, so the counting pass and the timed steps do the same work.
type stepper struct {
	c                      Case
	in, tgt, pred, loss    []float32
	pdata, pgrad, mom, vel tensor.Storage
	n                      int
	hyper                  tensor.AdamWHyper
	step                   int
}

func newStepper(c Case, opt Options) *stepper {
	s := &stepper{c: c, hyper: opt.Optim, loss: make([]float32, 1)}
	r := rand.New(rand.NewPCG(opt.Seed, 0x62656e6368)) // "bench"
	s.in = make([]float32, tensor.Numel(c.Input))
	s.tgt = make([]float32, tensor.Numel(c.Target))
	s.pred = make([]float32, tensor.Numel(c.Target))
	for i := range s.in {
		s.in[i] = float32(r.NormFloat64())
	}
	for i := range s.tgt {
		s.tgt[i] = float32(r.NormFloat64())
	}
	s.pdata, s.pgrad, s.n = c.Model.Params().Flat()
	s.mom, s.vel = c.Backend.Alloc(s.n), c.Backend.Alloc(s.n)
	return s
}

func (s *stepper) release() {
	s.c.Backend.Free(s.mom)
	s.c.Backend.Free(s.vel)
}

// train is one training step as train.Run takes it (internal/train
// BenchmarkTrainStep), on tape tp over backend b, announcing each phase.
func (s *stepper) train(tp *tensor.Tape, b tensor.Backend, phase func(string)) error {
	tp.Reset()
	tp.SetGrad(true)
	phase(PhaseForward)
	x := tp.FromHost(s.in, s.c.Input...)
	y := tp.FromHost(s.tgt, s.c.Target...)
	pred, aux := s.c.Model.Forward(tp, x)
	phase(PhaseLoss)
	terms := s.c.Loss.Loss(tp, pred, y, train.Aux{ZF: aux.ZF, ZG: aux.ZG, Stats: aux.Stats})
	phase(PhaseBackward)
	tp.Backward(terms.Total)
	phase(PhaseOptimizer)
	return s.update(b, terms.Total)
}

// update ends a training step after its backward pass, on both paths
// (direct and graphed): the AdamW step, clearing the gradients, and
// reading the loss total, which must be finite.
func (s *stepper) update(b tensor.Backend, total *tensor.Tensor) error {
	s.step++
	h := s.hyper
	h.Step = s.step
	b.AdamW(s.pdata, s.pgrad, s.mom, s.vel, s.n, h)
	b.Zero(s.pgrad)
	b.Download(s.loss, total.Data)
	if v := float64(s.loss[0]); math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("bench: %s: the training loss is %g at step %d; the model diverged on the random batch", s.c.Name, v, s.step)
	}
	return nil
}

// infer is one inference forward with recording off.
func (s *stepper) infer(tp *tensor.Tape, b tensor.Backend, phase func(string)) {
	tp.Reset()
	tp.SetGrad(false)
	phase(PhaseInference)
	x := tp.FromHost(s.in, s.c.Input...)
	pred, _ := s.c.Model.Forward(tp, x)
	b.Download(s.pred, pred.Data)
	tp.SetGrad(true)
}

// count runs one inference forward and then one training step through a
// Counter and returns the tallies. Inference comes first so that both see
// the same weights: the Gaussian radii ceil(3 sigma) follow the learned
// sigmas, and the paper's initial sigma = 1 sits on a radius boundary that
// the first AdamW step crosses.
func (s *stepper) count() ([]OpCount, error) {
	ctr := NewCounter(s.c.Backend)
	tp := tensor.NewTape(ctr)
	defer tp.Release()
	s.infer(tp, ctr, ctr.SetPhase)
	if err := s.train(tp, ctr, ctr.SetPhase); err != nil {
		return nil, err
	}
	return ctr.Counts(), nil
}

// timeOps runs one untimed and then steps timed training steps through a
// timing Counter and returns each operation's calls, FLOPs and time per
// step (the optimizer's AdamW and Zero included; the inference forward
// left out), and the mean wall-clock milliseconds of the steps.
func (s *stepper) timeOps(ctx context.Context, steps int) ([]OpCount, float64, error) {
	ctr := NewCounter(s.c.Backend)
	tp := tensor.NewTape(ctr)
	defer tp.Release()
	if err := s.train(tp, ctr, ctr.SetPhase); err != nil { // the tape's buffers, untimed
		return nil, 0, err
	}
	ctr.Reset()
	ctr.SetTiming(true)
	t0 := time.Now()
	for range steps {
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("bench: %s: %w", s.c.Name, err)
		}
		if err := s.train(tp, ctr, ctr.SetPhase); err != nil {
			return nil, 0, err
		}
	}
	wall := ms(time.Since(t0)) / float64(steps)
	out := ctr.Counts()
	n := int64(steps)
	for i := range out {
		out[i].Calls /= n
		out[i].FLOPs /= n
		out[i].FFT /= n
		out[i].Bytes /= n
		out[i].NS /= n
	}
	return out, wall, nil
}

// sumFLOPs totals the counts per phase for a batch of b samples.
func sumFLOPs(counts []OpCount, b int) FLOPs {
	f := FLOPs{
		Forward:   Total(counts, PhaseForward),
		Loss:      Total(counts, PhaseLoss),
		Backward:  Total(counts, PhaseBackward),
		Optimizer: Total(counts, PhaseOptimizer),
		Inference: Total(counts, PhaseInference),
	}
	f.TrainStep = f.Forward + f.Loss + f.Backward + f.Optimizer
	for _, oc := range counts {
		if oc.Phase == PhaseInference {
			f.InferenceFFT += oc.FFT
		} else {
			f.TrainFFT += oc.FFT
		}
	}
	f.ForwardPerSample = float64(f.Inference) / float64(b)
	f.TrainPerSample = float64(f.TrainStep) / float64(b)
	return f
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// timing summarises samples (ms per step) for a batch of b samples.
func timing(samples []float64, b int) Timing {
	t := Timing{SamplesMS: samples, MinMS: slices.Min(samples), MedianMS: median(samples)}
	t.MinPerSampleMS = t.MinMS / float64(b)
	t.MedianPerSampleMS = t.MedianMS / float64(b)
	return t
}

// median is the middle value of xs (the mean of the two middle values for
// an even count); xs is not modified.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// gflops is flops per step at milliseconds per step, in GFLOP/s.
func gflops(flops int64, msPerStep float64) float64 {
	if msPerStep <= 0 {
		return 0
	}
	return float64(flops) / (msPerStep * 1e-3) / 1e9
}
