//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// These tests compare every kernel with the CPU backend, the reference
// (internal/cpu), on random inputs, through whichever driver the build
// has. On a GPU: build them with `make cuda-test` (go test -c -tags cuda)
// and run bin/cuda.test on the GPU machine (gorgonia.org/cu exits the
// process at start-up when no driver is present). On any machine: run them
// under the CPU emulator with `go test -tags cudaemu ./internal/cuda`.

// gpu is the backend shared by every test of the binary (one context).
var gpu *Backend

func TestMain(m *testing.M) {
	var err error
	if gpu, err = New(0); err != nil {
		fmt.Fprintln(os.Stderr, "cuda tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		code = afterRun()
	}
	if err := gpu.Close(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "cuda tests: close:", err)
		code = 1
	}
	os.Exit(code)
}

// pair holds the same tensor on the CPU reference and on the GPU.
type pair struct {
	c, g *tensor.Tensor
}

// both allocates a tensor of the given shape on both backends with the
// same values (nil values: zeros).
func both(ref *cpu.Backend, vals []float32, shape ...int) pair {
	n := tensor.Numel(shape)
	p := pair{c: tensor.NewTensor(ref.Alloc(n), shape...), g: tensor.NewTensor(gpu.Alloc(n), shape...)}
	if vals != nil {
		ref.Upload(p.c.Data, vals)
		gpu.Upload(p.g.Data, vals)
	}
	return p
}

// random returns n values uniform in [-scale, scale], seeded.
func random(seed uint64, n int, scale float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0xc0da))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * (2*r.Float64() - 1))
	}
	return v
}

// rnd is a random pair of the given shape.
func rnd(ref *cpu.Backend, seed uint64, shape ...int) pair {
	return both(ref, random(seed, tensor.Numel(shape), 1), shape...)
}

// gradPair is a pair holding the same random initial gradient values, so
// that the backward's accumulation (+=) is checked too.
func gradPair(ref *cpu.Backend, seed uint64, shape ...int) pair {
	return both(ref, random(seed, tensor.Numel(shape), 0.1), shape...)
}

// agree checks that the GPU tensor matches the CPU one: every element
// within atol + rtol |ref|, reporting the worst element.
func agree(t *testing.T, what string, p pair, atol, rtol float64) {
	t.Helper()
	want := tensor.ToHost(cpuOf(p), p.c)
	got := tensor.ToHost(gpu, p.g)
	worst, at := 0.0, -1
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		lim := atol + rtol*math.Abs(float64(want[i]))
		if math.IsNaN(float64(got[i])) || d > lim {
			if excess := d - lim; at < 0 || excess > worst || math.IsNaN(excess) {
				worst, at = excess, i
			}
		}
	}
	if at >= 0 {
		t.Fatalf("%s: element %d of %d is %g on the GPU, %g on the CPU (|diff| %.3g > %.3g + %.3g |ref|)",
			what, at, len(want), got[at], want[at], math.Abs(float64(got[at]-want[at])), atol, rtol)
	}
}

// cpuOf is the CPU backend the reference tensors live on (any instance
// reads a cpu.Buf).
func cpuOf(pair) tensor.Backend { return cpu.New(1) }

// shapes1to3 are small test shapes in 1D, 2D and 3D with uneven sizes
// that do not divide the block sizes.
var shapes1to3 = [][]int{{3, 5, 37}, {2, 4, 10, 13}, {2, 3, 6, 5, 7}}
