//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// upsampleShapes: the common 1D-3D shapes plus axes of one and two points
// (where the clamped edges meet: y[1] and the adjoint's n = 1 rule).
var upsampleShapes = append(append([][]int{}, shapes1to3...),
	[]int{2, 2, 1}, []int{2, 3, 2}, []int{1, 2, 1, 3}, []int{1, 1, 3, 2, 5}, []int{1, 1, 1, 1, 1})

// TestUpsample2x compares Upsample2x and its backward with the CPU. The
// kernels evaluate the tensor product in the CPU's pass order with every
// product and sum rounded separately, so they should agree bit for bit;
// the tolerance is nevertheless the bound for a different order
// (denseSumTol): forward, a convex combination of 2^d values of |x| <= 1;
// backward, at most 4^d terms with weights <= 1 times |dy| <= 1 plus the
// pre-filled gradient. Both edge rules: clamped and periodic (model.upsample,
// issue 20), whose taps wrap around in the CPU's order.
func TestUpsample2x(t *testing.T) {
	ref := cpu.New(1)
	for _, periodic := range []bool{false, true} {
		for i, xs := range upsampleShapes {
			d := len(xs) - 2
			ys := append([]int{}, xs...)
			for a := 2; a < len(ys); a++ {
				ys[a] *= 2
			}
			t.Run(fmt.Sprint(periodic, xs), func(t *testing.T) {
				seed := uint64(10 * i)
				x := rnd(ref, seed+1, xs...)
				y := both(ref, random(seed+2, tensor.Numel(ys), 5), ys...) // garbage: forward overwrites
				ref.Upsample2x(y.c, x.c, periodic)
				gpu.Upsample2x(y.g, x.g, periodic)
				agree(t, "Upsample2x", y, denseSumTol(1<<d, 1), 1e-6)

				dy, dx := rnd(ref, seed+3, ys...), gradPair(ref, seed+4, xs...)
				ref.Upsample2xBackward(dx.c, dy.c, periodic)
				gpu.Upsample2xBackward(dx.g, dy.g, periodic)
				agree(t, "Upsample2xBackward", dx, denseSumTol(1<<(2*d)+1, 1), 1e-6)
			})
		}
	}
}
