//go:build !cgo || !amd64

package cpu

// Without cgo on amd64 the GELU runs the plain-Go float64 loops.
func geluFast(y, x []float32)              { geluGo(y, x) }
func geluBackwardFast(dx, dy, x []float32) { geluBackwardGo(dx, dy, x) }

// Without cgo on amd64 the ReLU runs the Go loops.
func reluFast(y, x []float32)              { reluGo(y, x) }
func reluBackwardFast(dx, dy, x []float32) { reluBackwardGo(dx, dy, x) }

const haveFastGELU = false
