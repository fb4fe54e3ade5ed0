//go:build cgo && amd64

// The db4 wavelet transform of one plane (wavelet.go's waveletPlane),
// vectorised and bit-identical to the Go code it replaces.
//
// Every output of one analysis or synthesis step is the same sum, in the
// same order, as in dwtLine and idwtLine: the taps t = 0..7 (forward) or
// the products h[t] a, g[t] d for t = j mod 2, j mod 2 + 2, ... (inverse),
// each product rounded to float32 and added left to right. The compiler
// may neither fuse a multiply into an add (fp-contract=off below; GCC's
// default for GNU C fuses wherever the target has FMA) nor reassociate (no
// -ffast-math), and vector lanes round as the scalar instructions do, so
// the vectorised loops give Go's bits. The Go loops start some sums from a
// zero (`var a float32; a += ...`), which turns a first product of -0 into
// +0; the kernels add 0.0f to the first product of exactly those outputs.
// MXCSR is left alone (no flush-to-zero), as in Go. TestWaveletPlaneBits
// compares the kernel with waveletPlaneGo bit for bit.
//
// The vectors run along the contiguous (last) axis:
//   - a step along an outer axis mixes whole rows: output row k is
//     sum_t h[t] row[(2k+t) mod L], a loop over the row's points;
//   - a step along the last axis splits the line into its even and odd
//     points, periodically extended by three, so that
//     a[k] = h0 e[k] + h1 o[k] + h2 e[k+1] + ... + h7 o[k+3] reads
//     contiguous, shifted runs (and the inverse writes even and odd
//     outputs from shifted runs of a and d, then interleaves them).
#pragma GCC optimize("fp-contract=off")

#include "wavelet_amd64.h"

#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

// The db4 filters in float32, in tensor.DB4's values (rounded from
// float64 as Go's float32() does: round to nearest).
static const float LO[8] = {
	(float)0.2303778133088964, (float)0.7148465705529154, (float)0.6308807679298587, (float)-0.0279837694168599,
	(float)-0.1870348117190931, (float)0.0308413818355607, (float)0.0328830116668852, (float)-0.0105974017850690,
};

// HI[t] = (-1)^t LO[7-t].
static const float HI[8] = {
	(float)-0.0105974017850690, (float)-0.0328830116668852, (float)0.0308413818355607, (float)0.1870348117190931,
	(float)-0.0279837694168599, (float)-0.6308807679298587, (float)0.7148465705529154, (float)-0.2303778133088964,
};

// rows_forward writes the analysis step of L rows (each n floats, row r
// at src + r*n) into dst (row k at dst + k*ds): rows k < L/2 the
// approximation, rows L/2 + k the detail.
static inline void rows_forward(float *restrict dst, long ds, const float *restrict src, long L, long n) {
	long h = L / 2;
	for (long k = 0; k < h; k++) {
		const float *s[8];
		for (int t = 0; t < 8; t++)
			s[t] = src + ((2 * k + t) % L) * n;
		float *restrict a = dst + k * ds, *restrict d = dst + (h + k) * ds;
		// Go's dwtLine starts the sum from zero where 2k+8 > L.
		float z = 2 * k + 8 > L ? 0.0f : -0.0f;
		for (long i = 0; i < n; i++) {
			float va = z + LO[0] * s[0][i];
			float vd = z + HI[0] * s[0][i];
			va += LO[1] * s[1][i];
			vd += HI[1] * s[1][i];
			va += LO[2] * s[2][i];
			vd += HI[2] * s[2][i];
			va += LO[3] * s[3][i];
			vd += HI[3] * s[3][i];
			va += LO[4] * s[4][i];
			vd += HI[4] * s[4][i];
			va += LO[5] * s[5][i];
			vd += HI[5] * s[5][i];
			va += LO[6] * s[6][i];
			vd += HI[6] * s[6][i];
			va += LO[7] * s[7][i];
			vd += HI[7] * s[7][i];
			a[i] = va;
			d[i] = vd;
		}
	}
}

