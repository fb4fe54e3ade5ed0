// Package cuda is uhno's GPU backend: tensor.Backend on NVIDIA GPUs through
// the CUDA driver API (gorgonia.org/cu v0.9.6) and hand-written kernels.
//
// # Build
//
// The backend is split at a driver seam (driver.go): everything it asks
// of CUDA (memory, copies, kernel launches by name, the stream, graph
// capture, cuFFT) is the interface `driver`, and the backend's own logic
// (plans, launch geometry, the caching allocator, graph replay, op
// orchestration) is the same code, without cgo, under either of two
// build tags, each of which supplies one implementation:
//
//   - `cuda` (driver_cuda.go): the GPU, through gorgonia.org/cu. It calls
//     cuInit in its package init and exits the process when no driver is
//     present, so it is linked only into the separate binary bin/uhno-cuda
//     (`make cuda`). The kernels are CUDA C in kernels/*.cu, compiled by
//     `make kernels` (nvcc 11.8, -arch=compute_80, PTX ISA 7.8) into
//     internal/cuda/ptx/*.ptx, which are committed and embedded in the
//     binary; the driver JIT-compiles them for the GPU it finds (sm_90 on
//     the H100). cuFFT is loaded at run time by internal/cuda/cufft
//     (dlopen of libcufft.so.12, .11 or .10), so one binary runs against
//     the CUDA 13 libraries of the GPU machine although it was built with
//     CUDA 11.8.
//   - `cudaemu` (driver_emu.go): internal/cuda/emu, which runs the same
//     kernels/*.cu, compiled as C++, on the CPU under an emulation of
//     CUDA's execution model, with FFTW for cuFFT. It needs no GPU and no
//     CUDA toolkit, so the package's tests run in CI under it.
//
// The files of this package without either tag hold what can be checked
// on any machine: the launch geometry of every kernel (geometry.go), tested
// in CI. internal/cuda/alloc (the caching allocator) and
// internal/cuda/cufft (the loader's error path) are tested the same way.
//
// # Design
//
//   - One context, one stream. Every operation is asynchronous on the
//     stream; only Download (and the host reads it implies) synchronises.
//   - Memory comes from a caching allocator (internal/cuda/alloc): after
//     the first training step no cuMemAlloc is made. Its blocks are
//     rounded to 512-byte size classes, which hides a small overrun from
//     compute-sanitizer's memcheck; $UHNO_ALLOC_EXACT=1 (EnvAllocExact,
//     read once when New opens the backend) makes it allocate exactly the
//     requested sizes, as it always does under the emulator, whose guard
//     pages then sit at every tensor's end. Run memcheck with it set.
//   - NVIDIA's libraries are loaded at run time (internal/dlib):
//     cuFFT from $UHNO_CUFFT, NCCL from $UHNO_NCCL (a file, by absolute
//     path or soname, or a directory holding the default sonames), then
//     the default sonames (libcufft.so.12, .11, .10, libcufft.so;
//     libnccl.so.2, libnccl.so) in each directory of the colon-separated
//     $UHNO_CUDA_LIB_DIRS, then the same sonames through the dynamic
//     loader's search (LD_LIBRARY_PATH, ld.so.cache).
//   - Kernels are plain and coarse, one per paper operation and direction
//     (llm.c style): a whole spectral mode mixing, a whole Gaussian branch
//     convolution, a whole SPAR gate, each readable top to bottom.
//   - Nothing an operation needs is read back to the host: the Gaussian
//     support radii and normalisers are computed on the device from
//     log sigma, and SPAR's keep-ratio, k and top-k mask are computed per
//     sample on the device. A training step is therefore a fixed sequence
//     of launches that a CUDA graph can capture.
//   - Precision: float32, or bf16 autocast (SetPrecision, precision.go):
//     the dense products round their operands to bfloat16 in the kernels
//     and accumulate in float32; storage, AdamW, FFTs and reductions stay
//     float32 ("bf16 autocast" below).
//   - Numerics follow the CPU backend (internal/cpu), the reference each
//     kernel is tested against on random inputs (the tests tagged
//     `cuda || cudaemu`: built with `go test -c -tags cuda` and run on the
//     GPU machine, or run under the emulator with `-tags cudaemu`).
//
// # In detail
//
//   - Build. The backend is behind the `cuda` build tag because
//     gorgonia.org/cu v0.9.6 calls cuInit in its package init and exits the
//     process without a driver. `make cuda` builds bin/uhno-cuda (HDF5 linked
//     statically; `readelf -d` lists libm, libcuda.so.1, libc only);
//     `make kernels` compiles kernels/*.cu with nvcc 11.8 to PTX for compute
//     capability 8.0 into internal/cuda/ptx, which is committed (so the cuda
//     tag compiles without nvcc, and `make -B kernels` reproduces the files
//     byte for byte) and embedded; the driver JIT-compiles it for the GPU.
//     cuFFT is loaded at run time (internal/cuda/cufft: dlopen of
//     $UHNO_CUFFT, libcufft.so.12, .11, .10), because the build machine has
//     CUDA 11.8 and the GPU machine CUDA 13; NCCL the same way
//     (internal/cuda/nccl, $UHNO_NCCL, libnccl.so.2). Either variable may
//     name the library by absolute path, or a directory holding its default
//     sonames; `UHNO_CUDA_LIB_DIRS` (colon-separated directories, searched for
//     the default sonames before the dynamic loader's own path) covers
//     libraries inside a Python wheel (`.../site-packages/nvidia/*/lib`).
//     `uhno-cuda doctor` exits non-zero, with the reason on one stderr line,
//     unless the backend opens on the GPU (device, PTX, cuFFT) and computes a
//     trivial kernel round trip; the CPU build's doctor exits 0. `uhno-cuda` selects the GPU in
//     `newBackend` (cmd/uhno/backends_cuda.go); every command is otherwise the
//     same. Dockerfile.cuda mirrors `make cuda` in an nvidia/cuda devel image
//     and runs in the matching runtime image.
//   - The driver seam. Everything the backend asks of CUDA goes through
//     one interface, `driver` (internal/cuda/driver.go): memory, copies,
//     memset, launch by kernel name with 8-byte argument slots, stream
//     synchronisation, graph capture and replay, and cuFFT's plan/exec.
//     `realDriver` (tag `cuda`, driver_cuda.go) is gorgonia.org/cu, the
//     embedded PTX and the run-time cuFFT loader; `emuDriver` (tag `cudaemu`,
//     driver_emu.go) is the CPU emulator (internal/cuda/emu). The backend's own logic
//     (plans, geometry, the caching allocator, graph replay, orchestration) is
//     the same code in both builds, so the emulator tests it as the GPU runs
//     it.
//   - Execution. One context, one non-blocking stream; every realDriver
//     call locks its goroutine to the OS thread and binds the context,
//     because a goroutine may change threads between two cgo calls. Memory comes from
//     a caching allocator (internal/cuda/alloc: size classes with at most
//     12.5% waste, free lists per class, no cuMemAlloc in the steady state,
//     release-and-retry on out-of-memory; its bookkeeping is tested in CI with
//     a fake device). The classes are multiples of 512 bytes, so an overrun
//     into a block's slack is invisible to compute-sanitizer's memcheck:
//     `UHNO_ALLOC_EXACT=1`, read once when the backend opens, makes every
//     block exactly the requested size (rounded to 4 bytes; a block is then
//     reused only for the same size), as the emulator's allocator always is.
//     Run memcheck with it; `TestAllocExact` (under the emulator) checks both
//     policies. Kernel parameters are marshalled into C memory, so no Go
//     pointer reaches the driver.
//   - Kernels. One per operation and direction, deterministic (fixed
//     partitions and fixed-order reductions, no floating-point atomics):
//     a 64x64-tiled GEMM core behind Pointwise and ConvDown (the stride-2
//     convolution as an on-the-fly patch GEMM, its dx as one GEMM per parity
//     class), gathers for up-sampling and finite differences, cuFFT R2C/C2R
//     with mode-mixing kernels on the kept corners (the DC plane symmetrised so
//     C2R sees Hermitian input, which reproduces numpy's irfft), the Gaussian
//     branch with radius and taps computed on the device from log sigma and
//     applied axis by axis from shared-memory tiles, and SPAR's statistics in
//     double, k, and an exact per-sample radix-select top-k with the CPU's tie
//     rule. No operation reads device memory back to the host except
//     TopKMask, whose k the interface passes from the host.
//   - CUDA graphs. `Backend.Capture(step)` records a step's launches into
//     a CUDA graph and `Graph.Launch` replays it; the backend implements
//     `tensor.StepCapturer` with it. `train.Run` uses it when the backend can
//     record (`uhno-cuda train --graph`, on by default; the CPU ignores it):
//     the first step runs directly and fills the training tape's pool, the
//     second records forward, loss and backward (the pool serves the same
//     buffers every time) and every later step is one graph launch plus the
//     AdamW update, which stays outside because its learning rate and bias
//     corrections change every step and are kernel arguments. The batch is
//     uploaded into two fixed device tensors before each replay (a host copy
//     from Go memory cannot be recorded) and the loss is read after it;
//     validation has its own tape so it never releases the recorded buffers.
//     `TestGraphStepMatchesDirect` checks this loop on the CPU with a backend
//     that records by keeping the step function and replays by calling it
//     (refusing host copies inside it, as capture does): weights, checkpoints
//     and every logged loss are the same bits as the direct loop, across a
//     stop and resume too. `TestGPUGraphMatchesDirect` runs the same check on
//     the CUDA backend, in CI under the emulator, whose capture records the
//     launches with their arguments and refuses synchronising calls; it found
//     Backward uploading its seed inside the recorded step (now uploaded once
//     per tape).
//   - Tests. Untagged, run in CI: launch geometry of every kernel
//     (grid limits, coverage of the index space, shared-memory budgets), the
//     allocator, the cuFFT loader's error path, the emulator itself. Tagged
//     `cuda || cudaemu`: every operation forward and backward in 1D, 2D and
//     3D against the CPU backend on random inputs with per-operation
//     tolerances, bit-for-bit determinism, graph capture and replay, and a
//     30-step Burgers training run whose loss curve must follow the CPU's.
//     CI runs them under the emulator (`make test` calls
//     scripts/emu_test.sh) once per thread order; `make cuda-test` builds
//     the same tests for the GPU into bin/cuda.test and bin/cuda-train.test.
//     CI also compile-checks and vets the `cuda` tag (`make vet-cuda`, with
//     headers unpacked by scripts/cuda_headers.sh).
//
// # Wavelet kernels (WNO)
//
// Cost. On the CPU each transform is a gather over lines, split over
// (sample, channel) planes. `WaveletMix` is split over output planes, and
// its weight gradient sums over the batch in float64. All are
// bit-identical for 1 or N threads. On CUDA (`kernels/wavelet.cu`), one
// `wv_step` launch does one (level, axis) step, ping-ponging through two
// scratch buffers; the last step writes the output or adds into dx. The
// three `wm_*` kernels are one thread per value or weight, with no atomics
// and no shared memory. Under the emulator every kernel gives the CPU's
// bits: the same float32 terms in the same order, `__fmul_rn`/`__fadd_rn`.
// The tests keep sum-bound tolerances for nvcc. `bench.Counter` counts
// 16·d FLOPs per corner point per level and direction for the transform,
// and 2·B·Cin·Cout·M^d for the mixing.
//
// # SpectralConv's frequency list and LowRankSpectralConv (LogLo-FNO, F-FNO)
//
// CUDA. There is one spectral convolution (internal/tensor's doc, "One
// spectral convolution"): `kernels/spectral.cu` serves FNO, U-HNO and
// LogLo-FNO through the same cuFFT R2C and C2R plans and scratch, the 1/∏N
// folded into the last mixing, and the DC-plane Hermitian part taken on the
// spectrum C2R transforms.
//
//   - The last-axis list: a table per (grid, list), uploaded on the first
//     call and cached until `Close`, gives the slot of each half-spectrum
//     frequency (−1 when not kept) and the frequency of each slot. For the
//     list 0..K−1 the slot of f is f, so FNO's arithmetic is unchanged.
//     `spectral_dw` runs over (corner, i, o, kept box, slot), takes D from
//     the slot's frequency and sums the batch in order inside the thread.
//   - LowRankSpectralConv (`internal/cuda/spectral_lowrank.go`): the rank
//     spectrum Zr = X U is the main mixing loop with scale 1 and no DC-plane
//     symmetrising; `spectral_mix_forward` then mixes Zr through V, scales
//     and symmetrises (the Hermitian part of the whole product). Backward:
//     dZr = G V^H (unscaled); `spectral_dw` gives dV from (Zr, G) and dU
//     from (X, dZr), each with D; `spectral_mix_adjoint` gives dx's
//     spectrum from (dZr, U), which C2R transforms and `spectral_accumulate`
//     adds.
//   - Nothing uses float atomics. Every output element, weight-gradient
//     entries included, is one thread's sum in a fixed order.
//
// Tests (`internal/cuda/spectral_test.go`, `spectral_list_test.go`, against
// the CPU backend under the emulator and on a GPU with `make cuda-test`):
// `TestSpectralConv` (0..K−1), `TestSpectralConvList` (LogModes lists at
// the paper's sizes, lists without DC, odd last axes, the top bin; y, dx
// and dw with stale outputs and pre-filled gradients, 2e-5 and 3e-5 of the
// largest |reference|), `TestSpectralConvEmptyList`,
// `TestSpectralConvBadList` (the lists the CPU refuses panic),
// `TestLowRankSpectralConv` and `...Unaligned` (ranks below, at and above
// the width, capped and odd axes; twice SpectralConv's tolerances), and
// `TestSameBitsUnderEveryThreadOrder`. A planted bug (the last mode dropped
// from the table) fails every case of `TestSpectralConvList`.
//
// # NCCL
//
// NCCL (GPUs). One rank per GPU: `uhno-cuda` takes the GPU of its
// node-local rank (`OMPI_COMM_WORLD_LOCAL_RANK`, `SLURM_LOCALID`, ...).
// Under a launcher with more than one rank, `cuda.Backend.JoinRanks` loads
// NCCL at run time (package `internal/cuda/nccl`, dlopen like cuFFT); the
// ranks first agree that every one of them loaded it (a rank without NCCL
// would leave the others waiting in `ncclCommInitRank` forever), then rank
// 0's `ncclUniqueId` is broadcast over MPI and each rank joins. Training's
// `Config.ReduceOnDevice` then sums the flat gradient in place on the
// stream and scales it by 1/N on the device; the loss terms, SPAR
// statistics and stop flag still take MPI's host path (a few floats). The
// wait after `ncclAllReduce` polls the stream and
// `ncclCommGetAsyncError`; a dead peer or `--dist-timeout` aborts the
// communicator (`ncclCommAbort`) and fails the step with one line. Where
// NCCL is missing on some rank, every rank falls back to MPI with host
// copies, and rank 0 says why. Spectral weights are stored as real pairs,
// so they all-reduce as float32 (GUIDE section 6: NCCL has no complex
// type). Tests: NCCL's loading and error paths (any machine); the device
// path of training with a stand-in reducer (`TestDataParallelReduceOnDevice`,
// where a planted missing 1/N fails); and under the CUDA emulator, whose
// device memory is host memory, `AllReduceSum` through the rank group
// (`TestAllReduceSumRanks`). NCCL has run on one rank of one H100
// (`TestNCCLOneRank`, docs/PERFORMANCE.md); a ring of several GPUs has not.
//
// # bf16 autocast
//
// The paper trains its 3D model under `torch.amp.autocast` with bfloat16
// (App. "3D-CFD Configuration", Tab. 3d-config). The CUDA backend has the
// same setting: `cuda.Backend.SetPrecision("bf16" | "fp32")`
// (internal/cuda/precision.go), chosen by `uhno train --precision`
// (cmd/uhno/precision.go). The default is bf16 for `cfd3d` on the CUDA
// backend and fp32 for every other task; the CPU backend computes in float32
// only, so `--precision bf16` there is a one-line error, and `cfd3d`'s
// default quietly stays fp32 there with a one-line note. The precision
// changes the arithmetic, so it belongs to the run, not to its run control:
// it is stored in the checkpoint's build record (`"precision"` in
// state.json's build), a resume keeps it, `--precision` on `--resume` is
// accepted only when it names the recorded value (otherwise refused, as
// `--batch` is), a checkpoint without the field (older versions) is an fp32
// run, and a bf16 run cannot be resumed by the CPU build. `uhno eval` and
// `uhno bench` compute in fp32 (the backend's default) whatever the
// checkpoint's precision; a bf16-trained model evaluated in fp32 is what
// PyTorch does outside an autocast region.
//
// What is in bf16. As PyTorch's autocast list puts matmul and conv in
// the lower precision, the dense products: Pointwise (1x1 channel mixing),
// ConvDown (the stride-2 kernel-3 convolution), Conv3 (the baselines' full
// kernel-3 convolution) and DepthwiseConv, each forward, input gradient and
// weight gradient. In each, both operands of every product are rounded to
// bfloat16 (round to nearest, ties to even) and the products are
// accumulated as in fp32: in float32 in the GEMM core (a tensor-core bf16
// GEMM also accumulates in float32; Pointwise, ConvDown and, since issue
// 37, Conv3) and in DepthwiseConv's direct loops, in double in its
// weight-gradient sums (as its fp32 kernel does). The rounding is in the kernels themselves: `bf16_round`, integer bit
// operations on the float's bits (no cuda_bf16.h), so the emulator runs the
// very code nvcc compiles; it is written once, in kernels/common.cuh, the
// header of the device helpers several kernel files share (with the
// periodic wrap and the kernel-3 tap geometry), which each file includes
// into its own PTX module; the GEMM core (kernels/gemm.cuh, included by
// dense.cu and conv3.cu, `gemm_mainloop`) rounds each 16 x 64 stage of both operands in shared
// memory after it is loaded, behind a second barrier; the direct loops
// round each operand as they read it. The setting is a last `int bf16`
// argument of each of those kernels, uniform over the grid (one PTX per
// kernel, no variants). A product of two bf16 values (8 significant bits
// each) is exact in float32, so nvcc's FMA contraction, which the emulator
// never does, cannot change a bf16 product; only the sums' rounding
// differs between the two, as in fp32.
//
// What stays float32, and why. Every tensor's storage (activations,
// the tape, weights, gradients: phase 1 rounds operands, it does not store
// bf16; see below), the master weights and AdamW (`adamw_step`), gradient
// accumulation (`+=` into float32 gradients), the bias gradients, the
// split-K and bias reductions, the FFTs (cuFFT has no bfloat16 transform,
// its half precision takes only power-of-two sizes, neuraloperator #322,
// and PyTorch's FFTs refuse bf16), the spectral mode mixing (complex
// products: autocast casts only real floating-point tensors, so a complex
// einsum stays complex64 under it), the Gaussian branch (a decision: its
// taps come from exp of log sigma and are normalised per radius, and its
// log-sigma gradient is a double reduction; PyTorch would run a conv-based
// implementation of it in bf16, so this is our one deviation from
// autocast's list, and it would be one more kernel argument), SPAR (its
// statistics are reductions, and its hard top-k would turn bf16's coarse
// ties into pixels moved between branches), MeanStd, GELU, sigmoid, ReLU,
// the losses (MSE, H1, CBC), finite differences and up-sampling (data
// movement), as autocast keeps reductions, norms, pointwise
// transcendentals and losses in float32. The baselines' wavelet mixing,
// band-limited resampling, stencil message passing and low-rank spectral
// mixing also stay float32 (not needed for cfd3d's U-HNO; each is one
// argument away).
//
// Tolerance. bfloat16 keeps 8 significant bits, unit roundoff u =
// 2^-8, so a rounded product is a(1+e) b(1+f), |e|, |f| <= u, and
//
//	|a~ b~ - a b| <= (2u + u^2) |a b|. A sum of K products therefore moves by
//
// at most (2u + u^2) sum_i |a_i b_i|. internal/cuda/bf16_test.go checks for
// every covered operation and output (forward, dx, dw; 1D, 2D, 3D; tiles
// and split-K crossed):
//
//  1. the bf16 result equals the CPU backend's float32 result on operands
//     rounded on the host (by `bf16Ref`, which picks the nearer of the two
//     neighbouring bf16 values in float64, not the kernels' carry trick)
//     within the fp32 tests' sum tolerance (denseSumTol): the operands are
//     rounded exactly as specified, both of them, and nothing else is;
//  2. |bf16 - fp32| <= 2.01 * 2^-8 * sum_i |a_i b_i| + 2 denseSumTol (the
//     sum of |a_i b_i| is the CPU's op on |operands|);
//  3. bf16 differs from fp32 in at least 90% of the elements and by more
//     than 2^-16 max sum|a b| (the two runs are the same kernels in the same
//     order, so without the rounding they are the same bits);
//  4. the bias gradients are the same bits as in fp32.
//
// Measured worst |bf16 - fp32| / sum |a b| (bound 2.01 * 2^-8 = 0.00785):
//
//	| op            | forward | dx      | dw       |
//	|---------------|---------|---------|----------|
//	| Pointwise     | 0.00604 | 0.00455 | 0.00122  |
//	| ConvDown      | 0.00167 | 0.00389 | 0.00207  |
//	| Conv3         | 0.00258 | 0.00247 | 0.000882 |
//	| DepthwiseConv | 0.00423 | 0.00345 | 0.000496 |
//
// `TestBF16Round` checks `bf16_round` (through a test kernel) on known
// values: ties to even both ways, just above and below a tie, negative
// values, signed zero, subnormals and the carry from the largest subnormal
// into the smallest normal, the largest float32 overflowing to Inf, Inf,
// NaN (a NaN whose payload lies only in the dropped bits stays NaN), then
// 200,000 random bit patterns against `bf16Ref`. The thread-order test
// (`TestSameBitsUnderEveryThreadOrder`) runs Pointwise and ConvDown in bf16
// too (the rounding pass sits between barriers of its own).
// `TestGPUBF16LossFollowsFP32` (internal/train) trains a tiny Burgers FNO and
// U-HNO for 30 AdamW steps in fp32 and in bf16 on the CUDA backend: step 1
// (same weights) within 2^-8 relative (measured 6e-5 FNO, 2.4e-4 U-HNO),
// steps 1 to 10 within 1e-2 (measured 6.9e-4, 4.2e-3), every step within
// 5e-2 for FNO (measured 1.5e-2) and 0.3 for U-HNO (measured 0.19 at one
// step: after a few steps the weights differ by AdamW's normalised updates
// of slightly different gradients, and U-HNO's hard top-k turns near-ties
// into whole pixels moved between branches); every bf16 loss must differ
// from the fp32 one.
//
// Planted bugs, each failing the suite (`go test -tags cudaemu -run BF16
// ./internal/cuda ./internal/train`): the GEMM ignoring the flag (check 1:
// "forward: element 0 is 1.1296 in bf16, 1.1179 on the CPU from
// bf16-rounded operands"), only one GEMM operand rounded (check 1), Conv3's
// dx not rounding dy (check 1), truncation instead of rounding and ties
// away from zero (TestBF16Round's known values and random patterns), and
// SetPrecision("bf16") doing nothing (the training test: "the bf16 loss
// equals the fp32 loss at 30 of 30 steps").
//
// What this is not, yet. Its tests pass under the emulator and passed on
// one H100 (docs/PERFORMANCE.md); its speed has not been measured. It reproduces autocast's numerics, not its speed: the kernels still
// multiply float32 values on the CUDA cores (now bf16-valued ones), plus a
// rounding pass, so bf16 is slightly slower than fp32 on a GPU. The speed
// needs the GEMM core on tensor cores (`mma.sync` m16n8k16 bf16, inline PTX
// the emulator would have to implement per the warp's fragment layout) and
// bf16 storage.
//
// # bf16 storage: what it would take
//
// Phase 2, bf16 storage (not started). Halving the tape's memory
// (`uhno train --dry-run` prints the peak with the tape in bf16,
// bench.Planner's PeakBF16) needs activations stored in bf16, which
// touches every layer of the stack:
//
//   - a dtype on storage: `cuda.Buf` and `tensor.Tensor` are float32 by
//     construction (Alloc(n) counts floats, views offset by 4 bytes,
//     Upload/Download copy float32); bf16 tensors need an element size in
//     the allocator's requests and views, and host conversion in
//     Upload/Download (ToHost, checkpoints' weights stay float32);
//   - where values turn bf16: autocast's outputs of the covered ops are bf16
//     tensors, so the GEMM and convolution epilogues write bf16, and every
//     consumer of such a tensor reads bf16: GELU, the SPAR route, the
//     up-sampling, the FFT's input (cuFFT needs float32: a conversion pass or
//     a fused load), the Gaussian branch, the skip connections' copies and
//     adds, the losses; each of those kernels needs a bf16-input variant
//     (a template on the element type, so one source; several dozen kernels,
//     PTX and emulator table entries doubled);
//   - gradients: PyTorch keeps the gradient of a bf16 activation in bf16;
//     keeping activation gradients float32 while storing only the tape's
//     saved inputs in bf16 is the smaller change and halves most of the
//     tape (the saved inputs dominate it);
//   - the tape: it decides the dtype of each saved tensor; the backward
//     kernels read bf16 saved inputs (loaders converting on load, as
//     `round_stage` rounds today);
//   - SPAR: keep scores float32 (bf16's ties would move many pixels);
//   - tests: the CPU reference would have to round stored activations too,
//     and errors then compound through layers, so the per-op exactness check
//     stays but whole-model tolerances grow with depth;
//   - CUDA graphs: the pool's buffer sizes change, nothing else.
//
// A few days' work with the emulator; the tensor-core GEMM is a separate
// step with its own emulator support.
//
// # Checking on a GPU: the kit
//
// Every kernel test passes under the emulator, so a GPU session confirms
// and measures rather than debugs. A loan is about 15 minutes of device
// time in all (machine start included), at most 10 minutes a command, 64
// MiB carried, 8 files of 16 MiB brought back; so the whole session is one
// prepared call (issue 24):
//
//  1. Here: `make gpu-kit` (scripts/gpu_kit.sh). It builds `bin/uhno-cuda`,
//     `bin/cuda.test`, `bin/cuda-train.test` and, when
//     internal/cuda/nccl has tests, `bin/nccl.test`: `-tags cuda`, stripped,
//     HDF5 static, and no nvcc run (`ptx-check` runs TestPTXMatchesKernels
//     instead of a file dependency on kernels/*.cu, whose mtime a fresh clone
//     may make newer than the PTX; `make kernels` regenerates). `readelf -d`
//     must show only libcuda.so.1, libm, libc and libdl (libdl: HDF5 and the
//     dlopen of cuFFT and NCCL; libpthread is also allowed, for older
//     glibc). It fills the ignored `.gpukit/`: the yardstick (bench_torch.py,
//     uhno_torch.py), `train.args` (the GPU training run's arguments: burgers,
//     0.62M, 200 steps, 64+16 trajectories), its data and its CPU log
//     `train-cpu.log.jsonl`, uhno's CPU bench JSON for burgers and ns2d at
//     0.62M and from them `torch-<task>.flags`, bench_torch.py's matched
//     sizes (burgers: C0 10, FNO width 58, 1 channel, N 128, batch 32; ns2d:
//     C0 3, FNO width 16, 10 input frames, 64x64, batch 16). It prints the
//     device command, the carry list and their size.
//  2. There, in one call (timeout_s 540 or more), carrying
//     `bin/uhno-cuda bin/cuda.test bin/cuda-train.test bin/nccl.test .gpukit`:
//     `GPU_CHECKS_DEADLINE=480 bash scripts/gpu_checks.sh` (the second loan,
//     on an H200, took 348 s of 500 with every step). Each step runs
//     under `timeout` of the smaller of its cap and the time left (12 s are
//     kept for the exit trap) and is recorded as ok, failed, timed_out or
//     skipped (too little time left, or the machine lacks its tool: ptxas,
//     torch, compute-sanitizer, ncu; a sanitizer or ncu refusing the device is
//     "skipped" too). Order, by priority (cap in s): environment (nvidia-smi;
//     finds libcufft.so* and libnccl.so* via ldconfig, the python
//     site-packages' nvidia/*/lib, /usr/local/cuda*, and exports
//     `UHNO_CUFFT`/`UHNO_NCCL`; 20); `ptxas -arch=sm_90 -v` over every
//     committed PTX (errors, registers, spills; 60); `uhno-cuda doctor` (30);
//     `cuda.test -test.v` (150), and on failure the failing tests again with
//     `CUDA_LAUNCH_BLOCKING=1 -test.failfast` (60) and memcheck on the first
//     alone (60); `cuda-train.test -test.run GPU` (90); `nccl.test` (30);
//     `uhno-cuda bench --task burgers|ns2d --params 0.62M` (60 each), each
//     beside torch eager at the matched sizes (60 each); the GPU training run
//     of `train.args` (90) against the CPU log; torch.compile for both tasks
//     (120 each); ncu's `gpu__time_duration` per kernel over 3 training steps
//     with `--graph=false --clock-control none` (60); the same training run
//     with `--graph=false` (90); compute-sanitizer memcheck with
//     `UHNO_ALLOC_EXACT=1` on one test per kernel file (90) and racecheck on
//     the shared-memory kernels' tests (75); then, added for the second loan,
//     `bench --preset cost-ns2d --params 0.62M` (every model at Table cost's
//     shape; 150), `bench --preset burgers` (the text's 6.7M; 60), `bench
//     --task cfd3d --batch 1` (the text's 3D size; 0.62M cannot be met in
//     3D; 90), an older uhno-cuda carried xz-compressed (`GPU_KIT_OLD=FILE
//     make gpu-kit`) benched alternately with this one on burgers and ns2d
//     (45 each), and a 2,000-step run of `train-long.args` against its CPU
//     log (90). Section 5a, added for the fourth loan (issue 37), runs
//     after NCCL: the card's peaks (scripts/gpu_peaks.py: a 1 GiB copy,
//     float32 and bf16 matrix products with torch; 60), Table cost's shape
//     and Burgers at 0.62M with this binary, the older one, and this one
//     again (`cost-new`, `cost-old`, `cost-new2`; 120 each), the two device
//     faults (`fault-oom`: a step the memory plan puts beyond the card must
//     stop in one line; `fault-kill`: SIGKILL inside a checkpoint save and
//     by the clock, each resumed, compared bit for bit with an uninterrupted
//     run), ncu per model at Table cost's shape (`ncu-<model>`, 45 each),
//     the text's sizes (`bench-text`) and cfd3d in fp32 and bf16.
//     `GPU_CHECKS_SKIP` (a regex of step names) leaves steps out, as
//     `GPU_CHECKS_ONLY` keeps them. scripts/roofline.py turns a summary
//     into PERFORMANCE's roofline and per-model kernel tables. Work files
//     go to /tmp/gpu-kit.
//  3. What comes back: `$OUT/summary.json` and `$OUT/logs.tgz`, nothing else,
//     written by an EXIT trap however the run ends (scripts/gpu_kit.py
//     assembles the summary; without python3 the shell writes the step table).
//     summary.json has per step name, status, seconds and exit code; the
//     GPU and driver; the libraries found; ptxas's errors, spills and largest
//     register counts; pass/fail counts of each test binary (failing names,
//     the test running at a crash); per task the ms per training and
//     inference step of uhno-cuda, torch eager and torch.compile, with the
//     flags used; the training run's steps/s, final and validation loss, the
//     largest relative difference from the CPU curve at matched steps, and the
//     graph's speed-up over `--graph=false`; sanitizer error and hazard
//     counts; ncu's top kernels by time; `more_bench` (every other bench
//     JSON, by name) and `train_long`. The exit status is the number of
//     failed or timed-out steps.
//  4. Rehearsal, here, with no GPU: `make gpu-kit-rehearsal`
//     (scripts/gpu_kit_rehearsal.sh) runs the same script against
//     `bin/uhno-emu` and the cudaemu test binaries with a 120 s deadline,
//     caps scaled by 0.25 and a step forced to hang (`GPU_KIT_HANG=4`), and
//     checks that summary.json is valid JSON, the hang is cut off and
//     reported timed_out, later steps are skipped at the deadline, and
//     logs.tgz is written. CI runs the short form (`REHEARSAL_SHORT=1`,
//     45 s, no .gpukit).
package cuda
