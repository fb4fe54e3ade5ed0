//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// TestElementwise compares every elementwise kernel with the CPU backend
// in 1D, 2D and 3D. Arithmetic must agree to float32 rounding; GELU and
// sigmoid use erff/expf, whose device versions are within 2 ulp of the
// correctly rounded value (CUDA C Programming Guide, appendix
// "Mathematical Functions"), so 1e-6 absolute plus 1e-5 relative covers
// them with margin.
func TestElementwise(t *testing.T) {
	ref := cpu.New(1)
	for _, shape := range shapes1to3 {
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			a, c := rnd(ref, 1, shape...), rnd(ref, 2, shape...)
			x := both(ref, random(3, tensor.Numel(shape), 4), shape...)
			cases := []struct {
				name string
				run  func(be tensor.Backend, y, a, c, x *tensor.Tensor)
				tol  float64
			}{
				{"Add", func(be tensor.Backend, y, a, c, _ *tensor.Tensor) { be.Add(y, a, c) }, 0},
				{"Sub", func(be tensor.Backend, y, a, c, _ *tensor.Tensor) { be.Sub(y, a, c) }, 0},
				{"Mul", func(be tensor.Backend, y, a, c, _ *tensor.Tensor) { be.Mul(y, a, c) }, 0},
				{"Scale", func(be tensor.Backend, y, a, _, _ *tensor.Tensor) { be.Scale(y, a, -1.7) }, 0},
				{"AddScaled", func(be tensor.Backend, y, a, _, _ *tensor.Tensor) { be.AddScaled(y, a, 0.3) }, 1e-7},
				{"MulAcc", func(be tensor.Backend, y, a, c, _ *tensor.Tensor) { be.MulAcc(y, a, c) }, 1e-7},
				{"GELU", func(be tensor.Backend, y, _, _, x *tensor.Tensor) { be.GELU(y, x) }, 1e-5},
				{"GELUBackward", func(be tensor.Backend, y, a, _, x *tensor.Tensor) { be.GELUBackward(y, a, x) }, 1e-5},
				{"Sigmoid", func(be tensor.Backend, y, _, _, x *tensor.Tensor) { be.Sigmoid(y, x) }, 1e-5},
				{"SigmoidBackward", func(be tensor.Backend, y, a, c, _ *tensor.Tensor) { be.SigmoidBackward(y, a, c) }, 1e-6},
			}
			for i, cs := range cases {
				y := gradPair(ref, uint64(10+i), shape...) // accumulating ops add into these
				cs.run(ref, y.c, a.c, c.c, x.c)
				cs.run(gpu, y.g, a.g, c.g, x.g)
				agree(t, cs.name, y, 1e-6, cs.tol)
			}
		})
	}
}
