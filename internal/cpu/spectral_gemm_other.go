//go:build !cgo || !amd64

package cpu

// specHaveC reports that the C kernels of spectral_gemm_amd64.c are not
// built (cgo is off or the machine is not x86-64): the plain-Go kernels
// run, and the functions below only keep the package compiling.
const specHaveC = false

// sgemmC, cgemmC and rowmixC fall back to the plain-Go kernels.

func sgemmC(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, acc bool) {
	sgemmGo(m, n, k, a, lda, b, ldb, c, ldc, acc)
}

func cgemmC(m, n, p int, g []float32, ldg int, in []float32, ldi int, out []float32, ldo int, acc bool) {
	cgemmGo(m, n, p, g, ldg, in, ldi, out, ldo, acc)
}

func rowmixScratch(P, Q, R, L int) int { return 0 }

func rowmixC(P, Q, R, L int, a []float32, au, ar int, conja bool, b []float32, br, bv int, conjb bool,
	out []float32, ou, ov int, scale []float32, acc bool, scratch []float32) {
	rowmixGo(P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc)
}

// rowmixLevel has no C levels to run here: it reports false.
func rowmixLevel(level, P, Q, R, L int, a []float32, au, ar int, conja bool, b []float32, br, bv int, conjb bool,
	out []float32, ou, ov int, scale []float32, acc bool, scratch []float32) bool {
	return false
}
