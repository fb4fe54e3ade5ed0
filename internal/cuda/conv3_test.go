//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// conv3Cases: 1D, 2D, 3D with odd and even axes; N = 1 and N = 2 axes
// (the wrapped taps read the same points again); a 1D case whose
// K = B N = 1,200 splits the weight gradient in two (cuda.SplitK, the
// partials reduced in order); a 2D case crossing every tile edge of the
// implicit products (Cout 66 > 64 rows, N 72 > 64 columns, Cin 3^2 = 81 >
// 64 weight-gradient columns, K = 81 and 594 in stages of 16 with a
// tail); Cin != Cout; with and without bias.
var conv3Cases = []struct {
	b, cin, cout int
	sp           []int
	bias         bool
}{
	{3, 2, 3, []int{37}, true},
	{2, 3, 2, []int{1}, true},
	{2, 2, 2, []int{2}, false},
	{2, 2, 3, []int{600}, true},
	{2, 3, 4, []int{10, 13}, false},
	{1, 3, 2, []int{2, 7}, true},
	{2, 2, 3, []int{6, 5, 7}, true},
	{1, 2, 2, []int{2, 2, 2}, false},
	{2, 9, 66, []int{9, 8}, true},
}

// TestConv3 compares Conv3 and Conv3Backward with the CPU backend (an
// im2col GEMM there, the implicit products of kernels/conv3.cu here: sums
// in another order, possibly with FMAs, so the tolerance is the sum bound
// of Cin 3^d or Cout 3^d terms, |x|, |w|, |dy| <= 1); dw is a float32
// split-K sum here and float32 partials on the CPU, dbias the bias
// reduction of Pointwise: the same bound over B N terms.
func TestConv3(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range conv3Cases {
		d := len(c.sp)
		xs := append([]int{c.b, c.cin}, c.sp...)
		ys := append([]int{c.b, c.cout}, c.sp...)
		ws := tensor.Conv3WeightShape(d, c.cin, c.cout)
		taps := tensor.Numel(ws) / (c.cin * c.cout)
		t.Run(fmt.Sprint(xs, "->", c.cout, " bias ", c.bias), func(t *testing.T) {
			seed := uint64(100 * ci)
			x, w := rnd(ref, seed+1, xs...), rnd(ref, seed+2, ws...)
			var bias *pair
			if c.bias {
				p := rnd(ref, seed+3, c.cout)
				bias = &p
			}
			y := both(ref, random(seed+4, tensor.Numel(ys), 5), ys...) // garbage: the forward overwrites it
			ref.Conv3(y.c, x.c, w.c, denseC(bias))
			gpu.Conv3(y.g, x.g, w.g, denseG(bias))
			agree(t, "Conv3", y, denseSumTol(c.cin*taps+1, 1), 1e-6)

			dy := rnd(ref, seed+5, ys...)
			for _, mask := range denseGradMasks {
				g := denseGrads{}
				if mask&1 != 0 {
					q := gradPair(ref, seed+6, xs...)
					g.dx = &q
				}
				if mask&2 != 0 {
					q := gradPair(ref, seed+7, ws...)
					g.dw = &q
				}
				if mask&4 != 0 {
					q := gradPair(ref, seed+8, c.cout)
					g.dbias = &q
				}
				ref.Conv3Backward(denseC(g.dx), denseC(g.dw), denseC(g.dbias), dy.c, x.c, w.c)
				gpu.Conv3Backward(denseG(g.dx), denseG(g.dw), denseG(g.dbias), dy.g, x.g, w.g)
				pts := c.b * tensor.Numel(c.sp)
				if g.dx != nil {
					agree(t, fmt.Sprintf("Conv3Backward dx (mask %d)", mask), *g.dx, denseSumTol(c.cout*taps+1, 1), 1e-6)
				}
				if g.dw != nil {
					agree(t, fmt.Sprintf("Conv3Backward dw (mask %d)", mask), *g.dw, denseSumTol(pts+1, 1), 1e-6)
				}
				if g.dbias != nil {
					agree(t, fmt.Sprintf("Conv3Backward dbias (mask %d)", mask), *g.dbias, denseSumTol(pts+1, 1), 1e-6)
				}
			}
		})
	}
}

