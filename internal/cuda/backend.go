//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"uhno/internal/cuda/alloc"
	"uhno/internal/tensor"
)

// Buf is device storage: n float32 values at device address ptr. A view
// shares its parent's memory and is never freed itself.
type Buf struct {
	ptr  uintptr
	n    int
	view bool
}

// Len implements tensor.Storage.
func (b *Buf) Len() int { return b.n }

// Ptr is the device address.
func (b *Buf) Ptr() uintptr { return b.ptr }

// Backend is the CUDA implementation of tensor.Backend: the operations'
// plans, launch geometry and orchestration over a driver (driver.go),
// which executes them. It is not safe for concurrent use: a training loop
// drives it from one goroutine.
type Backend struct {
	drv driver
	mem *alloc.Cache

	// state holds per-operation caches (FFT plans, kernel tables) by the
	// operation's name; closers release them in Close.
	state   map[string]any
	closers []func() error

	// scratch is reusable device memory for operations that need it
	// (complex spectra, per-sample statistics), grown on demand.
	scratch map[string]*Buf

	// autocast is the last argument of the dense products' kernels: 1
	// rounds their operands to bf16 (SetPrecision), 0 computes in fp32.
	autocast int
}

var _ tensor.Backend = (*Backend)(nil)

// EnvAllocExact set to 1 (or true) makes the caching allocator hand out
// blocks of exactly the requested size (rounded to 4 bytes) instead of
// its 512-byte size classes, so that compute-sanitizer's memcheck sees an
// overrun of even one element past a tensor's end. It costs cuMemAlloc
// calls (a block is reused only for a request of the same size), so it is
// for sanitizer runs, not training. It is read once, when New opens the
// backend. The emulator's allocator is always exact (its guard pages).
const EnvAllocExact = "UHNO_ALLOC_EXACT"

// New opens device `ordinal` through the driver of this build (the GPU
// under the cuda tag, the CPU emulator under cudaemu): its context,
// stream, kernels and cuFFT. Device memory comes from a caching allocator
// over the driver, exact-sized under the emulator or $UHNO_ALLOC_EXACT.
// Errors name what failed.
func New(ordinal int) (*Backend, error) {
	drv, err := openDriver(ordinal)
	if err != nil {
		return nil, err
	}
	b, err := newBackend(drv, os.Getenv(EnvAllocExact))
	if err != nil {
		drv.Close()
		return nil, err
	}
	return b, nil
}

// newBackend is the backend over an open driver; allocExact is the value
// of $UHNO_ALLOC_EXACT ("" when unset).
func newBackend(drv driver, allocExact string) (*Backend, error) {
	exact := drv.ExactSizes()
	if allocExact != "" {
		on, err := strconv.ParseBool(allocExact)
		if err != nil {
			return nil, fmt.Errorf("cuda: $%s=%q: want 1 (exact allocation sizes) or 0", EnvAllocExact, allocExact)
		}
		exact = exact || on
	}
	mem := alloc.New(drv)
	if exact {
		mem = alloc.NewExact(drv)
	}
	return &Backend{drv: drv, mem: mem, state: map[string]any{}, scratch: map[string]*Buf{}}, nil
}

// Close waits for the stream, then releases the per-operation state (FFT
// plans), the cached memory and the driver (stream and context). It
// returns the first error and releases the rest regardless.
func (b *Backend) Close() error {
	err := b.drv.Sync()
	if err != nil {
		err = fmt.Errorf("cuda: Close: %w", err)
	}
	for _, c := range b.closers {
		if cerr := c(); err == nil {
			err = cerr
		}
	}
	b.closers = nil
	if rerr := b.mem.Release(); err == nil {
		err = rerr
	}
	if derr := b.drv.Close(); err == nil && derr != nil {
		err = fmt.Errorf("cuda: Close: %w", derr)
	}
	return err
}

// Name implements tensor.Backend.
func (b *Backend) Name() string { return "cuda" }

// Device describes the device for `uhno-cuda doctor` (the GPU's name and
// memory).
func (b *Backend) Device() string { return b.drv.Describe() }

// Memory reports the allocator's counters (PeakBytes is the device
// high-water mark `uhno bench` prints).
func (b *Backend) Memory() alloc.Stats { return b.mem.Stats() }

// PeakBytes is the allocator's device high-water mark.
func (b *Backend) PeakBytes() int64 { return b.mem.Stats().Peak }

// arg is one kernel parameter: a *Buf or a device address (uintptr), an
// int (passed as a 32-bit int), a float32 or a float64.
type arg = any

