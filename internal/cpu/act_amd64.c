// GELU forward and backward without libm calls, so GCC vectorises the loops
// (AVX-512 / AVX2 / SSE2 clones chosen at load time).
//
// gelu(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, gelu'(x) = Phi(x) + x phi(x).
// erf is a rational minimax approximation x P(x^2) / Q(x^2) on [-4, 4]
// (erf is +-1 in float32 beyond), and exp(-x^2/2) uses a Cody-Waite
// reduction with a degree-6 Taylor polynomial. Both stay within a few float32
// ulp of the float64 reference; TestGELUFast checks 2e-6 absolute.
#include "act_amd64.h"
#include "ftz_amd64.h"

#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

static inline float erf_approx(float a) {
	float x = a > 4.0f ? 4.0f : (a < -4.0f ? -4.0f : a);
	float x2 = x * x;
	float p = -2.72614225801306e-10f;
	p = p * x2 + 2.77068142495902e-08f;
	p = p * x2 + -2.10102402082508e-06f;
	p = p * x2 + -5.69250639462346e-05f;
	p = p * x2 + -7.34990630326855e-04f;
	p = p * x2 + -2.95459980854025e-03f;
	p = p * x2 + -1.60960333262415e-02f;
	float q = -1.45660718464996e-05f;
	q = q * x2 + -2.13374055278905e-04f;
	q = q * x2 + -1.68282697438203e-03f;
	q = q * x2 + -7.37332916720468e-03f;
	q = q * x2 + -1.42647390514189e-02f;
	return x * p / q;
}

// exp(v) for v in [-88, 0] (the callers pass -x^2/2).
static inline float exp_neg(float v) {
	v = v < -87.0f ? -87.0f : v;
	// Round to nearest by adding and subtracting 1.5 * 2^23 (no libm call,
	// so the loop vectorises on every target).
	float n = (v * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
	float r = v - n * 0.693359375f;       // ln 2, high part (exact in float32)
	r = r - n * -2.12194440e-4f;          // ln 2, low part
	float p = 1.0f / 720.0f;
	p = p * r + 1.0f / 120.0f;
	p = p * r + 1.0f / 24.0f;
	p = p * r + 1.0f / 6.0f;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	union { float f; int i; } s;
	s.i = ((int)n + 127) << 23;           // 2^n, n in [-126, 0]
	return p * s.f;
}

// The GELU loops, written once and expanded into each variant below (a
// macro rather than an inline function, so the clones' text, and with it
// their code, is what it was before the AVX2 variant was added).
#define GELU_LOOP \
	for (long i = 0; i < n; i++) { \
		float v = x[i]; \
		y[i] = 0.5f * v * (1.0f + erf_approx(v * 0.70710678118654752f)); \
	}
#define GELU_BACKWARD_LOOP \
	for (long i = 0; i < n; i++) { \
		float v = x[i]; \
		float cdf = 0.5f * (1.0f + erf_approx(v * 0.70710678118654752f)); \
		float pdf = 0.39894228040143268f * exp_neg(-0.5f * v * v); \
		dx[i] += dy[i] * (cdf + v * pdf); \
	}

// The AVX-512 and baseline variants, exactly as before the AVX2 variant
// below was added (the same text, so GCC compiles them to the same code;
// the AVX2 clone they also make is no longer called).
CLONES
void uhno_gelu_clones(float *y, const float *x, long n) {
	unsigned uhno_mxcsr = uhno_ftz_enter();
	GELU_LOOP
	uhno_ftz_leave(uhno_mxcsr);
}

CLONES
void uhno_gelu_backward_clones(float *dx, const float *dy, const float *x, long n) {
	unsigned uhno_mxcsr = uhno_ftz_enter();
	GELU_BACKWARD_LOOP
	uhno_ftz_leave(uhno_mxcsr);
}

// The AVX2 variant without GCC's partial redundancy elimination: with it,
// GCC sees that erf_approx of a clamped +-4 (and exp_neg of a clamped -87)
// is a constant, moves the polynomials under branches, and a loop with
// branches is not vectorised for AVX2 (AVX-512's masks if-convert it, so
// that clone always was). The AVX2 clone ran one lane; this one runs eight,
// 5x (forward) and 7x (backward) faster (PERFORMANCE, "GELU on AVX2").
// The forward keeps the scalar loop's bits; the backward differs from it
// by at most 1.2e-7 (one float32 ulp near 1) on about 4% of elements, GCC
// arranging its multiply-adds otherwise, well inside TestGELUFast's 2e-6 of
// the float64 reference (TestGELUFastBits pins both; D-gelu-avx2). Only
// AVX2 machines' code changes: the other clones compile as before.
#define AVX2_NO_PRE __attribute__((target("arch=x86-64-v3"), optimize("no-tree-pre")))
AVX2_NO_PRE static void gelu_avx2(float *y, const float *x, long n) {
	GELU_LOOP
}

AVX2_NO_PRE static void gelu_backward_avx2(float *dx, const float *dy, const float *x, long n) {
	GELU_BACKWARD_LOOP
}

// useAVX2 is true where the clones' resolver would take the x86-64-v3
// clone: AVX2 and FMA (v3) without the whole of x86-64-v4.
static int useAVX2(void) {
	static int use = -1;
	if (use < 0) {
		__builtin_cpu_init();
		use = __builtin_cpu_supports("x86-64-v3") && !__builtin_cpu_supports("x86-64-v4");
	}
	return use;
}

void uhno_gelu(float *y, const float *x, long n) {
	if (!useAVX2()) {
		uhno_gelu_clones(y, x, n);
		return;
	}
	unsigned uhno_mxcsr = uhno_ftz_enter();
	gelu_avx2(y, x, n);
	uhno_ftz_leave(uhno_mxcsr);
}

void uhno_gelu_backward(float *dx, const float *dy, const float *x, long n) {
	if (!useAVX2()) {
		uhno_gelu_backward_clones(dx, dy, x, n);
		return;
	}
	unsigned uhno_mxcsr = uhno_ftz_enter();
	gelu_backward_avx2(dx, dy, x, n);
	uhno_ftz_leave(uhno_mxcsr);
}

// ReLU and its backward as branch-free selects, which GCC vectorises
// (compare and blend): the Go loops branch on the sign of every element
// and mispredict about half the time on activations. Exact: y is x or +0
// as in Go (a NaN gives +0, as `v > 0` is false), and dx is left
// untouched where x <= 0 rather than added +0 to (which would turn a -0
// into +0). No flush-to-zero here: a positive subnormal x must pass, as in
// Go. TestReLUFast compares both with the Go loops bit for bit.
CLONES
void uhno_relu(float *y, const float *x, long n) {
	for (long i = 0; i < n; i++) {
		float v = x[i];
		y[i] = v > 0.0f ? v : 0.0f;
	}
}

CLONES
void uhno_relu_backward(float *dx, const float *dy, const float *x, long n) {
	// A bitwise select rather than `x > 0 ? s : dx`: GCC turns that into a
	// store only where x > 0, a branch that only AVX-512's masked stores
	// vectorise; the select writes dx back unchanged (the same bits) where
	// x <= 0 and vectorises on AVX2 too.
	for (long i = 0; i < n; i++) {
		union { float f; unsigned u; } s, d;
		s.f = dx[i] + dy[i];
		d.f = dx[i];
		unsigned keep = -(unsigned)(x[i] > 0.0f); // all ones where x > 0
		d.u = (s.u & keep) | (d.u & ~keep);
		dx[i] = d.f;
	}
}
