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
//   - sm_forward:     per sample Y_b = A X_b^shift, scaled per point:
//                     A (Cout x S Cin) the stacked k[s] and X_b^shift
//                     (S Cin x N) the neighbours x[b,i,p+s] gathered by
//                     the loader (0 without the edge), then each column
//                     p times 1/|N(p)|.
//   - sm_backward_dx: dx[b,i,q] += sum_s [edge q-s -> q]
//                     (1/|N(q-s)|) sum_o k[s,o,i] dy[b,o,q-s], a gather:
//                     per sample one product of the stacked k[s]^T
//                     (Cin x S Cout) with dy[b,o,q-s]/|N(q-s)| gathered.
//   - sm_backward_dk: dk[s,o,i] += sum_{b,p in edges of s}
//                     (dy[b,o,p]/|N(p)|) x[b,i,p+s], one tiled matrix
//                     product for all offsets: C (Cout x S Cin) = A B
//                     with A[o,k] = dy[b,o,p]/|N(p)| and B[k, s Cin + i]
//                     = x[b,i,p+s] (0 without the edge) over the folded
//                     K = B N (k = b N + p), split into shape-determined
//                     K chunks whose partials sm_dk_reduce adds in chunk
//                     order (cuda.StencilDk). Deterministic, no atomics.
//
// All three are the shared-memory tiled product of kernels/dense.cu
// (Pointwise, ConvDown), with the stencil's gather in a loader: a block
// of 256 threads owns a 64 x 64 output tile, walks K in stages of 16
// (SM_TK), each thread keeping 4 x 4 outputs in registers (sm_stage).
// They were direct loops (one thread per output, or for dk one block per
// entry of k re-reading dy and x for each of the S Cout Cin entries: 71%
// of GNO's training step on an H200 at NS-2D 128^2, batch 16, width 46).
//
// Products and sums use __fmul_rn / __fadd_rn / __fmaf_rn (no implicit
// FMA contraction, so the emulator computes the same bits); the CPU
// backend sums in another order (an im2col GEMM), so the tests compare
// within sum bounds.

#define SM_TILE 64 // a block's output tile is SM_TILE x SM_TILE (cuda.smTile)
#define SM_TK 16   // the K depth of one shared-memory stage (cuda.smStage)

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

// sm_step is the plane index of point q[] moved by d[] (|d| <= N per
// axis), or -1 when that leaves a non-periodic grid.
__device__ __forceinline__ int sm_step(const SmShape &g, const int q[3], const int d[3], int periodic) {
    int p = 0;
#pragma unroll
    for (int a = 0; a < 3; a++) {
        int c = q[a] + d[a];
        if (periodic) {
            c = c < 0 ? c + g.n[a] : (c >= g.n[a] ? c - g.n[a] : c);
        } else if (c < 0 || c >= g.n[a]) {
            return -1;
        }
        p = p * g.n[a] + c;
    }
    return p;
}

// sm_neighbour is the plane index of point q[] moved by sign * offset s,
// or -1 when that leaves a non-periodic grid. |offset| <= N per axis.
__device__ __forceinline__ int sm_neighbour(const SmShape &g, const int q[3], const float *off, int s, int sign,
                                            int periodic) {
    const int d[3] = {sign * sm_off(off, 3 * s), sign * sm_off(off, 3 * s + 1), sign * sm_off(off, 3 * s + 2)};
    return sm_step(g, q, d, periodic);
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

// SmTile is one stage of an operand in shared memory, [k][row or
// column]; the +1 staggers the banks of the loaders that store along k.
typedef float SmTile[SM_TK][SM_TILE + 1];

// sm_stage adds one stage into a thread's 4 x 4 outputs, rows ty + 16 r
// and columns tx + 16 c (tx = tid % 16, ty = tid / 16): shared reads are
// broadcasts (A) or consecutive words (B); k in increasing order, fused
// multiply-adds.
__device__ __forceinline__ void sm_stage(const SmTile &as, const SmTile &bs, float acc[4][4]) {
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
    for (int t = 0; t < SM_TK; t++) {
        float a[4], bv[4];
#pragma unroll
        for (int r = 0; r < 4; r++) a[r] = as[t][ty + 16 * r];
#pragma unroll
        for (int c = 0; c < 4; c++) bv[c] = bs[t][tx + 16 * c];
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) acc[r][c] = __fmaf_rn(a[r], bv[c], acc[r][c]);
    }
}

