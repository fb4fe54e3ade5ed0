//go:build !(cgo && amd64)

package cpu

// Without cgo on amd64 the wavelet runs the plain-Go waveletPlaneGo.

const haveFastWavelet = false

func waveletPlaneFast(p []float32, g *wvGeom, levels int, inverse bool, w []float32) {
	waveletPlaneGo(p, g, levels, inverse, w)
}
