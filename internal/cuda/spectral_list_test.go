//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"
	"uhno/internal/testutil"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// modesCases are SpectralConv calls with chosen lists (TestSpectralConv
// covers FirstModes' 0..K-1): x [B, Cin, spatial...], Cout,
// K0 and the last-axis frequency list (nil: tensor.LogModes of the grid).
// They cover 1D to 3D, lists that skip DC, an odd last axis whose list
// holds more slots than min(K0, N/2), the top of the axis (f = (N-1)/2),
// capped full axes (K = N/2 tiles the axis), an odd full axis and the
// paper's sizes with their LogModes lists.
var modesCases = []struct {
	name     string
	shape    []int
	cout, k0 int
	modes    []int
}{
	{"1D/N16_log", []int{2, 3, 16}, 4, 5, nil},
	{"1D/N16_list", []int{2, 2, 16}, 3, 4, []int{0, 3, 5, 7}},
	{"1D/N16_noDC", []int{1, 2, 16}, 2, 4, []int{1, 6}},
	{"1D/N7_odd_4slots", []int{2, 2, 7}, 2, 4, []int{0, 1, 2, 3}},
	{"1D/paper_N128_K24_log", []int{2, 4, 128}, 3, 24, nil},
	{"2D/8x12_log", []int{2, 2, 8, 12}, 3, 3, nil},
	{"2D/6x10_list", []int{1, 3, 6, 10}, 2, 4, []int{0, 1, 4}},
	{"2D/6x10_noDC_cap", []int{2, 2, 6, 10}, 3, 12, []int{2, 3, 4}},
	{"2D/9x11_odd", []int{2, 2, 9, 11}, 2, 4, []int{0, 2, 5}},
	{"2D/paper_64x64_K12_log", []int{1, 4, 64, 64}, 4, 12, nil},
	{"3D/4x4x10_log", []int{1, 2, 4, 4, 10}, 2, 2, nil},
	{"3D/4x6x8_list", []int{1, 2, 4, 6, 8}, 2, 3, []int{0, 3}},
	{"3D/5x4x9_noDC", []int{2, 2, 5, 4, 9}, 3, 2, []int{1, 4}},
}

// TestSpectralConvList compares SpectralConv and its backward with
// the CPU backend on random inputs, with stale outputs (the forward must
// overwrite) and pre-filled gradients (the backward must add), each
// gradient alone and both; tolerances as TestSpectralConv's (fractions of
// the largest |reference|): 2e-5 for y and dx, 3e-5 for dw. A wrong slot
// table, frequency or DC factor moves whole modes, far above them.
func TestSpectralConvList(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range modesCases {
		t.Run(c.name, func(t *testing.T) {
			d := len(c.shape) - 2
			modes := testutil.ModesOr(c.modes, c.shape, c.k0)
			ys := append([]int{c.shape[0], c.cout}, c.shape[2:]...)
			ws := tensor.SpectralWeightShape(d, c.shape[1], c.cout, c.k0)
			seed := uint64(300 + 100*ci)
			xv := random(seed+1, tensor.Numel(c.shape), 1)
			x := both(ref, xv, c.shape...)
			w := rnd(ref, seed+2, ws...)
			y := gradPair(ref, seed+3, ys...)
			ref.SpectralConv(y.c, x.c, w.c, c.k0, modes)
			gpu.SpectralConv(y.g, x.g, w.g, c.k0, modes)
			spectralAgree(t, "y", y, 2e-5)
			sameOnGPU(t, "x after the forward", x.g, xv)

			dyv := random(seed+4, tensor.Numel(ys), 1)
			dy := both(ref, dyv, ys...)
			dx := gradPair(ref, seed+5, c.shape...)
			dw := gradPair(ref, seed+6, ws...)
			ref.SpectralConvBackward(dx.c, dw.c, dy.c, x.c, w.c, c.k0, modes)
			gpu.SpectralConvBackward(dx.g, dw.g, dy.g, x.g, w.g, c.k0, modes)
			spectralAgree(t, "dx", dx, 2e-5)
			spectralAgree(t, "dw", dw, 3e-5)
			sameOnGPU(t, "dy after the backward", dy.g, dyv)
			sameOnGPU(t, "x after the backward", x.g, xv)

			dxOnly := gradPair(ref, seed+7, c.shape...)
			ref.SpectralConvBackward(dxOnly.c, nil, dy.c, x.c, w.c, c.k0, modes)
			gpu.SpectralConvBackward(dxOnly.g, nil, dy.g, x.g, w.g, c.k0, modes)
			spectralAgree(t, "dx (dw nil)", dxOnly, 2e-5)
			dwOnly := gradPair(ref, seed+8, ws...)
			ref.SpectralConvBackward(nil, dwOnly.c, dy.c, x.c, w.c, c.k0, modes)
			gpu.SpectralConvBackward(nil, dwOnly.g, dy.g, x.g, w.g, c.k0, modes)
			spectralAgree(t, "dw (dx nil)", dwOnly, 3e-5)
			gpu.SpectralConvBackward(nil, nil, dy.g, x.g, w.g, c.k0, modes) // must do nothing
		})
	}
}