__device__ __forceinline__ void sm_zero(float acc[4][4]) {
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) acc[r][c] = 0.0f;
}

// sm_forward: y [B, cout, N] from x [B, cin, N], per sample one tiled
// product Y_b = diag-scaled A B_b with A[o, s cin + i] = k[s,o,i] (M cout,
// K S cin) and B_b[s cin + i, p] = x[b,i,p+s], 0 without the edge (the
// stencil's im2col, gathered by the loader), each output column then
// times 1/|N(p)| as the CPU scales after its GEMM. Grid (ceil(N/64),
// ceil(cout/64), batch) of 256 threads (cuda.StencilTiles; the batch
// loops over grid z beyond 65,535): the loader of B keeps one point per
// thread (column tid % 64, so a warp reads consecutive neighbours), its
// coordinates and scale computed once.
__launch_bounds__(256, 4) __global__ void sm_forward(float *y, const float *x, const float *k, const float *off,
                                                     int batch, int cin, int cout, int S, int periodic, int n0,
                                                     int n1, int n2) {
    __shared__ SmTile as, bs;
    const SmShape g = sm_shape(n0, n1, n2);
    const int p0 = blockIdx.x * SM_TILE, m0 = blockIdx.y * SM_TILE, Kd = S * cin;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int kk = threadIdx.x % SM_TK, lr = threadIdx.x / SM_TK; // A: one k, rows lr + 16 u
    const int cc = threadIdx.x % SM_TILE, kq = threadIdx.x / SM_TILE; // B: column cc, k rows kq + 4 u
    const int pc = p0 + cc;
    int qc[3] = {0, 0, 0};
    if (pc < g.s) sm_point(g, pc, qc);
    float inv[4]; // 1/|N(p)| of the thread's output columns
#pragma unroll
    for (int c = 0; c < 4; c++) {
        const int p = p0 + tx + 16 * c;
        int q[3] = {0, 0, 0};
        if (p < g.s) sm_point(g, p, q);
        inv[c] = sm_inv(g, q, off, S, periodic);
    }
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const float *xb = x + (size_t)b * cin * g.s;
        float acc[4][4];
        sm_zero(acc);
        for (int kb = 0; kb < Kd; kb += SM_TK) {
            const int ka = kb + kk, sa = ka / cin, ia = ka - sa * cin;
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int o = m0 + lr + 16 * u;
                as[kk][lr + 16 * u] = ka < Kd && o < cout ? k[((size_t)sa * cout + o) * cin + ia] : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int kr = kq + 4 * u, kc = kb + kr;
                float v = 0.0f;
                if (kc < Kd && pc < g.s) {
                    const int s = kc / cin, i = kc - s * cin;
                    const int src = sm_neighbour(g, qc, off, s, 1, periodic);
                    if (src >= 0) v = xb[(size_t)i * g.s + src];
                }
                bs[kr][cc] = v;
            }
            __syncthreads();
            sm_stage(as, bs, acc);
            __syncthreads();
        }
        float *yb = y + (size_t)b * cout * g.s;
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int o = m0 + ty + 16 * r;
            if (o >= cout) continue;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int p = p0 + tx + 16 * c;
                if (p < g.s) yb[(size_t)o * g.s + p] = __fmul_rn(acc[r][c], inv[c]);
            }
        }
    }
}

