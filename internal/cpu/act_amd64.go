//go:build cgo && amd64

package cpu

// #cgo CFLAGS: -O3
// #include "act_amd64.h"
import "C"

import "unsafe"

// geluFast and geluBackwardFast run the vectorised C loops of act_amd64.c
// on equal-length slices.
func geluFast(y, x []float32) {
	if len(y) > 0 {
		C.uhno_gelu((*C.float)(unsafe.Pointer(&y[0])), (*C.float)(unsafe.Pointer(&x[0])), C.long(len(y)))
	}
}

func geluBackwardFast(dx, dy, x []float32) {
	if len(dx) > 0 {
		C.uhno_gelu_backward((*C.float)(unsafe.Pointer(&dx[0])), (*C.float)(unsafe.Pointer(&dy[0])), (*C.float)(unsafe.Pointer(&x[0])), C.long(len(dx)))
	}
}

// reluFast and reluBackwardFast run the branch-free C loops of
// act_amd64.c on equal-length slices (bit-identical to reluGo and
// reluBackwardGo; TestReLUFast).
func reluFast(y, x []float32) {
	if len(y) > 0 {
		C.uhno_relu((*C.float)(unsafe.Pointer(&y[0])), (*C.float)(unsafe.Pointer(&x[0])), C.long(len(y)))
	}
}

func reluBackwardFast(dx, dy, x []float32) {
	if len(dx) > 0 {
		C.uhno_relu_backward((*C.float)(unsafe.Pointer(&dx[0])), (*C.float)(unsafe.Pointer(&dy[0])), (*C.float)(unsafe.Pointer(&x[0])), C.long(len(dx)))
	}
}

const haveFastGELU = true
