// Depthwise 3-tap convolution of the flat additive hybrid's local branch
// (paper App. "Branch-Parameter Gradient-Angle Diagnostic";
// tensor.Backend.DepthwiseConv), forward and backward:
//
//     y[b,c,j] = sum_t w[c,t] x[b,c,j+o(t)] + bias[c]
//
// with circular indices (stride 1, padding 1), where tap t = (t_0, ...,
// t_{d-1}) in {0,1,2}^d, row-major over the axes as in w [C, 3, ..., 3],
// reads the offset o(t) = t - 1 on every axis. The spatial axes are padded
// in front to three: a padded axis has one point and one tap (offset 0),
// so 1D, 2D and 3D share the code.
//
//   - dw_forward:      one thread per output value (grid-stride).
//   - dw_backward_dx:  dx[b,c,i] += sum_t w[c,t] dy[b,c,i-o(t)], a gather,
//                      one thread per input value (grid-stride).
//   - dw_backward_dw:  dw[c,t] += sum_{b,j} dy[b,c,j] x[b,c,j+o(t)] and
//                      dbias[c] += sum_{b,j} dy[b,c,j]: one block per
//                      (channel, tap or bias); each thread sums a fixed
//                      stride of the B N products in double, and a fixed
//                      tree adds the threads' sums. Deterministic, no
//                      atomics.
//
// Forward and dx add their taps in weight order with __fmul_rn /
// __fadd_rn (no FMA contraction), the order and rounding of the CPU
// backend (internal/cpu/depthwise.go), so they reproduce its results;
// the weight and bias sums are in double like the CPU's.
//
// Indices within one sample's planes are 32-bit (the grid-stride loops
// run over B C N < 2^31 values); plane offsets are 64-bit.

#include "common.cuh" // Tap3Shape, tap3_*, bf16_if

// bf16 autocast: with a non-zero last argument bf16, the kernels' products
// round both operands to bfloat16 (bf16_if, common.cuh) and accumulate as
// before (float, or double in the weight gradients); bias terms and sums
// of dy alone stay float32.

extern "C" {

// dw_forward: y = depthwise(x; w) + bias over planes = B C planes of
// channel count c (plane pl has channel pl % c). bias may be NULL.
// cuda.Elementwise geometry over planes * N values.
__global__ void dw_forward(float *y, const float *x, const float *w, const float *bias, int planes, int c, int d,
                           int n0, int n1, int n2, int bf16) {
    const Tap3Shape g = tap3_shape(d, n0, n1, n2);
    const int total = planes * g.s;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pl = e / g.s, p = e - pl * g.s, ch = pl % c;
        const float *xp = x + (size_t)pl * g.s;
        const float *wc = w + (size_t)ch * g.taps;
        int q[3];
        tap3_point(g, p, q);
        float acc = bias ? bias[ch] : 0.0f;
        int t = 0;
        for (int t0 = 0; t0 < g.T[0]; t0++)
            for (int t1 = 0; t1 < g.T[1]; t1++)
                for (int t2 = 0; t2 < g.T[2]; t2++, t++)
                    acc = __fadd_rn(acc, __fmul_rn(bf16_if(wc[t], bf16), bf16_if(xp[tap3_offset(g, q, t0, t1, t2, 1)], bf16)));
        y[e] = acc;
    }
}

// dw_backward_dx: dx[i] += sum_t w[c,t] dy[i - o(t)], the taps in weight
// order. cuda.Elementwise geometry over planes * N values.
__global__ void dw_backward_dx(float *dx, const float *dy, const float *w, int planes, int c, int d, int n0, int n1,
                               int n2, int bf16) {
    const Tap3Shape g = tap3_shape(d, n0, n1, n2);
    const int total = planes * g.s;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pl = e / g.s, p = e - pl * g.s, ch = pl % c;
        const float *gp = dy + (size_t)pl * g.s;
        const float *wc = w + (size_t)ch * g.taps;
        int q[3];
        tap3_point(g, p, q);
        float acc = dx[e];
        int t = 0;
        for (int t0 = 0; t0 < g.T[0]; t0++)
            for (int t1 = 0; t1 < g.T[1]; t1++)
                for (int t2 = 0; t2 < g.T[2]; t2++, t++)
                    acc = __fadd_rn(acc, __fmul_rn(bf16_if(wc[t], bf16), bf16_if(gp[tap3_offset(g, q, t0, t1, t2, -1)], bf16)));
        dx[e] = acc;
    }
}

// dw_backward_dw: row r = blockIdx.y * gridDim.x + blockIdx.x of the
// c (taps + 1) rows (cuda.PerRow geometry, 256 threads, a power of two)
// is channel ch = r / (taps + 1) and slot t = r % (taps + 1): t < taps is
// dw[ch, t] += sum_{b,j} dy[b,ch,j] x[b,ch,j+o(t)], t = taps is
// dbias[ch] += sum_{b,j} dy[b,ch,j]. A NULL gradient's rows return at once
// (uniformly over the block). Thread k sums the points j = k, k + 256, ...
// of every sample in sample order, in double; a fixed tree in shared
// memory adds the threads' sums.
__global__ void dw_backward_dw(float *dw, float *dbias, const float *dy, const float *x, int batch, int c, int d,
                               int n0, int n1, int n2, int bf16) {
    __shared__ double red[256];
    const Tap3Shape g = tap3_shape(d, n0, n1, n2);
    const int r = blockIdx.y * gridDim.x + blockIdx.x;
    if (r >= c * (g.taps + 1)) return;
    const int ch = r / (g.taps + 1), t = r - ch * (g.taps + 1);
    const bool isBias = t == g.taps;
    if ((isBias && dbias == NULL) || (!isBias && dw == NULL)) return;
    // The tap's per-axis indices (row-major over the padded axes).
    const int t0 = isBias ? 1 : t / (g.T[1] * g.T[2]);
    const int t1 = isBias ? 1 : (t / g.T[2]) % g.T[1];
    const int t2 = isBias ? 1 : t % g.T[2];
    double acc = 0.0;
    for (int b = 0; b < batch; b++) {
        const size_t plane = ((size_t)b * c + ch) * g.s;
        const float *gp = dy + plane, *xp = x + plane;
        for (int p = threadIdx.x; p < g.s; p += blockDim.x) {
            if (isBias) {
                acc += (double)gp[p];
            } else {
                int q[3];
                tap3_point(g, p, q);
                acc += (double)bf16_if(gp[p], bf16) * (double)bf16_if(xp[tap3_offset(g, q, t0, t1, t2, 1)], bf16);
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
        if (isBias) dbias[ch] += (float)red[0];
        else dw[(size_t)ch * g.taps + t] += (float)red[0];
    }
}

}  // extern "C"