// sm_backward_dx: dx [B, cin, N] += the gather of every edge that reads
// each input point, per sample one tiled product dX_b += A B_b with
// A[i, s cout + o] = k[s,o,i] (M cin, K S cout) and B_b[s cout + o, q] =
// dy[b,o,q-s] / |N(q-s)| when q-s -> q is an edge (the node whose offset
// s reads q), else 0. Geometry and loaders as sm_forward.
__launch_bounds__(256, 4) __global__ void sm_backward_dx(float *dx, const float *dy, const float *k,
                                                         const float *off, int batch, int cin, int cout, int S,
                                                         int periodic, int n0, int n1, int n2) {
    __shared__ SmTile as, bs;
    const SmShape g = sm_shape(n0, n1, n2);
    const int p0 = blockIdx.x * SM_TILE, m0 = blockIdx.y * SM_TILE, Kd = S * cout;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int kk = threadIdx.x % SM_TK, lr = threadIdx.x / SM_TK;
    const int cc = threadIdx.x % SM_TILE, kq = threadIdx.x / SM_TILE;
    const int pc = p0 + cc;
    int qc[3] = {0, 0, 0};
    if (pc < g.s) sm_point(g, pc, qc);
    const float pinv = (float)(1.0 / (double)S); // the periodic 1/|N|
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const float *dyb = dy + (size_t)b * cout * g.s;
        float acc[4][4];
        sm_zero(acc);
        for (int kb = 0; kb < Kd; kb += SM_TK) {
            const int ka = kb + kk, sa = ka / cout, oa = ka - sa * cout;
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int i = m0 + lr + 16 * u;
                as[kk][lr + 16 * u] = ka < Kd && i < cin ? k[((size_t)sa * cout + oa) * cin + i] : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int kr = kq + 4 * u, kc = kb + kr;
                float v = 0.0f;
                if (kc < Kd && pc < g.s) {
                    const int s = kc / cout, o = kc - s * cout;
                    const int dst = sm_neighbour(g, qc, off, s, -1, periodic);
                    if (dst >= 0) {
                        float inv = pinv;
                        if (!periodic) {
                            int r[3];
                            sm_point(g, dst, r);
                            inv = sm_inv(g, r, off, S, 0);
                        }
                        v = __fmul_rn(dyb[(size_t)o * g.s + dst], inv);
                    }
                }
                bs[kr][cc] = v;
            }
            __syncthreads();
            sm_stage(as, bs, acc);
            __syncthreads();
        }
        float *dxb = dx + (size_t)b * cin * g.s;
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = m0 + ty + 16 * r;
            if (i >= cin) continue;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int p = p0 + tx + 16 * c;
                if (p < g.s) dxb[(size_t)i * g.s + p] = __fadd_rn(dxb[(size_t)i * g.s + p], acc[r][c]);
            }
        }
    }
}

