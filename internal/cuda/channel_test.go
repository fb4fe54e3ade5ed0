//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
)

// TestChannelCopy compares ChannelCopy with the CPU, overwriting and
// accumulating, for a block of channels in the middle of both tensors, a
// whole tensor, and the first/last channel. A copy is exact and an
// accumulation is one float32 addition on both sides: bit-equal (atol 0).
func TestChannelCopy(t *testing.T) {
	ref := cpu.New(1)
	cases := []struct{ dstC, dstFrom, srcC, srcFrom, n int }{
		{7, 4, 5, 1, 3}, {5, 0, 5, 0, 5}, {3, 2, 6, 0, 1}, {4, 0, 9, 8, 1},
	}
	for si, shape := range shapes1to3 {
		sp := shape[2:]
		for ci, c := range cases {
			for _, acc := range []bool{false, true} {
				t.Run(fmt.Sprint(shape, c, acc), func(t *testing.T) {
					seed := uint64(100*si + 10*ci)
					src := rnd(ref, seed+1, append([]int{shape[0], c.srcC}, sp...)...)
					dst := rnd(ref, seed+2, append([]int{shape[0], c.dstC}, sp...)...)
					ref.ChannelCopy(dst.c, c.dstFrom, src.c, c.srcFrom, c.n, acc)
					gpu.ChannelCopy(dst.g, c.dstFrom, src.g, c.srcFrom, c.n, acc)
					agree(t, "ChannelCopy", dst, 0, 0)
				})
			}
		}
	}
}
