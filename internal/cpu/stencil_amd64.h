// The GNO stencil's data movement for the CPU backend; see stencil_amd64.c.
#ifndef UHNO_STENCIL_H
#define UHNO_STENCIL_H

#include <stdint.h>

// As stGeom.im2col, im2colT and col2im (stencil.go) for S offsets, cin
// channels of sp points each, and a tile of n points whose plane offsets
// are offs[s*n + pl] (-1: a dropped edge).
void uhno_st_im2col(float *patch, const float *xb, const int32_t *offs, long S, long cin, long sp, long n);
void uhno_st_im2colT(float *patchT, const float *xb, const int32_t *offs, long S, long cin, long sp, long n);
void uhno_st_col2im(float *dxb, const float *dP, const int32_t *offs, long S, long cin, long sp, long n);

#endif
