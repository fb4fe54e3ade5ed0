//go:build cgo

// The spectral convolution's kernels (spectral.go): small dense matrix
// products for the truncated DFTs and the per-mode-row channel mixing.
// They are written with GCC vector extensions so that -O3 with
// target_clones builds an AVX2+FMA version and a baseline x86-64 (SSE2)
// one, picked at load time, so the binary runs on any x86-64. The channel
// mixing also has an AVX-512 version (rowmix16_v4), picked at run time
// like the conv GEMM's levels (gemm_amd64.c) and giving the AVX2 version's
// bits. Each computes what sgemmGo, cgemmGo and rowmixGo compute (the
// tests compare them), summing over the inner index in the same order;
// only the rounding differs (FMA).

#include <string.h>
#include "ftz_amd64.h"

#include "spectral_gemm.h"
#include "level_amd64.h"

typedef float v8 __attribute__((vector_size(32)));
typedef int v8i __attribute__((vector_size(32)));

#define CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define INLINE static inline __attribute__((always_inline))

INLINE v8 load8(const float *p) {
	v8 v;
	memcpy(&v, p, sizeof v);
	return v;
}

INLINE void store8(float *p, v8 v) { memcpy(p, &v, sizeof v); }

// splat broadcasts s (vector + scalar compiles to one vbroadcastss).
INLINE v8 splat(float s) { return (v8){0} + s; }

// sgemm_tile computes an R x (8 V) block of c = a b (+ c when acc).
INLINE void sgemm_tile(const int R, const int V, long k, const float *a, long lda,
                       const float *b, long ldb, float *c, long ldc, int acc) {
	v8 s[4][3];
	for (int r = 0; r < R; r++)
		for (int v = 0; v < V; v++)
			s[r][v] = acc ? load8(c + r * ldc + 8 * v) : splat(0);
	for (long p = 0; p < k; p++) {
		v8 bv[3];
		for (int v = 0; v < V; v++)
			bv[v] = load8(b + p * ldb + 8 * v);
		for (int r = 0; r < R; r++) {
			v8 av = splat(a[r * lda + p]);
			for (int v = 0; v < V; v++)
				s[r][v] += av * bv[v];
		}
	}
	for (int r = 0; r < R; r++)
		for (int v = 0; v < V; v++)
			store8(c + r * ldc + 8 * v, s[r][v]);
}

// sgemm_cols runs one column strip of 8 V columns over all m rows.
INLINE void sgemm_cols(const int V, long m, long k, const float *a, long lda,
                       const float *b, long ldb, float *c, long ldc, int acc) {
	long i = 0;
	for (; i + 4 <= m; i += 4)
		sgemm_tile(4, V, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, acc);
	for (; i < m; i++)
		sgemm_tile(1, V, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, acc);
}

// uhno_spectral_sgemm: c = a b (c += a b when acc), row-major real
// matrices a [m x k], b [k x n], c [m x n] with row strides lda, ldb, ldc.
CLONES void uhno_spectral_sgemm(long m, long n, long k, const float *a, long lda,
                                const float *b, long ldb, float *c, long ldc, int acc) {
	unsigned uhno_mxcsr = uhno_ftz_enter();
	long j = 0;
	for (; j + 24 <= n; j += 24)
		sgemm_cols(3, m, k, a, lda, b + j, ldb, c + j, ldc, acc);
	if (j + 16 <= n) {
		sgemm_cols(2, m, k, a, lda, b + j, ldb, c + j, ldc, acc);
		j += 16;
	}
	if (j + 8 <= n) {
		sgemm_cols(1, m, k, a, lda, b + j, ldb, c + j, ldc, acc);
		j += 8;
	}
	for (; j < n; j++)
		for (long i = 0; i < m; i++) {
			float s = acc ? c[i * ldc + j] : 0;
			for (long p = 0; p < k; p++)
				s += a[i * lda + p] * b[p * ldb + j];
			c[i * ldc + j] = s;
		}
	uhno_ftz_leave(uhno_mxcsr);
}

