//go:build cgo && amd64

#include <immintrin.h>
#include <string.h>
#include "gemm_amd64.h"
#include "ftz_amd64.h"
#include "level_amd64.h"

#define MR 6  // = convMR in gemm.go
#define NR 16 // = convNR in gemm.go

// Vectors of 8 and 16 floats (GCC vector extensions). aligned(4): the
// operands are only float-aligned.
typedef float v8 __attribute__((vector_size(32), aligned(4)));
typedef float v16 __attribute__((vector_size(64), aligned(4)));
typedef int v16i __attribute__((vector_size(64)));

#define splat8(x) ((v8){(x), (x), (x), (x), (x), (x), (x), (x)})
#define splat16(x) ((v16){(x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x), (x)})

// gemm8 is the kernel for AVX2/FMA (and, compiled without, the portable
// fallback): for each B panel (16 columns, kept in L1 while the A panels
// stream past) and each A panel (6 rows) the 6 x 16 block of C is held in
// 12 vector accumulators of 8 floats over the whole sum on k, then stored
// or added to C. Every entry sums its k terms in increasing order.
static inline __attribute__((always_inline)) void gemm8(float *c, long ldc, long m, long n, const float *ap, long lda, const float *bp, long l, int add, const float *bias, const int arows) {
	for (long jb = 0; jb < n; jb += NR) {
		const float *b = bp + (jb / NR) * l * NR;
		long nr = n - jb < NR ? n - jb : NR;
		for (long ib = 0; ib < m; ib += MR) {
			const float *a = ap + (ib / MR) * l * MR;
			long mr = m - ib < MR ? m - ib : MR;
			const float *arow[MR];
			for (int r = 0; r < MR; r++)
				arow[r] = ap + (ib + (r < mr ? r : 0)) * lda;
			v8 acc[MR][2];
			for (int r = 0; r < MR; r++)
				acc[r][0] = acc[r][1] = splat8(0.0f);
			for (long k = 0; k < l; k++) {
				v8 b0 = *(const v8 *)(b + k * NR), b1 = *(const v8 *)(b + k * NR + 8);
				const float *ak = a + k * MR;
				for (int r = 0; r < MR; r++) {
					v8 av = splat8(arows ? arow[r][k] : ak[r]);
					acc[r][0] += av * b0;
					acc[r][1] += av * b1;
				}
			}
			for (long r = 0; r < mr; r++) {
				float *cr = c + (ib + r) * ldc + jb;
				if (bias && !add) {
					v8 bv = splat8(bias[ib + r]);
					acc[r][0] = acc[r][0] + bv;
					acc[r][1] = acc[r][1] + bv;
				}
				if (nr == NR) {
					v8 *c0 = (v8 *)cr, *c1 = (v8 *)(cr + 8);
					*c0 = add ? *c0 + acc[r][0] : acc[r][0];
					*c1 = add ? *c1 + acc[r][1] : acc[r][1];
					continue;
				}
				float t[NR];
				*(v8 *)t = acc[r][0];
				*(v8 *)(t + 8) = acc[r][1];
				for (long j = 0; j < nr; j++)
					cr[j] = add ? cr[j] + t[j] : t[j];
			}
		}
	}
}

