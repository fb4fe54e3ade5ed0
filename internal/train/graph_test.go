package train

import (
	"context"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// recorder is a CPU backend that "records" a step the way a CUDA graph
// does: CaptureStep keeps the function without running it, and every
// Launch runs it again. It checks the training loop's graph path on any
// machine: what runs on a replay is exactly what was recorded. Like the
// driver, it refuses a host copy inside the recorded step (a graph
// cannot record one: the CUDA emulator found Backward uploading its seed
// there).
type recorder struct {
	*cpu.Backend
	captures, launches int
	replaying          bool
}

func (r *recorder) Upload(dst tensor.Storage, src []float32) {
	if r.replaying {
		panic("train: the recorded step copies from the host, which a CUDA graph cannot record")
	}
	r.Backend.Upload(dst, src)
}

func (r *recorder) Download(dst []float32, src tensor.Storage) {
	if r.replaying {
		panic("train: the recorded step copies to the host, which a CUDA graph cannot record")
	}
	r.Backend.Download(dst, src)
}

type recorded struct {
	r    *recorder
	step func()
}

func (r *recorder) CaptureStep(step func()) (tensor.StepReplay, error) {
	r.captures++
	return &recorded{r: r, step: step}, nil
}

func (p *recorded) Launch() error {
	p.r.launches++
	p.r.replaying = true
	defer func() { p.r.replaying = false }()
	p.step()
	return nil
}

func (p *recorded) Destroy() error { return nil }

// TestGraphStepMatchesDirect trains with the graph path (one direct step,
// one recording, replays) and without it: weights, moments, checkpoints
// and every logged loss are the same bits, also across a stop and resume
// in graph mode. So the graph path uploads each batch before its replay,
// reads the loss after it, and updates and clears the gradients outside
// it in the same order as the direct loop.
func TestGraphStepMatchesDirect(t *testing.T) {
	const steps = 19
	straight := t.TempDir()
	cfg, _, _ := tinyRun(straight, steps, 2, 1)
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}

	graphDir := t.TempDir()
	cfg, _, _ = tinyRun(graphDir, steps, 2, 1)
	rec := &recorder{Backend: cfg.Backend.(*cpu.Backend)}
	cfg.Backend, cfg.Graph = rec, true
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	if rec.captures != 1 || rec.launches != steps-1 {
		t.Fatalf("%d recordings and %d replays for %d steps, want 1 and %d", rec.captures, rec.launches, steps, steps-1)
	}
	sameRun(t, straight, graphDir)

	resumed := t.TempDir()
	for _, stop := range []int{8, 0} {
		seed := uint64(1) // the resumed half starts from other weights, overwritten by the checkpoint
		if stop == 0 {
			seed = 5
		}
		cfg, _, _ = tinyRun(resumed, steps, 1, seed)
		rec = &recorder{Backend: cfg.Backend.(*cpu.Backend)}
		cfg.Backend, cfg.Graph, cfg.StopAfter = rec, true, stop
		if stop == 0 {
			cfg.Resume = resumed
		}
		if _, err := Run(context.Background(), cfg, nil); err != nil {
			t.Fatal(err)
		}
	}
	sameRun(t, straight, resumed)
}
