// GNO's message passing on a stencil grid graph (tensor.Backend.StencilMessage),
// forward and backward:
//
//     y[b,o,p] = (1/|N(p)|) sum_{s in N(p)} sum_i k[s,o,i] x[b,i,p+s]
//
// k is [S, Cout, Cin]; off is the device table of the S offsets padded
// to three axes, off[3s + a] (int32 carried in float32 slots), 0 on padded
// axes. periodic wraps p + s on every axis; otherwise an offset that leaves
// the grid is not an edge, and |N(p)| counts the edges p has (a node with
// none gets 0).
//
//   - sm_forward:     one thread per output value (grid-stride): the
//                     offsets in order, the input channels in order.
//   - sm_backward_dx: dx[b,i,q] += sum_s [edge q-s -> q]
//                     (1/|N(q-s)|) sum_o k[s,o,i] dy[b,o,q-s], a gather,
//                     one thread per input value.
//   - sm_backward_dk: dk[s,o,i] += sum_{b,p in edges of s}
//                     (dy[b,o,p]/|N(p)|) x[b,i,p+s]: one block per entry
//                     of k; each thread sums a fixed stride of the B N
//                     products in double, a fixed tree adds the threads'
//                     sums. Deterministic, no atomics.
//
// Products and sums use __fmul_rn / __fadd_rn (no FMA contraction); the
// CPU backend sums in another order (an im2col GEMM), so the tests compare
// within sum bounds.

struct SmShape {
    int n[3]; // points per axis (1 on padded axes)
    int s;    // points per plane
};

__device__ __forceinline__ SmShape sm_shape(int n0, int n1, int n2) {
    SmShape g;
    g.n[0] = n0, g.n[1] = n1, g.n[2] = n2;
    g.s = n0 * n1 * n2;
    return g;
}

__device__ __forceinline__ int sm_off(const float *off, int i) { return __float_as_int(off[i]); }

// sm_neighbour is the plane index of point q[] moved by sign * offset s,
// or -1 when that leaves a non-periodic grid. |offset| <= N per axis.
__device__ __forceinline__ int sm_neighbour(const SmShape &g, const int q[3], const float *off, int s, int sign,
                                            int periodic) {
    int p = 0;
#pragma unroll
    for (int a = 0; a < 3; a++) {
        int c = q[a] + sign * sm_off(off, 3 * s + a);
        if (periodic) {
            c = c < 0 ? c + g.n[a] : (c >= g.n[a] ? c - g.n[a] : c);
        } else if (c < 0 || c >= g.n[a]) {
            return -1;
        }
        p = p * g.n[a] + c;
    }
    return p;
}

__device__ __forceinline__ void sm_point(const SmShape &g, int p, int q[3]) {
    q[2] = p % g.n[2];
    q[1] = (p / g.n[2]) % g.n[1];
    q[0] = p / (g.n[2] * g.n[1]);
}

// sm_inv is float32(1/|N(p)|) for point q[] (0 without neighbours), as
// the CPU computes it.
__device__ __forceinline__ float sm_inv(const SmShape &g, const int q[3], const float *off, int S, int periodic) {
    if (periodic) return (float)(1.0 / (double)S);
    int cnt = 0;
    for (int s = 0; s < S; s++) cnt += sm_neighbour(g, q, off, s, 1, 0) >= 0;
    return cnt > 0 ? (float)(1.0 / (double)cnt) : 0.0f;
}

extern "C" {

// sm_forward: y [B, cout, N] from x [B, cin, N]. cuda.Elementwise geometry
// over B cout N values.
__global__ void sm_forward(float *y, const float *x, const float *k, const float *off, int batch, int cin, int cout,
                           int S, int periodic, int n0, int n1, int n2) {
    const SmShape g = sm_shape(n0, n1, n2);
    const int total = batch * cout * g.s;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pl = e / g.s, p = e - pl * g.s, o = pl % cout, b = pl / cout;
        int q[3];
        sm_point(g, p, q);
        const float *xb = x + (size_t)b * cin * g.s;
        float acc = 0.0f;
        for (int s = 0; s < S; s++) {
            const int src = sm_neighbour(g, q, off, s, 1, periodic);
            if (src < 0) continue;
            const float *ks = k + ((size_t)s * cout + o) * cin;
            for (int i = 0; i < cin; i++) acc = __fadd_rn(acc, __fmul_rn(ks[i], xb[(size_t)i * g.s + src]));
        }
        y[e] = __fmul_rn(acc, sm_inv(g, q, off, S, periodic));
    }
}

// sm_backward_dx: dx [B, cin, N] += the gather of every edge that reads
// each input point. cuda.Elementwise geometry over B cin N values.
__global__ void sm_backward_dx(float *dx, const float *dy, const float *k, const float *off, int batch, int cin,
                               int cout, int S, int periodic, int n0, int n1, int n2) {
    const SmShape g = sm_shape(n0, n1, n2);
    const int total = batch * cin * g.s;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pl = e / g.s, p = e - pl * g.s, i = pl % cin, b = pl / cin;
        int q[3];
        sm_point(g, p, q);
        const float *dyb = dy + (size_t)b * cout * g.s;
        float acc = 0.0f;
        for (int s = 0; s < S; s++) {
            // The node whose offset s reads this point.
            const int dst = sm_neighbour(g, q, off, s, -1, periodic);
            if (dst < 0) continue;
            int r[3];
            sm_point(g, dst, r);
            const float inv = sm_inv(g, r, off, S, periodic);
            float t = 0.0f;
            for (int o = 0; o < cout; o++)
                t = __fadd_rn(t, __fmul_rn(k[((size_t)s * cout + o) * cin + i], dyb[(size_t)o * g.s + dst]));
            acc = __fadd_rn(acc, __fmul_rn(t, inv));
        }
        dx[e] = __fadd_rn(dx[e], acc);
    }
}

// sm_backward_dk: row r = blockIdx.y * gridDim.x + blockIdx.x of the
// S cout cin entries of k (cuda.PerRow geometry, 256 threads, a power of
// two). Thread t sums the points p = t, t + 256, ... of every sample in
// sample order, in double; a fixed tree in shared memory adds the sums.
__global__ void sm_backward_dk(float *dk, const float *dy, const float *x, const float *off, int batch, int cin,
                               int cout, int S, int periodic, int n0, int n1, int n2) {
    __shared__ double red[256];
    const SmShape g = sm_shape(n0, n1, n2);
    const int r = blockIdx.y * gridDim.x + blockIdx.x;
    if (r >= S * cout * cin) return;
    const int s = r / (cout * cin), o = (r / cin) % cout, i = r % cin;
    double acc = 0.0;
    for (int b = 0; b < batch; b++) {
        const float *gp = dy + ((size_t)b * cout + o) * g.s, *xp = x + ((size_t)b * cin + i) * g.s;
        for (int p = threadIdx.x; p < g.s; p += blockDim.x) {
            int q[3];
            sm_point(g, p, q);
            const int src = sm_neighbour(g, q, off, s, 1, periodic);
            if (src < 0) continue;
            acc += (double)__fmul_rn(gp[p], sm_inv(g, q, off, S, periodic)) * (double)xp[src];
        }
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) dk[r] += (float)red[0];
}

}  // extern "C"
