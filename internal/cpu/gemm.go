package cpu

// #cgo CFLAGS: -O3
// #include "gemm.h"
import "C"

import "unsafe"

// gemmNN computes c[m x n] = a[m x k] * b[k x n] (+ c when acc) with row
// strides lda, ldb, ldc, through the vectorised C kernel in gemm.c.
func gemmNN(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	checkSpan("gemmNN a", a, m, k, lda)
	checkSpan("gemmNN b", b, k, n, ldb)
	checkSpan("gemmNN c", c, m, n, ldc)
	ac := C.int(0)
	if acc {
		ac = 1
	}
	C.uhno_gemm_nn(C.int(m), C.int(n), C.int(k), fp(a), C.int(lda), fp(b), C.int(ldb), fp(c), C.int(ldc), ac)
}

// gemmNT computes c[m x n] += a[m x k] * b[n x k]^T.
func gemmNT(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	checkSpan("gemmNT a", a, m, k, lda)
	checkSpan("gemmNT b", b, n, k, ldb)
	checkSpan("gemmNT c", c, m, n, ldc)
	C.uhno_gemm_nt(C.int(m), C.int(n), C.int(k), fp(a), C.int(lda), fp(b), C.int(ldb), fp(c), C.int(ldc))
}

func fp(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

// checkSpan panics if a rows x cols matrix with row stride ld does not fit
// in s: the C kernels do no bounds checking of their own.
func checkSpan(what string, s []float32, rows, cols, ld int) {
	if rows == 0 || cols == 0 {
		return
	}
	if cols > ld || (rows-1)*ld+cols > len(s) {
		panic("cpu: " + what + ": matrix does not fit its slice")
	}
}
