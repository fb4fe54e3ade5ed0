//go:build cgo && amd64

package cpu

// #cgo CFLAGS: -O3
// #include "gemm_amd64.h"
import "C"

import "unsafe"

// convHaveC reports that convGemmC is the vectorised C kernel.
const convHaveC = true

// convGemmC is convGemm's C kernel (gemm_amd64.c) at the widest
// level the CPU supports; the caller has checked that every operand fits
// its slice.
func convGemmC(c []float32, ldc, m, n int, ap, bp []float32, l int, add bool) {
	convGemmCLevel(-1, c, ldc, m, n, ap, bp, l, add)
}

// convGemmCLevel runs the C kernel of a given level (2 AVX-512, 1 AVX2+FMA,
// 0 portable C; -1 the widest supported) and reports whether the CPU has
// it.
func convGemmCLevel(level int, c []float32, ldc, m, n int, ap, bp []float32, l int, add bool) bool {
	a := C.int(0)
	if add {
		a = 1
	}
	cp, app, bpp := (*C.float)(unsafe.Pointer(&c[0])), (*C.float)(unsafe.Pointer(&ap[0])), (*C.float)(unsafe.Pointer(&bp[0]))
	if level < 0 {
		C.uhno_conv_gemm(cp, C.long(ldc), C.long(m), C.long(n), app, bpp, C.long(l), a)
		return true
	}
	return C.uhno_conv_gemm_level(C.int(level), cp, C.long(ldc), C.long(m), C.long(n), app, bpp, C.long(l), a) == 0
}
