package bench

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/model"
	"uhno/internal/testutil"
)

// TestRunTinyModel checks that Run's numbers are sane on a tiny U-HNO:
// positive times with min <= median, one sample per repeat, FLOPs that add
// up, the parameter count, the progress calls, and a memory figure on
// Linux.
func TestRunTinyModel(t *testing.T) {
	be := newCPU()
	m := mustUHNO(t, be, testutil.TinyUHNO(1, 2, model.ModeFull))
	var calls, lastDone, lastTotal int
	opt := Options{Warmup: 1, Repeats: 3, Optim: paperAdamW, Seed: 3,
		Progress: func(done, total int) { calls, lastDone, lastTotal = calls+1, done, total }}
	r, err := Run(context.Background(), tinyCase("uhno", m, be, 2, 1, tinyGrid(1)), opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range []struct {
		what string
		t    Timing
	}{{"train", r.Train}, {"infer", r.Infer}} {
		if len(tm.t.SamplesMS) != 3 || !(tm.t.MinMS > 0) || tm.t.MinMS > tm.t.MedianMS {
			t.Errorf("%s timing %+v: want 3 positive samples with min <= median", tm.what, tm.t)
		}
		if got := tm.t.MedianMS / 2; tm.t.MedianPerSampleMS != got {
			t.Errorf("%s: %g ms per sample at batch 2 and median %g ms", tm.what, tm.t.MedianPerSampleMS, tm.t.MedianMS)
		}
	}
	f := r.FLOPs
	if f.Forward <= 0 || f.Loss <= 0 || f.Backward <= f.Forward || f.Optimizer != int64(14*r.Params) ||
		f.TrainStep != f.Forward+f.Loss+f.Backward+f.Optimizer || f.Inference != f.Forward {
		t.Errorf("FLOPs %+v: want positive phases, backward > forward, optimizer 14 per parameter, forward = inference", f)
	}
	if f.ForwardPerSample != float64(f.Inference)/2 || f.TrainFFT <= 0 || f.InferenceFFT <= 0 || f.InferenceFFT >= f.Inference {
		t.Errorf("FLOPs %+v: per sample or FFT parts wrong", f)
	}
	if r.Params != m.Params().Count() || r.Batch != 2 || r.Model != "uhno" || r.Backend != "cpu" || len(r.Ops) == 0 {
		t.Errorf("result %+v: wrong parameters, batch, names or op list", r)
	}
	if !(r.TrainGFLOPS > 0) || !(r.InferGFLOPS > 0) {
		t.Errorf("achieved %g and %g GFLOP/s, want positive", r.TrainGFLOPS, r.InferGFLOPS)
	}
	if calls != 5 || lastDone != 5 || lastTotal != 5 {
		t.Errorf("progress called %d times, last %d of %d; want 5 calls ending at 5 of 5", calls, lastDone, lastTotal)
	}
	if runtime.GOOS == "linux" && (r.Memory.PeakBytes <= 0 || !strings.HasPrefix(r.Memory.Source, "VmHWM") || r.Memory.BaselineBytes <= 0) {
		t.Errorf("memory %+v: want the VmHWM high-water mark on Linux", r.Memory)
	}
}

// reporting is a CPU backend that claims a device high-water mark, as a
// GPU backend would.
type reporting struct{ *cpu.Backend }

func (reporting) PeakBytes() int64 { return 123 << 20 }

// TestRunUsesMemoryReporter: a backend that reports its own peak is
// preferred to the process's resident set.
func TestRunUsesMemoryReporter(t *testing.T) {
	be := reporting{newCPU()}
	m := mustFNO(t, be, model.FNOSpec{Dim: 1, InChannels: 2, OutChannels: 1, Width: 4, K0: 3, Blocks: 2, ProjHidden: 4})
	r, err := Run(context.Background(), tinyCase("fno", m, be, 2, 1, []int{8}), Options{Repeats: 1, Optim: paperAdamW})
	if err != nil {
		t.Fatal(err)
	}
	if r.Memory.PeakBytes != 123<<20 || r.Memory.Source != "cpu device high-water mark" || r.Memory.BaselineBytes != 0 {
		t.Fatalf("memory %+v, want the backend's 123 MiB", r.Memory)
	}
}

// TestRunRefuses checks the one-line errors for cases Run cannot drive.
func TestRunRefuses(t *testing.T) {
	be := newCPU()
	m := mustUHNO(t, be, testutil.TinyUHNO(1, 2, model.ModeFull))
	good := tinyCase("uhno", m, be, 2, 1, tinyGrid(1))
	odd := tinyCase("uhno", m, be, 2, 1, []int{18}) // 18 cannot be halved twice
	short := good
	short.Target = []int{2, 1}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		c    Case
		opt  Options
		want string
	}{
		{"no repeats", context.Background(), good, Options{Repeats: 0}, "bench: uhno: 0 repeats and 0 warm-up steps, want >= 1 and >= 0"},
		{"grid the model cannot take", context.Background(), odd, Options{Repeats: 1, Optim: paperAdamW}, "bench: uhno: model:"},
		{"shapes", context.Background(), short, Options{Repeats: 1}, "bench: uhno: input [2 2 16] and target [2 1] are not batches of fields on one grid"},
		{"interrupted", cancelled, good, Options{Repeats: 1, Optim: paperAdamW}, "bench: uhno: context canceled"},
		{"op times on a GPU-like backend", context.Background(), func() Case {
			c := good
			c.Backend = named{be, "cuda"}
			return c
		}(), Options{Repeats: 1, OpTimes: 2}, "bench: uhno: --op-times 2 on the cuda backend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(tt.ctx, tt.c, tt.opt)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line starting %q", err, tt.want)
			}
		})
	}
}

