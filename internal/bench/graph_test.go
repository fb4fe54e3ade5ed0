package bench

import (
	"context"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/testutil"
)

// recorder is a CPU backend that records a step as a CUDA graph does:
// CaptureStep keeps the function without running it and every Launch runs
// it again; a host copy inside a replay panics (a graph cannot record one).
type recorder struct {
	*cpu.Backend
	captures, launches int
	replaying          bool
}

func (r *recorder) Upload(dst tensor.Storage, src []float32) {
	if r.replaying {
		panic("bench: the recorded step copies from the host")
	}
	r.Backend.Upload(dst, src)
}

func (r *recorder) Download(dst []float32, src tensor.Storage) {
	if r.replaying {
		panic("bench: the recorded step copies to the host")
	}
	r.Backend.Download(dst, src)
}

type recordedStep struct {
	r    *recorder
	step func()
}

func (r *recorder) CaptureStep(step func()) (tensor.StepReplay, error) {
	r.captures++
	return &recordedStep{r: r, step: step}, nil
}

func (p *recordedStep) Launch() error {
	p.r.launches++
	p.r.replaying = true
	defer func() { p.r.replaying = false }()
	p.step()
	return nil
}

func (p *recordedStep) Destroy() error { return nil }

// TestRunGraph: with Options.Graph on a backend that records, the
// training steps run once directly, once recorded and replayed after,
// with no host copy inside the recording, and train the model to the same
// bits as the direct steps (the bench's timed work is training's work);
// on a backend that cannot record, Graph changes nothing.
func TestRunGraph(t *testing.T) {
	spec := testutil.TinyUHNO(1, 2, model.ModeFull)
	weights := func(be tensor.Backend, m model.Model) []float32 {
		p, _, n := m.Params().Flat()
		out := make([]float32, n)
		be.Download(out, p)
		return out
	}
	opt := Options{Warmup: 1, Repeats: 3, Optim: paperAdamW, Seed: 3}

	direct := newCPU()
	md := mustUHNO(t, direct, spec)
	rd, err := Run(context.Background(), tinyCase("uhno", md, direct, 2, 1, tinyGrid(1)), opt)
	if err != nil {
		t.Fatal(err)
	}

	rec := &recorder{Backend: newCPU()}
	mg := mustUHNO(t, rec, spec)
	opt.Graph = true
	rg, err := Run(context.Background(), tinyCase("uhno", mg, rec, 2, 1, tinyGrid(1)), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Graph || !rg.Graph {
		t.Errorf("Result.Graph: %v direct, %v on the recording backend; want false, true", rd.Graph, rg.Graph)
	}
	steps := opt.Warmup + opt.Repeats
	if rec.captures != 1 || rec.launches != steps-1 {
		t.Errorf("%d recordings and %d replays for %d steps, want 1 and %d", rec.captures, rec.launches, steps, steps-1)
	}
	a, b := weights(direct, md), weights(rec, mg)
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("weight %d after %d steps: %g direct, %g replayed", i, steps, a[i], b[i])
		}
	}

	plain := newCPU()
	mp := mustUHNO(t, plain, spec)
	rp, err := Run(context.Background(), tinyCase("uhno", mp, plain, 2, 1, tinyGrid(1)), opt)
	if err != nil || rp.Graph {
		t.Errorf("Graph on the CPU backend: %v, Result.Graph %v; want no error, false", err, rp.Graph)
	}
}
