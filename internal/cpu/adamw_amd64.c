//go:build cgo && amd64

// AdamW update as one vectorised pass over p, g, m, v.
//
// Each element is computed in float64 from its float32 values, in exactly
// the order of adamwGo (adamw.go), and rounded once per stored buffer.
// IEEE add, mul, div and sqrt are correctly rounded, so a lane of a vector
// float64 instruction gives the same bits as the scalar instruction: the
// result is bit-identical to adamwGo provided the compiler neither fuses a
// multiply into an add (fp-contract=off below; GCC's default for GNU C is
// to fuse wherever the target has FMA) nor reassociates (no -ffast-math).
// TestAdamWKernelBits compares every level with adamwGo bit for bit.
//
// The loop is written with GCC vector extensions over 8 elements (one
// AVX-512 register of doubles; two AVX2 or four SSE2 registers on the
// narrower levels), and sqrt with each level's intrinsic: a plain sqrt()
// keeps an errno branch that stops GCC's vectoriser, and cgo refuses
// -fno-math-errno.
//
// Unlike the other kernels this one leaves MXCSR alone (no flush-to-zero):
// float32 subnormals must convert exactly, as they do in Go.
#pragma GCC optimize("fp-contract=off")

#include <immintrin.h>
#include <string.h>

#include "adamw_amd64.h"
#include "level_amd64.h"

typedef double vd __attribute__((vector_size(64)));            // 8 doubles
typedef float vf __attribute__((vector_size(32), aligned(4))); // 8 floats, float-aligned

#define load8(x) __builtin_convertvector(*(const vf *)(x), vd)
#define store8(x, d) (*(vf *)(x) = __builtin_convertvector((d), vf))

// *x = sqrt(*x) for 8 doubles at each level (by pointer: a 64-byte
// vector passed by value has a different ABI on each target).
__attribute__((target("arch=x86-64-v4"))) static inline void sqrt_v4(vd *x) {
	__m512d h;
	memcpy(&h, x, sizeof h);
	h = _mm512_sqrt_pd(h);
	memcpy(x, &h, sizeof h);
}

__attribute__((target("arch=x86-64-v3"))) static inline void sqrt_v3(vd *x) {
	__m256d h[2];
	memcpy(h, x, sizeof h);
	h[0] = _mm256_sqrt_pd(h[0]);
	h[1] = _mm256_sqrt_pd(h[1]);
	memcpy(x, h, sizeof h);
}

static inline void sqrt_sse2(vd *x) {
	__m128d h[4];
	memcpy(h, x, sizeof h);
	for (int j = 0; j < 4; j++)
		h[j] = _mm_sqrt_pd(h[j]);
	memcpy(x, h, sizeof h);
}

// adamw_body is the loop every level compiles; the constants are those of
// adamwConsts in adamw.go: c1 = 1-b1, c2 = 1-b2, decay = 1 - lr wd,
// step = lr / (1-b1^t), bc2 = sqrt(1-b2^t). The expressions are adamwGo's,
// operand for operand (Go evaluates a*b*c as (a*b)*c, as C does).
static inline __attribute__((always_inline)) void adamw_body(float *p, const float *g, float *m, float *v, long n, const struct uhno_adamw_consts *k, void (*vsqrt)(vd *)) {
	const double b1 = k->b1, c1 = k->c1, b2 = k->b2, c2 = k->c2;
	const double decay = k->decay, step = k->step, bc2 = k->bc2, eps = k->eps;
	long i = 0;
	for (; i + 8 <= n; i += 8) {
		vd gi = load8(g + i);
		vd mi = b1 * load8(m + i) + c1 * gi;
		vd vi = b2 * load8(v + i) + c2 * gi * gi;
		store8(m + i, mi);
		store8(v + i, vi);
		vd s = vi;
		vsqrt(&s);
		store8(p + i, load8(p + i) * decay - step * mi / (s / bc2 + eps));
	}
	for (; i < n; i++) {
		double gi = g[i];
		double mi = b1 * (double)m[i] + c1 * gi;
		double vi = b2 * (double)v[i] + c2 * gi * gi;
		m[i] = (float)mi;
		v[i] = (float)vi;
		p[i] = (float)((double)p[i] * decay - step * mi / (__builtin_sqrt(vi) / bc2 + eps));
	}
}

__attribute__((target("arch=x86-64-v4"))) static void adamw_v4(float *p, const float *g, float *m, float *v, long n, const struct uhno_adamw_consts *k) {
	adamw_body(p, g, m, v, n, k, sqrt_v4);
}

__attribute__((target("arch=x86-64-v3"))) static void adamw_v3(float *p, const float *g, float *m, float *v, long n, const struct uhno_adamw_consts *k) {
	adamw_body(p, g, m, v, n, k, sqrt_v3);
}

static void adamw_default(float *p, const float *g, float *m, float *v, long n, const struct uhno_adamw_consts *k) {
	adamw_body(p, g, m, v, n, k, sqrt_sse2);
}

int uhno_adamw_level(int level, float *p, const float *g, float *m, float *v, long n, const struct uhno_adamw_consts *k) {
	if (level < 0)
		level = uhno_cpu_level();
	else if (level > uhno_cpu_level())
		return -1;
	switch (level) {
	case 2:
		adamw_v4(p, g, m, v, n, k);
		break;
	case 1:
		adamw_v3(p, g, m, v, n, k);
		break;
	default:
		adamw_default(p, g, m, v, n, k);
	}
	return 0;
}
