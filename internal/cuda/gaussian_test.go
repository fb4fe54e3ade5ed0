//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// gaussLogSigmaVals is logSigma [S, G]: log(sigmas[m]) + g*step, so every
// group of a scale has its own sigma (and possibly its own radius).
func gaussLogSigmaVals(sigmas []float64, groups int, step float64) []float32 {
	ls := make([]float32, 0, len(sigmas)*groups)
	for _, s := range sigmas {
		for g := 0; g < groups; g++ {
			ls = append(ls, float32(math.Log(s)+float64(g)*step))
		}
	}
	return ls
}

// gaussCases cover 1D, 2D and 3D; radii capped by MaxRadius, by the grid
// ((Nmin-1)/2) and r = 0 (identity); groups of different sigma; and
// shapes that do not divide the tiles: inner extents that are not powers
// of two or exceed 32 (two inner tiles), axes longer than the 64-point
// tile (several axis tiles, halo crossing tiles), and a long 1D axis with
// no MaxRadius whose halo (up to 149) is wider than the tile itself.
var gaussCases = []struct {
	name   string
	shape  []int
	scales int
	groups int
	sigmas []float64
	step   float64
	maxRad int
}{
	{"1D", []int{2, 12, 37}, 3, 2, []float64{0.5, 1.0, 2.5}, 0.07, 0},
	{"1D/long_nocap", []int{2, 3, 300}, 3, 1, []float64{0.5, 5, 40}, 0, 0},
	{"2D", []int{2, 12, 19, 18}, 3, 2, []float64{0.5, 1.0, 2.5}, 0.07, 0},
	{"2D/groups4", []int{1, 24, 20, 22}, 3, 4, []float64{0.5, 1.0, 2.5}, -0.05, 0},
	{"2D/maxradius3", []int{2, 6, 18, 20}, 3, 1, []float64{0.5, 1.0, 2.5}, 0, 3},
	{"2D/gridcap_4x4", []int{2, 6, 4, 4}, 3, 2, []float64{0.5, 1.0, 2.5}, 0.05, 0},
	{"2D/r0_2x8", []int{2, 3, 2, 8}, 3, 1, []float64{0.5, 1.0, 2.5}, 0, 0},
	{"2D/tiles_70x45", []int{2, 6, 70, 45}, 3, 2, []float64{0.5, 1.0, 2.5}, 0.07, 16},
	{"2D/paper_64x64", []int{4, 24, 64, 64}, 3, 2, []float64{0.5, 1.0, 2.5}, 0.05, 16},
	{"3D", []int{1, 6, 9, 12, 10}, 3, 2, []float64{0.5, 1.0, 2.5}, 0.07, 0},
	{"3D/maxradius2", []int{1, 6, 8, 8, 8}, 3, 2, []float64{0.5, 1.0, 2.5}, 0.1, 2},
	{"3D/tiles_33x40x37", []int{1, 3, 33, 40, 37}, 3, 1, []float64{0.5, 1.0, 2.5}, 0, 16},
}

