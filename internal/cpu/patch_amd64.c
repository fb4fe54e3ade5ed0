//go:build cgo && amd64

// The im2col data movement of GNO's stencil product (stencil.go) and of
// the convolutions (resample.go: Conv3, ConvDown) in C: the same values to
// the same places, and col2im's additions into each dx element in the same
// order (offsets ascending), so the results are bit-identical to the Go
// loops (TestStencilMovesBits, TestConvMovesBits). In Go they cost one
// indexed load per value and were a large part of these products (a
// profile of BenchmarkStencilMessage: the GEMM 41%, the three loops 45%).
//
// The speed comes from the shape: within a panel of 16 points of a tile,
// an offset (a stencil offset or a stride-1 tap) usually reads 16
// consecutive plane points (it breaks only where a row wraps or the grid
// ends), so each (offset, panel) is checked once and, when consecutive,
// every channel's 16 values move as one contiguous block; other panels
// (and every panel of a stride-2 tap) go value by value as in Go. The loops
// run offset, panel, channel, so the check is shared by the channels; for
// col2im this keeps each dx element's additions in offset order, as in Go
// (one offset adds at most once to an element: a shift of the grid, or a
// tap of a strided convolution, is one to one).
#include <string.h>

#include "patch_amd64.h"

#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define NR 16 // convNR, the packed panels' width

// consecutive reports whether o[0..w) are o[0], o[0]+1, ..., all >= 0.
static inline int consecutive(const int32_t *o, long w) {
	if (o[0] < 0)
		return 0;
	for (long q = 1; q < w; q++)
		if (o[q] != o[0] + q)
			return 0;
	return 1;
}

// gather writes d[q*stride] = xi[o[q]] (0 where o[q] is -1, a dropped
// edge) for q < w: a panel read value by value, as the Go loops read it.
static inline void gather(float *d, long stride, const float *xi, const int32_t *o, long w) {
	for (long q = 0; q < w; q++)
		d[q * stride] = o[q] >= 0 ? xi[o[q]] : 0.0f;
}

CLONES
void uhno_patch_im2col(float *patch, const float *xb, const int32_t *offs, long T, long cin, long sp, long n, long ki, long kt) {
	long panel = T * cin * NR;
	for (long s = 0; s < T; s++) {
		const int32_t *o = offs + s * n;
		for (long pb = 0; pb < n; pb += NR) {
			long w = n - pb < NR ? n - pb : NR;
			float *dst = patch + (pb / NR) * panel + s * kt * NR;
			if (consecutive(o + pb, w)) {
				const float *src = xb + o[pb];
				for (long i = 0; i < cin; i++)
					memcpy(dst + i * ki * NR, src + i * sp, w * sizeof(float));
				continue;
			}
			for (long i = 0; i < cin; i++)
				gather(dst + i * ki * NR, 1, xb + i * sp, o + pb, w);
		}
	}
}

CLONES
void uhno_patch_im2colT(float *patchT, const float *xb, const int32_t *offs, long T, long cin, long sp, long n, long ki, long kt) {
	for (long s = 0; s < T; s++) {
		const int32_t *o = offs + s * n;
		for (long pb = 0; pb < n; pb += NR) {
			long w = n - pb < NR ? n - pb : NR;
			int cons = consecutive(o + pb, w);
			for (long i = 0; i < cin; i++) {
				long k = i * ki + s * kt;
				const float *xi = xb + i * sp;
				float *dst = patchT + (k / NR) * n * NR + k % NR + pb * NR;
				if (cons) {
					const float *src = xi + o[pb];
					for (long q = 0; q < w; q++)
						dst[q * NR] = src[q];
					continue;
				}
				gather(dst, NR, xi, o + pb, w);
			}
		}
	}
}

CLONES
void uhno_patch_col2im(float *dxb, const float *dP, const int32_t *offs, long T, long cin, long sp, long n, long ki, long kt) {
	for (long s = 0; s < T; s++) {
		const int32_t *o = offs + s * n;
		for (long pb = 0; pb < n; pb += NR) {
			long w = n - pb < NR ? n - pb : NR;
			int cons = consecutive(o + pb, w);
			for (long i = 0; i < cin; i++) {
				float *dxi = dxb + i * sp;
				const float *row = dP + (i * ki + s * kt) * n + pb;
				if (cons) {
					float *d = dxi + o[pb];
					for (long q = 0; q < w; q++)
						d[q] += row[q];
					continue;
				}
				for (long q = 0; q < w; q++) {
					int32_t off = o[pb + q];
					if (off >= 0)
						dxi[off] += row[q];
				}
			}
		}
	}
}
