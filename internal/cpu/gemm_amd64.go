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
func convGemmC(c []float32, ldc, m, n int, ap, bp []float32, l int, add bool, bias []float32) {
	convGemmCLevel(-1, c, ldc, m, n, ap, bp, l, add, bias)
}

// convGemmRowsCLevel is convGemmCLevel with A read in place, A[r, k] =
// a[r*lda + k] (uhno_conv_gemm_rows_level; level -1 the widest supported);
// the caller has checked that every operand fits its slice.
func convGemmRowsCLevel(level int, c []float32, ldc, m, n int, a []float32, lda int, bp []float32, l int, add bool) bool {
	ad := C.int(0)
	if add {
		ad = 1
	}
	return C.uhno_conv_gemm_rows_level(C.int(level), (*C.float)(unsafe.Pointer(&c[0])), C.long(ldc), C.long(m), C.long(n),
		(*C.float)(unsafe.Pointer(&a[0])), C.long(lda), (*C.float)(unsafe.Pointer(&bp[0])), C.long(l), ad) == 0
}

// packAC is convPackA in C (uhno_pack_a).
func packAC(dst, src []float32, m, l, rs, ks int) {
	C.uhno_pack_a((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.long(m), C.long(l), C.long(rs), C.long(ks))
}

// packBTC is packBT in C (uhno_pack_bt).
func packBTC(dst, src []float32, l, n, cs int) {
	C.uhno_pack_bt((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.long(l), C.long(n), C.long(cs))
}

// packBTCLevel is packBTC with a chosen kernel (2 AVX-512, 1 AVX2, 0
// element by element) and reports whether the CPU has it.
func packBTCLevel(level int, dst, src []float32, l, n, cs int) bool {
	return C.uhno_pack_bt_level(C.int(level), (*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.long(l), C.long(n), C.long(cs)) == 0
}

// packBC is convPackB in C (uhno_pack_b).
func packBC(dst, src []float32, l, n, ks int) {
	C.uhno_pack_b((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&src[0])), C.long(l), C.long(n), C.long(ks))
}

// convGemmCLevel runs the C kernel of a given level (2 AVX-512, 1 AVX2+FMA,
// 0 portable C; -1 the widest supported) and reports whether the CPU has
// it.
func convGemmCLevel(level int, c []float32, ldc, m, n int, ap, bp []float32, l int, add bool, bias []float32) bool {
	a := C.int(0)
	if add {
		a = 1
	}
	cp, app, bpp := (*C.float)(unsafe.Pointer(&c[0])), (*C.float)(unsafe.Pointer(&ap[0])), (*C.float)(unsafe.Pointer(&bp[0]))
	var biasp *C.float
	if bias != nil {
		if len(bias) < m {
			panic("cpu: convGemmC: bias shorter than the rows")
		}
		biasp = (*C.float)(unsafe.Pointer(&bias[0]))
	}
	if level < 0 {
		C.uhno_conv_gemm(cp, C.long(ldc), C.long(m), C.long(n), app, bpp, C.long(l), a, biasp)
		return true
	}
	return C.uhno_conv_gemm_level(C.int(level), cp, C.long(ldc), C.long(m), C.long(n), app, bpp, C.long(l), a, biasp) == 0
}
