//go:build !(cgo && amd64)

package cpu

// convHaveC reports that this build has no C kernel: convGemm always runs
// the portable convGemmGo.
const convHaveC = false

func convGemmC(c []float32, ldc, m, n int, ap, bp []float32, l int, add bool, bias []float32) {
	panic("cpu: convGemmC: no C kernel in this build")
}

func convGemmCLevel(level int, c []float32, ldc, m, n int, ap, bp []float32, l int, add bool, bias []float32) bool {
	return false
}

func convGemmRowsCLevel(level int, c []float32, ldc, m, n int, a []float32, lda int, bp []float32, l int, add bool) bool {
	return false
}

func packBC(dst, src []float32, l, n, ks int) { panic("cpu: packBC: no C kernel in this build") }

func packAC(dst, src []float32, m, l, rs, ks int) { panic("cpu: packAC: no C kernel in this build") }

func packBTC(dst, src []float32, l, n, cs int) { panic("cpu: packBTC: no C kernel in this build") }

func packBTCLevel(level int, dst, src []float32, l, n, cs int) bool { return false }
