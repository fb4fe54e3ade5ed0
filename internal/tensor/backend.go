package tensor

import (
	"fmt"
	"math"
)

// Backend is a compute device: it owns memory and runs uhno's operations.
//
// Conventions for every method:
//   - Fields have shape [B, C, spatial...] with 1, 2 or 3 spatial axes,
//     row-major, the last spatial axis fastest.
//   - Forward methods overwrite their output (the first argument).
//   - Backward methods ADD into the gradient tensors they receive
//     (dx += ...); a nil gradient means "not needed" and is skipped.
//   - Shapes were checked by the Tape before the call; a backend may assume
//     they are consistent.
//
// The CPU backend (internal/cpu) is the reference implementation; the CUDA
// backend (internal/cuda) is tested against it.
type Backend interface {
	// Name is a short label such as "cpu" or "cuda".
	Name() string

	// Alloc returns zero-filled storage for n float32 values.
	Alloc(n int) Storage
	// Free releases storage; the backend may reuse it.
	Free(s Storage)
	// View returns a window [off, off+n) of s that shares its memory.
	View(s Storage, off, n int) Storage
	// Upload copies host values into s (len(src) <= s.Len()).
	Upload(dst Storage, src []float32)
	// Download copies s into host memory (len(dst) <= s.Len()).
	Download(dst []float32, src Storage)
	// Zero sets every element to 0.
	Zero(s Storage)
	// Copy copies src into dst (same length).
	Copy(dst, src Storage)

	// Elementwise, on tensors of equal shape.
	Add(y, a, b *Tensor)               // y = a + b
	Sub(y, a, b *Tensor)               // y = a - b
	Mul(y, a, b *Tensor)               // y = a * b
	Scale(y, x *Tensor, s float32)     // y = s * x
	AddScaled(y, x *Tensor, s float32) // y += s * x (accumulation)
	MulAcc(y, a, b *Tensor)            // y += a * b (accumulation)

	// GELU with the exact erf form, gelu(x) = x * Phi(x).
	GELU(y, x *Tensor)
	GELUBackward(dx, dy, x *Tensor)
	// Sigmoid y = 1/(1+exp(-x)); backward uses the saved output y.
	Sigmoid(y, x *Tensor)
	SigmoidBackward(dx, dy, y *Tensor)

	// Pointwise is the 1x1 channel mixing of every layer:
	// y[b,o,x] = sum_i w[o,i] * x[b,i,x] + bias[o]; w is [Cout, Cin], bias
	// [Cout] or nil.
	Pointwise(y, x, w, bias *Tensor)
	PointwiseBackward(dx, dw, dbias, dy, x, w *Tensor)

	// ConvDown is the encoder's kernel-3 stride-2 convolution with circular
	// padding 1 on every spatial axis (Sec. 3.2): output axes are N/2 (N
	// even), y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,(2j+t-1) mod N] + bias[o]
	// per axis; w is [Cout, Cin, 3, ..., 3] (one 3 per spatial axis).
	ConvDown(y, x, w, bias *Tensor)
	ConvDownBackward(dx, dw, dbias, dy, x, w *Tensor)

	// DepthwiseConv is the 3-tap-per-axis depthwise convolution of the
	// flat additive hybrid's local branch (paper App. "Branch-Parameter
	// Gradient-Angle Diagnostic"), stride 1 with circular padding 1 on
	// every spatial axis: channel c is filtered by its own kernel,
	// y[b,c,j] = sum_t w[c,t] x[b,c,(j+t-1) mod N] + bias[c] per axis, the
	// same as PyTorch's Conv{1,2,3}d(C, C, 3, padding=1, groups=C,
	// padding_mode="circular"). x and y are [B, C, spatial...]; w is
	// [C, 3, ..., 3] (one 3 per spatial axis; PyTorch's [C, 1, 3, ...]
	// without the unit axis), taps row-major with the last axis fastest;
	// bias is [C] or nil.
	DepthwiseConv(y, x, w, bias *Tensor)
	DepthwiseConvBackward(dx, dw, dbias, dy, x, w *Tensor)

	// Wavelet is the periodic, orthonormal, multi-level Daubechies db4
	// discrete wavelet transform (the WNO baseline, paper App. "Baseline
	// Configurations"; tensor.DB4 holds the filters): inverse = false
	// writes the coefficients of x after `levels` levels into y, inverse =
	// true reconstructs a field from coefficients. x and y are [B, C,
	// spatial...] of the same shape; every spatial axis must be a multiple
	// of 2^levels. The coefficients are in Mallat's in-place layout
	// (WaveletLayout): level l transforms the corner [0, N/2^(l-1)) of
	// every axis, each axis in turn, writing the low-pass half to the
	// front of the corner and the high-pass half behind it. The map is
	// orthogonal, so the adjoint of each direction is the other one.
	Wavelet(y, x *Tensor, levels int, inverse bool)
	// WaveletBackward adds the adjoint of Wavelet applied to dy into dx:
	// dx += IDWT(dy) for the forward transform, dx += DWT(dy) for the
	// inverse.
	WaveletBackward(dx, dy *Tensor, levels int, inverse bool)

	// WaveletMix is the WNO's learnable transform of the coarsest wavelet
	// coefficients: a channel mixing with its own weight at every point of
	// the low corner [0, M_0) x ... x [0, M_{d-1}) of the coefficient array
	// (the sizes M_a from w), y[b,o,p] = sum_i w[i,o,p] x[b,i,p] for p in
	// the corner and 0 elsewhere. x is [B, Cin, spatial...], y [B, Cout,
	// spatial...], w [Cin, Cout, M_0, ..., M_{d-1}] with M_a <= N_a. With
	// M_a = N_a / 2^(J-1) the corner holds exactly the level-J subbands of
	// a J-level Wavelet transform.
	WaveletMix(y, x, w *Tensor)
	WaveletMixBackward(dx, dw, dy, x, w *Tensor)
	// Conv3 is the full 3^d circular convolution of the Conv-FNO and CNO
	// baselines, stride 1 with circular padding 1 on every spatial axis:
	// y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,(j+t-1) mod N] + bias[o] per
	// axis, PyTorch's Conv{1,2,3}d(Cin, Cout, 3, padding=1,
	// padding_mode="circular"). w is [Cout, Cin, 3, ..., 3] (ConvDown's
	// layout), bias [Cout] or nil; y has x's spatial shape.
	Conv3(y, x, w, bias *Tensor)
	Conv3Backward(dx, dw, dbias, dy, x, w *Tensor)

	// StencilMessage is the message passing of the GNO baseline (graph
	// kernel network, Li et al. 2020) on a grid graph whose edges are a
	// fixed stencil: node p receives from its neighbours p + s for the S
	// offsets s, and since the edge feature (the coordinate difference) is
	// the same at every node, the kernel kappa(s) is one [Cout, Cin] matrix
	// per offset:
	//   y[b,o,p] = (1/|N(p)|) sum_{s in N(p)} sum_i k[s,o,i] x[b,i,p+s].
	// x is [B, Cin, spatial...], y [B, Cout, spatial...] (same grid), k
	// holds S*Cout*Cin values in [S, Cout, Cin] order (any shape with that
	// layout, e.g. the [S, Cout*Cin, 1] output of the kernel MLP), offsets
	// the S offsets flattened, offsets[s*d + a] on spatial axis a (d axes),
	// |offsets[s*d + a]| <= N_a.
	// periodic wraps p + s around every axis and N(p) is every offset
	// (|N| = S); otherwise offsets that leave the grid are dropped and
	// |N(p)| counts those that stay (a node with none gets 0). The mean
	// is the sum times float32(1/|N(p)|).
	StencilMessage(y, x, k *Tensor, offsets []int, periodic bool)
	StencilMessageBackward(dx, dk, dy, x, k *Tensor, offsets []int, periodic bool)

	// ReLU y = max(x, 0); the backward passes dy where x > 0 (0 at x = 0,
	// PyTorch's convention).
	ReLU(y, x *Tensor)
	ReLUBackward(dx, dy, x *Tensor)

	// BandResample resamples every spatial axis of x to y's size by
	// trigonometric (Fourier) interpolation of the band the coarser of the
	// two grids resolves: on an axis with N_in input and N_out output
	// points and M = min(N_in, N_out), the modes |k| <= M/2 pass and every
	// other mode is removed; up-sampling with even M splits the input's
	// Nyquist mode in half on +-M/2 (scipy.signal.resample). Per axis,
	// y_j = sum_m x_m K(j N_in/N_out - m) with K(s) = (1/N_in) sum_k c_k
	// cos(2 pi k s / N_in) (c_0 = 1, c_k = 2 for 0 < k <= M/2, except
	// c_{M/2} = 1 when up-sampling with even M). Up-sampling is exactly
	// band-limited interpolation (y[2j] = x[j]) and down-sampling is an
	// ideal low-pass followed by decimation: CNO's anti-aliased
	// resampling (Raonic et al. 2023) with the ideal filter. The axes are
	// applied one after the other (the operator is separable).
	BandResample(y, x *Tensor)
	BandResampleBackward(dx, dy *Tensor)

	// Upsample2x doubles every spatial axis by linear (1D), bilinear (2D)
	// or trilinear (3D) interpolation with PyTorch's align_corners=false
	// convention (source coordinate (j+0.5)/2-0.5, clamped at the edges).
	// With periodic set the source coordinate wraps around instead of
	// being clamped: the first output point of an axis of n points is
	// 1/4 x[n-1] + 3/4 x[0] and the last 3/4 x[n-1] + 1/4 x[0], the
	// interior rule on the periodic grid (model.upsample, issue 20).
	Upsample2x(y, x *Tensor, periodic bool)
	Upsample2xBackward(dx, dy *Tensor, periodic bool)

	// SpectralConv is the Fourier branch's spectral convolution
	// z = irfft(R . rfft(x)) (Sec. 3.2, App. C.4), the one spectral
	// convolution of every FNO-type layer. Every axis but the last keeps
	// the frequencies [0:K] and [N-K:N], K = min(K0, floor(N/2)) (Eq.
	// mode-cap), so there are 2^(d-1) corners; the last (rfft) axis keeps
	// the frequencies listed in modes, slot j of the weight's last mode
	// axis multiplying frequency modes[j]. modes is strictly increasing
	// with 0 <= f and 2f < N (never the Nyquist bin) and len(modes) <= k0:
	// FirstModes(k0, N) = 0..K-1 is FNO's and U-HNO's uniform truncation,
	// LogModes(k0, N) LogLo-FNO's; an empty list keeps nothing (y = 0).
	// w has shape [2^(d-1), Cin, Cout, K0, ..., K0, 2] (real, imaginary
	// last), read at the kept indices only. Transforms are unnormalised
	// forward and 1/prod(N) on the inverse, matching numpy/PyTorch's
	// rfftn/irfftn; the imaginary part of the last axis' DC bin is dropped
	// by irfft. The backward leaves dw entries outside the kept modes as
	// they are and skips nil gradients.
	SpectralConv(y, x, w *Tensor, k0 int, modes []int)
	SpectralConvBackward(dx, dw, dy, x, w *Tensor, k0 int, modes []int)

	// LowRankSpectralConv is the F-FNO block's spectral convolution with a
	// rank-R complex weight per kept mode: SpectralConv on the modes
	// FirstModes(k0, N) whose weight at
	// every kept mode (and corner) is the product W = U V of u [2^(d-1),
	// Cin, R, K0..., 2] and v [2^(d-1), R, Cout, K0..., 2] (both in
	// SpectralConv's layout), i.e.
	//   z[b,o,k] = D_k sum_j (sum_i X[b,i,k] U[i,j,k]) V[j,o,k].
	// The mixing goes through the R-channel spectrum, never forming W.
	LowRankSpectralConv(y, x, u, v *Tensor, k0 int)
	LowRankSpectralConvBackward(dx, du, dv, dy, x, u, v *Tensor, k0 int)

	// GaussianConv is the depthwise circular convolution of the multi-scale
	// Gaussian branch (Eq. gaussian-kernel). logSigma is [S, G]: S scales,
	// G channel groups per scale. x has S*C channels; channel c uses scale
	// m = c / C and group g = (c % C) / (C / G). The kernel for (m, g) is the
	// box-supported Gaussian with radius r = min(ceil(3 sigma), opt.MaxRadius,
	// (Nmin-1)/2) on every axis, divided by its sum when opt.Normalize (App.
	// C.5). Because the support is a box, the d-dimensional kernel is the
	// outer product of 1D kernels and backends may apply it axis by axis.
	// The radius is treated as a constant for the gradient with respect to
	// logSigma (it is piecewise constant in sigma).
	GaussianConv(y, x, logSigma *Tensor, opt GaussOpts)
	GaussianConvBackward(dx, dlogSigma, dy, x, logSigma *Tensor, opt GaussOpts)

	// ChannelCopy copies channels [srcFrom, srcFrom+n) of src into channels
	// [dstFrom, dstFrom+n) of dst, adding instead of overwriting when
	// accumulate is set. dst and src share batch and spatial shape. It is
	// the one primitive behind concatenation, slicing and their backwards.
	ChannelCopy(dst *Tensor, dstFrom int, src *Tensor, srcFrom, n int, accumulate bool)

	// MeanStd writes the per-(sample, channel) spatial mean and unbiased
	// standard deviation (divisor N-1) of x into mean and std, both [B, C].
	MeanStd(mean, std, x *Tensor)
	MeanStdBackward(dx, dmean, dstd, x, mean, std *Tensor)

	// TopKMask sets mask[b, 0, x] = 1 for the k[b] largest s[b, 0, x] of
	// each sample and 0 elsewhere; ties go to the lower flat index. s and
	// mask are [B, 1, spatial...]. No gradient.
	TopKMask(mask, s *Tensor, k []int)

	// SPARKeep computes the contrast-adaptive keep-ratio of Eq. spar-rho and
	// the hard top-k mask of each sample without leaving the device:
	// c = std_x(s) / (mean_x |s| + eps) (std with the N-1 or N denominator
	// as p.UnbiasedStd says), rho = clip(rho0 (1 + beta
	// tanh(c - 1)), rho_min, rho_max), k = ceil(rho N). s and hard are
	// [B, 1, spatial...]; stats is [B, 3] holding (c, rho, k). No gradient.
	SPARKeep(hard, stats, s *Tensor, p SPARParams)

	// SPARRoute is the per-pixel hard MUX with the straight-through gate
	// g = g_hard + sigmoid(s/T) - sg(sigmoid(s/T)) (Sec. 3.3):
	// r = g zF + (1-g) zG, whose forward value uses g = hard. zF, zG, r are
	// [B, C, spatial...]; s and hard are [B, 1, spatial...].
	SPARRoute(r, zF, zG, hard *Tensor)
	// SPARRouteBackward adds the direct path dzF += g dr, dzG += (1-g) dr
	// (Eq. spar-direct) and the score path ds += sum_c dr (zF - zG)
	// sigmoid'((s - tau)/T)/T (Eq. spar-score-grad, App. A.1), where tau
	// is 0 for CentreZero and, for CentreThreshold, the per-sample
	// decision threshold tau_k: the smallest score with hard = 1 (the k-th
	// largest score; 0 when no pixel is kept), held constant.
	SPARRouteBackward(dzF, dzG, ds, dr, zF, zG, hard, s *Tensor, temperature float32, centre SurrogateCentre)

	// MSE writes mean((a-b)^2) into the one-element tensor out.
	MSE(out, a, b *Tensor)
	// MSEBackward adds dout * 2 (a-b) / n into da and its negative into db.
	MSEBackward(da, db, dout, a, b *Tensor)

	// Diff is the first derivative along spatial axis `axis` (0-based among
	// the spatial axes) with grid spacing h: periodic central differences
	// (x[i+1]-x[i-1])/(2h) when periodic, otherwise central in the interior
	// and first-order one-sided differences at the two boundary points.
	Diff(y, x *Tensor, axis int, h float32, periodic bool)
	DiffBackward(dx, dy *Tensor, axis int, h float32, periodic bool)

	// AdamW is one step of torch.optim.AdamW (decoupled weight decay,
	// Loshchilov & Hutter) on the first n elements of the flat parameter,
	// gradient and moment buffers p, g, m, v, in place:
	// p -= lr wd p; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
	// p -= lr mhat / (sqrt(vhat) + eps) with mhat = m / (1-b1^t), vhat =
	// v / (1-b2^t), t = h.Step >= 1. Elements are independent, so the result
	// does not depend on how a backend splits the work.
	AdamW(p, g, m, v Storage, n int, h AdamWHyper)
}

