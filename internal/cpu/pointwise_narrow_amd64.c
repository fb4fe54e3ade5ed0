//go:build cgo && amd64

// Pointwise for few channels (pointwise_narrow.go). With three to sixteen
// channels the packed GEMM of gemm_amd64.c spends its time packing and
// filling 6 x 16 register blocks that hold a few useful entries; here each
// output row is computed straight from the input rows, 4 rows by 16 points
// at a time, and the weight gradient is one dot product per (o, i).
//
// Bits. Per point, pw_block does what the GEMM's register block does: a
// sum from zero over k in increasing order, the products fused into the
// additions where the level has FMA (GCC contracts a*b + c at x86-64-v3
// and v4, as it does in gemm_amd64.c), then the bias or the old value
// added. Forward and input gradient are therefore the GEMM path's bits
// (TestPointwiseNarrowBits). The weight gradient's order is its own
// (uhno_pw_narrow_dw_level in the header); pwDotGo is its portable
// reference, equal bit for bit to level 0.
#include <string.h>
#include "pointwise_narrow_amd64.h"
#include "ftz_amd64.h"
#include "level_amd64.h"

#define RB 4         // output rows of a block
#define PB 16        // points of a block (two vectors of 8)
#define NARROW_MAX 32 // = pointwiseNarrowMax in pointwise_narrow.go

typedef float v8 __attribute__((vector_size(32), aligned(4)));

#define splat8(x) ((v8){(x), (x), (x), (x), (x), (x), (x), (x)})

// pw_block computes the m rows of PB points at out (row stride os) from
// the l input rows at in (row stride is).
static inline __attribute__((always_inline)) void pw_block(float *out, long os, long m, const float *a, long ars, long aks,
                                                          const float *in, long is, long l, int add, const float *bias) {
	for (long r0 = 0; r0 < m; r0 += RB) {
		long mr = m - r0 < RB ? m - r0 : RB;
		// Rows past m repeat row r0 (computed, never stored), so the
		// block's four accumulator pairs stay in registers.
		const float *arow[RB];
		for (int r = 0; r < RB; r++)
			arow[r] = a + (r0 + (r < mr ? r : 0)) * ars;
		v8 acc[RB][2];
		for (int r = 0; r < RB; r++)
			acc[r][0] = acc[r][1] = splat8(0.0f);
		for (long k = 0; k < l; k++) {
			v8 x0 = *(const v8 *)(in + k * is), x1 = *(const v8 *)(in + k * is + 8);
			for (int r = 0; r < RB; r++) {
				v8 av = splat8(arow[r][k * aks]);
				acc[r][0] += av * x0;
				acc[r][1] += av * x1;
			}
		}
		for (long r = 0; r < mr; r++) {
			v8 *o0 = (v8 *)(out + (r0 + r) * os), *o1 = (v8 *)(out + (r0 + r) * os + 8);
			if (add) {
				*o0 = *o0 + acc[r][0];
				*o1 = *o1 + acc[r][1];
			} else if (bias) {
				v8 bv = splat8(bias[r0 + r]);
				*o0 = acc[r][0] + bv;
				*o1 = acc[r][1] + bv;
			} else {
				*o0 = acc[r][0];
				*o1 = acc[r][1];
			}
		}
	}
}

// pw_narrow runs pw_block over the points; the last n mod PB go through
// zero-padded copies, the same arithmetic per point.
static inline __attribute__((always_inline)) void pw_narrow(float *out, long os, long m, long n, const float *a, long ars, long aks,
                                                           const float *in, long is, long l, int add, const float *bias) {
	long s = 0;
	for (; s + PB <= n; s += PB)
		pw_block(out + s, os, m, a, ars, aks, in + s, is, l, add, bias);
	if (s == n)
		return;
	long rem = n - s;
	float tin[NARROW_MAX * PB], tout[NARROW_MAX * PB];
	memset(tin, 0, sizeof tin);
	memset(tout, 0, sizeof tout);
	for (long k = 0; k < l; k++)
		memcpy(tin + k * PB, in + k * is + s, rem * sizeof(float));
	if (add)
		for (long r = 0; r < m; r++)
			memcpy(tout + r * PB, out + r * os + s, rem * sizeof(float));
	pw_block(tout, PB, m, a, ars, aks, tin, PB, l, add, bias);
	for (long r = 0; r < m; r++)
		memcpy(out + r * os + s, tout + r * PB, rem * sizeof(float));
}

