// Package emu is a CPU emulator of CUDA's execution model that runs the
// project's CUDA kernels, kernels/*.cu, unchanged: the same source files
// nvcc compiles to PTX are compiled here as C++ by the host compiler
// (k_*.cc include them after cudaemu.h) and launched by name through a
// generated table (table_gen.cc, written by `go generate`).
//
// The CUDA backend (internal/cuda) reaches it through its driver seam
// under the build tag `cudaemu`, so every kernel test of that package runs
// in CI on a machine without a GPU. See runtime.cc for the execution
// model; in short:
//
//   - each CUDA thread is a fiber; a block's threads run one after another
//     between barriers, in forward, reverse or seeded shuffled order
//     (SetOrder), so a missing __syncthreads or a race on shared memory
//     changes the result under another order;
//   - warp collectives (__ballot_sync, __match_any_sync, shuffles) wait
//     for every lane of their mask, as in lockstep;
//   - every device allocation lies between PROT_NONE guard pages and ends
//     right at the trailing one (allocations whose size is not a multiple
//     of 4 bytes keep up to 3 bytes of slack), with canary bytes in the
//     slack and before the start that are checked after every launch: an
//     out-of-range read or write past the end stops the process with a
//     message naming the kernel, the launch, the block and thread and the
//     allocation, and a write into a canary fails the launch;
//   - launches are checked as the driver would not: the parameter count
//     and each parameter's kind against the kernel's C++ signature, every
//     pointer parameter against the live allocations, the geometry and the
//     dynamic shared memory against the hardware limits;
//   - cuFFT's R2C and C2R transforms are FFTW's (single precision), with
//     cuFFT's packed layouts and no normalisation.
//
// What it cannot show: speed, the PTX the driver JIT-compiles and the
// driver's own behaviour, and memory ordering between warps and between
// blocks (a block's threads never truly run at the same time here).
//
// Global state: the emulated device is one per process, like a CUDA
// context; its settings (SetOrder, SetWorkers) are process-wide.
//
// # Why, and how it works (tag cudaemu)
//
// The GPU is lent to this project rarely and for 30 minutes; forty-odd
// kernels cannot be debugged from zero in that time. So the CUDA backend
// also runs, unchanged, on the CPU: `go test -tags cudaemu ./internal/cuda`
// runs every kernel test there, and CI does so on every run. The GPU then
// only has to confirm and measure.
//
//   - One kernel source, two compilers. The emulator compiles the same
//     kernels/*.cu as C++17 with the host compiler: each file is included by a
//     generated wrapper (internal/cuda/emu/k_NAME.cc) after cudaemu.h, the one
//     header that provides CUDA's execution model (qualifiers, built-in
//     variables, `__syncthreads`, warp collectives, atomics, vector types, the
//     `__f*_rn` and bit intrinsics). No kernel is written twice and none
//     needed a change. Each file sits in a namespace of its own, so helpers
//     of the same name in two files stay apart, as in their PTX modules.
//     Launches dispatch by name through a table generated from the sources
//     (`go generate ./internal/cuda/emu`, run by `make test`; a test fails
//     when the generated files are stale). The wrappers carry each kernel
//     file's SHA-256, because the Go build cache does not see a change in a
//     file cgo reaches through `#include` from outside the package.
//   - Execution model. Blocks run on a pool of worker threads (they are
//     independent, so placement cannot change a result). Inside a block every
//     CUDA thread is a fiber with its own 128 KiB stack (a 20-instruction
//     context switch on x86-64, ucontext elsewhere) that runs until it ends
//     or reaches `__syncthreads` or a warp collective. Between barriers the
//     runnable threads run in forward, reverse or seeded shuffled order
//     (`UHNO_EMU_ORDER=forward|reverse|shuffle:SEED`). Warp collectives
//     (`__ballot_sync`, `__match_any_sync`, `__any/__all_sync`, shuffles,
//     `__syncwarp`) wait until every lane of the mask has arrived, then each
//     lane reads a snapshot of all deposits: lockstep where the code asks
//     for it, independent thread scheduling (Volta's model) elsewhere. A
//     collective some lane never reaches (it exited, or waits at
//     `__syncthreads`), or lanes at different collectives, fails the launch
//     naming the warp and lanes. `__shared__` is `thread_local`: one copy
//     per worker, shared by the block's fibers. Dynamic shared memory is a
//     per-worker 48 KiB array (the limit without opting in); the launch checks
//     the requested size and fills it with NaN bytes before each block.
//   - Making bugs visible. Device memory is host memory between
//     PROT_NONE guard pages; each allocation ends right at the trailing guard
//     (its start aligned to the largest power of two up to 16 that divides
//     its size, so float buffers of any length end there and float2 buffers
//     stay 8-byte aligned; a size that is not a multiple of 4 keeps up to 3
//     bytes of slack), and the slack and the 64 bytes before the start hold a
//     NaN canary checked after every launch and at free. A kernel that loads
//     a float4 from a buffer whose length is not a multiple of 4 floats would
//     fault here on alignment where a GPU's 256-byte-aligned allocation would
//     not; no kernel does. The backend's caching allocator asks for exact
//     sizes under the emulator (`alloc.NewExact`), so the guard sits at the
//     end of the tensor, not after a size class's slack. A read or write into
//     a guard page stops the process with one line naming the kernel, the
//     launch number and geometry, the block and thread, read or write, and
//     how far past which allocation it landed; a write into the slack fails
//     the launch with the same names. Fresh device memory is NaN, so a read
//     of memory nobody wrote shows up. Launches are also checked as no driver
//     does: the parameter count, each parameter's kind (the backend packs
//     `p`, `i`, `f`, `d`; the emulator derives the kernel's kinds from its C++
//     signature by template), every pointer parameter against the live
//     allocations, ints beyond 32 bits, the grid and block limits, and the
//     dynamic shared memory. Copies and memsets must lie inside one
//     allocation. `TestSameBitsUnderEveryThreadOrder` runs every operation
//     forward and backward under four orders and requires identical bits; CI
//     runs the whole suite once per order.
//   - cuFFT is FFTW in single precision (`libfftw3-dev`) behind the same
//     plan/exec calls: batched packed R2C/C2R of rank 1 to 3, unnormalised,
//     the C2R input destroyed, as cuFFT does; a test checks R2C against a
//     direct DFT and C2R(R2C(x)) = prod(N) x in 1D, 2D and 3D.
//   - The whole CLI. `make emu` builds bin/uhno-emu, whose commands run
//     on the emulated CUDA backend (cmd/uhno/backends_emu.go): `uhno-emu
//     train` takes the GPU build's path, CUDA-graph replay included. It is
//     slow (a 60k-parameter Burgers U-HNO trains at about one step a second
//     on 2 cores) and meant for debugging the GPU path without a GPU.
//   - Graphs. The emulated driver runs each call when it is made; while
//     capturing it records launches (arguments copied), device copies,
//     memsets and FFT executions instead, and refuses host copies and
//     stream synchronisation, invalidating the capture as the driver does.
//   - What it cannot check. Speed (emulated threads run one at a time,
//     so the suite keeps its shapes small; times say nothing about a GPU). The PTX the driver
//     JIT-compiles, nvcc's code generation (FMA contraction, which nvcc does
//     by default and the emulator never does; fast-math intrinsics, which are
//     exact here), and the driver's own behaviour (its error codes, what
//     capture accepts beyond copies and synchronisation). Memory ordering
//     between warps and between blocks: a block's threads never truly run at
//     the same time here, blocks do not share data, and `__threadfence` is a
//     host fence; a kernel that relies on inter-block communication or on the
//     GPU's memory model is not tested by it. Reads of static `__shared__`
//     arrays before any write (they keep the previous block's values rather
//     than NaN). Bank conflicts, occupancy, register pressure. Those are what
//     `scripts/gpu_checks.sh` (compute-sanitizer memcheck and racecheck,
//     the kernel tests on the GPU, timings) remains for.
//   - Planted bugs. The note of issue 11 shows, with commands and output,
//     that an off-by-one index in the GEMM core, a removed `__syncthreads` in
//     a shared-memory reduction, a write one element past an output buffer
//     and a wrong sign in a backward kernel each fail the emulated suite.
package emu
