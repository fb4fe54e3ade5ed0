//go:build cgo && amd64

// An FMA-bound loop for BenchmarkPeak: the machine's float32 arithmetic
// peak, the "against the peak" figure of docs/PERFORMANCE.md. Twelve
// independent accumulators of 16 floats hide the FMA latency (4 cycles,
// two ports: 8 in flight at least); each iteration does 12 x 16 FMAs = 384
// flops. The AVX-512 level only: on other CPUs it reports -1.
#include "peak_amd64.h"

typedef float v16 __attribute__((vector_size(64)));

__attribute__((target("arch=x86-64-v4"))) static float peak_fma16(long iters) {
	v16 acc[12];
	v16 a, b;
	for (int j = 0; j < 16; j++) {
		a[j] = 0.999999f;
		b[j] = 1e-7f;
	}
	for (int r = 0; r < 12; r++)
		acc[r] = b * (float)(r + 1);
	for (long i = 0; i < iters; i++)
		for (int r = 0; r < 12; r++)
			acc[r] = acc[r] * a + b; // contracted to one FMA
	float s = 0;
	for (int r = 0; r < 12; r++)
		for (int j = 0; j < 16; j++)
			s += acc[r][j];
	return s;
}

float uhno_peak_fma(long iters) {
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f"))
		return -1;
	return peak_fma16(iters);
}
