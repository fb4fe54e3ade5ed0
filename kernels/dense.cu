// Dense operations of tensor.Backend: the 1x1 channel mixing Pointwise
// and the encoder's kernel-3 stride-2 convolution ConvDown (Sec. 3.2),
// forward and backward, as tiled matrix products on the GPU.
//
// Every product here is C (M x N) = A (M x K) B (K x N), computed by one
// shared-memory tiled kernel core (gemm_mainloop): a block of 256 threads
// owns a 64 x 64 tile of C, walks K in stages of 16, and each thread keeps
// 4 x 4 outputs in registers, rows ty + 16 r and columns tx + 16 c
// (tx = tid % 16, ty = tid / 16), so shared-memory reads are broadcasts
// (A) or consecutive words (B) and the stores of C are coalesced. What
// differs between the operations is only how A and B are read from
// global memory: each kernel hands the core two "loaders" that fill one
// 16 x 64 stage of A or B, and writes C in its own epilogue.
//
//   - Pointwise:            Y_b = W X_b + bias     (M Cout, N space, K Cin)
//   - PointwiseBackward dx: dX_b += W^T dY_b       (M Cin,  N space, K Cout)
//   - PointwiseBackward dw: dW += sum_b dY_b X_b^T (M Cout, N Cin,  K B*space)
//   - ConvDown:             Y_b = W P_b + bias, P_b the im2col patch matrix
//                           gathered on the fly (K = Cin 3^d)
//   - ConvDownBackward dx:  the transposed convolution, as one product per
//                           parity class of the input point (see cd_backward_dx)
//   - ConvDownBackward dw:  dW += sum_b dY_b P_b^T  (K = B * output points)
//
// At U-HNO's small channel counts (Cout, Cin <= 64, a few to a few tens)
// the pointwise weight gradient is a tiny Cout x Cin output over a long
// K = B S, and a 64 x 64 tile would be almost all padding; it runs instead
// on pw_backward_dw_small (one block per K chunk, every Cout x Cin dot
// product from one shared-memory slab of dY and X per stage; Go side
// cuda.SmallChannels picks it by shape).
//
// Every output is a sum over k in increasing order inside one thread
// (pw_backward_dw_small: inside one lane, lanes added in order), so
// results are identical run to run. The weight gradients reduce over the
// batch and space (K up to B N^d); they are split into a fixed number of
// K chunks chosen from the shapes alone (cuda.SplitK), each chunk writing
// its own partial product, and dense_splitk_reduce adds the partials in
// chunk order: deterministic, no atomics. The bias gradients are one block
// per (channel, shape-determined chunk) with fixed-order trees, the
// chunks added in order (dense_bias_backward, dense_bias_reduce).
//
// Under bf16 autocast (the kernels' last argument bf16, below) the
// operands are rounded to bfloat16 stage by stage; accumulation and
// outputs stay float32.
//
// Indices within one sample, and the folded K = B * points of the
// gradient reductions, are 32-bit (below 2^31); sample offsets are 64-bit.

#include "gemm.cuh" // gemm_mainloop, the row-major loaders, store_dw (and common.cuh)

// ---------------------------------------------------------------------------
// bf16 autocast (cuda.Backend.SetPrecision("bf16"); internal/cuda's package documentation,
// "bf16 autocast"). Every product kernel of this file takes a last argument
// bf16: when it is non-zero, the two operands of the product are rounded
// to bfloat16 (8-bit significand, round to nearest, ties to even) as they
// enter shared memory, and the products are accumulated in float32, as a
// tensor-core bf16 GEMM does (bf16 inputs, fp32 accumulate). Outputs,
// bias and the split-K and bias reductions stay float32.
//
// bf16_round (common.cuh) is the rounding: integer operations only, so
// the emulator runs exactly this code.

// bf16_round_test: y[i] = bf16_round(x[i]), for the unit test of the
// rounding (cuda.Backend.BF16Round). cuda.Elementwise geometry.
extern "C" __global__ void bf16_round_test(float *y, const float *x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = bf16_round(x[i]);
}