// GaussOpts configures GaussianConv.
type GaussOpts struct {
	// Normalize divides each kernel by its sum (Eq. gaussian-kernel); false
	// is ablation mode I (NoNorm).
	Normalize bool
	// MaxRadius caps ceil(3 sigma) so kernels stay inside coarse grids; 0
	// means no cap beyond the grid's own (Nmin-1)/2.
	MaxRadius int
}

// SPARParams are the SPAR keep-ratio hyper-parameters (Eq. spar-rho); the
// paper's defaults are DefaultSPAR. They are float64 so that k = ceil(rho N)
// is exact at the clip values (0.1 * 10 = 1 in float64, not in float32);
// backends evaluate the keep-ratio in double precision.
type SPARParams struct {
	Rho0, Beta, RhoMin, RhoMax, Temperature, Eps float64
	// UnbiasedStd selects the N-1 denominator of Std_x(s) in the contrast
	// (PyTorch's default, and uhno's); false uses N.
	UnbiasedStd bool
}

// SurrogateCentre is where the straight-through surrogate of the SPAR gate
// is centred (spar.surrogate_centre, issue 20): the gradient of
// g = g_hard + g_soft - sg(g_soft) is taken through g_soft.
type SurrogateCentre uint8

const (
	// CentreZero is g_soft = sigmoid(s/T), centred at s = 0 (Sec. 3.3 as
	// written; the default).
	CentreZero SurrogateCentre = iota
	// CentreThreshold is g_soft = sigmoid((s - tau_k)/T), centred at the
	// hard decision's threshold tau_k, the k-th largest score of the
	// sample, held constant in the backward pass.
	CentreThreshold
)

