//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// diffShapes: the common 1D-3D shapes (axes of 37, 10, 13, 6, 5, 7
// points: the n > 4 path with its four special rows) and axes of 4, 3 and
// 2 points (every row special on a non-periodic axis).
var diffShapes = append(append([][]int{}, shapes1to3...), []int{2, 2, 4, 3}, []int{1, 2, 2, 5}, []int{2, 1, 3, 4, 2})

// TestDiff compares Diff and DiffBackward with the CPU along every axis,
// periodic and not. The forward is one float32 subtraction and one
// multiplication by the same float32 coefficient on both sides (exact
// agreement); the backward adds the same products in the CPU's order
// without FMA. The tolerance allows a different order anyway: three terms
// of magnitude at most invH |dy| = 1/h (denseSumTol(3, 1/h)) plus the
// pre-filled gradient.
func TestDiff(t *testing.T) {
	ref := cpu.New(1)
	const h = float32(0.05)
	for si, shape := range diffShapes {
		for axis := 0; axis < len(shape)-2; axis++ {
			for _, periodic := range []bool{true, false} {
				t.Run(fmt.Sprint(shape, axis, periodic), func(t *testing.T) {
					seed := uint64(100*si + 10*axis)
					x := rnd(ref, seed+1, shape...)
					y := both(ref, random(seed+2, tensor.Numel(shape), 5), shape...) // garbage: Diff overwrites
					ref.Diff(y.c, x.c, axis, h, periodic)
					gpu.Diff(y.g, x.g, axis, h, periodic)
					agree(t, "Diff", y, denseSumTol(2, 1/float64(h)), 1e-6)

					dy, dx := rnd(ref, seed+3, shape...), gradPair(ref, seed+4, shape...)
					ref.DiffBackward(dx.c, dy.c, axis, h, periodic)
					gpu.DiffBackward(dx.g, dy.g, axis, h, periodic)
					agree(t, "DiffBackward", dx, denseSumTol(4, 1/float64(h)), 1e-6)
				})
			}
		}
	}
}