// TestSpectralConvEmptyList: an empty (or nil) list keeps nothing: y is
// overwritten with zeros and the backward adds nothing.
func TestSpectralConvEmptyList(t *testing.T) {
	ref := cpu.New(1)
	shape, ys := []int{2, 3, 8, 10}, []int{2, 2, 8, 10}
	ws := tensor.SpectralWeightShape(2, 3, 2, 4)
	x, w, dy := rnd(ref, 1, shape...), rnd(ref, 2, ws...), rnd(ref, 3, ys...)
	for _, modes := range [][]int{{}, nil} {
		y := gradPair(ref, 4, ys...)
		gpu.SpectralConv(y.g, x.g, w.g, 4, modes)
		sameOnGPU(t, "y", y.g, make([]float32, tensor.Numel(ys)))
		dxv, dwv := random(5, tensor.Numel(shape), 0.1), random(6, tensor.Numel(ws), 0.1)
		dx, dw := both(ref, dxv, shape...), both(ref, dwv, ws...)
		gpu.SpectralConvBackward(dx.g, dw.g, dy.g, x.g, w.g, 4, modes)
		sameOnGPU(t, "dx", dx.g, dxv)
		sameOnGPU(t, "dw", dw.g, dwv)
	}
}

// TestSpectralConvBadList: the lists the CPU backend refuses panic.
func TestSpectralConvBadList(t *testing.T) {
	ref := cpu.New(1)
	shape, ys := []int{1, 2, 10}, []int{1, 2, 10}
	ws := tensor.SpectralWeightShape(1, 2, 2, 3)
	x, w, y := rnd(ref, 1, shape...), rnd(ref, 2, ws...), both(ref, nil, ys...)
	for _, modes := range [][]int{{0, 1, 2, 3}, {1, 1}, {2, 1}, {-1}, {5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("modes %v: no panic", modes)
				}
			}()
			gpu.SpectralConv(y.g, x.g, w.g, 3, modes)
		}()
	}
}

// lowRankCases are LowRankSpectralConv calls: x [B, Cin, spatial...],
// rank R, Cout and K0, in 1D to 3D, with capped axes (K = N/2), odd
// axes, ranks below, at and above the width, and an axis keeping no mode.
var lowRankCases = []struct {
	name           string
	shape          []int
	rank, cout, k0 int
}{
	{"1D", []int{3, 4, 37}, 2, 5, 8},
	{"1D/cap", []int{2, 3, 10}, 4, 2, 12},
	{"1D/paper_N128_K24_r8", []int{2, 6, 128}, 8, 6, 24},
	{"2D", []int{2, 3, 10, 13}, 2, 4, 3},
	{"2D/cap_6x8", []int{2, 3, 6, 8}, 3, 2, 12},
	{"2D/odd_9x7", []int{2, 2, 9, 7}, 1, 3, 4},
	{"2D/64x64_K12_r8", []int{1, 4, 64, 64}, 8, 4, 12},
	{"3D", []int{2, 3, 6, 5, 7}, 2, 2, 2},
	{"3D/cap_4x6x8", []int{1, 2, 4, 6, 8}, 3, 3, 12},
	{"2D/no_modes_1x8", []int{2, 2, 1, 8}, 2, 2, 3},
}

