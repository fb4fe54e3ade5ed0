//go:build cgo && amd64

package cpu

// #cgo CFLAGS: -O3
// #include "wavelet_amd64.h"
import "C"

import "unsafe"

const haveFastWavelet = true

// waveletPlaneFast is waveletPlaneGo in the vectorised C kernel of
// wavelet_amd64.c (bit-identical; TestWaveletPlaneBits). w holds
// wvScratchLen(g) floats.
func waveletPlaneFast(p []float32, g *wvGeom, levels int, inverse bool, w []float32) {
	if len(p) < g.s || len(w) < wvScratchLen(g) {
		panic("cpu: waveletPlaneFast: plane or scratch too short")
	}
	mask := C.int(0)
	for a := range 3 {
		if g.real[a] {
			mask |= 1 << a
		}
	}
	inv := C.int(0)
	if inverse {
		inv = 1
	}
	C.uhno_wavelet_plane((*C.float)(unsafe.Pointer(&p[0])), C.long(g.n[0]), C.long(g.n[1]), C.long(g.n[2]), mask,
		C.int(levels), inv, (*C.float)(unsafe.Pointer(&w[0])))
}
