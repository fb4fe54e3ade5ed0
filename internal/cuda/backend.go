//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
#include <stdint.h>

// launch calls cuLaunchKernel with n 8-byte parameter slots held in C
// memory (args), so no Go pointer is passed to C.
static CUresult uhno_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s,
		uint64_t *args, void **argp, int n) {
	for (int i = 0; i < n; i++) argp[i] = &args[i];
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, argp, NULL);
}

static const char *uhno_error_name(CUresult r) {
	const char *s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL) return "unknown CUresult";
	return s;
}
*/
import "C"

import (
	"embed"
	"fmt"
	"io/fs"
	"math"
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"uhno/internal/cuda/alloc"
	"uhno/internal/cuda/cufft"
	"uhno/internal/tensor"
)

//go:embed ptx/*.ptx
var ptxFiles embed.FS

// Buf is device storage: n float32 values at ptr. A view shares its
// parent's memory and is never freed itself.
type Buf struct {
	ptr  cu.DevicePtr
	n    int
	view bool
}

// Len implements tensor.Storage.
func (b *Buf) Len() int { return b.n }

// Ptr is the device address.
func (b *Buf) Ptr() cu.DevicePtr { return b.ptr }

// maxArgs bounds a kernel's parameter count.
const maxArgs = 32

// Backend is the CUDA implementation of tensor.Backend. It is not safe for
// concurrent use: a training loop drives it from one goroutine, and every
// method first makes its context current on the calling OS thread.
type Backend struct {
	dev    cu.Device
	ctx    cu.CUContext
	stream cu.Stream
	fns    map[string]cu.Function
	mem    *alloc.Cache
	fft    *cufft.Lib

	// state holds per-operation caches (FFT plans, kernel tables) by the
	// operation's name; closers release them in Close.
	state   map[string]any
	closers []func() error

	// args and argp are C memory for kernel parameters (maxArgs slots).
	args *C.uint64_t
	argp *unsafe.Pointer

	// scratch is reusable device memory for operations that need it
	// (complex spectra, per-sample statistics), grown on demand.
	scratch map[string]*Buf
}

var _ tensor.Backend = (*Backend)(nil)

// deviceMem adapts cuMemAlloc/cuMemFree to alloc.Device.
type deviceMem struct{}

func (deviceMem) Malloc(n int64) (uintptr, error) {
	p, err := cu.MemAlloc(n)
	return uintptr(p), err
}

func (deviceMem) Free(p uintptr) error { return cu.MemFree(cu.DevicePtr(p)) }

// New opens GPU `ordinal`, creates its context and stream, loads every
// embedded PTX module and cuFFT. Errors name what failed.
func New(ordinal int) (*Backend, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d requested, %d present", ordinal, n)
	}
	dev := cu.Device(ordinal)
	ctx, err := dev.MakeContext(cu.SchedAuto)
	if err != nil {
		return nil, fmt.Errorf("cuda: context on device %d: %w", ordinal, err)
	}
	b := &Backend{dev: dev, ctx: ctx, fns: map[string]cu.Function{}, state: map[string]any{}, scratch: map[string]*Buf{}}
	if b.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return nil, fmt.Errorf("cuda: stream: %w", err)
	}
	if err := b.loadModules(); err != nil {
		return nil, err
	}
	if b.fft, err = cufft.Load(); err != nil {
		return nil, err
	}
	b.mem = alloc.New(deviceMem{})
	b.args = (*C.uint64_t)(C.malloc(C.size_t(8 * maxArgs)))
	b.argp = (*unsafe.Pointer)(C.malloc(C.size_t(unsafe.Sizeof(uintptr(0)) * maxArgs)))
	return b, nil
}

// loadModules loads every embedded PTX file and indexes its kernels by
// name (kernel names are unique across files: each is prefixed with its
// operation).
func (b *Backend) loadModules() error {
	files, err := fs.Glob(ptxFiles, "ptx/*.ptx")
	if err != nil || len(files) == 0 {
		return fmt.Errorf("cuda: no embedded PTX (run make kernels)")
	}
	sort.Strings(files)
	for _, f := range files {
		src, err := ptxFiles.ReadFile(f)
		if err != nil {
			return fmt.Errorf("cuda: %s: %w", f, err)
		}
		mod, err := cu.LoadData(string(src))
		if err != nil {
			return fmt.Errorf("cuda: loading %s: %w", f, err)
		}
		for _, name := range ptxEntries(string(src)) {
			fn, err := mod.Function(name)
			if err != nil {
				return fmt.Errorf("cuda: %s: kernel %s: %w", f, name, err)
			}
			if _, dup := b.fns[name]; dup {
				return fmt.Errorf("cuda: kernel %s defined twice (%s)", name, f)
			}
			b.fns[name] = fn
		}
	}
	return nil
}