// cgemm_tile computes an R x (4 V) block of complex out = g in (+ out when
// acc), interleaved (re, im). Per input row x it forms xs = i x =
// (-im, re) once, so each output row needs two FMAs per vector:
// out += Re(g) x + Im(g) xs.
INLINE void cgemm_tile(const int R, const int V, long n, const float *g, long ldg,
                       const float *in, long ldi, float *out, long ldo, int acc) {
	const v8i swap = {1, 0, 3, 2, 5, 4, 7, 6};
	const v8 sign = {-1, 1, -1, 1, -1, 1, -1, 1};
	v8 s[4][2];
	for (int r = 0; r < R; r++)
		for (int v = 0; v < V; v++)
			s[r][v] = acc ? load8(out + 2 * r * ldo + 8 * v) : splat(0);
	for (long q = 0; q < n; q++) {
		v8 x[2], xs[2];
		for (int v = 0; v < V; v++) {
			x[v] = load8(in + 2 * q * ldi + 8 * v);
			xs[v] = __builtin_shuffle(x[v], swap) * sign;
		}
		for (int r = 0; r < R; r++) {
			v8 gr = splat(g[2 * (r * ldg + q)]);
			v8 gi = splat(g[2 * (r * ldg + q) + 1]);
			for (int v = 0; v < V; v++) {
				s[r][v] += gr * x[v];
				s[r][v] += gi * xs[v];
			}
		}
	}
	for (int r = 0; r < R; r++)
		for (int v = 0; v < V; v++)
			store8(out + 2 * r * ldo + 8 * v, s[r][v]);
}

INLINE void cgemm_cols(const int V, long m, long n, const float *g, long ldg,
                       const float *in, long ldi, float *out, long ldo, int acc) {
	long i = 0;
	for (; i + 4 <= m; i += 4)
		cgemm_tile(4, V, n, g + 2 * i * ldg, ldg, in, ldi, out + 2 * i * ldo, ldo, acc);
	for (; i < m; i++)
		cgemm_tile(1, V, n, g + 2 * i * ldg, ldg, in, ldi, out + 2 * i * ldo, ldo, acc);
}

// uhno_spectral_cgemm: out = g in (out += g in when acc) for complex
// matrices stored interleaved: g [m x n], in [n x p], out [m x p], strides
// in complex numbers.
CLONES void uhno_spectral_cgemm(long m, long n, long p, const float *g, long ldg,
                                const float *in, long ldi, float *out, long ldo, int acc) {
	unsigned uhno_mxcsr = uhno_ftz_enter();
	long j = 0;
	for (; j + 8 <= p; j += 8)
		cgemm_cols(2, m, n, g, ldg, in + 2 * j, ldi, out + 2 * j, ldo, acc);
	if (j + 4 <= p) {
		cgemm_cols(1, m, n, g, ldg, in + 2 * j, ldi, out + 2 * j, ldo, acc);
		j += 4;
	}
	for (; j < p; j++)
		for (long i = 0; i < m; i++) {
			float sr = 0, si = 0;
			if (acc) {
				sr = out[2 * (i * ldo + j)];
				si = out[2 * (i * ldo + j) + 1];
			}
			for (long q = 0; q < n; q++) {
				float gr = g[2 * (i * ldg + q)], gi = g[2 * (i * ldg + q) + 1];
				float xr = in[2 * (q * ldi + j)], xi = in[2 * (q * ldi + j) + 1];
				sr += gr * xr;
				sr += gi * -xi;
				si += gr * xi;
				si += gi * xr;
			}
			out[2 * (i * ldo + j)] = sr;
			out[2 * (i * ldo + j) + 1] = si;
		}
	uhno_ftz_leave(uhno_mxcsr);
}

