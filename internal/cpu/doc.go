// Package cpu is uhno's reference compute backend: plain Go, parallel over
// all cores, implementing every operation of tensor.Backend in 1D, 2D and
// 3D.
//
// Memory is a Go slice (Buf). Work is split into chunks that depend only on
// the problem size, never on the number of threads, and every reduction sums
// its partial results in a fixed order, so results are bit-for-bit the same
// for a given input whatever GOMAXPROCS is (the "deterministic by seed on
// the CPU" guarantee).
//
// Each operation lives in the file named after its paper concept
// (spectral.go, gaussian.go, spar.go, ...), forward beside backward.
//
// # Determinism
//
// Determinism. The CPU backend splits work into chunks whose boundaries
// depend only on the problem size (never on the thread count) and sums every
// reduction in a fixed order, so results are bit-identical for 1 or N threads
// (`TestThreadDeterminism` and one such test per operation).
//
// # Fast paths
//
// Fast paths. Go does not vectorise, so the innermost matrix kernels are
// C compiled through cgo with GCC `target_clones` for x86-64-v4 (AVX-512),
// x86-64-v3 (AVX2/FMA) and a portable default, chosen at load time: the binary
// runs on any x86-64. There is one real GEMM (`gemm.go`, `gemm_amd64.c`,
// packed 6x16 register blocks) shared by `Pointwise`, `ConvDown`, `Conv3`,
// `StencilMessage` and `BandResample`; the spectral and Gaussian
// convolutions have their own small kernels (see their files). Each
// C kernel has a plain-Go twin that stays as the oracle and is compared with
// it in the tests; builds without cgo use the Go twin.
//
// Some C kernels are not arithmetic but data movement and elementwise
// loops that Go runs slowly, each bit-identical to its Go twin (the same
// products in the same order, no FMA contraction, no flush-to-zero; their
// tests compare bits): the db4 wavelet (wavelet_amd64.c, vectorised along
// the contiguous axis), ReLU (act_amd64.c, branch-free), and the im2col
// moves of the stencil and the convolutions (patch_amd64.c, a 16-point
// panel of consecutive offsets moved as one block), and the accumulations
// `axpy` (y += a x: gradient accumulation in ChannelCopy, AddScaled and
// the resamplers) and `addInterleaved` (the bias gradient's eight partial
// sums, one vector lane each) in add_amd64.c, on slices of at least
// minFastAdd elements, shorter ones staying in Go (a cgo call costs some
// tens of ns).
//
// # Fused projection head
//
// The backend is a tensor.Projector: Tape.Projection (every model's head,
// 1x1 -> GELU -> 1x1 with 128 hidden channels) runs as one operation that
// goes tile by tile and recomputes the hidden activations in the
// backward instead of keeping them (projection.go). The forward and the
// input gradient have the composed operations' bits; the head's weight
// and bias gradients are summed in fixed groups of tiles, so they round
// differently from the composed path but not with the thread count. It
// cuts a training step's memory by a quarter to two fifths at the paper's
// 0.62M budget (docs/PERFORMANCE.md). Other backends compose the head.
//
// # Operations of Conv-FNO and CNO
//
// New backend operations (CPU, CUDA, FLOP counter, tape):
//
//   - `Conv3`: the full kernel-3, stride-1 circular convolution C_in → C_out
//     with bias, in 1D–3D (PyTorch's `Conv{1,2,3}d(padding=1,
//     padding_mode="circular")`). On the CPU it is ConvDown's im2col GEMM with
//     the stride read from the shapes (`convGeom.step`). On CUDA
//     (`kernels/conv3.cu`) it uses direct loops: one thread per output or input
//     value, and one block per weight with a double tree for dw and dbias. It
//     is deterministic, but it is not the tiled GEMM of `dense.cu`. A tiled
//     version is for a GPU session that can measure it.
//   - `ReLU` (forward and backward; the gradient is 0 at x = 0, as in PyTorch).
//   - `BandResample`: band-limited (Fourier) resampling of every spatial axis
//     to any size. Up-sampling zero-pads the spectrum and splits the input's
//     Nyquist mode in half. Down-sampling truncates the spectrum, an ideal
//     low-pass filter followed by decimation. These are scipy.signal.resample's
//     conventions: Down(Up(x)) = x and Up(x)[2j] = x[j], and a mode above the
//     coarse grid's band is removed rather than aliased. Each axis is a dense
//     N_out × N_in matrix, A[j,m] = (1/N_in) Σ_k c_k cos(2πk(j N_in/N_out −
//     m)/N_in), applied axis by axis. The matrix is computed in float64 with
//     the phase reduced in integers; on CUDA `br_matrix` builds it on the
//     device. This costs N_in multiply-adds per point and axis where an FFT
//     would cost O(log N), but at this project's grids (N ≤ 256) the matrix is
//     exact, needs no FFT plan, and is the same sum in the same order on both
//     backends (bit-identical given the same matrix). The tests compare it
//     with a float64 DFT and check the properties above and the adjoint
//     identity ⟨Ax, dy⟩ = ⟨x, Aᵀdy⟩.
//
// Each op has a float64 reference, finite-difference checks in 1D, 2D and 3D,
// and checks that 1 and 4 threads give the same bits. The CUDA versions are
// tested against the CPU and are in `TestSameBitsUnderEveryThreadOrder`.
// Planted bugs that the tests catch:
//
//   - A flipped Conv3 kernel (cross-correlation versus convolution). The
//     reference and known-answer tests catch it. The gradient checks alone do
//     not, because forward and backward stay consistent.
//   - A BandResample backward that overwrites instead of adding
//     (`TestBandResampleBackwardAccumulates`).
//   - A wrong shift sign in `c3_backward_dx` (`TestConv3` under the emulator).
//
// # Tests of SpectralConvModes and LowRankSpectralConv
//
//   - Ops (`internal/cpu/spectral_modes_test.go`):
//   - SpectralConvModes against a float64 DFT reference, with lists that
//     skip DC, odd N and `LogModes` lists, in 1D–3D. It is SpectralConv bit
//     for bit when the list is 0..K−1, and an empty list gives 0.
//   - LowRankSpectralConv against the reference SpectralConv with
//     W = U V, in 1D–3D, including capped grids.
//   - Finite differences for both ops in 1D–3D, accumulation into
//     pre-filled gradients for every nil/non-nil subset, and 1- vs 4-thread
//     bits.
//   - Two planted bugs were caught and then removed: the irfft factor taken
//     from the slot instead of the frequency, caught by the forward
//     reference; and D applied twice in dU, caught by the finite
//     differences.
//
// # StencilMessage (GNO)
//
// The op. `Backend.StencilMessage(y, x, k, offsets, periodic)`:
// y[b,o,p] = (1/|N(p)|) Σ_{s∈N(p)} Σ_i k[s,o,i] x[b,i,p+s], k in
// [S, Cout, Cin] order (the kernel MLP's [S, Cout·Cin, 1] output fits), the
// offsets any list with |s_a| ≤ N_a, the mean taken as the sum times
// float32(1/|N(p)|), 0 at a node without neighbours. Its backward gives dx
// (the transposed gather) and dk (Σ over batch and grid). On the CPU it is
// Conv3's im2col product with the stencil's offsets as the taps (a dropped
// edge gathers 0) and the per-point scale applied after the GEMM (forward)
// or to dy first (backward); per-sample dk partials are added in sample
// order. On CUDA (`kernels/stencil.cu`) all three are tiled products with
// the neighbour gather in a loader: `sm_forward` and `sm_backward_dx` per
// sample over K = S·Cin or S·Cout, and `sm_backward_dk` one product of
// all of dk (Cout × S·Cin over the folded K = B·N) split into
// shape-determined K chunks added in chunk order (`sm_dk_reduce`), as
// Pointwise's weight gradient. The offsets go to
// the device once per list as an int32 table (cached in `b.state` until
// `Close`, like SpectralConvModes' table, so a captured step uploads
// nothing). `bench.Counter` counts 2·B·Cout·Cin·S·N per direction plus the
// scaling. Per point and round the op costs S·W² multiply-adds: 8·46² ≈ 17k
// in 2D (Conv3 of the same width costs 9·W²), and 26·W² in 3D.
package cpu