// ---------------------------------------------------------------------------
// Pointwise (tensor.Backend.Pointwise): y[b,o,s] = sum_i w[o,i] x[b,i,s] +
// bias[o]. Grid (ceil(S/64), ceil(Cout/64), batch) (cuda.Gemm); the
// batch loops over grid z beyond 65,535 samples. bias may be NULL.
extern "C" __global__ void pw_forward(float *y, const float *x, const float *w, const float *bias,
                                      int batch, int cin, int cout, int s, int bf16) {
    const int n0 = blockIdx.x * GT, m0 = blockIdx.y * GT;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const LoadRowK la = {w, cin, cout, m0};
        const LoadKRow lb = {x + (size_t)b * cin * s, s, s, n0};
        float acc[4][4];
        zero_acc(acc);
        gemm_mainloop(la, lb, 0, cin, acc, bf16);
        float *yb = y + (size_t)b * cout * s;
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int o = m0 + ty + 16 * r;
            if (o >= cout) continue;
            const float bo = bias ? bias[o] : 0.0f;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int n = n0 + tx + 16 * c;
                if (n < s) yb[(size_t)o * s + n] = acc[r][c] + bo;
            }
        }
    }
}

// PointwiseBackward, input gradient: dx[b,i,s] += sum_o w[o,i] dy[b,o,s]
// (A = W^T read as (k=o, r=i) = w[o cin + i], contiguous along i).
extern "C" __global__ void pw_backward_dx(float *dx, const float *dy, const float *w,
                                          int batch, int cin, int cout, int s, int bf16) {
    const int n0 = blockIdx.x * GT, m0 = blockIdx.y * GT;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const LoadKRow la = {w, cin, cin, m0};
        const LoadKRow lb = {dy + (size_t)b * cout * s, s, s, n0};
        float acc[4][4];
        zero_acc(acc);
        gemm_mainloop(la, lb, 0, cout, acc, bf16);
        float *dxb = dx + (size_t)b * cin * s;
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int i = m0 + ty + 16 * r;
            if (i >= cin) continue;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int n = n0 + tx + 16 * c;
                if (n < s) dxb[(size_t)i * s + n] += acc[r][c];
            }
        }
    }
}

// PointwiseBackward, weight gradient: dw[o,i] += sum_{b,s} dy[b,o,s]
// x[b,i,s], one product over the folded K = B S. Grid (ceil(Cin/64),
// ceil(Cout/64), splits); split z covers k in [z chunk, (z+1) chunk).
extern "C" __global__ void pw_backward_dw(float *out, const float *dy, const float *x,
                                          int batch, int cin, int cout, int s, int chunk, int splits,
                                          int accumulate, int bf16) {
    const int n0 = blockIdx.x * GT, m0 = blockIdx.y * GT;
    const int K = batch * s;
    for (int z = blockIdx.z; z < splits; z += gridDim.z) {
        const LoadFolded la = {dy, cout, s, m0};
        const LoadFolded lb = {x, cin, s, n0};
        float acc[4][4];
        zero_acc(acc);
        gemm_mainloop(la, lb, z * chunk, min(K, (z + 1) * chunk), acc, bf16);
        store_dw(out, acc, m0, n0, cout, cin, z, accumulate);
    }
}