// Channel mixing of one row of modes (uhno_spectral_rowmix). Both operands
// are first packed into scratch in vectors of 4 complex lanes (zero
// padded), with their conjugations applied: a as ap[chunk][u][r][8] and b
// as bp[chunk][v/2][r][v%2][8]. Packing reads each weight once, in the order of
// its smaller stride, instead of the strided, page-crossing walks the
// product would make. The inner loop splits each y = b[r, v] into its
// duplicated real (yr) and imaginary (yi) parts and accumulates
// sa += x yr and sb += x yi for x = a[u, r], two FMAs per complex lane
// product; x y = sa + i sb is formed once at the end.

// pack copies the L-lane complex vectors src[i*si + j*sj] (i < ni, j < nj)
// to dst[chunk][i/2][j][i%2][8] when pairs is set, else to
// dst[chunk][i][j][8], conjugated when ci = -1, walking the source along
// its smaller stride. The pair layout keeps the two columns of a mix_tile
// side by side.
INLINE void pack(long ni, long nj, long L, const float *src, long si, long sj, float ci, float *dst,
                 int pairs) {
	const v8 conj = {1, ci, 1, ci, 1, ci, 1, ci};
	long nc = (L + 3) / 4;
	int jinner = (sj < 0 ? -sj : sj) <= (si < 0 ? -si : si);
	long n1 = jinner ? ni : nj, n2 = jinner ? nj : ni;
	for (long c = 0; c < nc; c++) {
		long n = L - 4 * c < 4 ? L - 4 * c : 4;
		float *dc = dst + c * (ni + (pairs & ni)) * nj * 8;
		for (long k1 = 0; k1 < n1; k1++)
			for (long k2 = 0; k2 < n2; k2++) {
				long i = jinner ? k1 : k2, j = jinner ? k2 : k1;
				const float *x = src + i * si + j * sj + 8 * c;
				float *d = dc + (pairs ? ((i >> 1) * nj + j) * 2 + (i & 1) : i * nj + j) * 8;
				if (n == 4) {
					store8(d, load8(x) * conj);
					continue;
				}
				long k = 0;
				for (; k < n; k++) {
					d[2 * k] = x[2 * k];
					d[2 * k + 1] = ci * x[2 * k + 1];
				}
				for (; k < 4; k++)
					d[2 * k] = d[2 * k + 1] = 0;
			}
	}
}

// mix_store scales v and stores (or adds) its n valid complex lanes.
INLINE void mix_store(float *o, v8 v, long n, int acc) {
	if (n == 4) {
		store8(o, acc ? load8(o) + v : v);
		return;
	}
	float t[8];
	store8(t, v);
	for (long j = 0; j < 2 * n; j++)
		o[j] = acc ? o[j] + t[j] : t[j];
}

// mix_tile accumulates a TP x TQ block of (u, v) for one lane chunk.
INLINE void mix_tile(const int TP, const int TQ, long R, const float *ap, const float *bp,
                     float *out, long ou, long ov, long n, v8 sc, int acc) {
	const v8i swap = {1, 0, 3, 2, 5, 4, 7, 6};
	const v8i dupre = {0, 0, 2, 2, 4, 4, 6, 6};
	const v8i dupim = {1, 1, 3, 3, 5, 5, 7, 7};
	const v8 sign = {-1, 1, -1, 1, -1, 1, -1, 1};
	v8 sa[3][2], sb[3][2];
	for (int p = 0; p < TP; p++)
		for (int q = 0; q < TQ; q++)
			sa[p][q] = sb[p][q] = splat(0);
	for (long r = 0; r < R; r++) {
		for (int q = 0; q < TQ; q++) {
			v8 y = load8(bp + (2 * r + q) * 8);
			v8 yr = __builtin_shuffle(y, dupre), yi = __builtin_shuffle(y, dupim);
			for (int p = 0; p < TP; p++) {
				v8 x = load8(ap + (p * R + r) * 8);
				sa[p][q] += x * yr;
				sb[p][q] += x * yi;
			}
		}
	}
	for (int p = 0; p < TP; p++)
		for (int q = 0; q < TQ; q++) {
			// x y = (xr yr - xi yi, xi yr + xr yi) = sa + sign . swap(sb)
			v8 v = (sa[p][q] + __builtin_shuffle(sb[p][q], swap) * sign) * sc;
			mix_store(out + p * ou + q * ov, v, n, acc);
		}
}

