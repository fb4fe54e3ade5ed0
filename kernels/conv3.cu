// The full kernel-3, stride-1 circular convolution of the Conv-FNO and
// CNO baselines (tensor.Backend.Conv3) and ReLU, forward and backward:
//
//     y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,j+o(t)] + bias[o]
//
// with circular indices (padding 1), where tap t = (t_0, ..., t_{d-1}) in
// {0,1,2}^d, row-major over the axes as in w [Cout, Cin, 3, ..., 3], reads
// the offset o(t) = t - 1 on every axis. The spatial axes are padded in
// front to three (a padded axis has one point and one tap, offset 0).
//
//   - c3_forward:      one thread per output value (grid-stride), the
//                      products added in (i, t) order.
//   - c3_backward_dx:  dx[b,i,q] += sum_{o,t} w[o,i,t] dy[b,o,q-o(t)], a
//                      gather, one thread per input value, (o, t) order.
//   - c3_backward_dw:  dw[o,i,t] += sum_{b,j} dy[b,o,j] x[b,i,j+o(t)] and
//                      dbias[o] += sum_{b,j} dy[b,o,j]: one block per
//                      weight or bias; each thread sums a fixed stride of
//                      the B N products in double, and a fixed tree adds
//                      the threads' sums. Deterministic, no atomics.
//   - relu_forward, relu_backward: elementwise, dx += dy where x > 0.
//
// These are direct loops, not the tiled GEMM of dense.cu (ConvDown's
// im2col product): they are the baselines' correct and deterministic
// first version, and a tiled version is a measured GPU session's work.
// Products and sums use __fmul_rn / __fadd_rn (no FMA contraction).
//
// Indices within one call are 32-bit (B C N < 2^31); plane offsets 64-bit.

#include "common.cuh" // Tap3Shape, tap3_*, wrap_once, bf16_if

// c3_offset is the plane offset of point q shifted by sign * o(t) for the
// flat tap t, wrapped.
__device__ __forceinline__ int c3_offset(const Tap3Shape &g, const int q[3], int t, int sign) {
    const int t0 = t / (g.T[1] * g.T[2]), t1 = (t / g.T[2]) % g.T[1], t2 = t % g.T[2];
    return tap3_offset(g, q, t0, t1, t2, sign);
}

// bf16 autocast: with a non-zero last argument bf16, the kernels' products
// round both operands to bfloat16 (bf16_if, common.cuh) and accumulate as
// before (float, or double in the weight gradients); bias terms and sums
// of dy alone stay float32.

extern "C" {

// c3_forward: cuda.Elementwise geometry over batch * cout * N values.
// bias may be NULL.
__global__ void c3_forward(float *y, const float *x, const float *w, const float *bias, int batch, int cin, int cout,
                           int d, int n0, int n1, int n2, int bf16) {
    const Tap3Shape g = tap3_shape(d, n0, n1, n2);
    const int total = batch * cout * g.s;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int p = e % g.s, o = (e / g.s) % cout, b = e / (g.s * cout);
        int q[3];
        tap3_point(g, p, q);
        float acc = 0.0f;
        for (int i = 0; i < cin; i++) {
            const float *xp = x + ((size_t)b * cin + i) * g.s;
            const float *wi = w + ((size_t)o * cin + i) * g.taps;
            for (int t = 0; t < g.taps; t++) acc = __fadd_rn(acc, __fmul_rn(bf16_if(wi[t], bf16), bf16_if(xp[c3_offset(g, q, t, 1)], bf16)));
        }
        y[e] = bias ? __fadd_rn(acc, bias[o]) : acc;
    }
}

// c3_backward_dx: cuda.Elementwise geometry over batch * cin * N values.
__global__ void c3_backward_dx(float *dx, const float *dy, const float *w, int batch, int cin, int cout, int d, int n0,
                               int n1, int n2, int bf16) {
    const Tap3Shape g = tap3_shape(d, n0, n1, n2);
    const int total = batch * cin * g.s;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int p = e % g.s, i = (e / g.s) % cin, b = e / (g.s * cin);
        int q[3];
        tap3_point(g, p, q);
        float acc = 0.0f;
        for (int o = 0; o < cout; o++) {
            const float *gp = dy + ((size_t)b * cout + o) * g.s;
            const float *wo = w + ((size_t)o * cin + i) * g.taps;
            for (int t = 0; t < g.taps; t++) acc = __fadd_rn(acc, __fmul_rn(bf16_if(wo[t], bf16), bf16_if(gp[c3_offset(g, q, t, -1)], bf16)));
        }
        dx[e] = __fadd_rn(dx[e], acc);
    }
}

// c3_backward_dw: row r = blockIdx.y * gridDim.x + blockIdx.x of the
// cout (cin taps + 1) rows (cuda.PerRow geometry, 256 threads, a power of
// two) is output channel o = r / (cin taps + 1) and slot k = r % (cin taps
// + 1): k < cin taps is dw[o, k] (input channel k / taps, tap k % taps),
// k = cin taps is dbias[o]. A NULL gradient's rows return at once
// (uniformly over the block). Thread l sums the points j = l, l + 256, ...
// of every sample in sample order, in double; a fixed tree in shared
// memory adds the threads' sums.
__global__ void c3_backward_dw(float *dw, float *dbias, const float *dy, const float *x, int batch, int cin, int cout,
                               int d, int n0, int n1, int n2, int bf16) {
    __shared__ double red[256];
    const Tap3Shape g = tap3_shape(d, n0, n1, n2);
    const int K = cin * g.taps;
    const int r = blockIdx.y * gridDim.x + blockIdx.x;
    if (r >= cout * (K + 1)) return;
    const int o = r / (K + 1), k = r - o * (K + 1);
    const bool isBias = k == K;
    if ((isBias && dbias == NULL) || (!isBias && dw == NULL)) return;
    const int i = isBias ? 0 : k / g.taps, t = isBias ? 0 : k % g.taps;
    double acc = 0.0;
    for (int b = 0; b < batch; b++) {
        const float *gp = dy + ((size_t)b * cout + o) * g.s;
        const float *xp = x + ((size_t)b * cin + i) * g.s;
        for (int p = threadIdx.x; p < g.s; p += blockDim.x) {
            if (isBias) {
                acc += (double)gp[p];
            } else {
                int q[3];
                tap3_point(g, p, q);
                acc += (double)bf16_if(gp[p], bf16) * (double)bf16_if(xp[c3_offset(g, q, t, 1)], bf16);
            }
        }
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (isBias) dbias[o] += (float)red[0];
        else dw[(size_t)o * K + k] += (float)red[0];
    }
}

// relu_forward: y = max(x, 0) (cuda.Elementwise geometry).
__global__ void relu_forward(float *y, const float *x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

// relu_backward: dx += dy where x > 0.
__global__ void relu_backward(float *dx, const float *dy, const float *x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        if (x[i] > 0.0f) dx[i] = __fadd_rn(dx[i], dy[i]);
}

}  // extern "C"
