// Fast kernels of the spectral convolution (spectral.go); see
// spectral_gemm_amd64.c.
#ifndef UHNO_SPECTRAL_GEMM_H
#define UHNO_SPECTRAL_GEMM_H

void uhno_spectral_sgemm(long m, long n, long k, const float *a, long lda,
                         const float *b, long ldb, float *c, long ldc, int acc);
void uhno_spectral_cgemm(long m, long n, long p, const float *g, long ldg,
                         const float *in, long ldi, float *out, long ldo, int acc);
void uhno_spectral_rowmix(long P, long Q, long R, long L, const float *a, long au, long ar,
                          int conja, const float *b, long br, long bv, int conjb, float *out,
                          long ou, long ov, const float *scale, int acc, float *scratch);
int uhno_spectral_rowmix_level(int level, long P, long Q, long R, long L, const float *a, long au, long ar,
                               int conja, const float *b, long br, long bv, int conjb, float *out, long ou,
                               long ov, const float *scale, int acc, float *scratch);

#endif
