// The im2col data movement of the stencil and convolution products for
// the CPU backend; see patch_amd64.c.
#ifndef UHNO_PATCH_H
#define UHNO_PATCH_H

#include <stdint.h>

// As stGeom's and convGeom's im2col, im2colT and col2im (stencil.go,
// resample.go): T offsets (stencil offsets or convolution taps) of cin
// channels of sp points each, for a tile of n points whose plane offsets
// are offs[t*n + pl] (-1: a dropped edge); the patch row of channel i and
// offset t is k = i*ki + t*kt, of K = T*cin rows.
void uhno_patch_im2col(float *patch, const float *xb, const int32_t *offs, long T, long cin, long sp, long n, long ki, long kt);
void uhno_patch_im2colT(float *patchT, const float *xb, const int32_t *offs, long T, long cin, long sp, long n, long ki, long kt);
void uhno_patch_col2im(float *dxb, const float *dP, const int32_t *offs, long T, long cin, long sp, long n, long ki, long kt);

#endif
