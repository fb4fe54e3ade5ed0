//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// depthwiseCases: 1D, 2D, 3D with odd and even axes; N = 1 and N = 2 axes
// (the wrapped taps read the same points again); planes whose N is not a
// multiple of the 256-thread blocks; a 1D case whose B N = 2 x 3000
// products per weight give the dw tree every thread several values; with
// and without bias.
var depthwiseCases = []struct {
	b, c int
	sp   []int
	bias bool
}{
	{3, 5, []int{37}, true},
	{2, 3, []int{1}, true},
	{2, 2, []int{2}, false},
	{2, 3, []int{3000}, true},
	{2, 4, []int{10, 13}, false},
	{1, 3, []int{2, 7}, true},
	{2, 3, []int{6, 5, 7}, true},
	{1, 2, []int{2, 2, 2}, false},
}

// TestDepthwiseConv compares DepthwiseConv and DepthwiseConvBackward with
// the CPU. The forward and the input gradient add the same float32 terms
// in the same order with the same rounding as the CPU, so they agree to
// the bit; the tolerance is nevertheless the sum bound (denseSumTol) of
// 3^d terms plus the bias or the pre-filled gradient, |x|, |w|, |dy|,
// |bias| <= 1. dw and dbias are B N products summed in double on both
// sides in different orders and rounded once: 1e-6 relative.
func TestDepthwiseConv(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range depthwiseCases {
		d := len(c.sp)
		xs := append([]int{c.b, c.c}, c.sp...)
		ws := tensor.DepthwiseWeightShape(d, c.c)
		taps := tensor.Numel(ws) / c.c
		t.Run(fmt.Sprint(xs, " bias ", c.bias), func(t *testing.T) {
			seed := uint64(100 * ci)
			x, w := rnd(ref, seed+1, xs...), rnd(ref, seed+2, ws...)
			var bias *pair
			if c.bias {
				p := rnd(ref, seed+3, c.c)
				bias = &p
			}
			y := both(ref, random(seed+4, tensor.Numel(xs), 5), xs...) // garbage: the forward overwrites it
			ref.DepthwiseConv(y.c, x.c, w.c, denseC(bias))
			gpu.DepthwiseConv(y.g, x.g, w.g, denseG(bias))
			agree(t, "DepthwiseConv", y, denseSumTol(taps+1, 1), 1e-6)

			dy := rnd(ref, seed+5, xs...)
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
					q := gradPair(ref, seed+8, c.c)
					g.dbias = &q
				}
				ref.DepthwiseConvBackward(denseC(g.dx), denseC(g.dw), denseC(g.dbias), dy.c, x.c, w.c)
				gpu.DepthwiseConvBackward(denseG(g.dx), denseG(g.dw), denseG(g.dbias), dy.g, x.g, w.g)
				if g.dx != nil {
					agree(t, fmt.Sprintf("DepthwiseConvBackward dx (mask %d)", mask), *g.dx, denseSumTol(taps+1, 1), 1e-6)
				}
				if g.dw != nil {
					agree(t, fmt.Sprintf("DepthwiseConvBackward dw (mask %d)", mask), *g.dw, 1e-6, 1e-6)
				}
				if g.dbias != nil {
					agree(t, fmt.Sprintf("DepthwiseConvBackward dbias (mask %d)", mask), *g.dbias, 1e-6, 1e-6)
				}
			}
		})
	}
}

// TestDepthwiseConvDeterministic runs the backward twice on a shape whose
// weight sums span many threads: identical bits.
func TestDepthwiseConvDeterministic(t *testing.T) {
	ref := cpu.New(1)
	xs := []int{2, 3, 24, 40}
	ws := tensor.DepthwiseWeightShape(2, 3)
	x, w, dy := rnd(ref, 1, xs...), rnd(ref, 2, ws...), rnd(ref, 3, xs...)
	var runs [2][3][]float32
	for r := range runs {
		dx, dw, db := both(ref, nil, xs...), both(ref, nil, ws...), both(ref, nil, 3)
		gpu.DepthwiseConvBackward(dx.g, dw.g, db.g, dy.g, x.g, w.g)
		runs[r] = [3][]float32{denseHost(dx.g), denseHost(dw.g), denseHost(db.g)}
	}
	denseSame(t, "DepthwiseConvBackward dx", runs[0][0], runs[1][0])
	denseSame(t, "DepthwiseConvBackward dw", runs[0][1], runs[1][1])
	denseSame(t, "DepthwiseConvBackward dbias", runs[0][2], runs[1][2])
}
