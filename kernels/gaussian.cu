// Depthwise circular Gaussian convolution of the multi-scale Gaussian
// branch (Eq. gaussian-kernel, App. C.5; tensor.Backend.GaussianConv).
//
// Channel c of x [B, S*C, N_0..N_{d-1}] belongs to scale m = c / C and
// group g = (c % C) / (C / G); its kernel has sigma = exp(logSigma[m, g])
// and the box support |delta|_inf <= r, r = tensor.GaussianRadius(sigma,
// MaxRadius, Nmin). On a box the Gaussian factorises into 1D kernels
// k(delta) = exp(-delta^2 / (2 sigma^2)) [/ Z], so y = K_0 K_1 ... K_{d-1} x
// is applied as d circular 1D passes, the last axis first, exactly as the
// CPU backend (internal/cpu/gaussian.go) does.
//
// gauss_taps computes r and the 1D taps on the device from logSigma (no
// host read): a table of k[0..rmax] and dk[0..rmax] per (scale, group),
// zero beyond r, with dk = dk/dlog(sigma). The passes read r and the taps
// from the table; their launch geometry uses rmax = min(MaxRadius,
// (Nmin-1)/2), the largest radius possible (cuda.GaussPass).
//
// A pass views a stack of planes as [outer, n, inner] (axis of n points,
// inner the later axes) and runs one block per (outer index, TN points,
// TI inner columns): the block stages rows [n0-r, n0+TN+r) of its
// columns, circularly wrapped, in shared memory (the tile with its halo)
// and each thread sums 2r+1 taps per output point:
//
//     (K s)[i] = k[0] s[i] + sum_{d=1..r} k[d] (s[i-d] + s[i+d])   (indices mod n)
//
// in float, in the CPU backend's order. Shared tile row t holds axis point
// n0 - rmax + t (mod n); rows outside [rmax-r, TN+rmax+r) are not loaded.
//
// Backward (see the CPU backend's file comment): every K_a is
// self-adjoint, so dx += K dy by the same passes, and with K'_a the pass
// with taps dk,
//
//     u_a = K_a u_{a+1},  w_a = K'_a u_{a+1} + K_a w_{a+1}   (u_d = dy, w_d = 0),
//     dlogSigma[m, g] += sum over the group's planes of <x, w_0>.
//
// gauss_backward_pass forms (u_a, w_a) for a = d-1..1; gauss_backward_last
// adds u_0 into dx and writes per-block partial sums of x w_0 (float per
// thread, double across the block); gauss_dlogsigma sums a group's
// partials in a fixed order (deterministic, no atomics).

#include "common.cuh" // wrap_mod

extern "C" {

// gauss_taps fills, for each of the `pairs` (scale, group) pairs p, rad[p]
// = tensor.GaussianRadius(exp(logSigma[p]), MaxRadius, Nmin) (here: ceil(3
// sigma) clamped to [0, rmax], rmax = min(MaxRadius, (Nmin-1)/2) computed
// by the host) and the taps taps[p*2*(rmax+1) + d] = k[d],
// taps[p*2*(rmax+1) + rmax+1 + d] = dk[d] for d = 0..rmax (0 for d > r).
// Evaluated in double as the CPU's gaussKernel1D:
//   e(d) = exp(-d^2 / (2 sigma^2)), Z = sum_{-r..r} e, M2 = sum_{-r..r} e d^2,
//   normalised:   k = e / Z, dk = k (d^2 - M2 / Z) / sigma^2,
//   unnormalised: k = e,     dk = e d^2 / sigma^2.
// Grid-stride over pairs (cuda.Elementwise).
__global__ void gauss_taps(float *taps, int *rad, const float *logSigma, int pairs, int rmax, int normalize) {
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < pairs; p += gridDim.x * blockDim.x) {
        double sigma = exp((double)logSigma[p]);
        double c = ceil(3.0 * sigma);
        int r;
        if (!(c == c) || c < 0.0) {
            r = 0;  // NaN or negative (not a valid sigma)
        } else if (c > (double)rmax) {
            r = rmax;
        } else {
            r = (int)c;
        }
        rad[p] = r;
        double s2 = sigma * sigma;
        double z = 1.0, m2 = 0.0;
        for (int d = 1; d <= r; d++) {
            double e = exp(-(double)(d * d) / (2.0 * s2));
            z += 2.0 * e;
            m2 += 2.0 * e * (double)(d * d);
        }
        float *k = taps + (size_t)p * 2 * (rmax + 1);
        float *dk = k + rmax + 1;
        for (int d = 0; d <= rmax; d++) {
            if (d > r) {
                k[d] = 0.f;
                dk[d] = 0.f;
                continue;
            }
            double dd = (double)(d * d);
            double e = exp(-dd / (2.0 * s2));
            if (normalize) {
                double kd = e / z;
                k[d] = (float)kd;
                dk[d] = (float)(kd * (dd - m2 / z) / s2);
            } else {
                k[d] = (float)e;
                dk[d] = (float)(e * dd / s2);
            }
        }
    }
}

