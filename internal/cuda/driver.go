//go:build cuda || cudaemu

package cuda

import (
	"time"
	"unsafe"

	"uhno/internal/cuda/cufft"
	"uhno/internal/dist"
)

// driver is everything the backend asks of CUDA: memory, copies, kernel
// launches by name, the stream, graph capture and cuFFT. It is the seam
// between the backend's own logic (plans, geometry, the caching
// allocator, graph replay, op orchestration), which is the same code in
// every build, and what executes it:
//
//   - realDriver (build tag cuda, driver_cuda.go): the CUDA driver API
//     through gorgonia.org/cu, the embedded PTX, and cuFFT loaded at run
//     time by internal/cuda/cufft;
//   - emuDriver (build tag cudaemu, driver_emu.go): internal/cuda/emu, which
//     runs the same kernels/*.cu, compiled as C++ by the host compiler, on
//     the CPU under an emulation of CUDA's execution model, with FFTW for
//     cuFFT. It needs no CUDA headers, no nvcc and no GPU, so CI runs every
//     kernel test under it.
//
// Every call is ordered on the driver's one stream. Addresses are device
// addresses as plain integers (uintptr).
type driver interface {
	// Describe names the device for doctor and logs.
	Describe() string
	// Malloc and Free are raw device memory; the backend serves its
	// tensors from a caching allocator (internal/cuda/alloc) on top.
	Malloc(bytes int64) (uintptr, error)
	Free(p uintptr) error
	// MemInfo is the device's free and total memory in bytes
	// (cuMemGetInfo; the emulator: its $UHNO_EMU_MEMORY limit).
	MemInfo() (free, total int64, err error)
	// ExactSizes asks the caching allocator for blocks of exactly the
	// requested size instead of size classes, so that the emulator's guard
	// pages sit right at the end of every tensor.
	ExactSizes() bool
	// HtoD copies bytes from host memory into the device; the host memory
	// may be reused once it returns. DtoH waits for the stream and copies
	// back. DtoD and MemsetD32 (n 32-bit words of value v) are enqueued.
	HtoD(dst uintptr, src unsafe.Pointer, bytes int64) error
	DtoH(dst unsafe.Pointer, src uintptr, bytes int64) error
	DtoD(dst, src uintptr, bytes int64) error
	MemsetD32(dst uintptr, v uint32, n int64) error
	// HasKernel reports whether a kernel of that name is loaded.
	HasKernel(name string) bool
	// Launch enqueues kernel `name` with geometry g and its parameters,
	// each in an 8-byte slot (a pointer, a 32-bit int or float in the low
	// bytes, a float64); kinds has one letter a slot saying which (p, i,
	// f, d), for a driver that can check them against the kernel's
	// signature (the emulator; the GPU's driver cannot).
	Launch(name string, g Geometry, args []uint64, kinds string) error
	// Sync waits for the stream to drain.
	Sync() error
	// CaptureBegin starts recording the stream's work into a graph;
	// CaptureEnd stops it and returns the instantiated graph. Between the
	// two nothing runs, and a synchronising call fails.
	CaptureBegin() error
	CaptureEnd() (driverGraph, error)
	// FFTPlan creates a cuFFT plan for `batch` packed transforms of shape
	// n (outermost first) in direction typ, bound to the stream; FFTExec
	// runs it from in to out (cuFFT's conventions: unnormalised, the C2R
	// input may be overwritten).
	FFTPlan(n []int, batch int, typ cufft.Type) (fftPlan, error)
	FFTExec(p fftPlan, in, out uintptr) error
	FFTDestroy(p fftPlan) error
	// JoinRanks makes the driver one rank of the data-parallel group c
	// (collective.go); AllReduceSum then sums n float32 at device address
	// p over the ranks in place, after the stream's work, and waits for
	// it, for at most timeout.
	JoinRanks(c dist.Comm, timeout time.Duration) error
	AllReduceSum(p uintptr, n int) error
	// Close releases the stream and the context (the backend has freed
	// its memory and plans first).
	Close() error
}

// driverGraph is an instantiated graph (Backend.Capture).
type driverGraph interface {
	// Launch replays the graph on the stream.
	Launch() error
	// Destroy releases it.
	Destroy() error
}

// fftPlan is a driver's handle of a cuFFT plan.
type fftPlan int64
