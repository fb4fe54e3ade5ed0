// Pointwise's kernels for few channels (pointwise_narrow.go): the 1x1
// convolution computed straight from the rows, with no packed GEMM.
// Compiled for x86-64-v4, x86-64-v3 and a portable default; level -1 runs
// the widest the CPU supports.
#ifndef UHNO_PW_NARROW_H
#define UHNO_PW_NARROW_H

// out[r*os + s] = sum_k A[r, k] in[k*is + s] (+ bias[r] when bias is not
// NULL), or out[r*os + s] += that sum (add != 0, no bias), for r < m,
// s < n, with A[r, k] = a[r*ars + k*aks] and the sum over k < l from zero
// in increasing k: per point the operations of uhno_conv_gemm.
// Returns -1 (and does nothing) if the CPU lacks the level, else 0.
int uhno_pw_narrow_level(int level, float *out, long os, long m, long n, const float *a, long ars, long aks,
                         const float *in, long is, long l, int add, const float *bias);

// p[o*cin + i] = sum_s dy[o*sp + s] x[i*sp + s] for o < cout, i < cin:
// 32 interleaved partial sums (lane j takes the s with s mod 32 = j, in
// increasing s) combined pairwise by halving (lane j + 16 into lane j,
// then j + 8, 4, 2, 1).
int uhno_pw_narrow_dw_level(int level, float *p, const float *dy, long cout, const float *x, long cin, long sp);

#endif
