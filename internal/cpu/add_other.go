//go:build !cgo || !amd64

package cpu

// Without cgo on amd64 the accumulation loops are the Go ones.
func axpyFast(y, x []float32, a float32)              { axpyGo(y, x, a) }
func addInterleavedFast(p *[8]float32, row []float32) { addInterleavedGo(p, row) }

const haveFastAdd = false
