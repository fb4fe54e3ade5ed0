// The WNO baseline's operations (tensor.Backend.Wavelet, WaveletMix),
// forward and backward; the CPU twin is internal/cpu/wavelet.go.
//
// Wavelet: the periodic orthonormal db4 transform (tensor.DB4, eight
// taps) in Mallat's in-place layout, level by level and axis by axis. One
// launch of wv_step is one (level, axis) step on every (sample, channel)
// plane: it reads src and writes dst, both [planes][N], one thread per
// value. A value inside the step's corner (r0, r1, r2 points on the padded
// axes) gets the filtered line along `axis`; a value outside is copied.
// The Go wrapper ping-pongs src and dst through scratch so that the last
// step writes the output (or adds into dx for a backward: accumulate).
//
//   analysis (inverse = 0), line of length L along the axis, j < L/2:
//     out[j] = sum_t h[t] line[(2j+t) mod L], out[L/2+j] = the same with g
//   synthesis (inverse = 1):
//     out[j] = sum over t = j mod 2, j mod 2 + 2, .. < 8 of
//              h[t] line[k] + g[t] line[L/2 + k],  k = ((j - t) mod L) / 2
//
// WaveletMix: per-point channel mixing on the corner [0, m0) x [0, m1) x
// [0, m2) (padded axes have m = 1):
//   - wm_forward:     y[b,o,p] = sum_i w[i,o,p] x[b,i,p] (0 off the corner),
//                     one thread per output value.
//   - wm_backward_dx: dx[b,i,p] += sum_o w[i,o,p] dy[b,o,p] on the corner,
//                     one thread per input value.
//   - wm_backward_dw: dw[i,o,p] += sum_b x[b,i,p] dy[b,o,p] in double, in
//                     sample order, one thread per weight.
//
// Every sum adds its terms in the CPU backend's order with __fmul_rn /
// __fadd_rn (no FMA contraction), so the results reproduce the CPU's bits.
// No atomics, no shared memory: deterministic under every thread order.
// Indices are 32-bit (the tensors hold < 2^31 values).

__device__ __forceinline__ float wv_h(int t) {
    switch (t) {
    case 0: return (float)0.2303778133088964;
    case 1: return (float)0.7148465705529154;
    case 2: return (float)0.6308807679298587;
    case 3: return (float)-0.0279837694168599;
    case 4: return (float)-0.1870348117190931;
    case 5: return (float)0.0308413818355607;
    case 6: return (float)0.0328830116668852;
    default: return (float)-0.0105974017850690;
    }
}

// wv_g is the wavelet filter g[t] = (-1)^t h[7-t].
__device__ __forceinline__ float wv_g(int t) {
    const float v = wv_h(7 - t);
    return (t & 1) ? -v : v;
}

extern "C" {

// wv_step: one (level, axis) step of the transform over planes * (n0 n1
// n2) values; r0..r2 is the corner this level transforms (r = n on padded
// axes, where n = 1). With accumulate, dst += the result (values outside
// the corner add src). cuda.Elementwise geometry.
__global__ void wv_step(float *dst, const float *src, int planes, int n0, int n1, int n2, int r0, int r1, int r2,
                        int axis, int inverse, int accumulate) {
    const int s = n0 * n1 * n2;
    const int total = planes * s;
    const int stride = axis == 0 ? n1 * n2 : (axis == 1 ? n2 : 1);
    const int L = axis == 0 ? r0 : (axis == 1 ? r1 : r2);
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pl = e / s, p = e - pl * s;
        const int q2 = p % n2, q1 = (p / n2) % n1, q0 = p / (n1 * n2);
        float v;
        if (q0 >= r0 || q1 >= r1 || q2 >= r2) {
            v = src[e];
        } else {
            const int j = axis == 0 ? q0 : (axis == 1 ? q1 : q2);
            // The line's first value: this point with its axis index 0.
            const float *line = src + (size_t)pl * s + (p - j * stride);
            const int h = L / 2;
            float acc = 0.0f;
            if (!inverse) {
                const int k = j < h ? j : j - h;
                const bool hi = j >= h;
                for (int t = 0; t < 8; t++) {
                    const float f = hi ? wv_g(t) : wv_h(t);
                    acc = __fadd_rn(acc, __fmul_rn(f, line[((2 * k + t) % L) * stride]));
                }
            } else {
                for (int t = j & 1; t < 8; t += 2) {
                    const int k = (((j - t) % L + L) % L) / 2;
                    acc = __fadd_rn(acc, __fmul_rn(wv_h(t), line[k * stride]));
                    acc = __fadd_rn(acc, __fmul_rn(wv_g(t), line[(h + k) * stride]));
                }
            }
            v = acc;
        }
        dst[e] = accumulate ? __fadd_rn(dst[e], v) : v;
    }
}

