// Vectorisable GELU (exact erf form) for the CPU backend; see act_amd64.c.
#ifndef UHNO_ACT_H
#define UHNO_ACT_H

// y[i] = x[i] * Phi(x[i]).
void uhno_gelu(float *y, const float *x, long n);
// dx[i] += dy[i] * (Phi(x[i]) + x[i] phi(x[i])).
void uhno_gelu_backward(float *dx, const float *dy, const float *x, long n);
// y[i] = x[i] > 0 ? x[i] : 0.
void uhno_relu(float *y, const float *x, long n);
// dx[i] += dy[i] where x[i] > 0.
void uhno_relu_backward(float *dx, const float *dy, const float *x, long n);

#endif