// GaussBlock is what one block of a pass works on.
struct GaussBlock {
    size_t base;     // offset of the block's outer index: o * n * inner
    int j;           // this thread's inner column
    int n0;          // first axis point of the tile
    int r;           // radius of the block's (scale, group)
    const float *k;  // taps k[0..r]
    const float *dk; // taps dk[0..r]
};

// gauss_block decodes the block: blockIdx.x = o * innerTiles + inner tile,
// blockIdx.y = axis tile. The plane of outer index o is o / planeOuter
// (planeOuter = product of the axes before the pass's axis), its channel
// plane % ch, and the channel's (scale, group) pair m * groups + g.
__device__ GaussBlock gauss_block(const float *taps, const int *rad, int n, int inner, int planeOuter,
                                  int innerTiles, int tn, int rmax, int ch, int perScl, int perGrp, int groups) {
    GaussBlock g;
    int o = blockIdx.x / innerTiles;
    g.j = (blockIdx.x % innerTiles) * blockDim.x + threadIdx.x;
    g.n0 = blockIdx.y * tn;
    g.base = (size_t)o * n * inner;
    int c = (o / planeOuter) % ch;
    int pair = (c / perScl) * groups + (c % perScl) / perGrp;
    g.r = rad[pair];
    g.k = taps + (size_t)pair * 2 * (rmax + 1);
    g.dk = g.k + rmax + 1;
    return g;
}

// gauss_stage copies rows [n0-r, n0+tn+r) of column g.j of src (one outer
// index) into tile rows [rmax-r, tn+rmax+r) (tile row t = axis point
// n0-rmax+t mod n; row stride blockDim.x). Columns past inner read 0.
__device__ void gauss_stage(float *tile, const float *src, const GaussBlock &g, int n, int inner, int tn, int rmax) {
    for (int t = rmax - g.r + threadIdx.y; t < tn + rmax + g.r; t += blockDim.y) {
        int i = wrap_mod(g.n0 - rmax + t, n);
        tile[t * blockDim.x + threadIdx.x] = g.j < inner ? src[g.base + (size_t)i * inner + g.j] : 0.f;
    }
}

// gauss_conv is sum_{|d| <= r} kern[|d|] tile[row + d] in this thread's
// column: kern[0] s[i] + sum_{d=1..r} kern[d] (s[i-d] + s[i+d]).
__device__ __forceinline__ float gauss_conv(const float *tile, int row, const float *kern, int r) {
    int w = blockDim.x, c = row * w + threadIdx.x;
    float acc = kern[0] * tile[c];
    for (int d = 1; d <= r; d++) acc += kern[d] * (tile[c - d * w] + tile[c + d * w]);
    return acc;
}

// The parameters every pass shares (see gauss_block):
#define GAUSS_PASS_PARAMS                                                                            \
    const float *taps, const int *rad, int n, int inner, int planeOuter, int innerTiles, int tn, int rmax, \
        int ch, int perScl, int perGrp, int groups
#define GAUSS_BLOCK() gauss_block(taps, rad, n, inner, planeOuter, innerTiles, tn, rmax, ch, perScl, perGrp, groups)

// gauss_forward_pass: z = K_a s along the pass's axis (z += K_a s when
// add): the forward passes and the dx-only backward. Dynamic shared
// memory: (tn + 2 rmax) * blockDim.x floats.
__global__ void gauss_forward_pass(float *z, const float *s, int add, GAUSS_PASS_PARAMS) {
    extern __shared__ float tile[];
    GaussBlock g = GAUSS_BLOCK();
    gauss_stage(tile, s, g, n, inner, tn, rmax);
    __syncthreads();
    if (g.j >= inner) return;
    for (int t = threadIdx.y; t < tn && g.n0 + t < n; t += blockDim.y) {
        float v = gauss_conv(tile, t + rmax, g.k, g.r);
        size_t at = g.base + (size_t)(g.n0 + t) * inner + g.j;
        z[at] = add ? z[at] + v : v;
    }
}

