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
//   - NVIDIA's libraries are loaded at run time (internal/cuda/dlib):
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
//     float32 (docs/DESIGN.md, "bf16 autocast").
//   - Numerics follow the CPU backend (internal/cpu), the reference each
//     kernel is tested against on random inputs (the tests tagged
//     `cuda || cudaemu`: built with `go test -c -tags cuda` and run on the
//     GPU machine, or run under the emulator with `-tags cudaemu`).
package cuda
