//go:build cgo && amd64

package cpu

// #cgo CFLAGS: -O3
// #include "add_amd64.h"
import "C"

import "unsafe"

// axpyFast and addInterleavedFast run add_amd64.c's vector loops; the
// same bits as axpyGo and addInterleavedGo (TestAddFastBits).
func axpyFast(y, x []float32, a float32) {
	if len(y) > 0 {
		x = x[:len(y)]
		C.uhno_axpy((*C.float)(unsafe.Pointer(&y[0])), (*C.float)(unsafe.Pointer(&x[0])), C.long(len(y)), C.float(a))
	}
}

func addInterleavedFast(p *[8]float32, row []float32) {
	if len(row) > 0 {
		C.uhno_add_interleaved((*C.float)(unsafe.Pointer(&p[0])), (*C.float)(unsafe.Pointer(&row[0])), C.long(len(row)))
	}
}

const haveFastAdd = true
