package emu

//go:generate go run ./gen

/*
#cgo CXXFLAGS: -std=c++17 -O2 -fno-strict-aliasing -Wall -Wno-unused-function -Wno-unknown-pragmas -Wno-sign-compare
#cgo LDFLAGS: -lfftw3f -lm -lpthread
#include <stdlib.h>
#include "emu.h"

static int emu_htod(uintptr_t dst, const void *src, int64_t n, char *err, int errlen) {
	return uhno_emu_memcpy(dst, (uintptr_t)src, n, 0, err, errlen);
}
static int emu_dtoh(void *dst, uintptr_t src, int64_t n, char *err, int errlen) {
	return uhno_emu_memcpy((uintptr_t)dst, src, n, 1, err, errlen);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unsafe"
)

// errLen is the size of the buffer the runtime writes its messages into.
const errLen = 1024

// call runs f with an error buffer and turns a non-zero result into an
// error prefixed "cudaemu: ".
func call(f func(err *C.char, n C.int) C.int) error {
	buf := (*C.char)(C.malloc(errLen))
	defer C.free(unsafe.Pointer(buf))
	if f(buf, errLen) == 0 {
		return nil
	}
	return errors.New("cudaemu: " + C.GoString(buf))
}

// Order is the order in which a block's runnable threads run between two
// barriers.
type Order int

// The orders.
const (
	Forward Order = iota // thread 0 first
	Reverse              // the last thread first
	Shuffle              // a permutation drawn from the seed, the block and the phase
)

func (o Order) String() string {
	switch o {
	case Forward:
		return "forward"
	case Reverse:
		return "reverse"
	case Shuffle:
		return "shuffle"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// SetOrder sets the thread order of every later launch (seed matters to
// Shuffle only).
func SetOrder(o Order, seed uint64) { C.uhno_emu_set_order(C.int(o), C.uint64_t(seed)) }

// ParseOrder reads "forward", "reverse" or "shuffle:SEED".
func ParseOrder(s string) (Order, uint64, error) {
	switch {
	case s == "forward":
		return Forward, 0, nil
	case s == "reverse":
		return Reverse, 0, nil
	case strings.HasPrefix(s, "shuffle:"):
		seed, err := strconv.ParseUint(strings.TrimPrefix(s, "shuffle:"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("cudaemu: thread order %q: the seed after shuffle: must be an unsigned integer", s)
		}
		return Shuffle, seed, nil
	}
	return 0, 0, fmt.Errorf("cudaemu: thread order %q: want forward, reverse or shuffle:SEED", s)
}

// SetWorkers sets how many OS threads run blocks (0: one a core, or
// $UHNO_EMU_THREADS).
func SetWorkers(n int) { C.uhno_emu_set_workers(C.int(n)) }

// Launches counts the kernel launches made so far in this process.
func Launches() int64 { return int64(C.uhno_emu_launch_count()) }

// Malloc returns `bytes` of emulated device memory, filled with NaN bytes.
func Malloc(bytes int64) (uintptr, error) {
	var p C.uintptr_t
	err := call(func(e *C.char, n C.int) C.int { return C.uhno_emu_malloc(C.int64_t(bytes), &p, e, n) })
	return uintptr(p), err
}

// Free releases memory from Malloc; it reports canaries a stray write
// overwrote.
func Free(p uintptr) error {
	return call(func(e *C.char, n C.int) C.int { return C.uhno_emu_free(C.uintptr_t(p), e, n) })
}

// CopyHtoD copies bytes from host memory into device memory.
func CopyHtoD(dst uintptr, src unsafe.Pointer, bytes int64) error {
	return call(func(e *C.char, n C.int) C.int { return C.emu_htod(C.uintptr_t(dst), src, C.int64_t(bytes), e, n) })
}

// CopyDtoH copies bytes from device memory into host memory.
func CopyDtoH(dst unsafe.Pointer, src uintptr, bytes int64) error {
	return call(func(e *C.char, n C.int) C.int { return C.emu_dtoh(dst, C.uintptr_t(src), C.int64_t(bytes), e, n) })
}

// CopyDtoD copies bytes between device ranges (they may overlap).
func CopyDtoD(dst, src uintptr, bytes int64) error {
	return call(func(e *C.char, n C.int) C.int {
		return C.uhno_emu_memcpy(C.uintptr_t(dst), C.uintptr_t(src), C.int64_t(bytes), 2, e, n)
	})
}

// Memset32 sets n 32-bit words at dst to v.
func Memset32(dst uintptr, v uint32, words int64) error {
	return call(func(e *C.char, n C.int) C.int {
		return C.uhno_emu_memset32(C.uintptr_t(dst), C.uint32_t(v), C.int64_t(words), e, n)
	})
}

// KernelInfo describes one kernel of the launch table: its name, its
// parameter kinds, a letter a parameter (p pointer, i int, u unsigned,
// f float, d double, l 64-bit integer), and how often it has been
// launched in this process.
type KernelInfo struct {
	Name, Kinds string
	Launches    int64
}

// Kernels lists every kernel compiled into the emulator.
func Kernels() []KernelInfo {
	n := int(C.uhno_emu_kernel_count())
	ks := make([]KernelInfo, n)
	for i := range ks {
		ks[i] = KernelInfo{C.GoString(C.uhno_emu_kernel_name(C.int(i))), C.GoString(C.uhno_emu_kernel_kinds(C.int(i))),
			int64(C.uhno_emu_kernel_launches(C.int(i)))}
	}
	return ks
}

// Kernel is a kernel's index in the launch table.
type Kernel int

// Lookup finds a kernel by name.
func Lookup(name string) (Kernel, bool) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	i := int(C.uhno_emu_kernel_index(cs))
	return Kernel(i), i >= 0
}

// Launch runs kernel k over grid x block threads with `shared` bytes of
// dynamic shared memory and returns when every block has finished. args
// are the parameters in 8-byte slots as cuLaunchKernel reads them; kinds
// says how each was packed (p, i, f or d), checked against the kernel's
// signature.
func Launch(k Kernel, grid, block [3]int, shared int, args []uint64, kinds string) error {
	if len(kinds) != len(args) {
		return fmt.Errorf("cudaemu: %d parameters with %d kinds", len(args), len(kinds))
	}
	var dims [6]C.uint
	for i := range 3 {
		if grid[i] < 0 || block[i] < 0 || grid[i] > 1<<31-1 || block[i] > 1<<31-1 {
			return fmt.Errorf("cudaemu: invalid launch geometry: grid %v, block %v", grid, block)
		}
		dims[i], dims[3+i] = C.uint(grid[i]), C.uint(block[i])
	}
	if shared < 0 || shared > 1<<31-1 {
		return fmt.Errorf("cudaemu: %d bytes of dynamic shared memory", shared)
	}
	ck := C.CString(kinds)
	defer C.free(unsafe.Pointer(ck))
	var ap *C.uint64_t
	if len(args) > 0 {
		ap = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	return call(func(e *C.char, n C.int) C.int {
		return C.uhno_emu_launch(C.int(k), &dims[0], C.uint(shared), ap, C.int(len(args)), ck, e, n)
	})
}

// FFT types (cufftType values).
const (
	R2C = 0x2a
	C2R = 0x2c
)

// FFTPlan creates a plan for `batch` packed transforms of shape n
// (outermost first, rank 1 to 3), R2C or C2R.
func FFTPlan(n []int, batch, typ int) (int64, error) {
	if len(n) < 1 || len(n) > 3 {
		return 0, fmt.Errorf("cudaemu: fft plan of rank %d", len(n))
	}
	var dims [3]C.int
	for i, v := range n {
		dims[i] = C.int(v)
	}
	var p C.int64_t
	err := call(func(e *C.char, m C.int) C.int {
		return C.uhno_emu_fft_plan(C.int(len(n)), &dims[0], C.int(batch), C.int(typ), &p, e, m)
	})
	return int64(p), err
}

// FFTExec runs a plan from device address in to out.
func FFTExec(plan int64, in, out uintptr) error {
	return call(func(e *C.char, n C.int) C.int {
		return C.uhno_emu_fft_exec(C.int64_t(plan), C.uintptr_t(in), C.uintptr_t(out), e, n)
	})
}

// FFTDestroy releases a plan.
func FFTDestroy(plan int64) error {
	return call(func(e *C.char, n C.int) C.int { return C.uhno_emu_fft_destroy(C.int64_t(plan), e, n) })
}
