package tensor_test

import (
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// step builds a small two-layer graph, runs backward and returns the loss.
func step(tp *tensor.Tape, x, w1, w2 *tensor.Tensor) float32 {
	h := tp.GELU(tp.Pointwise(x, w1, nil))
	y := tp.Pointwise(h, w2, nil)
	loss := tp.MSE(y, x)
	tp.Backward(loss)
	return tensor.ToHost(tp.B, loss)[0]
}

func leaves(b tensor.Backend) (x, w1, w2 *tensor.Tensor) {
	x = tensor.NewLeaf(b, "x", []float32{1, 2, 3, 4, 5, 6}, 1, 2, 3)
	w1 = tensor.NewLeaf(b, "w1", []float32{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, 3, 2)
	w2 = tensor.NewLeaf(b, "w2", []float32{0.3, -0.2, 0.1, 0.2, 0.1, -0.4}, 2, 3)
	w1.SetRequiresGrad(true)
	w2.SetRequiresGrad(true)
	return
}

// TestTapeReusesMemory: after the first step, later steps take every
// tensor from the pool, so the backend allocates nothing new.
func TestTapeReusesMemory(t *testing.T) {
	b := &countingBackend{Backend: cpu.New(1)}
	tp := tensor.NewTape(b)
	x, w1, w2 := leaves(b)
	step(tp, x, w1, w2)
	tp.Reset()
	after := b.allocs
	for i := 0; i < 10; i++ {
		tp.ZeroGrad(w1, w2)
		step(tp, x, w1, w2)
		tp.Reset()
	}
	if b.allocs != after {
		t.Fatalf("allocations grew from %d to %d over 10 steps", after, b.allocs)
	}
}

// TestLeafGradientsSurviveReset: parameter gradients are owned by the
// parameter, not the pool, and are identical across repeated steps.
func TestLeafGradientsSurviveReset(t *testing.T) {
	b := cpu.New(1)
	tp := tensor.NewTape(b)
	x, w1, w2 := leaves(b)
	step(tp, x, w1, w2)
	g1 := tensor.ToHost(b, w1.Grad)
	tp.Reset()
	tp.ZeroGrad(w1, w2)
	step(tp, x, w1, w2)
	tp.Reset()
	// Allocate and fill pooled tensors: they must not alias w1.Grad.
	y := tp.New(3, 2)
	tp.B.Upload(y.Data, []float32{9, 9, 9, 9, 9, 9})
	g2 := tensor.ToHost(b, w1.Grad)
	for i := range g1 {
		if g1[i] != g2[i] || g1[i] == 0 {
			t.Fatalf("gradient changed across Reset or is zero: %v vs %v", g1, g2)
		}
	}
	// Without ZeroGrad, gradients accumulate.
	tp.Reset()
	step(tp, x, w1, w2)
	g3 := tensor.ToHost(b, w1.Grad)
	for i := range g1 {
		if d := g3[i] - 2*g1[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("gradients did not accumulate: %v vs 2x %v", g3, g1)
		}
	}
}

func TestNoGradRecordsNothing(t *testing.T) {
	b := cpu.New(1)
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	x, w1, w2 := leaves(b)
	y := tp.Pointwise(tp.GELU(tp.Pointwise(x, w1, nil)), w2, nil)
	if tp.Len() != 0 || y.RequiresGrad() {
		t.Fatalf("no-grad tape recorded %d ops", tp.Len())
	}
}

func TestMisusePanics(t *testing.T) {
	b := cpu.New(1)
	cases := []struct {
		name string
		f    func(tp *tensor.Tape)
		want string
	}{
		{"add shapes", func(tp *tensor.Tape) { tp.Add(tp.New(1, 2, 3), tp.New(1, 2, 4)) }, "shape mismatch"},
		{"pointwise weight", func(tp *tensor.Tape) { tp.Pointwise(tp.New(1, 2, 3), tp.New(4, 3), nil) }, "does not map 2 input channels"},
		{"field rank", func(tp *tensor.Tape) { tp.Upsample2x(tp.New(2, 3), false) }, "1-3 spatial axes"},
		{"convdown odd", func(tp *tensor.Tape) { tp.ConvDown(tp.New(1, 2, 5), tp.New(2, 2, 3), nil) }, "even"},
		{"backward non-scalar", func(tp *tensor.Tape) { tp.Backward(tp.New(2)) }, "one element"},
		{"topk k", func(tp *tensor.Tape) { tp.TopKMask(tp.New(1, 1, 4), []int{5}) }, "outside [0, 4]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.HasPrefix(msg, "tensor: ") || !strings.Contains(msg, c.want) {
					t.Fatalf("panic %q, want a tensor: panic containing %q", msg, c.want)
				}
			}()
			c.f(tensor.NewTape(b))
		})
	}
}

func TestModeCapAndRadius(t *testing.T) {
	for _, c := range []struct{ k0, n, want int }{{24, 128, 24}, {24, 32, 16}, {12, 8, 4}, {12, 2, 1}, {32, 256, 32}} {
		if got := tensor.ModeCap(c.k0, c.n); got != c.want {
			t.Errorf("ModeCap(%d, %d) = %d, want %d", c.k0, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		sigma     float64
		cap, nmin int
		want      int
	}{{0.5, 16, 128, 2}, {1.0, 16, 128, 3}, {2.5, 16, 128, 8}, {2.5, 5, 128, 5}, {2.5, 16, 8, 3}, {2.5, 0, 4, 1}, {9, 0, 1000, 27}} {
		if got := tensor.GaussianRadius(c.sigma, c.cap, c.nmin); got != c.want {
			t.Errorf("GaussianRadius(%g, %d, %d) = %d, want %d", c.sigma, c.cap, c.nmin, got, c.want)
		}
	}
}

// countingBackend counts Alloc calls.
type countingBackend struct {
	tensor.Backend
	allocs int
}

func (c *countingBackend) Alloc(n int) tensor.Storage {
	c.allocs++
	return c.Backend.Alloc(n)
}
