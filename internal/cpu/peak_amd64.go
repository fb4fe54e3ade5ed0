//go:build cgo && amd64

package cpu

// #include "peak_amd64.h"
import "C"

// peakFMAFlops is the float32 flops of one peakFMA iteration.
const peakFMAFlops = 384

// peakFMA runs iters iterations of the FMA-bound loop of peak_amd64.c; ok
// is false where the CPU lacks AVX-512.
func peakFMA(iters int) (sum float32, ok bool) {
	s := float32(C.uhno_peak_fma(C.long(iters)))
	return s, s != -1
}