// ---------------------------------------------------------------------------
// PointwiseBackward, weight gradient at small channel counts (U-HNO's
// channels, a few to a few tens): dw[o,i] += sum_{b,s} dy[b,o,s] x[b,i,s]
// with Cout, Cin <= SMALL_C. There the 64 x 64 tile of pw_backward_dw is
// almost all padding (Cout = Cin = 10 uses 100 of its 4,096 outputs), and
// the whole product is a long K = B S with a tiny output. This kernel is
// one 256-thread block per K chunk (grid (splits), cuda.SplitKSmall): it
// walks its chunk in stages of SK folded k values, loads the stage's
// [Cout, SK] slab of dY and [Cin, SK] slab of X into shared memory once
// (32 consecutive threads read 32 consecutive k: coalesced; rounded to
// bf16 under autocast), and computes every one of the Cout x Cin dot
// products from it.
//
// Thread mapping: a "lane" is T = rg Cin threads, rg = min(Cout,
// 256 / Cin) rows; thread u of a lane owns column i = u % Cin and rows
// o = u / Cin + rg j (j < SMALL_J), so one x value read from shared
// memory serves its J rows. When Cout Cin <= 128 several lanes fit the
// block (G = 256 / T) and lane g takes the stage's k = g, g + G, ...;
// the lanes' sums are then added in lane order. Every sum runs in a fixed
// order (k increasing within a lane, lanes in order, chunks in order by
// dense_splitk_reduce): deterministic, no atomics. Output as
// pw_backward_dw: added to out with accumulate != 0 (one chunk), else
// chunk z's partial at out[z Cout Cin + o Cin + i].
#define SK 32     // K depth of one stage of the small-channel kernel
#define SMALL_C 64 // most channels on either side (the shared slabs)
#define SMALL_J 8  // most rows per thread: ceil(Cout / rg) <= SMALL_J

extern "C" __global__ void pw_backward_dw_small(float *out, const float *dy, const float *x,
                                                int batch, int cin, int cout, int s, int chunk, int splits,
                                                int accumulate, int bf16) {
    __shared__ float dys[SMALL_C][SK + 1], xs[SMALL_C][SK + 1]; // +1: the stores along k skew the banks
    __shared__ float lanes[GTHREADS];
    const int rg = min(cout, GTHREADS / cin), T = rg * cin, G = GTHREADS / T;
    const int g = threadIdx.x / T, u = threadIdx.x % T, i = u % cin, o0 = u / cin;
    const int K = batch * s, rows = cout + cin;
    for (int z = blockIdx.x; z < splits; z += gridDim.x) {
        const int k0 = z * chunk, k1 = min(K, k0 + chunk);
        float acc[SMALL_J];
#pragma unroll
        for (int j = 0; j < SMALL_J; j++) acc[j] = 0.0f;
        for (int kb = k0; kb < k1; kb += SK) {
            // Stage: row r < Cout is dY's channel r, else X's channel r - Cout; zero beyond the chunk.
            for (int q = threadIdx.x; q < rows * SK; q += GTHREADS) {
                const int r = q / SK, kk = q % SK, k = kb + kk;
                const int b = k / s, sp = k - b * s;
                float v = 0.0f;
                if (k < k1) v = r < cout ? dy[((size_t)b * cout + r) * s + sp] : x[((size_t)b * cin + r - cout) * s + sp];
                v = bf16_if(v, bf16);
                if (r < cout) dys[r][kk] = v;
                else xs[r - cout][kk] = v;
            }
            __syncthreads();
            if (g < G) {
                for (int kk = g; kk < SK; kk += G) {
                    const float xv = xs[i][kk];
#pragma unroll
                    for (int j = 0; j < SMALL_J; j++) {
                        const int o = o0 + rg * j;
                        if (o < cout) acc[j] += dys[o][kk] * xv;
                    }
                }
            }
            __syncthreads();
        }
        if (G > 1) { // one row per thread (rg = Cout): add the lanes in lane order
            lanes[threadIdx.x] = acc[0];
            __syncthreads();
            if (g == 0) {
                float sum = lanes[u];
                for (int h = 1; h < G; h++) sum += lanes[u + h * T];
                acc[0] = sum;
            }
            __syncthreads();
        }
        if (g == 0) {
            float *dst = accumulate ? out : out + (size_t)z * cout * cin;
#pragma unroll
            for (int j = 0; j < SMALL_J; j++) {
                const int o = o0 + rg * j;
                if (o >= cout) continue;
                if (accumulate) dst[o * cin + i] += acc[j];
                else dst[o * cin + i] = acc[j];
            }
        }
    }
}

// dense_splitk_reduce adds the split partials of a weight gradient in
// split order: dw[e] += sum_{z < splits} part[z mn + e] (grid-stride).
extern "C" __global__ void dense_splitk_reduce(float *dw, const float *part, int splits, int mn) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < mn; e += gridDim.x * blockDim.x) {
        float sum = part[e];
        for (int z = 1; z < splits; z++) sum += part[(size_t)z * mn + e];
        dw[e] += sum;
    }
}

