// One pass of the depthwise Gaussian convolution (gaussian.go): a
// symmetric 1D kernel applied circularly along the middle axis of a block
// viewed as [outer, n, inner]. Compiled for x86-64-v4 (AVX-512),
// x86-64-v3 (AVX2+FMA) and the portable default target.
#ifndef UHNO_GAUSSIAN_AMD64_H
#define UHNO_GAUSSIAN_AMD64_H

// uhno_gauss_axis applies, with k[0..r] (k[-d] = k[d]) and indices
// i -/+ d taken mod n, the operator
//   (K s)[o,i,j] = k[0] s[o,i,j] + sum_{d=1..r} k[d] (s[o,i-d,j] + s[o,i+d,j])
// and K' likewise with dk. It forms A = K s and, when dk is not NULL,
// B = K' s + K s2 (s2 may be NULL: B = K' s). A is stored into z (added
// when add != 0) unless z is NULL. B is stored into z2 when z2 is not
// NULL; otherwise, when e is not NULL, the function returns sum e B,
// summed per position of a run in float32 and over positions in double
// (0 when e is NULL). Valid modes: dk NULL with z only; z2 with or
// without s2; e with or without z, with or without s2.
// scratch holds 8 (n + 2 max(r, 16)) + w + 16 floats, w = inner, or n when
// inner == 1. r <= (n-1)/2. isa selects the instantiation: 2 AVX-512,
// 1 AVX2, 0 portable, -1 the best this CPU supports.
double uhno_gauss_axis(float *z, float *z2, const float *s, const float *s2, const float *e, const float *k,
                       const float *dk, int r, int outer, int n, int inner, int add, float *scratch, int isa);

// uhno_gauss_best_isa returns the best isa level this CPU supports.
int uhno_gauss_best_isa(void);

#endif