// sm_backward_dk: the kernel-weight gradient as one tiled product,
// dk[s,o,i] += sum_k A[o,k] B[k, s cin + i] over the folded K = B N
// (k = b N + p), with A[o,k] = dy[b,o,p] / |N(p)| (rounded as the CPU
// rounds it) and B[k, s cin + i] = x[b,i,p+s], 0 where p has no edge s.
// Stacking the S offsets along the columns (N = S cin) makes one product
// of all of dk, so dy is read once per column tile, not once per entry.
//
// Grid (ceil(S cin / 64), ceil(cout / 64), splits) of 256 threads
// (cuda.StencilDk): a block owns a 64 x 64 tile of C and K chunk
// z = blockIdx.z, k in [z chunk, min(K, (z+1) chunk)). It walks the
// chunk in stages of 16: each thread loads one k (kk = tid % 16) of four
// rows of A and four columns of B (tid / 16 + 16 u), computing the
// point's coordinates and 1/|N(p)| once for both, then every thread adds
// the stage into its 4 x 4 outputs, rows ty + 16 r and columns tx + 16 c
// (tx = tid % 16, ty = tid / 16), in increasing k with fused
// multiply-adds. With one split (accumulate != 0) the block adds its tile
// into dk; otherwise it stores split z's partial at out[z S cout cin +
// ...] and sm_dk_reduce adds the partials in split order. Each column's
// channel and offset vector sit in a shared table, and the launch bound of
// four blocks per SM holds the kernel to 64 registers (no spills on
// sm_90), so the split's 4 x 132 blocks are resident together.
__launch_bounds__(256, 4) __global__ void sm_backward_dk(float *out, const float *dy, const float *x,
                                                         const float *off, int batch, int cin, int cout, int S,
                                                         int periodic, int n0, int n1, int n2, int chunk,
                                                         int splits, int accumulate) {
    __shared__ SmTile as, bs;
    const SmShape g = sm_shape(n0, n1, n2);
    const int c0 = blockIdx.x * SM_TILE, m0 = blockIdx.y * SM_TILE;
    const int K = batch * g.s, N = S * cin;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16; // the 4 x 4 outputs (sm_stage)
    const int kk = threadIdx.x % SM_TK, lr = threadIdx.x / SM_TK; // the loads
    // Column c0 + j of the tile: its channel and offset vector, channel
    // -1 past the last column (kept in shared memory, not registers).
    __shared__ int col[SM_TILE][4];
    if (threadIdx.x < SM_TILE) {
        const int c = c0 + threadIdx.x, s = c / cin;
        col[threadIdx.x][0] = c < N ? c - s * cin : -1;
#pragma unroll
        for (int a = 0; a < 3; a++) col[threadIdx.x][1 + a] = c < N ? sm_off(off, 3 * s + a) : 0;
    }
    __syncthreads();
    for (int z = blockIdx.z; z < splits; z += gridDim.z) {
        const int k1 = min(K, (z + 1) * chunk);
        float acc[4][4];
        sm_zero(acc);
        for (int kb = z * chunk; kb < k1; kb += SM_TK) {
            const int k = kb + kk;
            if (k < k1) {
                const int b = k / g.s, p = k - b * g.s;
                int q[3];
                sm_point(g, p, q);
                const float inv = sm_inv(g, q, off, S, periodic);
                const float *dyp = dy + (size_t)b * cout * g.s + p, *xb = x + (size_t)b * cin * g.s;
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const int o = m0 + lr + 16 * u;
                    as[kk][lr + 16 * u] = o < cout ? __fmul_rn(dyp[(size_t)o * g.s], inv) : 0.0f;
                    const int *cu = col[lr + 16 * u], ci = cu[0];
                    const int src = ci >= 0 ? sm_step(g, q, cu + 1, periodic) : -1;
                    bs[kk][lr + 16 * u] = src >= 0 ? xb[(size_t)ci * g.s + src] : 0.0f;
                }
            } else {
#pragma unroll
                for (int u = 0; u < 4; u++) as[kk][lr + 16 * u] = bs[kk][lr + 16 * u] = 0.0f;
            }
            __syncthreads();
            sm_stage(as, bs, acc);
            __syncthreads();
        }
        float *dst = accumulate ? out : out + (size_t)z * S * cout * cin;
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int o = m0 + ty + 16 * r;
            if (o >= cout) continue;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int col = c0 + tx + 16 * c;
                if (col >= N) continue;
                const int s = col / cin, i = col - s * cin;
                float *e = dst + ((size_t)s * cout + o) * cin + i;
                *e = accumulate ? __fadd_rn(*e, acc[r][c]) : acc[r][c];
            }
        }
    }
}

// sm_dk_reduce adds the split partials of sm_backward_dk in split order:
// dk[e] += sum_{z < splits} part[z n + e], n = S cout cin (grid-stride,
// cuda.Elementwise geometry over n).
__global__ void sm_dk_reduce(float *dk, const float *part, int splits, int n) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += gridDim.x * blockDim.x) {
        float sum = part[e];
        for (int z = 1; z < splits; z++) sum = __fadd_rn(sum, part[(size_t)z * n + e]);
        dk[e] = __fadd_rn(dk[e], sum);
    }
}

}  // extern "C"
