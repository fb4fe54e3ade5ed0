//go:build cgo && amd64

package cpu

// #cgo CFLAGS: -O3
// #cgo LDFLAGS: -lm
// #include "gaussian_amd64.h"
import "C"

import "unsafe"

// gaussAxis is one pass of the Gaussian convolution through the vectorised
// C kernel in gaussian_amd64.c, compiled for the best instruction set this CPU
// supports; gaussAxisGo is its plain-Go reference and documents the
// arguments.
func gaussAxis(z, z2, s, s2, e, k, dk []float32, outer, n, inner int, add bool, scratch []float32) float64 {
	return gaussAxisISA(-1, z, z2, s, s2, e, k, dk, outer, n, inner, add, scratch)
}

// gaussBestISA is the best instruction-set level of the C kernel that this
// CPU runs: 2 AVX-512, 1 AVX2, 0 portable.
func gaussBestISA() int { return int(C.uhno_gauss_best_isa()) }

// gaussAxisISA runs gaussAxis with the kernel compiled for level isa (-1:
// the best available; the tests run every level the CPU supports). Sizes
// and modes are checked here because the C code does no checking of its
// own.
func gaussAxisISA(isa int, z, z2, s, s2, e, k, dk []float32, outer, n, inner int, add bool, scratch []float32) float64 {
	r := len(k) - 1
	size := outer * n * inner
	short := func(b []float32) bool { return b != nil && len(b) < size }
	switch {
	case 2*r > n-1 || len(scratch) < gaussAxisScratch(n, inner, r):
		panic("cpu: gaussAxis: radius or scratch does not fit the axis")
	case len(s) < size || short(z) || short(z2) || short(s2) || short(e):
		panic("cpu: gaussAxis: buffer shorter than the block")
	case dk == nil && (z == nil || z2 != nil || s2 != nil || e != nil),
		dk != nil && (len(dk) != len(k) || (z2 == nil) == (e == nil) || (z2 != nil && z == nil)):
		panic("cpu: gaussAxis: unsupported combination of outputs")
	}
	a := C.int(0)
	if add {
		a = 1
	}
	return float64(C.uhno_gauss_axis(gaussPtr(z), gaussPtr(z2), gaussPtr(s), gaussPtr(s2), gaussPtr(e),
		gaussPtr(k), gaussPtr(dk), C.int(r), C.int(outer), C.int(n), C.int(inner), a, gaussPtr(scratch), C.int(isa)))
}

func gaussPtr(s []float32) *C.float {
	if s == nil {
		return nil
	}
	return (*C.float)(unsafe.Pointer(unsafe.SliceData(s)))
}