// TestConv3Deterministic runs the backward twice: identical bits.
func TestConv3Deterministic(t *testing.T) {
	ref := cpu.New(1)
	xs, ys := []int{2, 3, 24, 20}, []int{2, 2, 24, 20}
	ws := tensor.Conv3WeightShape(2, 3, 2)
	x, w, dy := rnd(ref, 1, xs...), rnd(ref, 2, ws...), rnd(ref, 3, ys...)
	var runs [2][3][]float32
	for r := range runs {
		dx, dw, db := both(ref, nil, xs...), both(ref, nil, ws...), both(ref, nil, 2)
		gpu.Conv3Backward(dx.g, dw.g, db.g, dy.g, x.g, w.g)
		runs[r] = [3][]float32{denseHost(dx.g), denseHost(dw.g), denseHost(db.g)}
	}
	for i, n := range []string{"dx", "dw", "dbias"} {
		denseSame(t, "Conv3Backward "+n, runs[0][i], runs[1][i])
	}
}

// TestReLUOp: the same bits as the CPU, forward and backward (pre-filled
// gradient).
func TestReLUOp(t *testing.T) {
	ref := cpu.New(1)
	for _, sh := range shapes1to3 {
		x, dy := rnd(ref, 1, sh...), rnd(ref, 2, sh...)
		y := both(ref, random(3, tensor.Numel(sh), 5), sh...)
		ref.ReLU(y.c, x.c)
		gpu.ReLU(y.g, x.g)
		agree(t, "ReLU", y, 0, 0)
		dx := gradPair(ref, 4, sh...)
		ref.ReLUBackward(dx.c, dy.c, x.c)
		gpu.ReLUBackward(dx.g, dy.g, x.g)
		agree(t, "ReLUBackward", dx, 0, 0)
	}
}

// bandCases: up and down by 2 on every axis, mixed axes, odd sizes, an
// unchanged axis, and the identity.
var bandCases = []struct{ in, out []int }{
	{[]int{16}, []int{32}}, {[]int{16}, []int{8}}, {[]int{7}, []int{3}}, {[]int{5}, []int{5}},
	{[]int{6, 8}, []int{12, 16}}, {[]int{8, 6}, []int{4, 3}}, {[]int{6, 8}, []int{6, 4}},
	{[]int{4, 6, 2}, []int{8, 12, 4}}, {[]int{4, 4, 6}, []int{2, 2, 3}},
}

// TestBandResampleOp compares BandResample and its backward with the CPU:
// the same sums in the same order; the matrices are the same float64
// terms rounded to float (cosines may differ in the last bit of a double),
// so the tolerance is a few float32 ulps of the sum bound.
func TestBandResampleOp(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range bandCases {
		xs := append([]int{2, 3}, c.in...)
		ys := append([]int{2, 3}, c.out...)
		t.Run(fmt.Sprint(c.in, "->", c.out), func(t *testing.T) {
			x := rnd(ref, uint64(10*ci+1), xs...)
			y := both(ref, random(uint64(10*ci+2), tensor.Numel(ys), 5), ys...)
			ref.BandResample(y.c, x.c)
			gpu.BandResample(y.g, x.g)
			agree(t, "BandResample", y, 1e-5, 1e-5)
			dy := rnd(ref, uint64(10*ci+3), ys...)
			dx := gradPair(ref, uint64(10*ci+4), xs...)
			ref.BandResampleBackward(dx.c, dy.c)
			gpu.BandResampleBackward(dx.g, dy.g)
			agree(t, "BandResampleBackward", dx, 1e-5, 1e-5)
		})
	}
}