// dense_bias_backward is the bias gradient of Pointwise and ConvDown,
// dbias[o] += sum_{b,s} dy[b,o,s], over the channel's B S values viewed
// as one folded range k = b S + s. Grid (parts, C) of 256 threads
// (cuda.BiasParts): block (g, o) sums k in [g chunk, (g+1) chunk) in
// float, each thread a fixed stride, then a fixed tree adds the threads'
// sums. With one part the block adds into dbias itself (accumulate != 0);
// otherwise it writes part[o parts + g] and dense_bias_reduce adds the
// parts in order. Deterministic, no atomics.
extern "C" __global__ void dense_bias_backward(float *out, const float *dy, int batch, int c, int s, int chunk,
                                               int parts, int accumulate) {
    __shared__ float sh[GTHREADS];
    const int g = blockIdx.x, o = blockIdx.y;
    const int lo = g * chunk, hi = min(batch * s, lo + chunk);
    float sum = 0.0f;
    for (int k = lo + threadIdx.x; k < hi; k += blockDim.x) {
        const int b = k / s, sp = k - b * s;
        sum += dy[((size_t)b * c + o) * s + sp];
    }
    sh[threadIdx.x] = sum;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (accumulate) out[o] += sh[0];
        else out[(size_t)o * parts + g] = sh[0];
    }
}

// dense_bias_reduce: dbias[o] += sum_{g < parts} part[o parts + g], in
// part order (grid-stride over channels).
extern "C" __global__ void dense_bias_reduce(float *dbias, const float *part, int c, int parts) {
    for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < c; o += gridDim.x * blockDim.x) {
        float sum = part[(size_t)o * parts];
        for (int g = 1; g < parts; g++) sum += part[(size_t)o * parts + g];
        dbias[o] += sum;
    }
}

// ---------------------------------------------------------------------------
// ConvDown: y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,(2j+t-1) mod N] + bias[o]
// per axis (circular padding 1, stride 2, kernel 3; Sec. 3.2), w
// [Cout, Cin, 3^d]. The spatial axes are padded in front to three: a
// padded axis has one point and one tap, so 1D, 2D and 3D share the code.

struct ConvShape {
    int n[3];     // input points per axis (1 on padded axes)
    int o[3];     // output points per axis, n/2 (1 on padded axes)
    int T[3];     // taps per axis: 3, or 1 on padded axes
    int sin, p;   // points per channel plane: input, output
    int taps;     // 3^d
};

__device__ __forceinline__ ConvShape conv_shape(int d, int n0, int n1, int n2) {
    ConvShape g;
    g.n[0] = n0, g.n[1] = n1, g.n[2] = n2;
#pragma unroll
    for (int a = 0; a < 3; a++) {
        const bool real = a >= 3 - d;
        g.o[a] = real ? g.n[a] / 2 : 1;
        g.T[a] = real ? 3 : 1;
    }
    g.sin = n0 * n1 * n2;
    g.p = g.o[0] * g.o[1] * g.o[2];
    g.taps = g.T[0] * g.T[1] * g.T[2];
    return g;
}

// conv_base splits output point p into its per-axis indices j and sets
// base[a] = 2 j - 1, the input index of tap 0 (0 on padded axes).
__device__ __forceinline__ void conv_base(const ConvShape &g, int p, int base[3]) {
    const int j2 = p % g.o[2], j1 = (p / g.o[2]) % g.o[1], j0 = p / (g.o[2] * g.o[1]);
    base[0] = g.T[0] == 3 ? 2 * j0 - 1 : 0;
    base[1] = g.T[1] == 3 ? 2 * j1 - 1 : 0;
    base[2] = g.T[2] == 3 ? 2 * j2 - 1 : 0;
}