// gemm16 is the AVX-512 kernel: two B panels at a time (32 columns), the
// 6 x 32 block in 12 accumulators of 16 floats; a last odd panel uses 6.
// (Measured on the project's Sapphire Rapids machine: about 85 GMAC/s per
// core against 55 for gemm8 with AVX2, and 12-23% faster ConvDown end to
// end; three panels at a time were no faster.)
static inline __attribute__((always_inline)) void gemm16(float *c, long ldc, long m, long n, const float *ap, long lda, const float *bp, long l, int add, const float *bias, const int arows) {
	for (long jb = 0; jb < n; jb += 2 * NR) {
		const float *b = bp + (jb / NR) * l * NR;
		long nr = n - jb < 2 * NR ? n - jb : 2 * NR;
		int two = nr > NR;
		for (long ib = 0; ib < m; ib += MR) {
			const float *a = ap + (ib / MR) * l * MR;
			long mr = m - ib < MR ? m - ib : MR;
			const float *arow[MR];
			for (int r = 0; r < MR; r++)
				arow[r] = ap + (ib + (r < mr ? r : 0)) * lda;
			v16 acc[MR][2];
			for (int r = 0; r < MR; r++)
				acc[r][0] = acc[r][1] = splat16(0.0f);
			if (two) {
				const float *b2 = b + l * NR;
				for (long k = 0; k < l; k++) {
					v16 b0 = *(const v16 *)(b + k * NR), b1 = *(const v16 *)(b2 + k * NR);
					const float *ak = a + k * MR;
					for (int r = 0; r < MR; r++) {
						v16 av = splat16(arows ? arow[r][k] : ak[r]);
						acc[r][0] += av * b0;
						acc[r][1] += av * b1;
					}
				}
			} else {
				for (long k = 0; k < l; k++) {
					v16 b0 = *(const v16 *)(b + k * NR);
					const float *ak = a + k * MR;
					for (int r = 0; r < MR; r++)
						acc[r][0] += splat16(arows ? arow[r][k] : ak[r]) * b0;
				}
			}
			for (long r = 0; r < mr; r++) {
				float *cr = c + (ib + r) * ldc + jb;
				if (bias && !add) {
					v16 bv = splat16(bias[ib + r]);
					acc[r][0] = acc[r][0] + bv;
					acc[r][1] = acc[r][1] + bv;
				}
				if (nr == 2 * NR) {
					v16 *c0 = (v16 *)cr, *c1 = (v16 *)(cr + NR);
					*c0 = add ? *c0 + acc[r][0] : acc[r][0];
					*c1 = add ? *c1 + acc[r][1] : acc[r][1];
					continue;
				}
				float t[2 * NR];
				*(v16 *)t = acc[r][0];
				*(v16 *)(t + NR) = acc[r][1];
				for (long j = 0; j < nr; j++)
					cr[j] = add ? cr[j] + t[j] : t[j];
			}
		}
	}
}

// One function per level and A layout: packed panels (arows = 0) or rows
// read in place, A[r, k] = ap[r*lda + k] (arows = 1; convGemmRows).
__attribute__((target("arch=x86-64-v4"))) static void gemm16_v4(float *c, long ldc, long m, long n, const float *ap, long lda, const float *bp, long l, int add, const float *bias) {
	gemm16(c, ldc, m, n, ap, 0, bp, l, add, bias, 0);
}

__attribute__((target("arch=x86-64-v4"))) static void gemm16_v4_rows(float *c, long ldc, long m, long n, const float *ap, long lda, const float *bp, long l, int add, const float *bias) {
	gemm16(c, ldc, m, n, ap, lda, bp, l, add, bias, 1);
}

__attribute__((target("arch=x86-64-v3"))) static void gemm8_v3(float *c, long ldc, long m, long n, const float *ap, long lda, const float *bp, long l, int add, const float *bias) {
	gemm8(c, ldc, m, n, ap, 0, bp, l, add, bias, 0);
}

__attribute__((target("arch=x86-64-v3"))) static void gemm8_v3_rows(float *c, long ldc, long m, long n, const float *ap, long lda, const float *bp, long l, int add, const float *bias) {
	gemm8(c, ldc, m, n, ap, lda, bp, l, add, bias, 1);
}

static void gemm8_default(float *c, long ldc, long m, long n, const float *ap, long lda, const float *bp, long l, int add, const float *bias) {
	gemm8(c, ldc, m, n, ap, 0, bp, l, add, bias, 0);
}

static void gemm8_default_rows(float *c, long ldc, long m, long n, const float *ap, long lda, const float *bp, long l, int add, const float *bias) {
	gemm8(c, ldc, m, n, ap, lda, bp, l, add, bias, 1);
}

