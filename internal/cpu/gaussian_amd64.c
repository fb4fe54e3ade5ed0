#include <stdint.h>
#include "ftz_amd64.h"
#include <string.h>

#include "gaussian_amd64.h"

// Vectorised axis pass of the Gaussian convolution (gaussian.go).
//
// The pass is written once (gaussian_pass_amd64.h) with GCC vector
// extensions and instantiated three times: 16 floats per vector for
// x86-64-v4 (AVX-512), 8 for x86-64-v3 (AVX2+FMA) and 8 for the portable
// default target. uhno_gauss_axis picks the best the CPU supports at run
// time (the hand-written equivalent of target_clones, which also lets the
// tests run every instantiation), so the binary runs on any x86-64. Vector
// types are declared with 4-byte alignment and may_alias, so loads and
// stores are plain unaligned moves on float arrays.

#define AI static inline __attribute__((always_inline))

// Register blocking: a block is R runs by V vectors with R*V = 4
// independent accumulators per output (eight when B is formed too), so
// that the FMA latency hides behind the loads.
#define MAXR 4
#define MAXV 4

// Scalar tails fuse explicitly, as the contracted vector code does, so that
// every mode computes K s with the same roundings (the compiler's own
// contraction of scalar code varies from one specialisation to the next).
// Without FMA hardware (portable target) this is a libm call, tails only.
#define FMA(a, b, c) __builtin_fmaf(a, b, c)

// AVX-512: 16 floats per vector.
typedef float v16 __attribute__((vector_size(64), aligned(4), may_alias));
#define VW 16
#define VEC v16
#define PASS pass16
#define PASS_ATTR __attribute__((target("arch=x86-64-v4")))
#include "gaussian_pass_amd64.h"

// AVX2 and the portable default: 8 floats per vector (one AVX register,
// two SSE registers). A 16-float vector without AVX-512 would be lowered
// through memory, hence the separate instantiations.
typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
#define VW 8
#define VEC v8
#define PASS pass8avx2
#define PASS_ATTR __attribute__((target("arch=x86-64-v3")))
#include "gaussian_pass_amd64.h"

#define VW 8
#define VEC v8
#define PASS pass8
#define PASS_ATTR
#include "gaussian_pass_amd64.h"

int uhno_gauss_best_isa(void) {
	if (__builtin_cpu_supports("x86-64-v4"))
		return 2;
	if (__builtin_cpu_supports("x86-64-v3"))
		return 1;
	return 0;
}

double uhno_gauss_axis(float *z, float *z2, const float *s, const float *s2, const float *e, const float *k,
                       const float *dk, int r, int outer, int n, int inner, int add, float *scratch, int isa) {
	unsigned uhno_mxcsr = uhno_ftz_enter();
	if (isa < 0)
		isa = uhno_gauss_best_isa();
	const int line = inner == 1;
	const int vw = isa == 2 ? 16 : 8;
	// Circular offset table: tap d of the run centred at table index t
	// reads base + off[t + d]. Lines are padded, so off[r + d] = d; rows of
	// the strided axis are read in place, off[i + r + d] = ((i+d) mod n) inner.
	int off[line ? 2 * r + 1 : n + 2 * r];
	if (line)
		for (int t = 0; t <= 2 * r; t++)
			off[t] = t - r;
	else
		for (int t = 0; t < n + 2 * r; t++)
			off[t] = ((t - r + n) % n) * inner;
	// Line padding of p >= r points each side: a whole vector when it fits.
	const int p = r <= vw && n >= vw ? vw : r;
	const int padw = n + 2 * p;
	// Start the padded lines on a cache line (scratch has 16 spare floats),
	// so that their centre loads are aligned when n is a multiple of 16.
	scratch = (float *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
	double sum;
	if (isa == 2)
		sum = pass16(z, z2, s, s2, e, k, dk, r, outer, n, inner, add, scratch, off, padw);
	else if (isa == 1)
		sum = pass8avx2(z, z2, s, s2, e, k, dk, r, outer, n, inner, add, scratch, off, padw);
	else
		sum = pass8(z, z2, s, s2, e, k, dk, r, outer, n, inner, add, scratch, off, padw);
	uhno_ftz_leave(uhno_mxcsr);
	return sum;
}
