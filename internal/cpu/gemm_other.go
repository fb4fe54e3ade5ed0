//go:build !(cgo && amd64)

package cpu

// convHaveC reports that this build has no C kernel: convGemm always runs
// the portable convGemmGo.
const convHaveC = false

func convGemmC(c []float32, ldc, m, n int, ap, bp []float32, l int, add bool) {
	panic("cpu: convGemmC: no C kernel in this build")
}

func convGemmCLevel(level int, c []float32, ldc, m, n int, ap, bp []float32, l int, add bool) bool {
	return false
}
