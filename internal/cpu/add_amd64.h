// Vectorised accumulation loops for the CPU backend; see add_amd64.c.
#ifndef UHNO_ADD_H
#define UHNO_ADD_H

// y[i] += a * x[i] for i < n (the product rounded, then the sum).
void uhno_axpy(float *y, const float *x, long n, float a);
// p[i % 8] += row[i] for i < n, in order of i.
void uhno_add_interleaved(float *p, const float *row, long n);

#endif
