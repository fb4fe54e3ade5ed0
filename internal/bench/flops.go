package bench

import (
	"math"

	"uhno/internal/tensor"
)

// FLOP conventions. Every formula counts the arithmetic of the operation as
// tensor.Backend defines it, from shapes alone (and, for GaussianConv, the
// kernel radii), independent of how a backend implements it:
//
//   - A linear map costs 2 FLOPs per multiply-add (per tap, per weight
//     use), as GEMM's 2mnk: Pointwise is 2 B Cout Cin N, ConvDown
//     2 B Cout Cin 3^d N_out, a Gaussian pass 2 (2r+1) per point, a linear
//     interpolation 2 taps = 4 per output point. A bias adds 1 per output.
//   - The spectral convolution counts what an FFT implementation does:
//     FFTFlopsPerPoint N log2 N per real transform of a field of N points
//     (rfftn or irfftn, all axes together) and 8 FLOPs per complex
//     multiply-add of the mode mixing, 8 B Cin Cout M over the M kept modes
//     (Eq. mode-cap). The backend's own truncated DFTs do more; the count is
//     the algorithm's, not the CPU kernels'. The 1/N scaling of the
//     inverse and the irfft bin weights are not counted (O(N)).
//   - Elementwise arithmetic is 1 FLOP per +, -, *, /; a special function
//     (exp, erf, sqrt) counts as 1, as in most FLOP counters. Comparisons,
//     copies and memory traffic count 0 (TopKMask, the top-k selection of
//     SPARKeep, ChannelCopy without accumulation, Upload, Zero, ...).
//   - A backward method counts only the gradients it is asked for (a nil
//     gradient is skipped, as the backend skips it), and recomputes what the
//     backend recomputes (SpectralConvBackward transforms x again for dW).
//
// The per-element constants below are fixed by these rules from each
// operation's formula in tensor.Backend; opFLOPs' comments show the sums.
const (
	// FFTFlopsPerPoint is the convention for one real FFT of N points:
	// 5 N log2 N, the classic count of a radix-2 complex FFT, applied to
	// the real transforms as well (an optimal real FFT needs about half; the
	// per-operation breakdown reports the FFT part separately so the other
	// convention is a rescaling of it).
	FFTFlopsPerPoint = 5.0

	geluFwd     = 5  // 0.5 x (1 + erf(x/sqrt2)): mul, erf, add, mul, mul
	geluBwd     = 12 // Phi (4) + phi = c exp(-x^2/2) (4) + x phi, +, * dy, += dx
	sigmoidFwd  = 3  // 1 / (1 + exp(-x)): exp, add, div
	sigmoidBwd  = 4  // dx += dy y (1 - y): sub, mul, mul, add
	meanStdFwd  = 4  // sum x; sum (x - mean)^2: add; sub, mul, add
	meanStdBwd  = 4  // dx += a + b (x - mean), per-(b,c) a, b: sub, mul, add, add
	sparKeepFwd = 5  // sum |s|; sum (s - mean)^2: abs, add; sub, mul, add
	routeFwd    = 3  // r = zG + g (zF - zG): sub, mul, add
	routeDzF    = 2  // dzF += g dr
	routeDzG    = 3  // dzG += (1 - g) dr
	routeDsElem = 3  // sum_c dr (zF - zG): sub, mul, add
	routeDsPix  = 9  // t = s/T, sigmoid (3), sig (1 - sig) (2), /T, * sum, += ds
	mseFwd      = 3  // sum (a - b)^2: sub, mul, add
	mseBwdEach  = 3  // da += c (a - b): sub, mul, add (the same for db)
	diffFwd     = 2  // (x[i+1] - x[i-1]) / (2h): sub, mul
	diffBwd     = 3  // dx[i+-1] +-= dy[i] / (2h): mul, add, sub
	adamWElem   = 14 // decay (1), m (3), v (4), sqrt, /, +eps, /, *lr, -= (6)
)

// fftFLOPs is the conventional cost of one real FFT of a field of n points.
func fftFLOPs(n int) float64 {
	if n < 2 {
		return 0
	}
	return FFTFlopsPerPoint * float64(n) * math.Log2(float64(n))
}

// keptModes is the number M of complex modes a spectral convolution keeps
// on a grid: K = min(K0, floor(N/2)) per axis (Eq. mode-cap), both signs
// (2K) on every axis but the last, and m listed frequencies on the last
// (rfft) axis (len(modes) of tensor.Backend.SpectralConv; K for
// tensor.FirstModes).
func keptModes(grid []int, k0, m int) int {
	if len(grid) == 0 {
		return 0
	}
	for _, n := range grid[:len(grid)-1] {
		m *= 2 * tensor.ModeCap(k0, n)
	}
	return m
}

// firstModes is len(tensor.FirstModes) on grid's last axis.
func firstModes(grid []int, k0 int) int {
	return tensor.ModeCap(k0, grid[len(grid)-1])
}

