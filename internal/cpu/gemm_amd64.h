// Packed-panel matrix product of ConvDown (see gemm.go for the
// layout). Compiled for x86-64-v4 (AVX-512), x86-64-v3 (AVX2+FMA) and a
// portable default; each call runs the widest one the CPU supports, so the
// binary runs on any x86-64.
#ifndef UHNO_GEMM_H
#define UHNO_GEMM_H

// C = A B (add == 0) or C += A B (add != 0) with A m x l packed in panels of
// 6 rows and B l x n packed in panels of 16 columns; C[r, c] = c[r*ldc + c].
// With add == 0 and bias != NULL, C = A B + bias[r] on row r: the sum and
// then the bias, the same rounding as filling C with the bias and adding.
void uhno_conv_gemm(float *c, long ldc, long m, long n, const float *ap, const float *bp, long l, int add, const float *bias);

// The same with a chosen kernel: level 2 AVX-512, 1 AVX2+FMA, 0 portable.
// Returns -1 (and does nothing) if the CPU lacks that level, else 0.
int uhno_conv_gemm_level(int level, float *c, long ldc, long m, long n, const float *ap, const float *bp, long l, int add, const float *bias);

// The same (level -1: the widest the CPU has) with A read in place, not
// packed: A[r, k] = a[r*lda + k], lda > 0 (convGemmRows); no bias.
int uhno_conv_gemm_rows_level(int level, float *c, long ldc, long m, long n, const float *a, long lda, const float *bp, long l, int add);

// Packs B (l x n, row k at src + k*ks) into panels of 16 columns (convPackB).
void uhno_pack_b(float *dst, const float *src, long l, long n, long ks);

// Packs A[r, k] = src[r*rs + k*ks] (m x l) into panels of 6 rows (convPackA).
void uhno_pack_a(float *dst, const float *src, long m, long l, long rs, long ks);

// Packs B[k, c] = src[c*cs + k] (l x n) into panels of 16 columns (packBT).
void uhno_pack_bt(float *dst, const float *src, long l, long n, long cs);

// The same with a chosen kernel: level 2 AVX-512, 1 AVX2, 0 element by
// element, -1 the widest the CPU has. Returns -1 (and does nothing) if the
// CPU lacks that level, else 0.
int uhno_pack_bt_level(int level, float *dst, const float *src, long l, long n, long cs);

#endif
