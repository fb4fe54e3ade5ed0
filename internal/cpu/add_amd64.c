//go:build cgo && amd64

// axpy and the interleaved partial sums (axpyGo and addInterleavedGo in
// Go), as vector loops: AVX-512 / AVX2 / SSE2 clones chosen at load time.
//
// Both give the Go loops' bits exactly. Each element of axpy is one
// correctly rounded multiply and one correctly rounded add, whatever the
// vector width, provided the compiler does not fuse them into an FMA
// (fp-contract=off below; GCC fuses by default wherever the target has
// FMA). addInterleaved keeps eight running sums, one per lane of an
// 8-float vector, each added to in the order of i as the Go loop adds to
// p[i%8]: no reassociation (no -ffast-math). MXCSR is left alone (no
// flush-to-zero, unlike ftz_amd64.h's kernels): subnormal gradients add
// as they do in Go. TestAddFastBits compares both with the Go loops bit
// for bit.
#pragma GCC optimize("fp-contract=off")

#include <string.h>

#include "add_amd64.h"

#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

CLONES void uhno_axpy(float *y, const float *x, long n, float a) { // no restrict: GCC checks overlap at run time
	for (long i = 0; i < n; i++)
		y[i] += a * x[i];
}

typedef float v8 __attribute__((vector_size(32), aligned(4))); // 8 floats, float-aligned

CLONES void uhno_add_interleaved(float *restrict p, const float *restrict row, long n) {
	v8 s;
	memcpy(&s, p, sizeof s);
	long i = 0;
	for (; i + 8 <= n; i += 8)
		s += *(const v8 *)(row + i);
	memcpy(p, &s, sizeof s);
	for (; i < n; i++)
		p[i % 8] += row[i];
}
