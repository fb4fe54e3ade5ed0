//go:build cgo && amd64

package cpu

// #cgo CFLAGS: -O3
// #include "stencil_amd64.h"
import "C"

import "unsafe"

const haveFastStencil = true

// The C versions of stGeom.im2col, im2colT and col2im
// (stencil_amd64.c; bit-identical, TestStencilMovesBits).

func (g *stGeom) im2colC(patch, xb []float32, offs []int32, n int) {
	if n == 0 || g.k == 0 {
		return
	}
	C.uhno_st_im2col((*C.float)(unsafe.Pointer(&patch[0])), (*C.float)(unsafe.Pointer(&xb[0])), (*C.int32_t)(unsafe.Pointer(&offs[0])),
		C.long(g.s), C.long(g.cin), C.long(g.sp), C.long(n))
}

func (g *stGeom) im2colTC(patchT, xb []float32, offs []int32, n int) {
	if n == 0 || g.k == 0 {
		return
	}
	C.uhno_st_im2colT((*C.float)(unsafe.Pointer(&patchT[0])), (*C.float)(unsafe.Pointer(&xb[0])), (*C.int32_t)(unsafe.Pointer(&offs[0])),
		C.long(g.s), C.long(g.cin), C.long(g.sp), C.long(n))
}

func (g *stGeom) col2imC(dxb, dP []float32, offs []int32, n int) {
	if n == 0 || g.k == 0 {
		return
	}
	C.uhno_st_col2im((*C.float)(unsafe.Pointer(&dxb[0])), (*C.float)(unsafe.Pointer(&dP[0])), (*C.int32_t)(unsafe.Pointer(&offs[0])),
		C.long(g.s), C.long(g.cin), C.long(g.sp), C.long(n))
}