// conv_gemm runs the kernel of a level; lda > 0 reads A's rows in place.
static int conv_gemm(int level, float *c, long ldc, long m, long n, const float *ap, long lda, const float *bp, long l, int add, const float *bias) {
	if (level < 0 || level > uhno_cpu_level())
		return -1;
	unsigned mxcsr = uhno_ftz_enter();
	switch (level) {
	case 2:
		(lda ? gemm16_v4_rows : gemm16_v4)(c, ldc, m, n, ap, lda, bp, l, add, bias);
		break;
	case 1:
		(lda ? gemm8_v3_rows : gemm8_v3)(c, ldc, m, n, ap, lda, bp, l, add, bias);
		break;
	default:
		(lda ? gemm8_default_rows : gemm8_default)(c, ldc, m, n, ap, lda, bp, l, add, bias);
	}
	uhno_ftz_leave(mxcsr);
	return 0;
}

int uhno_conv_gemm_level(int level, float *c, long ldc, long m, long n, const float *ap, const float *bp, long l, int add, const float *bias) {
	return conv_gemm(level, c, ldc, m, n, ap, 0, bp, l, add, bias);
}

void uhno_conv_gemm(float *c, long ldc, long m, long n, const float *ap, const float *bp, long l, int add, const float *bias) {
	conv_gemm(uhno_cpu_level(), c, ldc, m, n, ap, 0, bp, l, add, bias);
}

int uhno_conv_gemm_rows_level(int level, float *c, long ldc, long m, long n, const float *a, long lda, const float *bp, long l, int add) {
	if (level < 0)
		level = uhno_cpu_level();
	return conv_gemm(level, c, ldc, m, n, a, lda, bp, l, add, 0);
}

// uhno_pack_b is convPackB (gemm.go): B (l x n, row k at src + k*ks) into
// panels of NR columns, the last panel's missing columns zeroed. Whole
// panels copy 16 floats per row with two vector moves.
void uhno_pack_b(float *dst, const float *src, long l, long n, long ks) {
	for (long jb = 0; jb < n; jb += NR) {
		float *pan = dst + (jb / NR) * l * NR;
		long nr = n - jb < NR ? n - jb : NR;
		if (nr == NR) {
			for (long k = 0; k < l; k++) {
				const float *s = src + k * ks + jb;
				*(v8 *)(pan + k * NR) = *(const v8 *)s;
				*(v8 *)(pan + k * NR + 8) = *(const v8 *)(s + 8);
			}
			continue;
		}
		for (long k = 0; k < l; k++) {
			long j = 0;
			for (; j < nr; j++)
				pan[k * NR + j] = src[k * ks + jb + j];
			for (; j < NR; j++)
				pan[k * NR + j] = 0;
		}
	}
}

// uhno_pack_a is convPackA (gemm.go): the m x l matrix A[r, k] =
// src[r*rs + k*ks] into panels of MR rows, rows beyond m zeroed.
void uhno_pack_a(float *dst, const float *src, long m, long l, long rs, long ks) {
	for (long ib = 0; ib < m; ib += MR) {
		float *pan = dst + (ib / MR) * l * MR;
		long mr = m - ib < MR ? m - ib : MR;
		const float *s = src + ib * rs;
		if (mr == MR) { // k outer: six read streams, one contiguous write stream
			for (long k = 0; k < l; k++) {
				float *d = pan + k * MR;
				const float *sk = s + k * ks;
				d[0] = sk[0];
				d[1] = sk[rs];
				d[2] = sk[2 * rs];
				d[3] = sk[3 * rs];
				d[4] = sk[4 * rs];
				d[5] = sk[5 * rs];
			}
			continue;
		}
		for (long k = 0; k < l; k++)
			for (long r = 0; r < MR; r++)
				pan[k * MR + r] = r < mr ? s[r * rs + k * ks] : 0;
	}
}

