//go:build !(cgo && amd64)

package cpu

// gaussAxis runs the plain-Go pass: this build has no C kernel
// (gaussian_amd64.c needs cgo on amd64).
func gaussAxis(z, z2, s, s2, e, k, dk []float32, outer, n, inner int, add bool, scratch []float32) float64 {
	return gaussAxisGo(z, z2, s, s2, e, k, dk, outer, n, inner, add, scratch)
}

// gaussBestISA is -1: no instruction-set level of the C kernel exists in
// this build, so the tests that compare levels have none to run.
func gaussBestISA() int { return -1 }

func gaussAxisISA(isa int, z, z2, s, s2, e, k, dk []float32, outer, n, inner int, add bool, scratch []float32) float64 {
	panic("cpu: gaussAxisISA: no C kernel in this build")
}