// TestLowRankSpectralConv compares LowRankSpectralConv and its backward
// with the CPU backend, with stale outputs and pre-filled gradients, for
// every non-empty subset of (dx, du, dv). Tolerances as TestSpectralConv's
// (fractions of the largest |reference|), doubled: each result goes
// through two mixings, whose float32 errors add (y, dx: 4e-5; du, dv:
// 6e-5). Dropping or doubling the DC-plane symmetrisation, D or a
// conjugation moves whole modes, far above them.
func TestLowRankSpectralConv(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range lowRankCases {
		t.Run(c.name, func(t *testing.T) {
			d := len(c.shape) - 2
			ys := append([]int{c.shape[0], c.cout}, c.shape[2:]...)
			us := tensor.SpectralWeightShape(d, c.shape[1], c.rank, c.k0)
			vs := tensor.SpectralWeightShape(d, c.rank, c.cout, c.k0)
			seed := uint64(2000 + 100*ci)
			xv := random(seed+1, tensor.Numel(c.shape), 1)
			x := both(ref, xv, c.shape...)
			u, v := rnd(ref, seed+2, us...), rnd(ref, seed+3, vs...)
			y := gradPair(ref, seed+4, ys...)
			ref.LowRankSpectralConv(y.c, x.c, u.c, v.c, c.k0)
			gpu.LowRankSpectralConv(y.g, x.g, u.g, v.g, c.k0)
			spectralAgree(t, "y", y, 4e-5)
			sameOnGPU(t, "x after the forward", x.g, xv)

			dyv := random(seed+5, tensor.Numel(ys), 1)
			dy := both(ref, dyv, ys...)
			for mask := 1; mask < 8; mask++ {
				var dx, du, dv *pair
				if mask&1 != 0 {
					p := gradPair(ref, seed+6, c.shape...)
					dx = &p
				}
				if mask&2 != 0 {
					p := gradPair(ref, seed+7, us...)
					du = &p
				}
				if mask&4 != 0 {
					p := gradPair(ref, seed+8, vs...)
					dv = &p
				}
				ref.LowRankSpectralConvBackward(denseC(dx), denseC(du), denseC(dv), dy.c, x.c, u.c, v.c, c.k0)
				gpu.LowRankSpectralConvBackward(denseG(dx), denseG(du), denseG(dv), dy.g, x.g, u.g, v.g, c.k0)
				if dx != nil {
					spectralAgree(t, fmt.Sprintf("dx (mask %d)", mask), *dx, 4e-5)
				}
				if du != nil {
					spectralAgree(t, fmt.Sprintf("du (mask %d)", mask), *du, 6e-5)
				}
				if dv != nil {
					spectralAgree(t, fmt.Sprintf("dv (mask %d)", mask), *dv, 6e-5)
				}
			}
			sameOnGPU(t, "dy after the backward", dy.g, dyv)
			sameOnGPU(t, "x after the backward", x.g, xv)
			gpu.LowRankSpectralConvBackward(nil, nil, nil, dy.g, x.g, u.g, v.g, c.k0) // must do nothing
		})
	}
}

// TestLowRankSpectralConvUnaligned runs on views at an odd float offset,
// which cuFFT may not take directly (SpectralConv's aligned scratch).
func TestLowRankSpectralConvUnaligned(t *testing.T) {
	ref := cpu.New(1)
	shape, rank, cout, k0 := []int{2, 3, 12, 10}, 2, 2, 4
	ys := []int{2, cout, 12, 10}
	us := tensor.SpectralWeightShape(2, shape[1], rank, k0)
	vs := tensor.SpectralWeightShape(2, rank, cout, k0)
	view := func(vals []float32, shape ...int) pair {
		n := tensor.Numel(shape)
		p := pair{c: tensor.NewTensor(ref.Alloc(n), shape...),
			g: tensor.NewTensor(gpu.View(gpu.Alloc(n+1), 1, n), shape...)}
		if vals != nil {
			ref.Upload(p.c.Data, vals)
			gpu.Upload(p.g.Data, vals)
		}
		return p
	}
	x := view(random(91, tensor.Numel(shape), 1), shape...)
	u, v := rnd(ref, 92, us...), rnd(ref, 93, vs...)
	y := view(nil, ys...)
	ref.LowRankSpectralConv(y.c, x.c, u.c, v.c, k0)
	gpu.LowRankSpectralConv(y.g, x.g, u.g, v.g, k0)
	spectralAgree(t, "y", y, 4e-5)
	dy := view(random(94, tensor.Numel(ys), 1), ys...)
	dx := view(random(95, tensor.Numel(shape), 0.1), shape...)
	du, dv := gradPair(ref, 96, us...), gradPair(ref, 97, vs...)
	ref.LowRankSpectralConvBackward(dx.c, du.c, dv.c, dy.c, x.c, u.c, v.c, k0)
	gpu.LowRankSpectralConvBackward(dx.g, du.g, dv.g, dy.g, x.g, u.g, v.g, k0)
	spectralAgree(t, "dx", dx, 4e-5)
	spectralAgree(t, "du", du, 6e-5)
	spectralAgree(t, "dv", dv, 6e-5)
}