// pack_bt_scalar is packBT for panels [jb0, n) and rows k of [k0, l):
// nr read streams, one contiguous write stream, columns beyond n zeroed.
static void pack_bt_scalar(float *dst, const float *src, long l, long n, long cs, long jb0, long k0) {
	for (long jb = jb0; jb < n; jb += NR) {
		float *pan = dst + (jb / NR) * l * NR;
		long nr = n - jb < NR ? n - jb : NR;
		const float *s = src + jb * cs;
		for (long k = k0; k < l; k++) {
			float *d = pan + k * NR;
			long c = 0;
			for (; c < nr; c++)
				d[c] = s[c * cs + k];
			for (; c < NR; c++)
				d[c] = 0;
		}
	}
}

// transpose16 transposes the 16 x 16 block m in registers: four stages,
// stage b swapping bit b of the row index with bit b of the column index
// by two-source permutes of the row pairs (r, r | 2^b): 64 permutes, the
// masks constants (tr_lo[b] makes row r, tr_hi[b] row r | 2^b).
static const v16i tr_lo[4] = {
	{0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30},
	{0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29},
	{0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27},
	{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23},
};
static const v16i tr_hi[4] = {
	{1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31},
	{2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31},
	{4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31},
	{8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31},
};

#define TR_PAIR(b, r, q)                                                    \
	do {                                                                    \
		v16 a_ = m[r], z_ = m[q];                                           \
		m[r] = __builtin_shuffle(a_, z_, tr_lo[b]);                         \
		m[q] = __builtin_shuffle(a_, z_, tr_hi[b]);                         \
	} while (0)

__attribute__((target("arch=x86-64-v4"))) static inline __attribute__((always_inline)) void transpose16(v16 m[16]) {
	TR_PAIR(0, 0, 1); TR_PAIR(0, 2, 3); TR_PAIR(0, 4, 5); TR_PAIR(0, 6, 7);
	TR_PAIR(0, 8, 9); TR_PAIR(0, 10, 11); TR_PAIR(0, 12, 13); TR_PAIR(0, 14, 15);
	TR_PAIR(1, 0, 2); TR_PAIR(1, 1, 3); TR_PAIR(1, 4, 6); TR_PAIR(1, 5, 7);
	TR_PAIR(1, 8, 10); TR_PAIR(1, 9, 11); TR_PAIR(1, 12, 14); TR_PAIR(1, 13, 15);
	TR_PAIR(2, 0, 4); TR_PAIR(2, 1, 5); TR_PAIR(2, 2, 6); TR_PAIR(2, 3, 7);
	TR_PAIR(2, 8, 12); TR_PAIR(2, 9, 13); TR_PAIR(2, 10, 14); TR_PAIR(2, 11, 15);
	TR_PAIR(3, 0, 8); TR_PAIR(3, 1, 9); TR_PAIR(3, 2, 10); TR_PAIR(3, 3, 11);
	TR_PAIR(3, 4, 12); TR_PAIR(3, 5, 13); TR_PAIR(3, 6, 14); TR_PAIR(3, 7, 15);
}

// pack_bt_v4 is packBT with AVX-512: whole panels in blocks of 16 rows k,
// each block 16 loads of 16 consecutive k from the panel's 16 columns, a
// register transpose, and 16 stores of a panel row; the k tail and a
// partial last panel go through pack_bt_scalar.
__attribute__((target("arch=x86-64-v4"))) static void pack_bt_v4(float *dst, const float *src, long l, long n, long cs) {
	long full = n / NR * NR, kfull = l / 16 * 16;
	for (long jb = 0; jb < full; jb += NR) {
		float *pan = dst + (jb / NR) * l * NR;
		const float *s = src + jb * cs;
		for (long k0 = 0; k0 < kfull; k0 += 16) {
			v16 m[16];
			for (int c = 0; c < 16; c++)
				memcpy(&m[c], s + c * cs + k0, sizeof m[c]);
			transpose16(m);
			for (int k = 0; k < 16; k++)
				memcpy(pan + (k0 + k) * NR, &m[k], sizeof m[k]);
		}
		if (kfull < l)
			pack_bt_scalar(dst, src, l, jb + NR, cs, jb, kfull);
	}
	if (full < n)
		pack_bt_scalar(dst, src, l, n, cs, full, 0);
}

