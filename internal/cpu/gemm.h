// Small single-precision matrix kernels for the CPU backend's hot loops
// (1x1 channel mixing, im2col convolutions). Row-major, float32, float32
// accumulation. Each function is compiled for x86-64-v4 (AVX-512),
// x86-64-v3 (AVX2+FMA) and a portable default; the loader picks one at
// start-up (GCC target_clones), so the binary runs on any x86-64.
#ifndef UHNO_GEMM_H
#define UHNO_GEMM_H

// C[m x n] = A[m x k] * B[k x n] (+ C when acc != 0). Leading dimensions
// lda, ldb, ldc are row strides in elements.
void uhno_gemm_nn(int m, int n, int k, const float *A, int lda, const float *B, int ldb, float *C, int ldc, int acc);

// C[m x n] += A[m x k] * B[n x k]^T: every entry is a dot product of a row
// of A and a row of B along the contiguous k axis.
void uhno_gemm_nt(int m, int n, int k, const float *A, int lda, const float *B, int ldb, float *C, int ldc);

#endif