// wm_forward: y [batch, cout, N] = the corner mixing of x [batch, cin, N]
// with w [cin, cout, m0 m1 m2]. cuda.Elementwise geometry over batch cout N.
__global__ void wm_forward(float *y, const float *x, const float *w, int batch, int cin, int cout, int n0, int n1,
                           int n2, int m0, int m1, int m2) {
    const int s = n0 * n1 * n2, mq = m0 * m1 * m2;
    const int total = batch * cout * s;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pl = e / s, p = e - pl * s, b = pl / cout, o = pl - b * cout;
        const int q2 = p % n2, q1 = (p / n2) % n1, q0 = p / (n1 * n2);
        float acc = 0.0f;
        if (q0 < m0 && q1 < m1 && q2 < m2) {
            const int q = (q0 * m1 + q1) * m2 + q2;
            for (int i = 0; i < cin; i++)
                acc = __fadd_rn(acc, __fmul_rn(w[(size_t)(i * cout + o) * mq + q], x[(size_t)(b * cin + i) * s + p]));
        }
        y[e] = acc;
    }
}

// wm_backward_dx: dx [batch, cin, N] += sum_o w[i,o,q] dy[b,o,p] on the
// corner. cuda.Elementwise geometry over batch cin N.
__global__ void wm_backward_dx(float *dx, const float *dy, const float *w, int batch, int cin, int cout, int n0,
                               int n1, int n2, int m0, int m1, int m2) {
    const int s = n0 * n1 * n2, mq = m0 * m1 * m2;
    const int total = batch * cin * s;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pl = e / s, p = e - pl * s, b = pl / cin, i = pl - b * cin;
        const int q2 = p % n2, q1 = (p / n2) % n1, q0 = p / (n1 * n2);
        if (q0 >= m0 || q1 >= m1 || q2 >= m2) continue;
        const int q = (q0 * m1 + q1) * m2 + q2;
        float acc = 0.0f;
        for (int o = 0; o < cout; o++)
            acc = __fadd_rn(acc, __fmul_rn(w[(size_t)(i * cout + o) * mq + q], dy[(size_t)(b * cout + o) * s + p]));
        dx[e] = __fadd_rn(dx[e], acc);
    }
}

// wm_backward_dw: dw [cin, cout, mq] += sum_b x[b,i,p] dy[b,o,p], summed
// in double in sample order. cuda.Elementwise geometry over cin cout mq.
__global__ void wm_backward_dw(float *dw, const float *dy, const float *x, int batch, int cin, int cout, int n0,
                               int n1, int n2, int m0, int m1, int m2) {
    const int s = n0 * n1 * n2, mq = m0 * m1 * m2;
    const int total = cin * cout * mq;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pr = e / mq, q = e - pr * mq, i = pr / cout, o = pr - i * cout;
        const int q2 = q % m2, q1 = (q / m2) % m1, q0 = q / (m1 * m2);
        const int p = (q0 * n1 + q1) * n2 + q2;
        double acc = 0.0;
        for (int b = 0; b < batch; b++)
            acc += (double)x[(size_t)(b * cin + i) * s + p] * (double)dy[(size_t)(b * cout + o) * s + p];
        dw[e] = __fadd_rn(dw[e], (float)acc);
    }
}

}  // extern "C"