#define MIX_TILE(tp, tq) mix_tile(tp, tq, R, x, y, o, ou, ov, n, sc, acc)

// rowmix8 is uhno_spectral_rowmix in vectors of 4 complex lanes (AVX2
// and the baseline); scratch holds 8 ceil(L/4) (P + Q + 1) R floats.
INLINE void rowmix8(long P, long Q, long R, long L, const float *a, long au, long ar, int conja,
                    const float *b, long br, long bv, int conjb, float *out, long ou, long ov,
                    const float *scale, int acc, float *scratch) {
	long nc = (L + 3) / 4;
	float *ap = scratch, *bp = scratch + nc * P * R * 8;
	pack(P, R, L, a, au, ar, conja ? -1 : 1, ap, 0);
	pack(Q, R, L, b, bv, br, conjb ? -1 : 1, bp, 1);
	for (long c = 0; c < nc; c++) {
		long n = L - 4 * c < 4 ? L - 4 * c : 4;
		float s[4];
		for (long j = 0; j < 4; j++)
			s[j] = j < n ? scale[4 * c + j] : 0;
		v8 sc = {s[0], s[0], s[1], s[1], s[2], s[2], s[3], s[3]};
		const float *apc = ap + c * P * R * 8, *bpc = bp + c * (Q + (Q & 1)) * R * 8;
		for (long v = 0; v < Q; v += 2)
			for (long u = 0; u < P; u += 3) {
				const float *x = apc + u * R * 8, *y = bpc + v * R * 8;
				float *o = out + u * ou + v * ov + 8 * c;
				long tp = P - u < 3 ? P - u : 3;
				if (Q - v >= 2) {
					if (tp == 3)
						MIX_TILE(3, 2);
					else if (tp == 2)
						MIX_TILE(2, 2);
					else
						MIX_TILE(1, 2);
				} else {
					if (tp == 3)
						MIX_TILE(3, 1);
					else if (tp == 2)
						MIX_TILE(2, 1);
					else
						MIX_TILE(1, 1);
				}
			}
	}
}

__attribute__((target("arch=x86-64-v3"))) static void rowmix8_v3(long P, long Q, long R, long L, const float *a,
                                                                 long au, long ar, int conja, const float *b, long br,
                                                                 long bv, int conjb, float *out, long ou, long ov,
                                                                 const float *scale, int acc, float *scratch) {
	rowmix8(P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc, scratch);
}

static void rowmix8_default(long P, long Q, long R, long L, const float *a, long au, long ar, int conja,
                            const float *b, long br, long bv, int conjb, float *out, long ou, long ov,
                            const float *scale, int acc, float *scratch) {
	rowmix8(P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc, scratch);
}

// The AVX-512 channel mixing works on vectors of 8 complex lanes (16
// floats) and keeps the shuffles out of its inner loop: pack16 stores b's
// elements already split into their duplicated real parts (yr) and
// imaginary parts (yi), so each step of the sum on r is loads and FMAs
// only. Every lane sees the same operations, in the same order, as in
// rowmix8 (sa += x yr, sb += x yi over r, then (sa + sign . swap(sb)) .
// scale): the two give the same bits (TestRowmixLevels).
typedef float v16 __attribute__((vector_size(64)));
typedef int v16i __attribute__((vector_size(64)));

INLINE v16 load16(const float *p) {
	v16 v;
	memcpy(&v, p, sizeof v);
	return v;
}

INLINE void store16(float *p, v16 v) { memcpy(p, &v, sizeof v); }

