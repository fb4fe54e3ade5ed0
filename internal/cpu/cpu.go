package cpu

import (
	"fmt"
	"runtime"
	"sync"

	"uhno/internal/tensor"
)

// Buf is CPU storage: a float32 slice.
type Buf []float32

// Len implements tensor.Storage.
func (b Buf) Len() int { return len(b) }

// Backend is the CPU implementation of tensor.Backend. The zero value is
// not usable; call New.
type Backend struct {
	threads int
	// spec caches SpectralConv's DFT tables and scratch (spectral.go).
	spec spectralCache
	// rs holds the scratch buffers of the packed GEMM users: Pointwise,
	// ConvDown and Upsample2x (gemm.go).
	rs resampleState
	// gauss holds GaussianConv scratch buffers (gaussian.go).
	gauss gaussCache
}

var _ tensor.Backend = (*Backend)(nil)

// New returns a CPU backend that uses up to threads goroutines per
// operation (threads <= 0 means runtime.NumCPU()).
func New(threads int) *Backend {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	return &Backend{threads: threads}
}

// Name implements tensor.Backend.
func (b *Backend) Name() string { return "cpu" }

// Threads is the number of goroutines an operation may use.
func (b *Backend) Threads() int { return b.threads }

// Alloc implements tensor.Backend.
func (b *Backend) Alloc(n int) tensor.Storage { return make(Buf, n) }

// Free implements tensor.Backend; the garbage collector reclaims the slice.
func (b *Backend) Free(tensor.Storage) {}

// View implements tensor.Backend.
func (b *Backend) View(s tensor.Storage, off, n int) tensor.Storage {
	return s.(Buf)[off : off+n : off+n]
}

// Upload implements tensor.Backend.
func (b *Backend) Upload(dst tensor.Storage, src []float32) { copy(dst.(Buf), src) }

// Download implements tensor.Backend.
func (b *Backend) Download(dst []float32, src tensor.Storage) { copy(dst, src.(Buf)) }

// Zero implements tensor.Backend.
func (b *Backend) Zero(s tensor.Storage) { clear(s.(Buf)) }

// Copy implements tensor.Backend.
func (b *Backend) Copy(dst, src tensor.Storage) {
	if dst.Len() != src.Len() {
		panic(fmt.Sprintf("cpu: Copy: length %d vs %d", dst.Len(), src.Len()))
	}
	copy(dst.(Buf), src.(Buf))
}

// data returns the float32 elements of a tensor (nil for a nil tensor).
func data(t *tensor.Tensor) []float32 {
	if t == nil {
		return nil
	}
	return t.Data.(Buf)[:t.Numel()]
}

// parallel runs fn over [0, n) split into contiguous chunks of at least
// grain items. The chunk boundaries depend on n and grain only, so any
// per-chunk result is independent of the thread count.
func (b *Backend) parallel(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	if chunks == 1 || b.threads == 1 {
		for lo := 0; lo < n; lo += grain {
			fn(lo, min(lo+grain, n))
		}
		return
	}
	workers := min(b.threads, chunks)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				c := next
				next++
				mu.Unlock()
				if c >= chunks {
					return
				}
				lo := c * grain
				fn(lo, min(lo+grain, n))
			}
		}()
	}
	wg.Wait()
}

// grainFor picks a chunk size so that each chunk does roughly 32k
// elementary operations given the cost of one item.
func grainFor(costPerItem int) int {
	if costPerItem < 1 {
		costPerItem = 1
	}
	g := 32768 / costPerItem
	if g < 1 {
		g = 1
	}
	return g
}