// rows_inverse writes the synthesis step of the rows [a | d] (L rows of n
// floats at src) into dst (row j at dst + j*ds).
static inline void rows_inverse(float *restrict dst, long ds, const float *restrict src, long L, long n) {
	long h = L / 2;
	for (long j = 0; j < L; j++) {
		int p = (int)(j & 1);
		const float *a[4], *d[4];
		for (int q = 0; q < 4; q++) {
			long t = p + 2 * q;
			long k = (((j - t) % L + L) % L) / 2;
			a[q] = src + k * n;
			d[q] = src + (h + k) * n;
		}
		float *restrict o = dst + j * ds;
		// Go's idwtLine starts the sum from zero for j < 8.
		float z = j < 8 ? 0.0f : -0.0f;
		for (long i = 0; i < n; i++) {
			float v = z + LO[p] * a[0][i];
			v += HI[p] * d[0][i];
			v += LO[p + 2] * a[1][i];
			v += HI[p + 2] * d[1][i];
			v += LO[p + 4] * a[2][i];
			v += HI[p + 4] * d[2][i];
			v += LO[p + 6] * a[3][i];
			v += HI[p + 6] * d[3][i];
			o[i] = v;
		}
	}
}

// analysis writes output pair k of an analysis step from the line's even
// and odd points e, o (periodically extended by three): the taps in order
// t = 0..7, the sum started from z (-0.0f, the additive identity, or 0.0f
// where Go's sum starts from a zero).
static inline void analysis(const float *e, const float *o, long k, float z, float *a, float *d) {
	float va = z + LO[0] * e[k];
	float vd = z + HI[0] * e[k];
	va += LO[1] * o[k];
	vd += HI[1] * o[k];
	va += LO[2] * e[k + 1];
	vd += HI[2] * e[k + 1];
	va += LO[3] * o[k + 1];
	vd += HI[3] * o[k + 1];
	va += LO[4] * e[k + 2];
	vd += HI[4] * e[k + 2];
	va += LO[5] * o[k + 2];
	vd += HI[5] * o[k + 2];
	va += LO[6] * e[k + 3];
	vd += HI[6] * e[k + 3];
	va += LO[7] * o[k + 3];
	vd += HI[7] * o[k + 3];
	*a = va;
	*d = vd;
}

// synthesis writes the even and odd outputs 2m, 2m+1 of a synthesis step
// from the coefficients ae, de (periodically extended by three in front):
// the products h[t] a, g[t] d in Go's order, the sums started from z.
static inline void synthesis(const float *ae, const float *de, long m, float z, float *ev, float *ov) {
	float v = z + LO[0] * ae[m + 3];
	float u = z + LO[1] * ae[m + 3];
	v += HI[0] * de[m + 3];
	u += HI[1] * de[m + 3];
	v += LO[2] * ae[m + 2];
	u += LO[3] * ae[m + 2];
	v += HI[2] * de[m + 2];
	u += HI[3] * de[m + 2];
	v += LO[4] * ae[m + 1];
	u += LO[5] * ae[m + 1];
	v += HI[4] * de[m + 1];
	u += HI[5] * de[m + 1];
	v += LO[6] * ae[m];
	u += LO[7] * ae[m];
	v += HI[6] * de[m];
	u += HI[7] * de[m];
	*ev = v;
	*ov = u;
}

// line_forward transforms the contiguous line x (length L, even) in place;
// w holds 2 (L/2 + 3) + L floats.
static inline void line_forward(float *restrict x, long L, float *restrict w) {
	long h = L / 2;
	float *restrict e = w, *restrict od = w + h + 3, *restrict out = w + 2 * (h + 3);
	for (long m = 0; m < h; m++) {
		e[m] = x[2 * m];
		od[m] = x[2 * m + 1];
	}
	// The periodic extension: e[m] = x[2m mod L] = e[m mod h].
	for (long m = h; m < h + 3; m++) {
		e[m] = e[m % h];
		od[m] = od[m % h];
	}
	for (long k = 0; k < h; k++)
		analysis(e, od, k, -0.0f, out + k, out + h + k);
	// The outputs Go's dwtLine sums from zero (2k+8 > L), recomputed so.
	for (long k = h > 3 ? h - 3 : 0; k < h; k++)
		analysis(e, od, k, 0.0f, out + k, out + h + k);
	for (long i = 0; i < L; i++)
		x[i] = out[i];
}