// pack16 copies the L-lane complex vectors src[i*si + j*sj] (i < ni,
// j < nj), conjugated when ci = -1, in chunks of 8 lanes, walking the
// source along its smaller stride. Without split it writes
// dst[chunk][i][j][16]; with split, dst[chunk][i/2][j][i%2][yr 16, yi 16]
// where yr duplicates each lane's real part and yi its imaginary part.
INLINE void pack16(long ni, long nj, long L, const float *src, long si, long sj, float ci, float *dst,
                   int split) {
	const v16 conj = {1, ci, 1, ci, 1, ci, 1, ci, 1, ci, 1, ci, 1, ci, 1, ci};
	const v16i dupre = {0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14};
	const v16i dupim = {1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 11, 11, 13, 13, 15, 15};
	long nc = (L + 7) / 8;
	int jinner = (sj < 0 ? -sj : sj) <= (si < 0 ? -si : si);
	long n1 = jinner ? ni : nj, n2 = jinner ? nj : ni;
	long w = split ? 32 : 16;
	for (long c = 0; c < nc; c++) {
		long n = L - 8 * c < 8 ? L - 8 * c : 8;
		float *dc = dst + c * (ni + (split & ni)) * nj * w;
		for (long k1 = 0; k1 < n1; k1++)
			for (long k2 = 0; k2 < n2; k2++) {
				long i = jinner ? k1 : k2, j = jinner ? k2 : k1;
				const float *x = src + i * si + j * sj + 16 * c;
				float *d = dc + (split ? ((i >> 1) * nj + j) * 2 + (i & 1) : i * nj + j) * w;
				if (n == 8) { // a whole chunk: one load, the conjugation, one or two stores
					v16 v = load16(x) * conj;
					if (!split) {
						store16(d, v);
						continue;
					}
					store16(d, __builtin_shuffle(v, dupre));
					store16(d + 16, __builtin_shuffle(v, dupim));
					continue;
				}
				float t[16];
				long k = 0;
				for (; k < n; k++) {
					t[2 * k] = x[2 * k];
					t[2 * k + 1] = ci * x[2 * k + 1];
				}
				for (; k < 8; k++)
					t[2 * k] = t[2 * k + 1] = 0;
				if (!split) {
					memcpy(d, t, sizeof t);
					continue;
				}
				for (k = 0; k < 8; k++) {
					d[2 * k] = d[2 * k + 1] = t[2 * k];
					d[16 + 2 * k] = d[16 + 2 * k + 1] = t[2 * k + 1];
				}
			}
	}
}

// mix_store16 stores (or adds) the n valid complex lanes of v.
INLINE void mix_store16(float *o, v16 v, long n, int acc) {
	if (n == 8) {
		store16(o, acc ? load16(o) + v : v);
		return;
	}
	float t[16];
	store16(t, v);
	for (long j = 0; j < 2 * n; j++)
		o[j] = acc ? o[j] + t[j] : t[j];
}

// mix_tile16 accumulates a TP x TQ block of (u, v) for one chunk of 8 lanes.
INLINE void mix_tile16(const int TP, const int TQ, long R, const float *ap, const float *bp, float *out,
                       long ou, long ov, long n, v16 sc, int acc) {
	const v16i swap = {1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14};
	const v16 sign = {-1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1};
	v16 sa[4][2], sb[4][2];
	for (int p = 0; p < TP; p++)
		for (int q = 0; q < TQ; q++)
			sa[p][q] = sb[p][q] = (v16){0};
	for (long r = 0; r < R; r++) {
		v16 yr[2], yi[2];
		for (int q = 0; q < TQ; q++) {
			yr[q] = load16(bp + (2 * r + q) * 32);
			yi[q] = load16(bp + (2 * r + q) * 32 + 16);
		}
		for (int p = 0; p < TP; p++) {
			v16 x = load16(ap + (p * R + r) * 16);
			for (int q = 0; q < TQ; q++) {
				sa[p][q] += x * yr[q];
				sb[p][q] += x * yi[q];
			}
		}
	}
	for (int p = 0; p < TP; p++)
		for (int q = 0; q < TQ; q++) {
			v16 v = (sa[p][q] + __builtin_shuffle(sb[p][q], swap) * sign) * sc;
			mix_store16(out + p * ou + q * ov, v, n, acc);
		}
}

