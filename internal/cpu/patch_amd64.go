//go:build cgo && amd64

package cpu

// #cgo CFLAGS: -O3
// #include "patch_amd64.h"
import "C"

import "unsafe"

const havePatchC = true

// patchMoves names the three C moves of patch_amd64.c with the geometry
// of one caller: t offsets of cin channels of sp points, patch row
// k = i*ki + t*kt.
type patchMoves struct{ t, cin, sp, ki, kt int }

func f32p(s []float32) *C.float { return (*C.float)(unsafe.Pointer(&s[0])) }

func (m patchMoves) im2col(patch, xb []float32, offs []int32, n int) {
	if n == 0 || m.t*m.cin == 0 {
		return
	}
	C.uhno_patch_im2col(f32p(patch), f32p(xb), (*C.int32_t)(unsafe.Pointer(&offs[0])),
		C.long(m.t), C.long(m.cin), C.long(m.sp), C.long(n), C.long(m.ki), C.long(m.kt))
}

func (m patchMoves) im2colT(patchT, xb []float32, offs []int32, n int) {
	if n == 0 || m.t*m.cin == 0 {
		return
	}
	C.uhno_patch_im2colT(f32p(patchT), f32p(xb), (*C.int32_t)(unsafe.Pointer(&offs[0])),
		C.long(m.t), C.long(m.cin), C.long(m.sp), C.long(n), C.long(m.ki), C.long(m.kt))
}

func (m patchMoves) col2im(dxb, dP []float32, offs []int32, n int) {
	if n == 0 || m.t*m.cin == 0 {
		return
	}
	C.uhno_patch_col2im(f32p(dxb), f32p(dP), (*C.int32_t)(unsafe.Pointer(&offs[0])),
		C.long(m.t), C.long(m.cin), C.long(m.sp), C.long(n), C.long(m.ki), C.long(m.kt))
}