// DefaultSPAR holds the paper's SPAR defaults (Sec. 4.1, App. D.1):
// rho0 = 0.30, beta = 0.25, rho_min = 0.10, rho_max = 0.90, T = 0.8, eps = 1e-6.
var DefaultSPAR = SPARParams{Rho0: 0.30, Beta: 0.25, RhoMin: 0.10, RhoMax: 0.90, Temperature: 0.8, Eps: 1e-6, UnbiasedStd: true}

// GaussianRadius is the support radius of a Gaussian kernel with the given
// sigma on a grid whose smallest axis has nmin points:
// min(ceil(3 sigma), maxRadius (if > 0), (nmin-1)/2). Every backend uses it.
func GaussianRadius(sigma float64, maxRadius, nmin int) int {
	r := int(math.Ceil(3 * sigma))
	if maxRadius > 0 && r > maxRadius {
		r = maxRadius
	}
	if lim := (nmin - 1) / 2; r > lim {
		r = lim
	}
	if r < 0 {
		r = 0
	}
	return r
}

// ModeCap is Eq. mode-cap: K_eff = min(K0, floor(N/2)).
func ModeCap(k0, n int) int {
	if n/2 < k0 {
		return n / 2
	}
	return k0
}

// FirstModes returns the rfft-axis frequencies FNO and U-HNO keep on an
// axis of n points with the mode budget k0: 0..K-1, K = min(k0, n/2)
// (Eq. mode-cap), the list Backend.SpectralConv takes.
func FirstModes(k0, n int) []int {
	out := make([]int, max(ModeCap(k0, n), 0))
	for j := range out {
		out[j] = j
	}
	return out
}