// conv_tap_offset is the plane offset of input point base + t with the
// circular wrap; base + t lies in [-1, N-1], so only -1 wraps (to N-1).
__device__ __forceinline__ int conv_tap_offset(const ConvShape &g, const int base[3], int t0, int t1, int t2) {
    int q0 = base[0] + t0, q1 = base[1] + t1, q2 = base[2] + t2;
    if (q0 < 0) q0 += g.n[0];
    if (q1 < 0) q1 += g.n[1];
    if (q2 < 0) q2 += g.n[2];
    return (q0 * g.n[1] + q1) * g.n[2] + q2;
}

// LoadIm2col reads the patch matrix of one sample, P[k, p] =
// x[i, tap t of output point p] with k = i 3^d + t (t row-major over the
// kernel axes, as in w), for output points c0 + [0, 64). Each thread owns
// one column (its point's base coordinates are computed once) and four
// consecutive k, whose (i, t0, t1, t2) it steps without division.
struct LoadIm2col {
    const float *x; // the sample's input, [Cin, sin]
    ConvShape g;
    int base[3];
    bool valid;     // the thread's column is an output point
    __device__ LoadIm2col(const float *x_, const ConvShape &g_, int c0) : x(x_), g(g_) {
        const int p = c0 + threadIdx.x % GT;
        valid = p < g.p;
        conv_base(g, valid ? p : 0, base);
    }
    __device__ void operator()(Tile &s, int kb, int k1) const {
        const int cc = threadIdx.x % GT, kq = threadIdx.x / GT;
        const int k = kb + 4 * kq;
        int i = k / g.taps, t = k - i * g.taps;
        int t0 = t / (g.T[1] * g.T[2]);
        t -= t0 * g.T[1] * g.T[2];
        int t1 = t / g.T[2], t2 = t - t1 * g.T[2];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            s[4 * kq + u][cc] = (valid && k + u < k1) ? x[(size_t)i * g.sin + conv_tap_offset(g, base, t0, t1, t2)] : 0.0f;
            if (++t2 == g.T[2]) {
                t2 = 0;
                if (++t1 == g.T[1]) {
                    t1 = 0;
                    if (++t0 == g.T[0]) t0 = 0, i++;
                }
            }
        }
    }
};

// ConvDown forward: Y_b (Cout x P) = W (Cout x K) P_b (K x P) + bias.
// Grid (ceil(P/64), ceil(Cout/64), batch). bias may be NULL.
extern "C" __global__ void cd_forward(float *y, const float *x, const float *w, const float *bias,
                                      int batch, int cin, int cout, int d, int n0, int n1, int n2, int bf16) {
    const ConvShape g = conv_shape(d, n0, n1, n2);
    const int c0 = blockIdx.x * GT, m0 = blockIdx.y * GT;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int K = cin * g.taps;
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const LoadRowK la = {w, K, cout, m0};
        const LoadIm2col lb(x + (size_t)b * cin * g.sin, g, c0);
        float acc[4][4];
        zero_acc(acc);
        gemm_mainloop(la, lb, 0, K, acc, bf16);
        float *yb = y + (size_t)b * cout * g.p;
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int o = m0 + ty + 16 * r;
            if (o >= cout) continue;
            const float bo = bias ? bias[o] : 0.0f;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int p = c0 + tx + 16 * c;
                if (p < g.p) yb[(size_t)o * g.p + p] = acc[r][c] + bo;
            }
        }
    }
}

// ConvDownBackward, input gradient, written as a gather (no atomics).
//
// Input index q along an axis is read by output j with tap t where
// q = 2j + t - 1 (mod N). For even q = 2j' only t = 1 (j = j') reads it;
// for odd q = 2j'+1, t = 0 (j = j'+1 mod N/2) and t = 2 (j = j'). So the
// input points split into 2^d parity classes; within class c every point
// q = 2j' + parity receives from the same set of taps, and
//
//   dx[b, i, q(j')] += sum_{o, combo} w[o, i, t(combo)] dy[b, o, j(j', combo)]
//
// is a product with M = Cin, N = P (the j' grid, the size of the output
// grid), K = Cout 2^(odd axes of c): combo picks t = 0 or 2 on every odd
// axis (bit clear: t = 0, bit set: t = 2). Grid (ceil(P/64),
// ceil(Cin/64), batch 2^d), z = b 2^d + c.

