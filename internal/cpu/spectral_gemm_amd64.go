//go:build cgo

package cpu

// #cgo CFLAGS: -O3 -Wno-psabi
// #include "spectral_gemm.h"
import "C"

import "unsafe"

// specHaveC reports that the C kernels of spectral_gemm_amd64.c are built.
const specHaveC = true

// specBool converts a flag for C.
func specBool(v bool) C.int {
	if v {
		return 1
	}
	return 0
}

// specPtr returns a pointer to the first element of s, which the caller has
// checked is non-empty.
func specPtr(s []float32) *C.float { return (*C.float)(unsafe.Pointer(&s[0])) }

// sgemmC is sgemmGo in C (spectral_gemm_amd64.c).
func sgemmC(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		sgemmGo(m, n, k, a, lda, b, ldb, c, ldc, acc)
		return
	}
	_ = a[(m-1)*lda+k-1]
	_ = b[(k-1)*ldb+n-1]
	_ = c[(m-1)*ldc+n-1]
	C.uhno_spectral_sgemm(C.long(m), C.long(n), C.long(k), specPtr(a), C.long(lda), specPtr(b), C.long(ldb), specPtr(c), C.long(ldc), specBool(acc))
}

// cgemmC is cgemmGo in C (spectral_gemm_amd64.c).
func cgemmC(m, n, p int, g []float32, ldg int, in []float32, ldi int, out []float32, ldo int, acc bool) {
	if m == 0 || p == 0 {
		return
	}
	if n == 0 {
		cgemmGo(m, n, p, g, ldg, in, ldi, out, ldo, acc)
		return
	}
	_ = g[2*((m-1)*ldg+n)-1]
	_ = in[2*((n-1)*ldi+p)-1]
	_ = out[2*((m-1)*ldo+p)-1]
	C.uhno_spectral_cgemm(C.long(m), C.long(n), C.long(p), specPtr(g), C.long(ldg), specPtr(in), C.long(ldi), specPtr(out), C.long(ldo), specBool(acc))
}

// rowmixScratch is the number of floats of scratch rowmixC needs at any
// ISA level: both operands packed in vectors of 8 complex lanes, b's split
// into real and imaginary parts (AVX-512), which is more than the 4-lane
// packing of the other levels.
func rowmixScratch(P, Q, R, L int) int {
	return (L + 7) / 8 * 16 * (P + 2*Q + 2) * R
}

// rowmixC is rowmixGo in C (spectral_gemm_amd64.c) at the widest ISA
// level the CPU has; scratch holds at least rowmixScratch(P, Q, R, L)
// floats.
func rowmixC(P, Q, R, L int, a []float32, au, ar int, conja bool, b []float32, br, bv int, conjb bool,
	out []float32, ou, ov int, scale []float32, acc bool, scratch []float32) {
	rowmixLevel(-1, P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc, scratch)
}

// rowmixLevel is rowmixC at ISA level level (2 AVX-512, 1 AVX2, 0
// baseline; -1 the widest the CPU has), for the tests that compare the
// levels. It reports false, computing nothing, if the CPU lacks the level.
func rowmixLevel(level, P, Q, R, L int, a []float32, au, ar int, conja bool, b []float32, br, bv int, conjb bool,
	out []float32, ou, ov int, scale []float32, acc bool, scratch []float32) bool {
	if P == 0 || Q == 0 || L == 0 {
		return true
	}
	if R == 0 {
		rowmixGo(P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc)
		return true
	}
	_ = a[(P-1)*au+(R-1)*ar+2*L-1]
	_ = b[(R-1)*br+(Q-1)*bv+2*L-1]
	_ = out[(P-1)*ou+(Q-1)*ov+2*L-1]
	_ = scale[L-1]
	_ = scratch[rowmixScratch(P, Q, R, L)-1]
	if level >= 0 {
		return C.uhno_spectral_rowmix_level(C.int(level), C.long(P), C.long(Q), C.long(R), C.long(L), specPtr(a), C.long(au), C.long(ar), specBool(conja),
			specPtr(b), C.long(br), C.long(bv), specBool(conjb), specPtr(out), C.long(ou), C.long(ov), specPtr(scale), specBool(acc),
			specPtr(scratch)) == 0
	}
	C.uhno_spectral_rowmix(C.long(P), C.long(Q), C.long(R), C.long(L), specPtr(a), C.long(au), C.long(ar), specBool(conja),
		specPtr(b), C.long(br), C.long(bv), specBool(conjb), specPtr(out), C.long(ou), C.long(ov), specPtr(scale), specBool(acc),
		specPtr(scratch))
	return true
}