// gauss_backward_pass: (zu, zw) = (K_a u, K'_a u + K_a w) along the pass's
// axis, w = NULL meaning w = 0 (the first backward pass). Dynamic shared
// memory: 2 (tn + 2 rmax) * blockDim.x floats (u's tile, then w's).
__global__ void gauss_backward_pass(float *zu, float *zw, const float *u, const float *w, GAUSS_PASS_PARAMS) {
    extern __shared__ float tile[];
    float *tw = tile + (tn + 2 * rmax) * blockDim.x;
    GaussBlock g = GAUSS_BLOCK();
    gauss_stage(tile, u, g, n, inner, tn, rmax);
    if (w != NULL) gauss_stage(tw, w, g, n, inner, tn, rmax);
    __syncthreads();
    if (g.j >= inner) return;
    for (int t = threadIdx.y; t < tn && g.n0 + t < n; t += blockDim.y) {
        size_t at = g.base + (size_t)(g.n0 + t) * inner + g.j;
        zu[at] = gauss_conv(tile, t + rmax, g.k, g.r);
        // The CPU's order: K' u first, then K w.
        float b = gauss_conv(tile, t + rmax, g.dk, g.r);
        if (w != NULL) b += gauss_conv(tw, t + rmax, g.k, g.r);
        zw[at] = b;
    }
}

// gauss_backward_last is the pass along axis 0 (outer = planes, so
// planeOuter = 1): dx += K_0 u when dx != NULL, and partial[block] = sum
// over the block's points of x (K'_0 u + K_0 w), w = NULL meaning 0 (d =
// 1). Each thread sums its points in float; the block adds the threads'
// sums in double by a fixed tree. Dynamic shared memory as
// gauss_backward_pass; blockDim.x * blockDim.y <= 256, a power of two.
__global__ void gauss_backward_last(float *dx, double *partial, const float *x, const float *u, const float *w,
                                    GAUSS_PASS_PARAMS) {
    extern __shared__ float tile[];
    __shared__ double red[256];
    float *tw = tile + (tn + 2 * rmax) * blockDim.x;
    GaussBlock g = GAUSS_BLOCK();
    gauss_stage(tile, u, g, n, inner, tn, rmax);
    if (w != NULL) gauss_stage(tw, w, g, n, inner, tn, rmax);
    __syncthreads();
    float acc = 0.f;
    if (g.j < inner) {
        for (int t = threadIdx.y; t < tn && g.n0 + t < n; t += blockDim.y) {
            size_t at = g.base + (size_t)(g.n0 + t) * inner + g.j;
            if (dx != NULL) dx[at] += gauss_conv(tile, t + rmax, g.k, g.r);
            float b = gauss_conv(tile, t + rmax, g.dk, g.r);
            if (w != NULL) b += gauss_conv(tw, t + rmax, g.k, g.r);
            acc += x[at] * b;
        }
    }
    int tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y;
    red[tid] = (double)acc;
    __syncthreads();
    for (int h = nt / 2; h > 0; h /= 2) {
        if (tid < h) red[tid] += red[tid + h];
        __syncthreads();
    }
    if (tid == 0) partial[(size_t)blockIdx.y * gridDim.x + blockIdx.x] = red[0];
}

// gauss_dlogsigma: dlogSigma[pair] += sum of the partials of the pair's
// planes, one block per pair (blockIdx.x + blockIdx.y * gridDim.x; PerRow
// geometry, 256 threads). The partials of gauss_backward_last are laid out
// [nTiles][batch * ch * innerTiles]; the pair's planes are channels
// [first, first + perGrp) of every sample. Each thread sums a fixed subset
// in double, then a fixed tree: the result does not depend on timing.
__global__ void gauss_dlogsigma(float *dls, const double *partial, int pairs, int batch, int ch, int perScl,
                                int perGrp, int groups, int innerTiles, int nTiles) {
    __shared__ double red[256];
    int pair = blockIdx.y * gridDim.x + blockIdx.x;
    if (pair >= pairs) return;  // whole block: no barrier is skipped by part of it
    int first = (pair / groups) * perScl + (pair % groups) * perGrp;
    size_t gridX = (size_t)batch * ch * innerTiles;
    size_t count = (size_t)batch * perGrp * innerTiles * nTiles;
    double acc = 0.0;
    for (size_t q = threadIdx.x; q < count; q += blockDim.x) {
        size_t rest = q;
        int it = rest % innerTiles; rest /= innerTiles;
        int ty = rest % nTiles; rest /= nTiles;
        int cc = rest % perGrp;
        size_t b = rest / perGrp;
        size_t bx = (b * ch + first + cc) * innerTiles + it;
        acc += partial[(size_t)ty * gridX + bx];
    }
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) dls[pair] += (float)red[0];
}

}  // extern "C"