// transpose8 transposes the 8 x 8 block m in registers, the usual three
// stages: unpack pairs of rows, shuffle pairs of pairs, swap 128-bit
// halves.
__attribute__((target("arch=x86-64-v3"))) static inline __attribute__((always_inline)) void transpose8(__m256 m[8]) {
	__m256 t0 = _mm256_unpacklo_ps(m[0], m[1]), t1 = _mm256_unpackhi_ps(m[0], m[1]);
	__m256 t2 = _mm256_unpacklo_ps(m[2], m[3]), t3 = _mm256_unpackhi_ps(m[2], m[3]);
	__m256 t4 = _mm256_unpacklo_ps(m[4], m[5]), t5 = _mm256_unpackhi_ps(m[4], m[5]);
	__m256 t6 = _mm256_unpacklo_ps(m[6], m[7]), t7 = _mm256_unpackhi_ps(m[6], m[7]);
	__m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
	__m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
	__m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
	__m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
	m[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
	m[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
	m[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
	m[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
	m[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
	m[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
	m[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
	m[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// pack_bt_v3 is packBT with AVX2: whole panels in blocks of 16 rows k,
// each half-panel of 8 columns by two 8 x 8 register transposes, so that
// every source row gives a whole 64-byte line (16 consecutive k) at once:
// the panel's 16 rows lie a power-of-two stride apart at the fine levels
// and would evict each other's lines between two half-line visits. The k
// tail and a partial last panel go through pack_bt_scalar. (Data movement
// only: the bits are packBT's.)
__attribute__((target("arch=x86-64-v3"))) static void pack_bt_v3(float *dst, const float *src, long l, long n, long cs) {
	long full = n / NR * NR, kfull = l / 16 * 16;
	for (long jb = 0; jb < full; jb += NR) {
		float *pan = dst + (jb / NR) * l * NR;
		for (long k0 = 0; k0 < kfull; k0 += 16) {
			for (int h = 0; h < NR; h += 8) {
				const float *s = src + (jb + h) * cs + k0;
				__m256 lo[8], hi[8];
				for (int c = 0; c < 8; c++) {
					lo[c] = _mm256_loadu_ps(s + c * cs);
					hi[c] = _mm256_loadu_ps(s + c * cs + 8);
				}
				transpose8(lo);
				transpose8(hi);
				for (int k = 0; k < 8; k++) {
					_mm256_storeu_ps(pan + (k0 + k) * NR + h, lo[k]);
					_mm256_storeu_ps(pan + (k0 + 8 + k) * NR + h, hi[k]);
				}
			}
		}
		if (kfull < l)
			pack_bt_scalar(dst, src, l, jb + NR, cs, jb, kfull);
	}
	if (full < n)
		pack_bt_scalar(dst, src, l, n, cs, full, 0);
}

// uhno_pack_bt_level is packBT (pointwise.go): the l x n matrix B[k, c] =
// src[c*cs + k] (the transpose of n rows of length l) into panels of NR
// columns, columns beyond n zeroed; with AVX-512 (level 2) or AVX2
// (level 1) by register transposes, else (level 0) element by element.
// Level -1 is the widest the CPU has; a level the CPU lacks returns -1.
int uhno_pack_bt_level(int level, float *dst, const float *src, long l, long n, long cs) {
	if (level < 0)
		level = uhno_cpu_level();
	if (level > uhno_cpu_level())
		return -1;
	switch (level) {
	case 2:
		pack_bt_v4(dst, src, l, n, cs);
		break;
	case 1:
		pack_bt_v3(dst, src, l, n, cs);
		break;
	default:
		pack_bt_scalar(dst, src, l, n, cs, 0, 0);
	}
	return 0;
}

void uhno_pack_bt(float *dst, const float *src, long l, long n, long cs) {
	uhno_pack_bt_level(-1, dst, src, l, n, cs);
}