// ConvClass describes parity class cls: odd[a] is the parity of q on axis
// a (0 on padded axes), bit[a] the axis's bit in combo (odd axes only),
// nt = 2^(odd axes) combos, lg = log2 nt.
struct ConvClass {
    int odd[3], bit[3], nt, lg;
};

__device__ __forceinline__ ConvClass conv_class(int d, int cls) {
    ConvClass k;
    k.lg = 0;
    // Real axes are 3-d .. 2; the class's bit for axis a is bit (2 - a).
#pragma unroll
    for (int a = 2; a >= 0; a--) {
        const bool real = a >= 3 - d;
        k.odd[a] = real ? (cls >> (2 - a)) & 1 : 0;
        k.bit[a] = k.odd[a] ? k.lg++ : 0;
    }
    k.nt = 1 << k.lg;
    return k;
}

// conv_class_tap is the tap index of axis a for combo: 1 on even axes,
// 0 or 2 on odd ones, 0 on padded axes.
__device__ __forceinline__ int conv_class_tap(const ConvShape &g, const ConvClass &k, int a, int combo) {
    if (g.T[a] == 1) return 0;
    if (!k.odd[a]) return 1;
    return ((combo >> k.bit[a]) & 1) ? 2 : 0;
}

// LoadClassW reads A[i, k] = w[o, i, t(combo)], k = o nt + combo, for rows
// i in r0 + [0, 64) below Cin; four consecutive k per thread.
struct LoadClassW {
    const float *w;
    ConvShape g;
    ConvClass cl;
    int cin, r0;
    __device__ void operator()(Tile &s, int kb, int k1) const {
        const int cc = threadIdx.x % GT, kq = threadIdx.x / GT;
        const int i = r0 + cc;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int k = kb + 4 * kq + u;
            float v = 0.0f;
            if (k < k1 && i < cin) {
                const int o = k >> cl.lg, combo = k & (cl.nt - 1);
                const int t = (conv_class_tap(g, cl, 0, combo) * g.T[1] + conv_class_tap(g, cl, 1, combo)) * g.T[2] +
                              conv_class_tap(g, cl, 2, combo);
                v = w[((size_t)o * cin + i) * g.taps + t];
            }
            s[4 * kq + u][cc] = v;
        }
    }
};

// LoadClassDY reads B[k, j'] = dy[o, j(j', combo)] of one sample for
// columns j' in c0 + [0, 64) below P: on odd axes with the combo bit clear
// (tap 0) the output index is j' + 1 wrapped, else j'.
struct LoadClassDY {
    const float *dy; // the sample's output gradient, [Cout, P]
    ConvShape g;
    ConvClass cl;
    int j[3], jn[3]; // the thread's column j' per axis, and j' + 1 mod N/2
    bool valid;
    __device__ LoadClassDY(const float *dy_, const ConvShape &g_, const ConvClass &cl_, int c0) : dy(dy_), g(g_), cl(cl_) {
        const int p = c0 + threadIdx.x % GT;
        valid = p < g.p;
        const int q = valid ? p : 0;
        j[2] = q % g.o[2], j[1] = (q / g.o[2]) % g.o[1], j[0] = q / (g.o[2] * g.o[1]);
#pragma unroll
        for (int a = 0; a < 3; a++) jn[a] = j[a] + 1 == g.o[a] ? 0 : j[a] + 1;
    }
    __device__ void operator()(Tile &s, int kb, int k1) const {
        const int cc = threadIdx.x % GT, kq = threadIdx.x / GT;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int k = kb + 4 * kq + u;
            float v = 0.0f;
            if (valid && k < k1) {
                const int o = k >> cl.lg, combo = k & (cl.nt - 1);
                int jj[3];
#pragma unroll
                for (int a = 0; a < 3; a++) jj[a] = (cl.odd[a] && !((combo >> cl.bit[a]) & 1)) ? jn[a] : j[a];
                v = dy[(size_t)o * g.p + (jj[0] * g.o[1] + jj[1]) * g.o[2] + jj[2]];
            }
            s[4 * kq + u][cc] = v;
        }
    }
};