// line_inverse transforms the contiguous line x = [a | d] (length L,
// even) in place; w holds 2 (L/2 + 3) + L floats.
static inline void line_inverse(float *restrict x, long L, float *restrict w) {
	long h = L / 2;
	// ae[m] = a[(m - 3) mod h], de likewise: even output m reads
	// a[m], a[m-1], a[m-2], a[m-3] = ae[m+3], ..., ae[m].
	float *restrict ae = w, *restrict de = w + h + 3, *restrict out = w + 2 * (h + 3);
	for (long m = 3; m < h + 3; m++) {
		ae[m] = x[m - 3];
		de[m] = x[h + m - 3];
	}
	for (long m = 0; m < 3; m++) {
		long k = ((m - 3) % h + h) % h;
		ae[m] = x[k];
		de[m] = x[h + k];
	}
	float *restrict ev = out, *restrict ov = out + h;
	for (long m = 0; m < h; m++)
		synthesis(ae, de, m, -0.0f, ev + m, ov + m);
	// The outputs Go's idwtLine sums from zero (j < 8: m < 4), recomputed so.
	for (long m = 0; m < (h < 4 ? h : 4); m++)
		synthesis(ae, de, m, 0.0f, ev + m, ov + m);
	for (long m = 0; m < h; m++) {
		x[2 * m] = ev[m];
		x[2 * m + 1] = ov[m];
	}
}

// step transforms the corner of level l along axis a of the plane p
// (shape n[3], real[3]) in place.
static inline void step(float *p, const long n[3], const int real[3], int l, int a, int inverse, float *w) {
	long r[3];
	for (int b = 0; b < 3; b++)
		r[b] = real[b] ? n[b] >> (l - 1) : n[b];
	long stride[3] = {n[1] * n[2], n[2], 1};
	long L = r[a];
	if (a == 2) {
		for (long i0 = 0; i0 < r[0]; i0++)
			for (long i1 = 0; i1 < r[1]; i1++) {
				float *x = p + i0 * stride[0] + i1 * stride[1];
				if (inverse)
					line_inverse(x, L, w);
				else
					line_forward(x, L, w);
			}
		return;
	}
	// An outer axis: for every index of the other outer axis, the L rows
	// (r[2] points each) along axis a, copied to w and written back
	// transformed.
	int o = a == 0 ? 1 : 0;
	long n2 = r[2];
	for (long io = 0; io < r[o]; io++) {
		float *base = p + io * stride[o];
		for (long j = 0; j < L; j++)
			for (long i = 0; i < n2; i++)
				w[j * n2 + i] = base[j * stride[a] + i];
		if (inverse)
			rows_inverse(base, stride[a], w, L, n2);
		else
			rows_forward(base, stride[a], w, L, n2);
	}
}

CLONES
void uhno_wavelet_plane(float *p, long n0, long n1, long n2, int realmask, int levels, int inverse, float *w) {
	const long n[3] = {n0, n1, n2};
	const int real[3] = {realmask & 1, (realmask >> 1) & 1, (realmask >> 2) & 1};
	if (!inverse) {
		for (int l = 1; l <= levels; l++)
			for (int a = 0; a < 3; a++)
				if (real[a])
					step(p, n, real, l, a, 0, w);
		return;
	}
	for (int l = levels; l >= 1; l--)
		for (int a = 2; a >= 0; a--)
			if (real[a])
				step(p, n, real, l, a, 1, w);
}
