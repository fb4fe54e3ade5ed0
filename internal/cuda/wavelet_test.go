//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// waveletCases: 1D, 2D, 3D at 3 levels, the smallest grids (the last
// level filters lines of length 2, the filter wrapped four times), uneven
// axes and plane counts that do not divide the 256-thread blocks, and 1
// and 2 levels.
var waveletCases = []struct {
	b, c   int
	sp     []int
	levels int
}{
	{3, 5, []int{40}, 3},
	{2, 3, []int{8}, 3},
	{2, 2, []int{6}, 1},
	{2, 3, []int{16, 24}, 3},
	{1, 3, []int{12, 4}, 2},
	{2, 2, []int{8, 16, 8}, 3},
	{1, 2, []int{4, 2, 6}, 1},
}

// TestWavelet compares Wavelet (both directions) and WaveletBackward with
// the CPU backend. Both add the same float32 terms in the same order with
// the same rounding, so they agree to the bit; the tolerance is the sum
// bound of 16 terms per level and axis (the filters are below 1 in
// magnitude and every step keeps the norm).
func TestWavelet(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range waveletCases {
		xs := append([]int{c.b, c.c}, c.sp...)
		steps := c.levels * len(c.sp)
		tol := denseSumTol(16*steps, 4)
		for _, inverse := range []bool{false, true} {
			t.Run(fmt.Sprint(xs, " levels ", c.levels, " inverse ", inverse), func(t *testing.T) {
				seed := uint64(100 * ci)
				x := rnd(ref, seed+1, xs...)
				y := both(ref, random(seed+2, tensor.Numel(xs), 5), xs...) // garbage: the forward overwrites it
				ref.Wavelet(y.c, x.c, c.levels, inverse)
				gpu.Wavelet(y.g, x.g, c.levels, inverse)
				agree(t, "Wavelet", y, tol, 1e-6)
				// The input is only read.
				agree(t, "Wavelet input", x, 0, 0)

				dy := rnd(ref, seed+3, xs...)
				dx := gradPair(ref, seed+4, xs...)
				ref.WaveletBackward(dx.c, dy.c, c.levels, inverse)
				gpu.WaveletBackward(dx.g, dy.g, c.levels, inverse)
				agree(t, "WaveletBackward dx", dx, tol, 1e-6)
				gpu.WaveletBackward(nil, dy.g, c.levels, inverse) // skipped
			})
		}
	}
}

// TestWaveletMix compares WaveletMix and WaveletMixBackward with the CPU:
// the forward and dx add Cin (Cout) float32 products in the CPU's order;
// dw sums B products in double on both sides in the same order.
func TestWaveletMix(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range []struct {
		b, cin, cout int
		sp, m        []int
	}{
		{3, 5, 4, []int{40}, []int{10}},
		{2, 3, 3, []int{8}, []int{8}},
		{2, 4, 3, []int{16, 24}, []int{4, 6}},
		{2, 2, 3, []int{8, 16, 8}, []int{2, 4, 2}},
	} {
		xs := append([]int{c.b, c.cin}, c.sp...)
		ys := append([]int{c.b, c.cout}, c.sp...)
		ws := tensor.WaveletMixShape(c.cin, c.cout, c.m)
		t.Run(fmt.Sprint(xs, " -> ", c.cout, " corner ", c.m), func(t *testing.T) {
			seed := uint64(100 * ci)
			x, w := rnd(ref, seed+1, xs...), rnd(ref, seed+2, ws...)
			y := both(ref, random(seed+3, tensor.Numel(ys), 5), ys...)
			ref.WaveletMix(y.c, x.c, w.c)
			gpu.WaveletMix(y.g, x.g, w.g)
			agree(t, "WaveletMix", y, denseSumTol(c.cin, 1), 1e-6)
			dy := rnd(ref, seed+4, ys...)
			for _, mask := range []int{3, 1, 2, 0} {
				var dx, dw *pair
				if mask&1 != 0 {
					q := gradPair(ref, seed+5, xs...)
					dx = &q
				}
				if mask&2 != 0 {
					q := gradPair(ref, seed+6, ws...)
					dw = &q
				}
				ref.WaveletMixBackward(denseC(dx), denseC(dw), dy.c, x.c, w.c)
				gpu.WaveletMixBackward(denseG(dx), denseG(dw), dy.g, x.g, w.g)
				if dx != nil {
					agree(t, fmt.Sprintf("WaveletMixBackward dx (mask %d)", mask), *dx, denseSumTol(c.cout+1, 1), 1e-6)
				}
				if dw != nil {
					agree(t, fmt.Sprintf("WaveletMixBackward dw (mask %d)", mask), *dw, 1e-6, 1e-6)
				}
			}
		})
	}
}

// TestWaveletRoundTrip: IDWT(DWT(x)) = x on the GPU too.
func TestWaveletRoundTrip(t *testing.T) {
	ref := cpu.New(1)
	xs := []int{2, 3, 16, 8, 8}
	x := rnd(ref, 7, xs...)
	c, back := both(ref, nil, xs...), both(ref, nil, xs...)
	gpu.Wavelet(c.g, x.g, 3, false)
	gpu.Wavelet(back.g, c.g, 3, true)
	want, got := denseHost(x.g), denseHost(back.g)
	for i := range want {
		if d := got[i] - want[i]; d > 2e-6 || d < -2e-6 {
			t.Fatalf("reconstruction[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}
