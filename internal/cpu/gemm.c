#include "gemm.h"

// Vectors of 8 floats (GCC vector extension): one AVX2 register, half an
// AVX-512 register, two SSE registers on the default target.
typedef float v8 __attribute__((vector_size(32), aligned(4)));

#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

#define load8(p) (*(const v8 *)(p))
#define store8(p, v) (*(v8 *)(p) = (v))
#define splat8(x) ((v8){(x), (x), (x), (x), (x), (x), (x), (x)})

// Register block of gemm_nn: 4 rows of C by 24 columns (3 vectors), so the
// 12 accumulators, 3 loads of B and one broadcast fit in 16 registers.
#define MR 4
#define NV 3
#define NR (8 * NV)

CLONES
void uhno_gemm_nn(int m, int n, int k, const float *A, int lda, const float *B, int ldb, float *C, int ldc, int acc) {
	int i = 0;
	for (; i + MR <= m; i += MR) {
		int j = 0;
		for (; j + NR <= n; j += NR) {
			v8 c[MR][NV];
			for (int r = 0; r < MR; r++)
				for (int v = 0; v < NV; v++)
					c[r][v] = acc ? load8(C + (i + r) * ldc + j + 8 * v) : splat8(0);
			for (int p = 0; p < k; p++) {
				const float *b = B + p * ldb + j;
				v8 b0 = load8(b), b1 = load8(b + 8), b2 = load8(b + 16);
				for (int r = 0; r < MR; r++) {
					v8 a = splat8(A[(i + r) * lda + p]);
					c[r][0] += a * b0;
					c[r][1] += a * b1;
					c[r][2] += a * b2;
				}
			}
			for (int r = 0; r < MR; r++)
				for (int v = 0; v < NV; v++)
					store8(C + (i + r) * ldc + j + 8 * v, c[r][v]);
		}
		// Column tail: scalar over the remaining columns of these rows.
		for (int r = 0; r < MR; r++) {
			float *cr = C + (i + r) * ldc;
			for (int jj = j; jj < n; jj++) {
				float s = acc ? cr[jj] : 0.0f;
				for (int p = 0; p < k; p++)
					s += A[(i + r) * lda + p] * B[p * ldb + jj];
				cr[jj] = s;
			}
		}
	}
	// Row tail: one row at a time, vectorised along columns.
	for (; i < m; i++) {
		float *cr = C + i * ldc;
		if (!acc)
			for (int jj = 0; jj < n; jj++)
				cr[jj] = 0.0f;
		for (int p = 0; p < k; p++) {
			float a = A[i * lda + p];
			const float *b = B + p * ldb;
			for (int jj = 0; jj < n; jj++)
				cr[jj] += a * b[jj];
		}
	}
}

#define hsum8(v) ((((v)[0] + (v)[4]) + ((v)[1] + (v)[5])) + (((v)[2] + (v)[6]) + ((v)[3] + (v)[7])))

CLONES
void uhno_gemm_nt(int m, int n, int k, const float *A, int lda, const float *B, int ldb, float *C, int ldc) {
	int kv = k & ~7;
	for (int i = 0; i < m; i += 2) {
		int i1 = i + 1 < m ? i + 1 : i; // odd m: the last row pairs with itself
		for (int j = 0; j < n; j += 2) {
			int j1 = j + 1 < n ? j + 1 : j;
			const float *a0 = A + i * lda, *a1 = A + i1 * lda;
			const float *b0 = B + j * ldb, *b1 = B + j1 * ldb;
			v8 s00 = splat8(0), s01 = splat8(0), s10 = splat8(0), s11 = splat8(0);
			for (int p = 0; p < kv; p += 8) {
				v8 x0 = load8(a0 + p), x1 = load8(a1 + p);
				v8 y0 = load8(b0 + p), y1 = load8(b1 + p);
				s00 += x0 * y0;
				s01 += x0 * y1;
				s10 += x1 * y0;
				s11 += x1 * y1;
			}
			float t00 = hsum8(s00), t01 = hsum8(s01), t10 = hsum8(s10), t11 = hsum8(s11);
			for (int p = kv; p < k; p++) {
				t00 += a0[p] * b0[p];
				t01 += a0[p] * b1[p];
				t10 += a1[p] * b0[p];
				t11 += a1[p] * b1[p];
			}
			C[i * ldc + j] += t00;
			if (j1 != j)
				C[i * ldc + j1] += t01;
			if (i1 != i) {
				C[i1 * ldc + j] += t10;
				if (j1 != j)
					C[i1 * ldc + j1] += t11;
			}
		}
	}
}
