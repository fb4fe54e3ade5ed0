// Package alloc is the CUDA backend's caching device allocator: after the
// first training step every buffer the step needs is served from free
// lists, so the steady state makes no cuMemAlloc (a synchronising call
// that costs tens of microseconds) and a captured CUDA graph sees the same
// addresses on every replay.
//
// It is plain Go over a Device interface, so its bookkeeping is tested on
// any machine with a fake device; the cuda backend plugs in cuMemAlloc and
// cuMemFree.
//
// Sizes are rounded up to a size class: multiples of 512 bytes up to 1 MiB,
// then to the next power-of-two fraction (1/8 steps between powers of two),
// which bounds the waste at 12.5% while keeping the number of distinct
// classes small. Freed blocks go to the free list of their class and are
// reused only for requests of the same class. Release returns every cached
// block to the device; nothing is returned implicitly.
package alloc

import (
	"fmt"
	"math/bits"
	"sync"
)

// Device is the memory interface of a GPU: raw allocation and release.
type Device interface {
	Malloc(bytes int64) (uintptr, error)
	Free(ptr uintptr) error
}

// Stats are the allocator's counters, in bytes unless named otherwise.
type Stats struct {
	// InUse is the size (rounded to its class) of the blocks handed out and
	// not yet returned; Cached is the size of the blocks on free lists.
	InUse, Cached int64
	// Peak is the largest InUse + Cached seen: the device high-water mark
	// of this allocator (what `uhno bench` reports on the GPU).
	Peak int64
	// Mallocs counts Device.Malloc calls, Hits the requests served from a
	// free list, Frees the Device.Free calls.
	Mallocs, Hits, Frees int64
}

// Cache is a caching allocator. It is safe for concurrent use.
type Cache struct {
	dev   Device
	exact bool
	mu    sync.Mutex
	free  map[int64][]uintptr // size class -> cached blocks
	size  map[uintptr]int64   // live block -> its class
	st    Stats
}

// New returns an empty cache over dev.
func New(dev Device) *Cache {
	return &Cache{dev: dev, free: map[int64][]uintptr{}, size: map[uintptr]int64{}}
}

// NewExact returns an empty cache whose size classes are the requested
// sizes themselves (rounded up to 4 bytes): a block is reused only for a
// request of the same size. The CUDA emulator uses it so that the guard
// page after every device block sits at the end of the tensor, where a
// write one element too far faults, instead of after a class's slack.
func NewExact(dev Device) *Cache {
	c := New(dev)
	c.exact = true
	return c
}

// class is the size class of a request of n bytes under c's policy.
func (c *Cache) class(n int64) int64 {
	if c.exact {
		return (max(n, 1) + 3) &^ 3
	}
	return Class(n)
}

// Class is the size class of a request of n bytes (n >= 1).
func Class(n int64) int64 {
	const small = 1 << 20
	if n <= 0 {
		n = 1
	}
	if n <= small {
		return (n + 511) &^ 511
	}
	// step = 1/8 of the power of two below n
	p := int64(1) << (63 - bits.LeadingZeros64(uint64(n-1)))
	step := p / 8
	return (n + step - 1) / step * step
}

// Get returns a device block of at least n bytes, from a free list when
// one of its class is cached, else from the device.
func (c *Cache) Get(n int64) (uintptr, error) {
	cl := c.class(n)
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.free[cl]; len(l) > 0 {
		p := l[len(l)-1]
		c.free[cl] = l[:len(l)-1]
		c.size[p] = cl
		c.st.Cached -= cl
		c.st.InUse += cl
		c.st.Hits++
		return p, nil
	}
	p, err := c.dev.Malloc(cl)
	if err != nil && c.st.Cached > 0 {
		// Out of memory with blocks cached in other classes: give them
		// back and try once more.
		if rerr := c.releaseLocked(); rerr != nil {
			return 0, fmt.Errorf("alloc: %d bytes: %w (and releasing the cache: %v)", cl, err, rerr)
		}
		p, err = c.dev.Malloc(cl)
	}
	if err != nil {
		return 0, fmt.Errorf("alloc: %d bytes (%d in use, %d cached): %w", cl, c.st.InUse, c.st.Cached, err)
	}
	c.st.Mallocs++
	c.size[p] = cl
	c.st.InUse += cl
	c.st.Peak = max(c.st.Peak, c.st.InUse+c.st.Cached)
	return p, nil
}

// Put returns a block obtained from Get to its free list. Putting a block
// twice or one this cache did not hand out panics: it is a use-after-free
// in the making.
func (c *Cache) Put(p uintptr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.size[p]
	if !ok {
		panic(fmt.Sprintf("alloc: Put(0x%x): not a live block of this cache", p))
	}
	delete(c.size, p)
	c.free[cl] = append(c.free[cl], p)
	c.st.InUse -= cl
	c.st.Cached += cl
}

// Release frees every cached block on the device. Live blocks stay live.
func (c *Cache) Release() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.releaseLocked()
}

func (c *Cache) releaseLocked() error {
	var first error
	for cl, l := range c.free {
		for _, p := range l {
			if err := c.dev.Free(p); err != nil && first == nil {
				first = fmt.Errorf("alloc: free 0x%x: %w", p, err)
			}
			c.st.Frees++
			c.st.Cached -= cl
		}
		delete(c.free, cl)
	}
	return first
}

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

// ResetPeak sets Peak to the current InUse + Cached, so a benchmark can
// measure the high-water mark of one phase.
func (c *Cache) ResetPeak() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.Peak = c.st.InUse + c.st.Cached
}
