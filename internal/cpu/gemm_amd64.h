// Packed-panel matrix product of ConvDown (see gemm.go for the
// layout). Compiled for x86-64-v4 (AVX-512), x86-64-v3 (AVX2+FMA) and a
// portable default; each call runs the widest one the CPU supports, so the
// binary runs on any x86-64.
#ifndef UHNO_GEMM_H
#define UHNO_GEMM_H

// C = A B (add == 0) or C += A B (add != 0) with A m x l packed in panels of
// 6 rows and B l x n packed in panels of 16 columns; C[r, c] = c[r*ldc + c].
void uhno_conv_gemm(float *c, long ldc, long m, long n, const float *ap, const float *bp, long l, int add);

// The same with a chosen kernel: level 2 AVX-512, 1 AVX2+FMA, 0 portable.
// Returns -1 (and does nothing) if the CPU lacks that level, else 0.
int uhno_conv_gemm_level(int level, float *c, long ldc, long m, long n, const float *ap, const float *bp, long l, int add);

#endif
