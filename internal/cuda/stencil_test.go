//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// stencilCases: the Moore stencils of 1D-3D (2, 8 and 26 offsets), odd and
// even axes, N = 1 and 2 (wrapped offsets read the same point again),
// longer and one-sided offsets, a 1D case whose B N = 2 x 600 products per
// kernel entry split dk's K into several chunks (StencilDk; the other cases
// are one chunk, added into dk directly), a 2D case with S Cin = 72
// columns and Cout = 66 rows (two tiles of dk's product each way),
// Cin != Cout; each periodic and not.
var stencilCases = []struct {
	b, cin, cout int
	sp           []int
	offsets      [][]int
}{
	{3, 2, 3, []int{37}, tensor.MooreStencil(1)},
	{2, 3, 2, []int{1}, tensor.MooreStencil(1)},
	{2, 2, 2, []int{2}, tensor.MooreStencil(1)},
	{2, 2, 3, []int{600}, tensor.MooreStencil(1)},
	{2, 2, 3, []int{7}, [][]int{{-3}, {2}, {0}, {7}}},
	{2, 3, 4, []int{10, 13}, tensor.MooreStencil(2)},
	{1, 3, 2, []int{2, 7}, tensor.MooreStencil(2)},
	{1, 2, 3, []int{5, 4}, [][]int{{-2, 0}, {1, 0}, {0, -1}, {0, 3}, {1, 1}}},
	{2, 2, 3, []int{6, 5, 7}, tensor.MooreStencil(3)},
	{1, 2, 2, []int{2, 2, 2}, tensor.MooreStencil(3)},
	{1, 9, 66, []int{5, 3}, tensor.MooreStencil(2)},
}

func flatOffsets(off [][]int) []int {
	var f []int
	for _, o := range off {
		f = append(f, o...)
	}
	return f
}

// TestStencilMessage compares StencilMessage and its backward with the
// CPU backend (an im2col GEMM there, a tiled product with fused
// multiply-adds in increasing (s, channel) here: different orders, so the
// tolerance is the sum bound of Cin S or Cout S terms, |x|, |k|,
// |dy| <= 1); dk is float32 on both sides in different orders (on the GPU
// fused multiply-adds in increasing k within each K chunk, then the chunk
// partials in chunk order; GEMM partials on the CPU), B N terms
// dy x / |N(p)| of size at most 1: every partial sum of the GPU's order is
// a prefix sum of some order of those terms, so denseSumTol's bound over
// B N terms covers it as it covers any order (the same bound the double
// sum had before; it is at most 0.0036 here, while a dropped edge, a
// wrong neighbour or a lost chunk moves an entry by a term, about 1/(4 S),
// or more). Gradients start pre-filled, so the accumulation is checked too.
func TestStencilMessage(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range stencilCases {
		s := len(c.offsets)
		xs := append([]int{c.b, c.cin}, c.sp...)
		ys := append([]int{c.b, c.cout}, c.sp...)
		ks := []int{s, c.cout * c.cin, 1}
		off := flatOffsets(c.offsets)
		for _, periodic := range []bool{true, false} {
			t.Run(fmt.Sprint(xs, "->", c.cout, " offsets ", c.offsets, " periodic ", periodic), func(t *testing.T) {
				seed := uint64(100 * ci)
				x, k := rnd(ref, seed+1, xs...), rnd(ref, seed+2, ks...)
				y := both(ref, random(seed+4, tensor.Numel(ys), 5), ys...) // garbage: the forward overwrites it
				ref.StencilMessage(y.c, x.c, k.c, off, periodic)
				gpu.StencilMessage(y.g, x.g, k.g, off, periodic)
				agree(t, "StencilMessage", y, denseSumTol(c.cin*s+1, 1), 1e-6)

				dy := rnd(ref, seed+5, ys...)
				for _, mask := range []int{3, 1, 2, 0} {
					var dx, dk *pair
					if mask&1 != 0 {
						q := gradPair(ref, seed+6, xs...)
						dx = &q
					}
					if mask&2 != 0 {
						q := gradPair(ref, seed+7, ks...)
						dk = &q
					}
					ref.StencilMessageBackward(denseC(dx), denseC(dk), dy.c, x.c, k.c, off, periodic)
					gpu.StencilMessageBackward(denseG(dx), denseG(dk), dy.g, x.g, k.g, off, periodic)
					if dx != nil {
						agree(t, fmt.Sprintf("StencilMessageBackward dx (mask %d)", mask), *dx, denseSumTol(c.cout*s+1, 1), 1e-6)
					}
					if dk != nil {
						agree(t, fmt.Sprintf("StencilMessageBackward dk (mask %d)", mask), *dk, denseSumTol(c.b*tensor.Numel(c.sp)+1, 1), 1e-6)
					}
				}
			})
		}
	}
}

// TestStencilMessageDeterministic runs the backward twice: identical bits.
func TestStencilMessageDeterministic(t *testing.T) {
	ref := cpu.New(1)
	xs, ys := []int{2, 3, 24, 20}, []int{2, 2, 24, 20}
	off := flatOffsets(tensor.MooreStencil(2))
	ks := []int{8, 6, 1}
	x, k, dy := rnd(ref, 1, xs...), rnd(ref, 2, ks...), rnd(ref, 3, ys...)
	var runs [2][2][]float32
	for r := range runs {
		dx, dk := both(ref, nil, xs...), both(ref, nil, ks...)
		gpu.StencilMessageBackward(dx.g, dk.g, dy.g, x.g, k.g, off, false)
		runs[r] = [2][]float32{denseHost(dx.g), denseHost(dk.g)}
	}
	for i, n := range []string{"dx", "dk"} {
		denseSame(t, "StencilMessageBackward "+n, runs[0][i], runs[1][i])
	}
}