extern "C" __global__ void cd_backward_dx(float *dx, const float *dy, const float *w,
                                          int batch, int cin, int cout, int d, int n0, int n1, int n2, int bf16) {
    const ConvShape g = conv_shape(d, n0, n1, n2);
    const int c0 = blockIdx.x * GT, m0 = blockIdx.y * GT;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int classes = 1 << d;
    for (int z = blockIdx.z; z < batch * classes; z += gridDim.z) {
        const int b = z / classes, cls = z % classes;
        const ConvClass cl = conv_class(d, cls);
        const LoadClassW la = {w, g, cl, cin, m0};
        const LoadClassDY lb(dy + (size_t)b * cout * g.p, g, cl, c0);
        float acc[4][4];
        zero_acc(acc);
        gemm_mainloop(la, lb, 0, cout * cl.nt, acc, bf16);
        float *dxb = dx + (size_t)b * cin * g.sin;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int p = c0 + tx + 16 * c;
            if (p >= g.p) continue;
            // The input point of column j' in this class: q = 2 j' + parity.
            const int j2 = p % g.o[2], j1 = (p / g.o[2]) % g.o[1], j0 = p / (g.o[2] * g.o[1]);
            const int q0 = g.T[0] == 3 ? 2 * j0 + cl.odd[0] : 0;
            const int q1 = g.T[1] == 3 ? 2 * j1 + cl.odd[1] : 0;
            const int q2 = g.T[2] == 3 ? 2 * j2 + cl.odd[2] : 0;
            const int q = (q0 * g.n[1] + q1) * g.n[2] + q2;
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int i = m0 + ty + 16 * r;
                if (i < cin) dxb[(size_t)i * g.sin + q] += acc[r][c];
            }
        }
    }
}

// LoadIm2colT reads B[k, n] = P_b^T: k = b P + p folded over the batch
// (16 consecutive k per stage, one per thread lane), n = i 3^d + t for
// columns c0 + [0, 64) below Cin 3^d. Each thread's four columns (i, t)
// are fixed, decomposed once; each stage decomposes its k once.
struct LoadIm2colT {
    const float *x; // [B, Cin, sin]
    ConvShape g;
    int cin;
    int ci[4], ct[4][3]; // the thread's columns: channel and per-axis tap (ci = -1: beyond Cin 3^d)
    __device__ LoadIm2colT(const float *x_, const ConvShape &g_, int cin_, int c0) : x(x_), g(g_), cin(cin_) {
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
        const int b = k / g.p, p = k - b * g.p;
        int base[3];
        conv_base(g, p, base);
        const float *xb = x + (size_t)b * cin * g.sin;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            s[kk][cr + 16 * u] = (k < k1 && ci[u] >= 0)
                ? xb[(size_t)ci[u] * g.sin + conv_tap_offset(g, base, ct[u][0], ct[u][1], ct[u][2])]
                : 0.0f;
        }
    }
};

// ConvDownBackward, weight gradient: dw[o, k] += sum_{b,p} dy[b,o,p]
// P_b[k, p], one product over the folded K = B P with M = Cout, N = Cin
// 3^d. Grid (ceil(Cin 3^d / 64), ceil(Cout/64), splits), as pw_backward_dw.
extern "C" __global__ void cd_backward_dw(float *out, const float *dy, const float *x,
                                          int batch, int cin, int cout, int d, int n0, int n1, int n2,
                                          int chunk, int splits, int accumulate, int bf16) {
    const ConvShape g = conv_shape(d, n0, n1, n2);
    const int c0 = blockIdx.x * GT, m0 = blockIdx.y * GT;
    const int K = batch * g.p;
    for (int z = blockIdx.z; z < splits; z += gridDim.z) {
        const LoadFolded la = {dy, cout, g.p, m0};
        const LoadIm2colT lb(x, g, cin, c0);
        float acc[4][4];
        zero_acc(acc);
        gemm_mainloop(la, lb, z * chunk, min(K, (z + 1) * chunk), acc, bf16);
        store_dw(out, acc, m0, c0, cout, cin * g.taps, z, accumulate);
    }
}
