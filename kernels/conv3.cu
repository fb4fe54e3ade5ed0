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
// The three convolution kernels are implicit matrix products on the tiled
// core of gemm.cuh (64 x 64 tiles of C, K in stages of 16, 4 x 4 outputs
// a thread), the patch matrix gathered on the fly into shared memory, never
// stored (as ConvDown does in dense.cu):
//
//   - c3_forward:      Y_b (Cout x N) = W (Cout x Cin 3^d) P_b + bias, with
//                      P_b[i 3^d + t, j] = x[b, i, j + o(t)].
//   - c3_backward_dx:  dX_b (Cin x N) += W' (Cin x Cout 3^d) Q_b, with
//                      W'[i, o 3^d + t] = w[o, i, t] and Q_b[o 3^d + t, q]
//                      = dy[b, o, q - o(t)]: the gather of every tap that
//                      reads input point q (no atomics).
//   - c3_backward_dw:  dW (Cout x Cin 3^d) += sum over k = b N + j of
//                      dy[b, o, j] P_b[n, j]: one product over the batch and
//                      grid folded into K, split into shape-determined
//                      chunks whose partials dense_splitk_reduce (dense.cu)
//                      adds in chunk order (cuda.SplitK); the bias gradient
//                      is dense_bias_backward's.
//   - relu_forward, relu_backward: elementwise, dx += dy where x > 0.
//
// Every output is one thread's sum over k in increasing order, so results
// are identical run to run. The order differs from the CPU's im2col GEMM
// (the tests' tolerance is the bound of the sum), and the products may be
// contracted to FMAs as in dense.cu. Under bf16 autocast (the kernels' last
// argument) both operands of every product are rounded to bfloat16 as they
// enter shared memory (gemm_mainloop); the bias and its gradient stay
// float32.
//
// These replaced direct loops (one thread per output reading its weights
// and inputs from global memory; one block per weight summing in double)
// that took 94% of Conv-FNO's training step on an H200 (issue 37).
//
// Indices within one call are 32-bit (B C N < 2^31); plane offsets 64-bit.

#include "gemm.cuh" // gemm_mainloop, LoadRowK, LoadFolded, store_dw; common.cuh: Tap3Shape, tap3_*

// LoadTapPatch reads one sample's patch matrix, element (k, j) =
// v[c, j + sign o(t)] with k = c 3^d + t (t row-major over the kernel
// axes, as in w), for points j in c0 + [0, 64) of the plane: sign +1 is the
// forward's P_b (v = x, c over Cin), sign -1 the input gradient's Q_b
// (v = dy, c over Cout). Each thread owns one column (its point's
// coordinates are split once) and four consecutive k, whose (c, t0, t1,
// t2) it steps without division. Zero outside.
struct LoadTapPatch {
    const float *v; // the sample's field, [C, N]
    Tap3Shape g;
    int q[3];
    int sign;
    bool valid; // the thread's column is a point of the plane
    __device__ LoadTapPatch(const float *v_, const Tap3Shape &g_, int c0, int sign_) : v(v_), g(g_), sign(sign_) {
        const int j = c0 + threadIdx.x % GT;
        valid = j < g.s;
        tap3_point(g, valid ? j : 0, q);
    }
    __device__ void operator()(Tile &s, int kb, int k1) const {
        const int cc = threadIdx.x % GT, kq = threadIdx.x / GT;
        const int k = kb + 4 * kq;
        int c = k / g.taps, t = k - c * g.taps;
        int t0 = t / (g.T[1] * g.T[2]);
        t -= t0 * g.T[1] * g.T[2];
        int t1 = t / g.T[2], t2 = t - t1 * g.T[2];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            s[4 * kq + u][cc] = (valid && k + u < k1) ? v[(size_t)c * g.s + tap3_offset(g, q, t0, t1, t2, sign)] : 0.0f;
            if (++t2 == g.T[2]) {
                t2 = 0;
                if (++t1 == g.T[1]) {
                    t1 = 0;
                    if (++t0 == g.T[0]) t0 = 0, c++;
                }
            }
        }
    }
};

// LoadTapW reads W'[i, k] = w[o, i, t] with k = o 3^d + t, for rows i in
// r0 + [0, 64) below Cin; each thread one row and four consecutive k.
struct LoadTapW {
    const float *w;
    int cin, taps, r0;
    __device__ void operator()(Tile &s, int kb, int k1) const {
        const int cc = threadIdx.x % GT, kq = threadIdx.x / GT;
        const int i = r0 + cc;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int k = kb + 4 * kq + u;
            float v = 0.0f;
            if (k < k1 && i < cin) {
                const int o = k / taps, t = k - o * taps;
                v = w[((size_t)o * cin + i) * taps + t];
            }
            s[4 * kq + u][cc] = v;
        }
    }
};