// LogModes returns the rfft-axis frequencies LogLo-FNO keeps on an axis
// of n points with the mode budget k0 (paper App. "Baseline
// Configurations": the budget "allocated proportionally to log(1+k)^-1
// across the rfft axis"). It keeps K = min(k0, n/2) frequencies, as many
// as FirstModes' uniform [0:K], chosen from the whole axis below the
// Nyquist bin, 0 <= f <= kmax with 2 kmax < n:
//
//   - f_0 = 0 (the DC bin, where the density 1/log(1+k) diverges);
//   - for slots j = 1..K-1, f_j is the smallest k >= 1 with
//     W(k) >= (j - 1/2) / (K-1) * W(kmax), where
//     W(k) = sum_{m=1..k} 1/log(1+m): the midpoint quantiles of the
//     density 1/log(1+k) on 1..kmax;
//   - then f_j = max(f_j, f_{j-1}+1) upwards and
//     f_j = min(f_j, kmax-(K-1-j)) downwards, so the K frequencies are
//     distinct (when K = kmax+1 they are the whole axis).
//
// The list depends only on (k0, n) and is computed in float64 on the host,
// so every backend keeps the same modes.
func LogModes(k0, n int) []int {
	k := ModeCap(k0, n)
	if k <= 0 {
		return nil
	}
	kmax := (n - 1) / 2
	out := make([]int, k)
	if k == kmax+1 {
		for j := range out {
			out[j] = j
		}
		return out
	}
	if k == 1 {
		return out
	}
	cum := make([]float64, kmax+1) // cum[m] = W(m)
	for m := 1; m <= kmax; m++ {
		cum[m] = cum[m-1] + 1/math.Log1p(float64(m))
	}
	m := 1
	for j := 1; j < k; j++ {
		t := (float64(j) - 0.5) / float64(k-1) * cum[kmax]
		for m < kmax && cum[m] < t {
			m++
		}
		out[j] = max(m, out[j-1]+1)
	}
	for j := k - 1; j >= 1; j-- {
		out[j] = min(out[j], kmax-(k-1-j))
	}
	return out
}