// launch enqueues kernel `name` with the given geometry and parameters,
// each converted to the 8-byte slot the driver passes on. A launch error
// is a programming error (bad geometry, a kernel missing from the build)
// and panics with the kernel's name and geometry.
func (b *Backend) launch(name string, g Geometry, args ...arg) {
	if !b.drv.HasKernel(name) {
		panic(fmt.Sprintf("cuda: launching %s (grid %v, block %v, shared %d): no such kernel is loaded", name, g.Grid, g.Block, g.Shared))
	}
	// A fresh slice per launch: the driver may keep it until the kernel
	// has run.
	slots := make([]uint64, len(args))
	kinds := make([]byte, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case *Buf:
			if v != nil {
				slots[i] = uint64(v.ptr)
			}
			kinds[i] = 'p'
		case uintptr:
			slots[i] = uint64(v)
			kinds[i] = 'p'
		case int:
			if v < math.MinInt32 || v > math.MaxInt32 {
				panic(fmt.Sprintf("cuda: kernel %s: parameter %d is %d, beyond a 32-bit int", name, i, v))
			}
			slots[i] = uint64(uint32(int32(v)))
			kinds[i] = 'i'
		case float32:
			slots[i] = uint64(math.Float32bits(v))
			kinds[i] = 'f'
		case float64:
			slots[i] = math.Float64bits(v)
			kinds[i] = 'd'
		default:
			panic(fmt.Sprintf("cuda: kernel %s: parameter %d has type %T", name, i, a))
		}
	}
	if err := b.drv.Launch(name, g, slots, string(kinds)); err != nil {
		panic(fmt.Sprintf("cuda: launching %s (grid %v, block %v, shared %d): %v", name, g.Grid, g.Block, g.Shared, err))
	}
}

// buf returns the device storage of a tensor (nil for a nil tensor).
func buf(t *tensor.Tensor) *Buf {
	if t == nil {
		return nil
	}
	return t.Data.(*Buf)
}

// MemInfo implements tensor.DeviceMemory: the device's free and total
// bytes. Free counts the allocator's cached blocks as used (they are
// uhno's, and reusable).
func (b *Backend) MemInfo() (free, total int64, err error) { return b.drv.MemInfo() }

// Alloc implements tensor.Backend: zero-filled device memory from the cache.
func (b *Backend) Alloc(n int) tensor.Storage {
	bytes := int64(max(n, 1)) * 4
	p, err := b.mem.Get(bytes)
	if err != nil {
		if strings.Contains(err.Error(), "OUT_OF_MEMORY") {
			// A full device is the user's size, not uhno's fault: a value
			// the commands recover into a one-line error.
			oom := &tensor.OutOfMemory{Device: b.drv.Describe(), Bytes: bytes, Free: -1, Total: -1, Err: err}
			if free, total, merr := b.drv.MemInfo(); merr == nil {
				oom.Free, oom.Total = free, total
			}
			panic(oom)
		}
		panic(fmt.Sprintf("cuda: Alloc(%d floats): %v", n, err))
	}
	s := &Buf{ptr: p, n: n}
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
	b.mem.Put(v.ptr)
	v.ptr, v.n = 0, 0
}

// View implements tensor.Backend.
func (b *Backend) View(s tensor.Storage, off, n int) tensor.Storage {
	v := s.(*Buf)
	if off < 0 || n < 0 || off+n > v.n {
		panic(fmt.Sprintf("cuda: View [%d, %d) of %d values", off, off+n, v.n))
	}
	return &Buf{ptr: v.ptr + uintptr(4*off), n: n, view: true}
}

// Upload implements tensor.Backend (synchronous with respect to the host
// slice: it is copied before Upload returns).
func (b *Backend) Upload(dst tensor.Storage, src []float32) {
	if len(src) == 0 {
		return
	}
	d := dst.(*Buf)
	if len(src) > d.n {
		panic(fmt.Sprintf("cuda: Upload of %d values into %d", len(src), d.n))
	}
	if err := b.drv.HtoD(d.ptr, unsafe.Pointer(&src[0]), int64(4*len(src))); err != nil {
		panic(fmt.Sprintf("cuda: Upload: %v", err))
	}
}

// Download implements tensor.Backend; it waits for the stream.
func (b *Backend) Download(dst []float32, src tensor.Storage) {
	if len(dst) == 0 {
		return
	}
	s := src.(*Buf)
	if len(dst) > s.n {
		panic(fmt.Sprintf("cuda: Download of %d values from %d", len(dst), s.n))
	}
	if err := b.drv.DtoH(unsafe.Pointer(&dst[0]), s.ptr, int64(4*len(dst))); err != nil {
		panic(fmt.Sprintf("cuda: Download: %v", err))
	}
}

// Zero implements tensor.Backend.
func (b *Backend) Zero(s tensor.Storage) {
	v := s.(*Buf)
	if v.n == 0 {
		return
	}
	if err := b.drv.MemsetD32(v.ptr, 0, int64(v.n)); err != nil {
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
	if err := b.drv.DtoD(d.ptr, s.ptr, int64(4*d.n)); err != nil {
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
