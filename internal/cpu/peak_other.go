//go:build !(cgo && amd64)

package cpu

const peakFMAFlops = 384

func peakFMA(iters int) (sum float32, ok bool) { return 0, false }
