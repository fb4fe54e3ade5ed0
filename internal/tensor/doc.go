// Package tensor holds uhno's tensors, the Backend interface that every
// compute device implements, and a reverse-mode autograd tape.
//
// # Layout
//
// A Tensor is a dense float32 array in row-major order with shape
// [batch, channels, spatial...], where there are 1, 2 or 3 spatial axes
// (1D, 2D, 3D tasks). Parameters use whatever shape their operation
// documents (for example a 1x1 mixer weight is [Cout, Cin]). The memory
// behind a tensor is a Storage owned by a Backend: on the CPU a Go slice, on
// a GPU a device pointer. Model code never reads a Storage; it calls the
// operations of a Tape, which call the Backend.
//
// # Operations are coarse
//
// The Backend interface has one method per paper-level operation (a whole
// spectral convolution, a whole depthwise Gaussian convolution, the SPAR
// routing), each with an explicit backward method. A training step is
// therefore a few dozen backend calls, each of which is easy to read, test
// against finite differences, and port to CUDA.
//
// Backward methods accumulate: they add into the gradient tensors they are
// given (dx += ...), so a tensor used twice receives the sum of both
// contributions. A nil gradient argument means "not needed" and the backend
// skips that part of the work.
//
// # Tape and memory
//
// A Tape records each operation's backward closure while the forward pass
// runs. Tensors created by the tape (activations and their gradients) come
// from a size-bucketed pool owned by the tape; Reset returns them all, so a
// training loop that calls Reset after each step allocates nothing new in
// the steady state. Parameters are created outside the tape and live until
// the caller releases them.
//
// Misuse (shape mismatches, wrong ranks) panics with a "tensor:" prefix, as
// gonum does: it is a programming error, not bad data.
//
// # Operations in detail
//
// Tensors. float32, dense, row-major, shape `[batch, channels, spatial...]`
// with 1, 2 or 3 spatial axes. One layout for every dimensionality: each
// operation is written once over "the spatial axes" and tested in 1D, 2D and
// 3D (no `Conv1D`/`Conv2D`/`Conv3D` copies). Memory is a `tensor.Storage`
// owned by a backend (a Go slice on the CPU, a device pointer on a GPU); model
// code never reads it.
//
// Coarse operations, explicit backward. `tensor.Backend` has one method
// per paper-level operation, each with a backward method written out by hand:
// `Pointwise` (every 1x1 mixer), `ConvDown` (kernel 3, stride 2, circular
// padding 1), `DepthwiseConv` (3 taps per axis per channel, stride 1,
// circular padding 1: the flat additive hybrid's local branch), `Wavelet` (the
// periodic multi-level db4 transform and its inverse) and `WaveletMix` (the
// WNO's per-coefficient channel mixing), `Conv3` (full 3^d circular convolution, stride 1: Conv-FNO, CNO),
// `BandResample` (Fourier band-limited resampling: CNO), `Upsample2x` ((bi/tri)linear, PyTorch's `align_corners=False`),
// `SpectralConv` (whole Fourier branch convolution: rfft, complex weights on
// the kept corners with `K_eff = min(K0, N/2)`, irfft), `SpectralConvModes`
// (the same with an explicit list of last-axis frequencies: LogLo-FNO) and
// `LowRankSpectralConv` (rank-r weights U V per mode: F-FNO),
// `StencilMessage` (message passing on a stencil grid graph with one
// kernel matrix per offset: GNO), `GaussianConv` (all M
// scales of the Gaussian branch's depthwise convolution in one call, kernel
// built from `logSigma [M, G]`), `SPARKeep` (contrast, keep-ratio, `k` and the
// per-sample top-k mask without a host round trip) and `SPARRoute` (the STE
// MUX), plus GELU, ReLU, sigmoid, elementwise arithmetic, `ChannelCopy` (behind
// concat and slice), `MeanStd`, `TopKMask`, `MSE` and `Diff`. A training step
// is therefore a few dozen backend calls; this is the contract the CUDA
// backend implements kernel by kernel.
//
// # Leaves and evaluation mode
//
// Tape. `tensor.Tape` records one closure per operation during the
// forward pass and runs them in reverse. Tensors created by the tape come
// from a size-bucketed pool; `Reset` returns them all, so a training loop
// allocates nothing new after its first step (`TestTapeReusesMemory`).
// Parameters are leaves created with `tensor.NewLeaf`; their gradients are
// allocated once and survive `Reset` (cleared with `ZeroGrad`). `SetGrad(false)`
// is evaluation mode: nothing is recorded.
//
// # Gradient checks
//
// Gradient checks. `internal/tensor/gradcheck` compares each operation's
// tape gradient with central finite differences of `L = sum w_i y_i` (fixed
// random `w`, summed in float64), per coordinate on a random subset and along
// a random direction. The package comment explains the float32 tolerance
// (step 1e-2, relative tolerance 1e-2: rounding and truncation stay near
// 1e-4, a wrong formula gives O(1)); a 5% error in a weight gradient is
// caught (checked by hand when the checker was written).
//
// # One spectral convolution
//
// There is one spectral convolution, Backend.SpectralConv(y, x, w, k0,
// modes): every axis but the last keeps Eq. mode-cap's corners, the last
// (rfft) axis the frequencies of modes, slot j of the weight's last mode
// axis multiplying modes[j]. FNO, U-HNO, Conv-FNO and the angle probe pass
// FirstModes (0..K-1), LogLo-FNO LogModes; CheckModes is the one
// validation. The CPU plan, the CUDA kernels (a slot table; for 0..K-1 the
// slot of f is f) and the bench counter each have one path, and
// LowRankSpectralConv runs on it with FirstModes. The golden digests of FNO
// and LogLo-FNO taken before the merge (TestDefaultBitIdentical in
// internal/model) pin that it changed no bit. No fast path for 0..K-1 is
// kept: the CPU plan is the same for both and the CUDA table read is one
// cached int per thread (timings: docs/PERFORMANCE.md, "One spectral
// convolution").
package tensor