// tree32 combines 32 partial sums pairwise by halving: lane j with lane
// j + 16, then j + 8, 4, 2, 1 (whole vectors at the first steps).
static inline __attribute__((always_inline)) float tree32(float *t) {
	for (int w = 16; w >= 1; w /= 2)
		for (int j = 0; j < w; j++)
			t[j] = t[j] + t[j + w];
	return t[0];
}

// pw_dw is uhno_pw_narrow_dw_level's loop: for each (o, i) four vector
// accumulators hold the 32 lanes (lane 8q + j in vector q).
static inline __attribute__((always_inline)) void pw_dw(float *p, const float *dy, long cout, const float *x, long cin, long sp) {
	for (long o = 0; o < cout; o++) {
		const float *d = dy + o * sp;
		for (long i = 0; i < cin; i++) {
			const float *xi = x + i * sp;
			v8 a0 = splat8(0.0f), a1 = a0, a2 = a0, a3 = a0;
			long s = 0;
			for (; s + 32 <= sp; s += 32) {
				a0 += *(const v8 *)(d + s) * *(const v8 *)(xi + s);
				a1 += *(const v8 *)(d + s + 8) * *(const v8 *)(xi + s + 8);
				a2 += *(const v8 *)(d + s + 16) * *(const v8 *)(xi + s + 16);
				a3 += *(const v8 *)(d + s + 24) * *(const v8 *)(xi + s + 24);
			}
			float t[32];
			memcpy(t, &a0, sizeof a0);
			memcpy(t + 8, &a1, sizeof a1);
			memcpy(t + 16, &a2, sizeof a2);
			memcpy(t + 24, &a3, sizeof a3);
			for (long j = 0; s + j < sp; j++)
				t[j] += d[s + j] * xi[s + j];
			p[o * cin + i] = tree32(t);
		}
	}
}

__attribute__((target("arch=x86-64-v4"))) static void pw_narrow_v4(float *out, long os, long m, long n, const float *a, long ars, long aks, const float *in, long is, long l, int add, const float *bias) {
	pw_narrow(out, os, m, n, a, ars, aks, in, is, l, add, bias);
}

__attribute__((target("arch=x86-64-v3"))) static void pw_narrow_v3(float *out, long os, long m, long n, const float *a, long ars, long aks, const float *in, long is, long l, int add, const float *bias) {
	pw_narrow(out, os, m, n, a, ars, aks, in, is, l, add, bias);
}

static void pw_narrow_default(float *out, long os, long m, long n, const float *a, long ars, long aks, const float *in, long is, long l, int add, const float *bias) {
	pw_narrow(out, os, m, n, a, ars, aks, in, is, l, add, bias);
}

__attribute__((target("arch=x86-64-v4"))) static void pw_dw_v4(float *p, const float *dy, long cout, const float *x, long cin, long sp) {
	pw_dw(p, dy, cout, x, cin, sp);
}

__attribute__((target("arch=x86-64-v3"))) static void pw_dw_v3(float *p, const float *dy, long cout, const float *x, long cin, long sp) {
	pw_dw(p, dy, cout, x, cin, sp);
}

static void pw_dw_default(float *p, const float *dy, long cout, const float *x, long cin, long sp) {
	pw_dw(p, dy, cout, x, cin, sp);
}

int uhno_pw_narrow_level(int level, float *out, long os, long m, long n, const float *a, long ars, long aks,
                         const float *in, long is, long l, int add, const float *bias) {
	if (level < 0)
		level = uhno_cpu_level();
	if (level > uhno_cpu_level() || m > NARROW_MAX || l > NARROW_MAX)
		return -1;
	unsigned mxcsr = uhno_ftz_enter();
	switch (level) {
	case 2:
		pw_narrow_v4(out, os, m, n, a, ars, aks, in, is, l, add, bias);
		break;
	case 1:
		pw_narrow_v3(out, os, m, n, a, ars, aks, in, is, l, add, bias);
		break;
	default:
		pw_narrow_default(out, os, m, n, a, ars, aks, in, is, l, add, bias);
	}
	uhno_ftz_leave(mxcsr);
	return 0;
}

int uhno_pw_narrow_dw_level(int level, float *p, const float *dy, long cout, const float *x, long cin, long sp) {
	if (level < 0)
		level = uhno_cpu_level();
	if (level > uhno_cpu_level())
		return -1;
	unsigned mxcsr = uhno_ftz_enter();
	switch (level) {
	case 2:
		pw_dw_v4(p, dy, cout, x, cin, sp);
		break;
	case 1:
		pw_dw_v3(p, dy, cout, x, cin, sp);
		break;
	default:
		pw_dw_default(p, dy, cout, x, cin, sp);
	}
	uhno_ftz_leave(mxcsr);
	return 0;
}