#define MIX_TILE16(tp, tq) mix_tile16(tp, tq, R, x, y, o, ou, ov, n, sc, acc)

__attribute__((target("arch=x86-64-v4"))) static void rowmix16_v4(long P, long Q, long R, long L, const float *a,
                                                                  long au, long ar, int conja, const float *b, long br,
                                                                  long bv, int conjb, float *out, long ou, long ov,
                                                                  const float *scale, int acc, float *scratch) {
	long nc = (L + 7) / 8;
	float *ap = scratch, *bp = scratch + nc * P * R * 16;
	pack16(P, R, L, a, au, ar, conja ? -1 : 1, ap, 0);
	pack16(Q, R, L, b, bv, br, conjb ? -1 : 1, bp, 1);
	for (long c = 0; c < nc; c++) {
		long n = L - 8 * c < 8 ? L - 8 * c : 8;
		float s[8];
		for (long j = 0; j < 8; j++)
			s[j] = j < n ? scale[8 * c + j] : 0;
		v16 sc = {s[0], s[0], s[1], s[1], s[2], s[2], s[3], s[3], s[4], s[4], s[5], s[5], s[6], s[6], s[7], s[7]};
		const float *apc = ap + c * P * R * 16, *bpc = bp + c * (Q + (Q & 1)) * R * 32;
		for (long v = 0; v < Q; v += 2)
			for (long u = 0; u < P; u += 4) {
				const float *x = apc + u * R * 16, *y = bpc + v * R * 32;
				float *o = out + u * ou + v * ov + 16 * c;
				long tp = P - u < 4 ? P - u : 4;
				if (Q - v >= 2) {
					if (tp == 4)
						MIX_TILE16(4, 2);
					else if (tp == 3)
						MIX_TILE16(3, 2);
					else if (tp == 2)
						MIX_TILE16(2, 2);
					else
						MIX_TILE16(1, 2);
				} else {
					if (tp == 4)
						MIX_TILE16(4, 1);
					else if (tp == 3)
						MIX_TILE16(3, 1);
					else if (tp == 2)
						MIX_TILE16(2, 1);
					else
						MIX_TILE16(1, 1);
				}
			}
	}
}

// uhno_spectral_rowmix_level runs the channel mixing at ISA level level (2
// AVX-512, 1 AVX2, 0 baseline); -1 if the CPU lacks it.
int uhno_spectral_rowmix_level(int level, long P, long Q, long R, long L, const float *a, long au, long ar,
                               int conja, const float *b, long br, long bv, int conjb, float *out, long ou,
                               long ov, const float *scale, int acc, float *scratch) {
	if (level < 0 || level > uhno_cpu_level())
		return -1;
	unsigned uhno_mxcsr = uhno_ftz_enter();
	switch (level) {
	case 2:
		rowmix16_v4(P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc, scratch);
		break;
	case 1:
		rowmix8_v3(P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc, scratch);
		break;
	default:
		rowmix8_default(P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc, scratch);
	}
	uhno_ftz_leave(uhno_mxcsr);
	return 0;
}

// uhno_spectral_rowmix: out[u, v, :] = scale . sum_r a[u, r, :] . b[r, v, :]
// (out += when acc), u < P, v < Q, r < R, each element L interleaved
// complex lanes multiplied lane by lane, with strides in floats and
// optional conjugation of a and b (see rowmixGo), at the widest ISA level
// the CPU has. scratch holds 16 ceil(L/8) (P + 2 Q + 2) R floats (enough
// for every level).
void uhno_spectral_rowmix(long P, long Q, long R, long L, const float *a, long au, long ar, int conja,
                          const float *b, long br, long bv, int conjb, float *out, long ou, long ov,
                          const float *scale, int acc, float *scratch) {
	uhno_spectral_rowmix_level(uhno_cpu_level(), P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov,
	                           scale, acc, scratch);
}