// AdamWHyper holds the hyper-parameters of one AdamW step (Backend.AdamW).
// LR is the learning rate of this step (after the schedule); Step is the
// 1-based step count t of the bias corrections 1-Beta1^t and 1-Beta2^t.
type AdamWHyper struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64
	Step                               int
}

// ShapeOnly is implemented by backends whose storage holds no values
// (internal/bench.Planner, which plans memory): a model built on one skips
// drawing its initial values, which for U-HNO at 128^3 would take seconds
// and 3.4 GB of host memory for nothing.
type ShapeOnly interface {
	ShapeOnly()
}

// Projector is implemented by backends with a fused projection head, the
// 1x1 -> GELU -> 1x1 map Q at every model's output (paper Sec. 3.2):
// y = W2 GELU(W1 x + b1) + b2 at every point, w1 [hidden, Cin], w2
// [Cout, hidden], b1 and b2 their biases. Fused, the hidden activations
// need not be kept for the backward (internal/cpu recomputes them tile by
// tile). Tape.Projection composes Pointwise, GELU and Pointwise where
// CanProject is false or the backend is no Projector; a wrapping backend
// (bench.Counter) answers CanProject for the backend it wraps.
type Projector interface {
	CanProject() bool
	Projection(y, x, w1, b1, w2, b2 *Tensor)
	// ProjectionBackward accumulates into dx, dw1, db1, dw2 and db2 (each
	// may be nil) the gradients of y = Projection(x, ...) given dy.
	ProjectionBackward(dx, dw1, db1, dw2, db2, dy, x, w1, b1, w2 *Tensor)
}