// ptxEntries lists the .entry names of a PTX module (extern "C" kernels,
// so the names are the C names).
func ptxEntries(src string) []string {
	var names []string
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, ".visible .entry "); ok {
			if i := strings.IndexByte(rest, '('); i > 0 {
				names = append(names, rest[:i])
			}
		}
	}
	return names
}

// bind makes the backend's context current on this OS thread. Callers
// hold the thread (enter, or runtime.LockOSThread) so that the driver
// calls that follow run on the same thread.
func (b *Backend) bind() {
	if err := cu.SetCurrentContext(b.ctx); err != nil {
		panic(fmt.Sprintf("cuda: set context: %v", err))
	}
}

// enter locks the calling goroutine to its OS thread and binds the
// context; the returned function unlocks. Every method that calls the
// driver starts with `defer b.enter()()`: a goroutine may otherwise move
// to another thread between two cgo calls and find no context there.
// Locks nest, so methods may call each other.
func (b *Backend) enter() func() {
	runtime.LockOSThread()
	defer b.enter()()
	return runtime.UnlockOSThread
}

// Close releases the cached memory, the FFT plans and the context.
func (b *Backend) Close() error {
	defer b.enter()()
	var err error
	for _, c := range b.closers {
		if cerr := c(); err == nil {
			err = cerr
		}
	}
	if rerr := b.mem.Release(); err == nil {
		err = rerr
	}
	C.free(unsafe.Pointer(b.args))
	C.free(unsafe.Pointer(b.argp))
	if derr := b.ctx.Destroy(); err == nil && derr != nil {
		err = derr
	}
	return err
}

// Name implements tensor.Backend.
func (b *Backend) Name() string { return "cuda" }

// Device describes the GPU for `uhno-cuda doctor`.
func (b *Backend) Device() string {
	name, _ := b.dev.Name()
	mem, _ := b.dev.TotalMem()
	return fmt.Sprintf("%s, %.1f GiB", name, float64(mem)/(1<<30))
}

// Memory reports the allocator's counters (PeakBytes is the device
// high-water mark `uhno bench` prints).
func (b *Backend) Memory() alloc.Stats { return b.mem.Stats() }

// PeakBytes is the allocator's device high-water mark.
func (b *Backend) PeakBytes() int64 { return b.mem.Stats().Peak }

// arg is one kernel parameter: a device pointer, an int (passed as a
// 32-bit int) or a float32.
type arg = any

// launch runs kernel `name` on the stream with the given geometry and
// parameters. A launch error is a programming error (bad geometry, a
// kernel missing from the PTX) and panics with the kernel's name.
func (b *Backend) launch(name string, g Geometry, args ...arg) {
	fn, ok := b.fns[name]
	if !ok {
		panic(fmt.Sprintf("cuda: kernel %s is not in the embedded PTX", name))
	}
	if len(args) > maxArgs {
		panic(fmt.Sprintf("cuda: kernel %s: %d parameters, at most %d", name, len(args), maxArgs))
	}
	slots := unsafe.Slice((*uint64)(unsafe.Pointer(b.args)), maxArgs)
	for i, a := range args {
		switch v := a.(type) {
		case *Buf:
			if v == nil {
				slots[i] = 0
			} else {
				slots[i] = uint64(v.ptr)
			}
		case cu.DevicePtr:
			slots[i] = uint64(v)
		case int:
			slots[i] = uint64(uint32(int32(v)))
		case float32:
			slots[i] = uint64(math.Float32bits(v))
		case float64:
			slots[i] = math.Float64bits(v)
		default:
			panic(fmt.Sprintf("cuda: kernel %s: parameter %d has type %T", name, i, a))
		}
	}
	defer b.enter()()
	res := C.uhno_launch(fnHandle(fn),
		C.uint(g.Grid.X), C.uint(g.Grid.Y), C.uint(g.Grid.Z),
		C.uint(g.Block.X), C.uint(g.Block.Y), C.uint(g.Block.Z), C.uint(g.Shared),
		streamHandle(b.stream), b.args, b.argp, C.int(len(args)))
	if res != C.CUDA_SUCCESS {
		panic(fmt.Sprintf("cuda: launching %s (grid %v, block %v, shared %d): %s", name, g.Grid, g.Block, g.Shared, C.GoString(C.uhno_error_name(res))))
	}
}

// fnHandle and streamHandle extract the driver handles from gorgonia's
// wrappers, single-field structs holding the C handle (gorgonia's own C
// types are not visible outside its package).
func fnHandle(f cu.Function) C.CUfunction { return *(*C.CUfunction)(unsafe.Pointer(&f)) }
func streamHandle(s cu.Stream) C.CUstream { return *(*C.CUstream)(unsafe.Pointer(&s)) }