// named is a CPU backend under another name.
type named struct {
	*cpu.Backend
	name string
}

func (n named) Name() string { return n.name }

// TestRunOpTimes: with OpTimes, every computing operation (with FLOPs) of
// the counting pass's training step is timed, with the counting pass's
// calls and FLOPs per step (memory operations differ: the counting pass's
// fresh tape allocates, the timed steps' reused tape zeroes), and the
// operations' time fits inside the steps' wall-clock time.
func TestRunOpTimes(t *testing.T) {
	be := newCPU()
	m := mustUHNO(t, be, testutil.TinyUHNO(1, 2, model.ModeFull))
	r, err := Run(context.Background(), tinyCase("uhno", m, be, 2, 1, tinyGrid(1)), Options{Repeats: 1, Optim: paperAdamW, OpTimes: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.OpSteps != 3 || !(r.OpStepMS > 0) {
		t.Fatalf("%d steps of %g ms timed per operation, want 3 of a positive time", r.OpSteps, r.OpStepMS)
	}
	train := map[string]OpCount{}
	for _, o := range r.Ops {
		if o.Phase != PhaseInference && o.Phase != PhaseOptimizer && o.FLOPs > 0 {
			train[o.Phase+"/"+o.Op] = o
		}
	}
	var sum int64
	for _, o := range r.OpTimes {
		sum += o.NS
		if o.NS <= 0 && o.Op != "Alloc" && o.Op != "View" {
			t.Errorf("%s/%s: %d ns a step, want positive", o.Phase, o.Op, o.NS)
		}
		if o.Phase == PhaseOptimizer || o.FLOPs == 0 {
			continue
		}
		c, ok := train[o.Phase+"/"+o.Op]
		if !ok || c.Calls != o.Calls || c.FLOPs != o.FLOPs {
			t.Errorf("%s/%s: %d calls, %d FLOPs a step; the counting pass has %+v", o.Phase, o.Op, o.Calls, o.FLOPs, c)
		}
		delete(train, o.Phase+"/"+o.Op)
	}
	for k := range train {
		t.Errorf("%s: counted but not timed", k)
	}
	if float64(sum)/1e6 > r.OpStepMS {
		t.Errorf("operations %g ms, more than the %g ms of the step", float64(sum)/1e6, r.OpStepMS)
	}
	if len(r.Ops) == 0 || r.Ops[0].NS != 0 {
		t.Errorf("the counting pass was timed: %+v", r.Ops)
	}
}

// TestMedian checks the median of odd and even counts.
func TestMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %g, want %g", tt.xs, got, tt.want)
		}
	}
}
