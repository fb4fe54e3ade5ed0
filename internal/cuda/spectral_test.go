//go:build cuda || cudaemu

package cuda

import (
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// spectralAgree checks a GPU tensor against the CPU one to frac times the
// largest |reference| value (an absolute tolerance on the tensor's
// scale), the natural measure for transforms, whose float32 error is
// relative to the norm of what they sum rather than to each output.
func spectralAgree(t *testing.T, what string, p pair, frac float64) {
	t.Helper()
	var scale float64
	for _, v := range tensor.ToHost(cpuOf(p), p.c) {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	agree(t, what, p, frac*math.Max(scale, 1e-30), 0)
}

// sameOnGPU requires the GPU tensor to hold exactly vals (an input an
// operation must not modify, or a second run that must be bit-identical).
func sameOnGPU(t *testing.T, what string, g *tensor.Tensor, vals []float32) {
	t.Helper()
	got := tensor.ToHost(gpu, g)
	for i := range vals {
		if math.Float32bits(got[i]) != math.Float32bits(vals[i]) {
			t.Fatalf("%s[%d] = %v, want %v (bit-identical)", what, i, got[i], vals[i])
		}
	}
}

// spectralCases cover 1D, 2D and 3D; odd sizes; the mode cap of Eq.
// mode-cap (K = N/2, where the two blocks of a full axis tile it and its
// Nyquist index is kept, and where the last axis' Nyquist bin is dropped);
// odd full axes; the paper's sizes (N = 64..128, K0 = 12..24); and an axis
// of length 1, which keeps no mode.
var spectralCases = []struct {
	name     string
	shape    []int // x: [B, Cin, spatial...]
	cout, k0 int
}{
	{"1D", []int{3, 4, 37}, 5, 8},
	{"1D/cap", []int{2, 3, 10}, 2, 12},
	{"1D/paper_N128_K24", []int{4, 8, 128}, 8, 24},
	{"2D", []int{2, 3, 10, 13}, 4, 3},
	{"2D/cap_6x8", []int{2, 3, 6, 8}, 2, 12},
	{"2D/odd_9x7", []int{2, 2, 9, 7}, 3, 4},
	{"2D/paper_64x64_K12", []int{2, 8, 64, 64}, 8, 12},
	{"3D", []int{2, 3, 6, 5, 7}, 2, 2},
	{"3D/cap_4x6x8", []int{1, 2, 4, 6, 8}, 3, 12},
	{"3D/16^3_K12cap8", []int{2, 4, 16, 16, 16}, 4, 12},
	{"2D/no_modes_1x8", []int{2, 2, 1, 8}, 2, 3},
}

// firstOf is FNO's list tensor.FirstModes on the last axis of shape.
func firstOf(shape []int, k0 int) []int {
	return tensor.FirstModes(k0, shape[len(shape)-1])
}

// TestSpectralConv compares the forward and backward with the CPU
// backend (the reference, itself checked against a float64 DFT in
// internal/cpu) on random inputs, with pre-filled outputs (the forward
// must overwrite) and pre-filled gradients (the backward must add).
//
// Tolerances, as fractions of the largest |reference| value:
//   - y and dx: 2e-5. The CPU backend is within 1e-5 of the exact result
//     on this scale (its TestSpectralConvForward); cuFFT's float32 error
//     is O(eps log N) of the transform's norm, and the mixing sums
//     Cin (or Cout) complex products in float on both sides, in the same
//     order. An indexing or Hermitian-weighting error moves whole modes
//     (O(1/modes) of the scale at least), far above this.
//   - dw: 3e-5. Each entry is a batch sum of products of two spectra,
//     each carrying the error above; the sum over B <= 4 samples can
//     cancel, so the bound is on the tensor's scale, with margin for the
//     two factors' errors adding.
func TestSpectralConv(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range spectralCases {
		t.Run(c.name, func(t *testing.T) {
			d := len(c.shape) - 2
			ys := append([]int{c.shape[0], c.cout}, c.shape[2:]...)
			ws := tensor.SpectralWeightShape(d, c.shape[1], c.cout, c.k0)
			seed := uint64(100 * ci)
			xv := random(seed+1, tensor.Numel(c.shape), 1)
			x := both(ref, xv, c.shape...)
			w := rnd(ref, seed+2, ws...)
			y := gradPair(ref, seed+3, ys...) // stale values: the forward overwrites them
			ref.SpectralConv(y.c, x.c, w.c, c.k0, firstOf(c.shape, c.k0))
			gpu.SpectralConv(y.g, x.g, w.g, c.k0, firstOf(c.shape, c.k0))
			spectralAgree(t, "y", y, 2e-5)
			sameOnGPU(t, "x after the forward", x.g, xv)

			dyv := random(seed+4, tensor.Numel(ys), 1)
			dy := both(ref, dyv, ys...)
			dx := gradPair(ref, seed+5, c.shape...)
			dw := gradPair(ref, seed+6, ws...)
			ref.SpectralConvBackward(dx.c, dw.c, dy.c, x.c, w.c, c.k0, firstOf(c.shape, c.k0))
			gpu.SpectralConvBackward(dx.g, dw.g, dy.g, x.g, w.g, c.k0, firstOf(c.shape, c.k0))
			spectralAgree(t, "dx", dx, 2e-5)
			spectralAgree(t, "dw", dw, 3e-5)
			sameOnGPU(t, "dy after the backward", dy.g, dyv)
			sameOnGPU(t, "x after the backward", x.g, xv)

			// One gradient at a time: the other is skipped.
			dxOnly := gradPair(ref, seed+7, c.shape...)
			ref.SpectralConvBackward(dxOnly.c, nil, dy.c, x.c, w.c, c.k0, firstOf(c.shape, c.k0))
			gpu.SpectralConvBackward(dxOnly.g, nil, dy.g, x.g, w.g, c.k0, firstOf(c.shape, c.k0))
			spectralAgree(t, "dx (dw nil)", dxOnly, 2e-5)
			dwOnly := gradPair(ref, seed+8, ws...)
			ref.SpectralConvBackward(nil, dwOnly.c, dy.c, x.c, w.c, c.k0, firstOf(c.shape, c.k0))
			gpu.SpectralConvBackward(nil, dwOnly.g, dy.g, x.g, w.g, c.k0, firstOf(c.shape, c.k0))
			spectralAgree(t, "dw (dx nil)", dwOnly, 3e-5)
			gpu.SpectralConvBackward(nil, nil, dy.g, x.g, w.g, c.k0, firstOf(c.shape, c.k0)) // must do nothing
		})
	}
}

// TestSpectralConvDeterministic: no atomics anywhere, so a second run on
// the GPU gives the same bits as the first, forward and backward.
func TestSpectralConvDeterministic(t *testing.T) {
	ref := cpu.New(1)
	shape, cout, k0 := []int{4, 8, 32, 32}, 8, 12
	ys := []int{4, cout, 32, 32}
	ws := tensor.SpectralWeightShape(2, shape[1], cout, k0)
	x, w, dy := rnd(ref, 71, shape...), rnd(ref, 72, ws...), rnd(ref, 73, ys...)
	var first [3][]float32
	for run := 0; run < 2; run++ {
		y := both(ref, nil, ys...)
		dx, dw := both(ref, nil, shape...), both(ref, nil, ws...)
		gpu.SpectralConv(y.g, x.g, w.g, k0, firstOf(shape, k0))
		gpu.SpectralConvBackward(dx.g, dw.g, dy.g, x.g, w.g, k0, firstOf(shape, k0))
		if run == 0 {
			first = [3][]float32{tensor.ToHost(gpu, y.g), tensor.ToHost(gpu, dx.g), tensor.ToHost(gpu, dw.g)}
			continue
		}
		sameOnGPU(t, "y", y.g, first[0])
		sameOnGPU(t, "dx", dx.g, first[1])
		sameOnGPU(t, "dw", dw.g, first[2])
	}
}

// TestSpectralConvUnaligned runs on tensors that are views at an odd
// float offset (4 bytes past an aligned block), which cuFFT may not take
// directly: the backend goes through aligned scratch.
func TestSpectralConvUnaligned(t *testing.T) {
	ref := cpu.New(1)
	shape, cout, k0 := []int{2, 3, 12, 10}, 2, 4
	ys := []int{2, cout, 12, 10}
	ws := tensor.SpectralWeightShape(2, shape[1], cout, k0)
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
	x := view(random(81, tensor.Numel(shape), 1), shape...)
	w := rnd(ref, 82, ws...)
	y := view(nil, ys...)
	ref.SpectralConv(y.c, x.c, w.c, k0, firstOf(shape, k0))
	gpu.SpectralConv(y.g, x.g, w.g, k0, firstOf(shape, k0))
	spectralAgree(t, "y", y, 2e-5)
	dy := view(random(83, tensor.Numel(ys), 1), ys...)
	dx := view(random(84, tensor.Numel(shape), 0.1), shape...)
	dw := gradPair(ref, 85, ws...)
	ref.SpectralConvBackward(dx.c, dw.c, dy.c, x.c, w.c, k0, firstOf(shape, k0))
	gpu.SpectralConvBackward(dx.g, dw.g, dy.g, x.g, w.g, k0, firstOf(shape, k0))
	spectralAgree(t, "dx", dx, 2e-5)
	spectralAgree(t, "dw", dw, 3e-5)
}
