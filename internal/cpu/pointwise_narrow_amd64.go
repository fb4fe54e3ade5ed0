//go:build cgo && amd64

package cpu

// #cgo CFLAGS: -O3
// #include "pointwise_narrow_amd64.h"
import "C"

import "unsafe"

// pwNarrowHaveC reports that pwNarrowC and pwDotsC are the vectorised C
// kernels of pointwise_narrow_amd64.c.
const pwNarrowHaveC = true

// pwNarrowCLevel is pwNarrowGo in C at a level (2 AVX-512, 1 AVX2+FMA,
// 0 portable C; -1 the widest supported) and reports whether the CPU has
// it. The caller has checked that every operand fits its slice.
func pwNarrowCLevel(level int, out []float32, os, m, n int, a []float32, ars, aks int, in []float32, is, l int, add bool, bias []float32) bool {
	ad := C.int(0)
	if add {
		ad = 1
	}
	var bp *C.float
	if bias != nil {
		bp = (*C.float)(unsafe.Pointer(&bias[0]))
	}
	return C.uhno_pw_narrow_level(C.int(level), (*C.float)(unsafe.Pointer(&out[0])), C.long(os), C.long(m), C.long(n),
		(*C.float)(unsafe.Pointer(&a[0])), C.long(ars), C.long(aks), (*C.float)(unsafe.Pointer(&in[0])), C.long(is), C.long(l), ad, bp) == 0
}

// pwDotsCLevel is pwDotsGo in C at a level (as pwNarrowCLevel).
func pwDotsCLevel(level int, p, dy []float32, cout int, x []float32, cin, sp int) bool {
	return C.uhno_pw_narrow_dw_level(C.int(level), (*C.float)(unsafe.Pointer(&p[0])), (*C.float)(unsafe.Pointer(&dy[0])), C.long(cout),
		(*C.float)(unsafe.Pointer(&x[0])), C.long(cin), C.long(sp)) == 0
}
