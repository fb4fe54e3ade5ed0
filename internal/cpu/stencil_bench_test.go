package cpu_test

import (
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// BenchmarkStencilMessage times GNO's message passing at the grid's 2D
// shape (batch 16, width 46, 64x64, the eight neighbours of the 3x3
// stencil, periodic): forward, and forward with backward (dx and dk).
func BenchmarkStencilMessage(b *testing.B) {
	const c = 46
	be := cpu.New(0)
	var offsets [][]int
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if dx != 0 || dy != 0 {
				offsets = append(offsets, []int{dy, dx})
			}
		}
	}
	k := tensor.NewLeaf(be, "k", gradcheck.Random(3, len(offsets)*c*c), len(offsets), c, c)
	k.SetRequiresGrad(true)
	benchOp(b, func(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor {
		return tp.StencilMessage(x, k, c, offsets, true)
	}, []int{16, c, 64, 64})
}
