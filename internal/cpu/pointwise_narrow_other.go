//go:build !(cgo && amd64)

package cpu

// Without cgo on amd64 the narrow Pointwise runs the portable Go loops.

const pwNarrowHaveC = false

func pwNarrowCLevel(level int, out []float32, os, m, n int, a []float32, ars, aks int, in []float32, is, l int, add bool, bias []float32) bool {
	return false
}

func pwDotsCLevel(level int, p, dy []float32, cout int, x []float32, cin, sp int) bool { return false }
