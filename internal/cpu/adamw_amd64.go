//go:build cgo && amd64

package cpu

// #cgo CFLAGS: -O3
// #include "adamw_amd64.h"
import "C"

import "unsafe"

const haveFastAdamW = true

// adamwFast is adamwGo in the vectorised C loop (adamw_amd64.c) at the
// widest level the CPU supports.
func adamwFast(p, g, m, v []float32, k *adamwConsts) { adamwLevel(-1, p, g, m, v, k) }

// adamwLevel runs the C loop of a given level (2 AVX-512, 1 AVX2, 0 SSE2;
// -1 the widest supported) on equal-length slices and reports whether the
// CPU has that level.
func adamwLevel(level int, p, g, m, v []float32, k *adamwConsts) bool {
	n := len(p)
	if len(g) < n || len(m) < n || len(v) < n {
		panic("cpu: adamwLevel: a slice is shorter than p")
	}
	if n == 0 {
		return true
	}
	ck := C.struct_uhno_adamw_consts{
		b1: C.double(k.b1), c1: C.double(k.c1), b2: C.double(k.b2), c2: C.double(k.c2),
		decay: C.double(k.decay), step: C.double(k.step), bc2: C.double(k.bc2), eps: C.double(k.eps),
	}
	return C.uhno_adamw_level(C.int(level), (*C.float)(unsafe.Pointer(&p[0])), (*C.float)(unsafe.Pointer(&g[0])),
		(*C.float)(unsafe.Pointer(&m[0])), (*C.float)(unsafe.Pointer(&v[0])), C.long(n), &ck) == 0
}