// StreamHandle is the raw CUstream, for cuFFT's SetStream.
func (b *Backend) StreamHandle() uintptr { return uintptr(unsafe.Pointer(streamHandle(b.stream))) }

// buf returns the device storage of a tensor (nil for a nil tensor).
func buf(t *tensor.Tensor) *Buf {
	if t == nil {
		return nil
	}
	return t.Data.(*Buf)
}

// Alloc implements tensor.Backend: zero-filled device memory from the cache.
func (b *Backend) Alloc(n int) tensor.Storage {
	defer b.enter()()
	p, err := b.mem.Get(int64(max(n, 1)) * 4)
	if err != nil {
		panic(fmt.Sprintf("cuda: Alloc(%d floats): %v", n, err))
	}
	s := &Buf{ptr: cu.DevicePtr(p), n: n}
	b.Zero(s)
	return s
}

// Free implements tensor.Backend: the block goes back to the cache (views
// are not freed). The stream is ordered, so a block freed after its last
// use and reused by a later launch is safe.
func (b *Backend) Free(s tensor.Storage) {
	if s == nil {
		return
	}
	v := s.(*Buf)
	if v.view || v.ptr == 0 {
		return
	}
	b.mem.Put(uintptr(v.ptr))
	v.ptr, v.n = 0, 0
}

// View implements tensor.Backend.
func (b *Backend) View(s tensor.Storage, off, n int) tensor.Storage {
	v := s.(*Buf)
	if off < 0 || n < 0 || off+n > v.n {
		panic(fmt.Sprintf("cuda: View [%d, %d) of %d values", off, off+n, v.n))
	}
	return &Buf{ptr: v.ptr + cu.DevicePtr(4*off), n: n, view: true}
}

// Upload implements tensor.Backend (synchronous with respect to the host
// slice: it is copied before Upload returns).
func (b *Backend) Upload(dst tensor.Storage, src []float32) {
	if len(src) == 0 {
		return
	}
	defer b.enter()()
	d := dst.(*Buf)
	if len(src) > d.n {
		panic(fmt.Sprintf("cuda: Upload of %d values into %d", len(src), d.n))
	}
	if err := cu.MemcpyHtoDAsync(d.ptr, unsafe.Pointer(&src[0]), int64(4*len(src)), b.stream); err != nil {
		panic(fmt.Sprintf("cuda: Upload: %v", err))
	}
	b.sync()
}

// Download implements tensor.Backend; it waits for the stream.
func (b *Backend) Download(dst []float32, src tensor.Storage) {
	if len(dst) == 0 {
		return
	}
	defer b.enter()()
	s := src.(*Buf)
	if len(dst) > s.n {
		panic(fmt.Sprintf("cuda: Download of %d values from %d", len(dst), s.n))
	}
	if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), s.ptr, int64(4*len(dst)), b.stream); err != nil {
		panic(fmt.Sprintf("cuda: Download: %v", err))
	}
	b.sync()
}

// sync waits for the stream to drain.
func (b *Backend) sync() {
	if err := b.stream.Synchronize(); err != nil {
		panic(fmt.Sprintf("cuda: stream: %v", err))
	}
}

// Zero implements tensor.Backend.
func (b *Backend) Zero(s tensor.Storage) {
	v := s.(*Buf)
	if v.n == 0 {
		return
	}
	defer b.enter()()
	if err := cu.MemsetD32Async(v.ptr, 0, int64(v.n), b.stream); err != nil {
		panic(fmt.Sprintf("cuda: Zero: %v", err))
	}
}

// Copy implements tensor.Backend.
func (b *Backend) Copy(dst, src tensor.Storage) {
	d, s := dst.(*Buf), src.(*Buf)
	if d.n != s.n {
		panic(fmt.Sprintf("cuda: Copy of %d values into %d", s.n, d.n))
	}
	if d.n == 0 {
		return
	}
	defer b.enter()()
	if err := cu.MemcpyDtoDAsync(d.ptr, s.ptr, int64(4*d.n), b.stream); err != nil {
		panic(fmt.Sprintf("cuda: Copy: %v", err))
	}
}

// scratchBuf returns the named scratch buffer with at least n floats,
// growing it when needed (the old one is freed; the stream orders reuse).
func (b *Backend) scratchBuf(name string, n int) *Buf {
	if s := b.scratch[name]; s != nil && s.n >= n {
		return s
	}
	if s := b.scratch[name]; s != nil {
		b.Free(s)
	}
	s := b.Alloc(n).(*Buf)
	b.scratch[name] = s
	return s
}