// TestGaussianConv compares forward and backward with the CPU backend, in
// both normalisation modes, with a pre-filled output (the forward must
// overwrite), pre-filled gradients (the backward must add) and each
// gradient alone (the other nil).
//
// Tolerances, as fractions of the largest |reference| value:
//   - y and dx: 1e-5. Each is d passes of at most 2r+1 float32 taps;
//     the CPU is within 2e-6 of the exact float64 convolution on this
//     scale (its TestGaussianConvForward), the GPU sums the same terms in
//     the same order with FMA (no larger error), and the taps, computed in
//     double on each side (device exp within 1 ulp) and rounded to
//     float32, differ by at most 1 ulp. A wrong radius, tap or halo index
//     changes values by O(k[r]) ~ 1e-2 or more.
//   - dlogSigma: 5e-5. Each entry sums B * C/G * prod(N) (up to 6.6e4
//     here) products x K'dy whose signs are random: the CPU sums in
//     float32 per position then float64, the GPU in float per thread then
//     double; the per-term differences (the w planes' rounding, about
//     d(2r+1) eps relative) add up like a random walk, 1e-6 of the sum's
//     scale typically, and the tolerance is on the largest entry because a
//     cancelling entry can be much smaller than its terms.
//   - r = 0 must be the identity exactly (taps k[0] = 1).
func TestGaussianConv(t *testing.T) {
	ref := cpu.New(1)
	for ci, tc := range gaussCases {
		for _, norm := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/normalize=%v", tc.name, norm), func(t *testing.T) {
				opt := tensor.GaussOpts{Normalize: norm, MaxRadius: tc.maxRad}
				seed := uint64(100 * ci)
				xv := random(seed+1, tensor.Numel(tc.shape), 1)
				x := both(ref, xv, tc.shape...)
				ls := both(ref, gaussLogSigmaVals(tc.sigmas, tc.groups, tc.step), tc.scales, tc.groups)
				y := gradPair(ref, seed+2, tc.shape...) // stale values: the forward overwrites them
				ref.GaussianConv(y.c, x.c, ls.c, opt)
				gpu.GaussianConv(y.g, x.g, ls.g, opt)
				spectralAgree(t, "y", y, 1e-5)
				if tc.name == "2D/r0_2x8" {
					sameOnGPU(t, "y (r = 0: identity)", y.g, xv)
				}

				dy := rnd(ref, seed+3, tc.shape...)
				dx := gradPair(ref, seed+4, tc.shape...)
				dls := gradPair(ref, seed+5, tc.scales, tc.groups)
				ref.GaussianConvBackward(dx.c, dls.c, dy.c, x.c, ls.c, opt)
				gpu.GaussianConvBackward(dx.g, dls.g, dy.g, x.g, ls.g, opt)
				spectralAgree(t, "dx", dx, 1e-5)
				spectralAgree(t, "dlogSigma", dls, 5e-5)

				dxOnly := gradPair(ref, seed+6, tc.shape...)
				ref.GaussianConvBackward(dxOnly.c, nil, dy.c, x.c, ls.c, opt)
				gpu.GaussianConvBackward(dxOnly.g, nil, dy.g, x.g, ls.g, opt)
				spectralAgree(t, "dx (dlogSigma nil)", dxOnly, 1e-5)
				dlsOnly := gradPair(ref, seed+7, tc.scales, tc.groups)
				ref.GaussianConvBackward(nil, dlsOnly.c, dy.c, x.c, ls.c, opt)
				gpu.GaussianConvBackward(nil, dlsOnly.g, dy.g, x.g, ls.g, opt)
				spectralAgree(t, "dlogSigma (dx nil)", dlsOnly, 5e-5)
				gpu.GaussianConvBackward(nil, nil, dy.g, x.g, ls.g, opt) // must do nothing
				sameOnGPU(t, "x after the backward", x.g, xv)
			})
		}
	}
}

// TestGaussianConvDeterministic: the dlogSigma reduction uses fixed
// per-block partials and a fixed-order sum, so repeated runs give the
// same bits.
func TestGaussianConvDeterministic(t *testing.T) {
	ref := cpu.New(1)
	shape := []int{4, 24, 40, 36}
	opt := tensor.GaussOpts{Normalize: true, MaxRadius: 16}
	x, dy := rnd(ref, 91, shape...), rnd(ref, 92, shape...)
	ls := both(ref, gaussLogSigmaVals([]float64{0.5, 1.0, 2.5}, 4, 0.02), 3, 4)
	var first [3][]float32
	for run := 0; run < 3; run++ {
		y, dx, dls := both(ref, nil, shape...), both(ref, nil, shape...), both(ref, nil, 3, 4)
		gpu.GaussianConv(y.g, x.g, ls.g, opt)
		gpu.GaussianConvBackward(dx.g, dls.g, dy.g, x.g, ls.g, opt)
		if run == 0 {
			first = [3][]float32{tensor.ToHost(gpu, y.g), tensor.ToHost(gpu, dx.g), tensor.ToHost(gpu, dls.g)}
			continue
		}
		sameOnGPU(t, "y", y.g, first[0])
		sameOnGPU(t, "dx", dx.g, first[1])
		sameOnGPU(t, "dlogSigma", dls.g, first[2])
	}
}