// LoadTapPatchT reads the weight gradient's B[k, n] = x[b, i, j + o(t)]
// with k = b N + j folded over the batch (16 consecutive k a stage, one
// per thread lane) and n = i 3^d + t for columns c0 + [0, 64) below
// Cin 3^d. Each thread's four columns (i, t) are split once; each stage
// splits its k once.
struct LoadTapPatchT {
    const float *x; // [B, Cin, N]
    Tap3Shape g;
    int cin;
    int ci[4], ct[4][3]; // the thread's columns: channel and per-axis tap (ci = -1: beyond Cin 3^d)
    __device__ LoadTapPatchT(const float *x_, const Tap3Shape &g_, int cin_, int c0) : x(x_), g(g_), cin(cin_) {
        const int cr = threadIdx.x / GK;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int n = c0 + cr + 16 * u;
            const int i = n / g.taps;
            int t = n - i * g.taps;
            ci[u] = n < cin * g.taps ? i : -1;
            ct[u][0] = t / (g.T[1] * g.T[2]);
            t -= ct[u][0] * g.T[1] * g.T[2];
            ct[u][1] = t / g.T[2];
            ct[u][2] = t - ct[u][1] * g.T[2];
        }
    }
    __device__ void operator()(Tile &s, int kb, int k1) const {
        const int kk = threadIdx.x % GK, cr = threadIdx.x / GK;
        const int k = kb + kk;
        const int b = k / g.s, j = k - b * g.s;
        int q[3];
        tap3_point(g, j, q);
        const float *xb = x + (size_t)b * cin * g.s;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            s[kk][cr + 16 * u] = (k < k1 && ci[u] >= 0)
                ? xb[(size_t)ci[u] * g.s + tap3_offset(g, q, ct[u][0], ct[u][1], ct[u][2], 1)]
                : 0.0f;
        }
    }
};

extern "C" {

// c3_forward: grid (ceil(N/64), ceil(Cout/64), batch) (cuda.Gemm); the
// batch loops over grid z beyond 65,535 samples. bias may be NULL.
__global__ void c3_forward(float *y, const float *x, const float *w, const float *bias, int batch, int cin, int cout,
                           int d, int n0, int n1, int n2, int bf16) {
    const Tap3Shape g = tap3_shape(d, n0, n1, n2);
    const int c0 = blockIdx.x * GT, m0 = blockIdx.y * GT;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int K = cin * g.taps;
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const LoadRowK la = {w, K, cout, m0};
        const LoadTapPatch lb(x + (size_t)b * cin * g.s, g, c0, 1);
        float acc[4][4];
        zero_acc(acc);
        gemm_mainloop(la, lb, 0, K, acc, bf16);
        float *yb = y + (size_t)b * cout * g.s;
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int o = m0 + ty + 16 * r;
            if (o >= cout) continue;
            const float bo = bias ? bias[o] : 0.0f;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int j = c0 + tx + 16 * c;
                if (j < g.s) yb[(size_t)o * g.s + j] = acc[r][c] + bo;
            }
        }
    }
}

// c3_backward_dx: grid (ceil(N/64), ceil(Cin/64), batch) (cuda.Gemm).
__global__ void c3_backward_dx(float *dx, const float *dy, const float *w, int batch, int cin, int cout, int d, int n0,
                               int n1, int n2, int bf16) {
    const Tap3Shape g = tap3_shape(d, n0, n1, n2);
    const int c0 = blockIdx.x * GT, m0 = blockIdx.y * GT;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int K = cout * g.taps;
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const LoadTapW la = {w, cin, g.taps, m0};
        const LoadTapPatch lb(dy + (size_t)b * cout * g.s, g, c0, -1);
        float acc[4][4];
        zero_acc(acc);
        gemm_mainloop(la, lb, 0, K, acc, bf16);
        float *dxb = dx + (size_t)b * cin * g.s;
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = m0 + ty + 16 * r;
            if (i >= cin) continue;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int j = c0 + tx + 16 * c;
                if (j < g.s) dxb[(size_t)i * g.s + j] += acc[r][c];
            }
        }
    }
}

// c3_backward_dw: grid (ceil(Cin 3^d / 64), ceil(Cout/64), splits)
// (cuda.Gemm over cuda.SplitK's splits); split z covers k in
// [z chunk, (z+1) chunk) of K = B N and, unless the product is not split
// (accumulate != 0: added into dw), writes its partial to out[z Cout
// Cin 3^d + ...] for dense_splitk_reduce.
__global__ void c3_backward_dw(float *out, const float *dy, const float *x, int batch, int cin, int cout, int d,
                               int n0, int n1, int n2, int chunk, int splits, int accumulate, int bf16) {
    const Tap3Shape g = tap3_shape(d, n0, n1, n2);
    const int c0 = blockIdx.x * GT, m0 = blockIdx.y * GT;
    const int K = batch * g.s, N = cin * g.taps;
    for (int z = blockIdx.z; z < splits; z += gridDim.z) {
        const LoadFolded la = {dy, cout, g.s, m0};
        const LoadTapPatchT lb(x, g, cin, c0);
        float acc[4][4];
        zero_acc(acc);
        gemm_mainloop(la, lb, z * chunk, min(K, (z + 1) * chunk), acc, bf16);
        store_dw(out, acc, m0, c0, cout, N, z, accumulate);
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