// lowRankFLOPs is LowRankSpectralConv: SpectralConv's FFTs and two
// mixings, Cin -> R and R -> Cout, at every kept mode.
func lowRankFLOPs(b, cin, r, cout int, grid []int, k0 int) (total, fft float64) {
	f := fftFLOPs(tensor.Numel(grid))
	fft = f*float64(b*cin) + f*float64(b*cout)
	return fft + 8*float64(b*r*(cin+cout))*float64(keptModes(grid, k0, firstModes(grid, k0))), fft
}

// lowRankBackwardFLOPs is LowRankSpectralConvBackward: rfft of dy and of
// x (whenever any gradient is wanted); dv recomputes the first mixing and
// adds one (R x Cout); du and dx share the adjoint of the second mixing
// and add one Cin x R mixing each; dx adds an irfft per input channel.
func lowRankBackwardFLOPs(b, cin, r, cout int, grid []int, k0 int, dx, du, dv bool) (total, fft float64) {
	if !dx && !du && !dv {
		return 0, 0
	}
	f := fftFLOPs(tensor.Numel(grid))
	m := 8 * float64(b) * float64(keptModes(grid, k0, firstModes(grid, k0)))
	mixU, mixV := m*float64(cin*r), m*float64(r*cout)
	fft = f*float64(b*cout) + f*float64(b*cin)
	if dv {
		total += mixU + mixV
	}
	if dx || du {
		total += mixV
	}
	if du {
		total += mixU
	}
	if dx {
		total += mixU
		fft += f * float64(b*cin)
	}
	return total + fft, fft
}

// spectralFLOPs returns the forward FLOPs of SpectralConv on b fields of
// cin channels mapped to cout, keeping m frequencies on the last axis, and
// the FFT part of them: an rfft per input and an irfft per output field,
// and one mixing over the kept modes.
func spectralFLOPs(b, cin, cout int, grid []int, k0, m int) (total, fft float64) {
	f := fftFLOPs(tensor.Numel(grid))
	fft = f*float64(b*cin) + f*float64(b*cout)
	mix := 8 * float64(b) * float64(cin) * float64(cout) * float64(keptModes(grid, k0, m))
	return fft + mix, fft
}

// spectralBackwardFLOPs is SpectralConvBackward: G = rfft(dy) whenever any
// gradient is wanted; dx adds the adjoint mixing and an irfft per input
// channel; dW transforms x again and adds one mixing.
func spectralBackwardFLOPs(b, cin, cout int, grid []int, k0, m int, dx, dw bool) (total, fft float64) {
	if !dx && !dw {
		return 0, 0
	}
	f := fftFLOPs(tensor.Numel(grid))
	mix := 8 * float64(b) * float64(cin) * float64(cout) * float64(keptModes(grid, k0, m))
	fft = f * float64(b*cout)
	if dx {
		fft += f * float64(b*cin)
		total += mix
	}
	if dw {
		fft += f * float64(b*cin)
		total += mix
	}
	return total + fft, fft
}

// upsampleFLOPs is Upsample2x of b*c fields of n points on d axes: d
// separable passes of 2 taps (4 FLOPs) per output point; after pass i the
// field has n 2^i points, so the total is 4 b c n (2 + 4 + ... + 2^d). The
// backward (the transpose) has the same taps.
func upsampleFLOPs(bc, n, d int) float64 {
	return 4 * float64(bc) * float64(n) * float64(int(1)<<(d+1)-2)
}

// gaussTaps returns sum over channels of (2r+1) for GaussianConv's kernels:
// logSigma [S, G] on x with S*C channels, channel c using pair
// (c / C, (c % C) / (C / G)), radius tensor.GaussianRadius.
func gaussTaps(channels int, spatial []int, logSigma []float32, s, g int, opt tensor.GaussOpts) float64 {
	nmin := spatial[0]
	for _, n := range spatial {
		nmin = min(nmin, n)
	}
	perPair := channels / (s * g)
	taps := 0.0
	for _, ls := range logSigma[:s*g] {
		r := tensor.GaussianRadius(math.Exp(float64(ls)), opt.MaxRadius, nmin)
		taps += float64(perPair * (2*r + 1))
	}
	return taps
}

// gaussFLOPs is GaussianConv: d passes of 2 (2r+1) FLOPs per point.
func gaussFLOPs(batch, n, d int, taps float64) float64 {
	return float64(batch) * float64(n) * float64(d) * 2 * taps
}

// gaussBackwardFLOPs is GaussianConvBackward by the product rule of the
// backend's doc (internal/cpu/gaussian.go): u = K dy takes the d passes of
// the forward whenever any gradient is wanted; dlogSigma also needs
// w = K' dy, d passes with K'_a plus d-1 with K_a, and the dot product
// <x, w> (2 per point); dx adds u (1 per point).
func gaussBackwardFLOPs(batch, channels, n, d int, taps float64, dx, dls bool) float64 {
	if !dx && !dls {
		return 0
	}
	passes := float64(d)
	perPoint := 0.0
	if dls {
		passes += float64(2*d - 1)
		perPoint += 2
	}
	if dx {
		perPoint++
	}
	return float64(batch)*float64(n)*2*taps*passes + perPoint*float64(batch*channels*n)
}