// StepCapturer is implemented by backends that can record the operations
// of one training step once and replay them as a whole (internal/cuda:
// CUDA graphs, so a step costs one launch from the host). CaptureStep
// records what step enqueues without running it; the returned replay runs
// it. The step must only enqueue device work: no Upload, Download or
// other host synchronisation, and the same buffers on every replay.
type StepCapturer interface {
	CaptureStep(step func()) (StepReplay, error)
}

// StepReplay is a recorded step.
type StepReplay interface {
	// Launch runs the recorded step once (asynchronously on a GPU).
	Launch() error
	// Destroy releases it.
	Destroy() error
}

// DeviceMemory is implemented by backends whose tensors live in a
// device's own memory (internal/cuda): MemInfo reports the device's free
// and total bytes (cuMemGetInfo), so that a command can refuse a training
// step that cannot fit before the first step runs rather than fail in it.
type DeviceMemory interface {
	MemInfo() (free, total int64, err error)
}

// OutOfMemory is the value a device backend's Alloc panics with when the
// device cannot hold one more tensor (Backend.Alloc has no error result:
// an allocation deep inside a model's forward cannot return one). The
// commands that run steps on a device recover it (RecoverOutOfMemory) and
// return it as their one-line error; any other panic goes on as a panic.
type OutOfMemory struct {
	// Device names the device ("NVIDIA H100 80GB HBM3").
	Device string
	// Bytes is the allocation asked for; Free and Total the device's
	// memory when it failed (-1 where the device could not say).
	Bytes, Free, Total int64
	// Err is the driver's error.
	Err error
}

func (e *OutOfMemory) Error() string {
	free := "free memory unknown"
	if e.Free >= 0 && e.Total > 0 {
		free = fmt.Sprintf("%s free of %s", FormatBytes(e.Free), FormatBytes(e.Total))
	}
	return fmt.Sprintf("out of device memory on %s: an allocation of %s failed with %s (%v)", e.Device, FormatBytes(e.Bytes), free, e.Err)
}

func (e *OutOfMemory) Unwrap() error { return e.Err }

// RecoverOutOfMemory turns a panic with an *OutOfMemory into *err (call
// it deferred, with the function's named error result); other panics are
// re-raised unchanged.
func RecoverOutOfMemory(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if oom, ok := r.(*OutOfMemory); ok {
		*err = oom
		return
	}
	panic(r)
}

// FormatBytes writes a byte count in GiB (MiB below one GiB), for memory
// messages.
func FormatBytes(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
