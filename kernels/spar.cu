// SPAR, Sparse-Point Adaptive Routing (paper Sec. 3.3, Eq. spar-rho,
// Alg. 1, App. A.1): the contrast-adaptive keep-ratio, the per-sample hard
// top-k mask, and the per-pixel MUX with its straight-through backward.
// The CPU reference is internal/cpu/spar.go; the contract is the doc of
// TopKMask, SPARKeep, SPARRoute and SPARRouteBackward in
// internal/tensor/backend.go.
//
// Everything a SPAR gate needs is computed on the device (no host round
// trip), so a training step containing it can be captured as a CUDA graph:
//
//   spar_stats_partial   (Sweep)      per chunk: sum s, sum |s|, and the
//                                     squared deviations about the chunk
//                                     mean, in double
//   spar_keep_ratio      (PerSample)  per sample: combine the chunks in a
//                                     fixed order, c, rho, k (Eq. spar-rho),
//                                     stats = (c, rho, k), radix state
//   spar_topk_init       (Elementwise) TopKMask only: radix state from the
//                                     uploaded k
//   4 x spar_radix_histogram (Sweep) + spar_radix_select (PerSample):
//                                     radix select of the k-th largest score
//                                     on its 32-bit order key, 8 bits a pass
//   spar_topk_mask       (Sweep)      keep every key > threshold and the
//                                     first (k - count above) keys equal to
//                                     it in flat index order
//   spar_threshold       (PerSample)  the threshold centre's tau_k of
//                                     SPARRouteBackward: the smallest kept
//                                     score per sample
//
// One sample's N scores are cut into G chunks of `chunk` consecutive values
// (internal/cuda/geometry_spar.go: SPARPlan); a Sweep launch has one block
// of SPAR_BLOCK threads per (sample, chunk), blockIdx.x = sample * G +
// chunk; a PerSample launch has one block of SPAR_BLOCK threads per sample
// (cuda.PerRow layout), and G <= SPAR_BLOCK so one thread per chunk fits.
//
// Determinism: the double statistics are reduced by fixed-shape trees in a
// fixed order. The histograms use shared-memory atomicAdd on unsigned
// counters: integer addition is exact and associative, so the counts (and
// everything derived from them) are the same on every run whatever order
// the atomics land in.

#define SPAR_BLOCK 256
#define SPAR_RADIX_BITS 8
#define SPAR_BINS 256

// state[4 b + i] per sample b (int):
//   0: the threshold key's bits found so far (as unsigned; after the last
//      pass the full key of the k-th largest score), 0xFFFFFFFF when k = 0
//   1: how many of the scores matching that prefix are still to be kept
//      (after the last pass: how many scores equal to the threshold to keep)
//   2: k
#define SPAR_STATE 4

extern "C" {

// spar_key maps a score to an unsigned key whose order is the CPU
// reference's order (Go's slices.Sort with cmp.Less, then > and ==):
// every NaN is smallest and all NaNs are equal (key 0); -0 equals +0; for
// the other floats the usual order-preserving transform (flip every bit of
// a negative, set the sign bit of a positive), which maps -Inf to
// 0x007FFFFF > 0 and +Inf to 0xFF800000, so no real number has key 0 or
// 0xFFFFFFFF.
__device__ __forceinline__ unsigned spar_key(float v) {
    unsigned u = __float_as_uint(v);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0u;  // NaN
    if ((u & 0x7FFFFFFFu) == 0u) u = 0u;                // -0 -> +0
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// spar_sample is the sample of a PerSample launch (cuda.PerRow: samples
// along grid x, then y).
__device__ __forceinline__ int spar_sample() {
    return blockIdx.y * gridDim.x + blockIdx.x;
}

// spar_block_sum returns the sum of every thread's v to every thread of
// the block: a fixed tree over sh[0:blockDim.x] (blockDim.x a power of
// two), so the rounding is the same on every run.
__device__ double spar_block_sum(double v, double *sh) {
    int t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sh[t] += sh[t + s];
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

// spar_block_scan returns the inclusive prefix sum of v over the threads
// 0..threadIdx.x (Hillis-Steele over sh[0:blockDim.x]).
__device__ unsigned spar_block_scan(unsigned v, unsigned *sh) {
    int t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        unsigned a = t >= off ? sh[t - off] : 0u;
        __syncthreads();
        sh[t] += a;
        __syncthreads();
    }
    unsigned r = sh[t];
    __syncthreads();
    return r;
}

// ---------------------------------------------------------------------------
// Keep-ratio (Eq. spar-rho), evaluated in double like the CPU reference.

// spar_stats_partial: block (sample b, chunk g) writes
// part[3 (b G + g) + {0, 1, 2}] = (sum s, sum |s|, sum (s - chunk mean)^2)
// over its chunk, in double. The chunk is read twice (the second time from
// L2): the two-pass deviation keeps the variance accurate, as the CPU's
// two-pass formula does.
__global__ void spar_stats_partial(double *part, const float *s, int N, int G, int chunk) {
    __shared__ double sh[SPAR_BLOCK];
    int blk = blockIdx.x, b = blk / G, g = blk % G;
    const float *x = s + (size_t)b * N;
    int lo = g * chunk, hi = min(lo + chunk, N);  // lo < hi: SPARPlan makes no empty chunk

    double sum = 0.0, sumAbs = 0.0;
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        double v = (double)x[i];
        sum += v;
        sumAbs += fabs(v);
    }
    sum = spar_block_sum(sum, sh);
    sumAbs = spar_block_sum(sumAbs, sh);

    double mean = sum / (double)(hi - lo);
    double m2 = 0.0;
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        double d = (double)x[i] - mean;
        m2 += d * d;
    }
    m2 = spar_block_sum(m2, sh);

    if (threadIdx.x == 0) {
        part[3 * (size_t)blk + 0] = sum;
        part[3 * (size_t)blk + 1] = sumAbs;
        part[3 * (size_t)blk + 2] = m2;
    }
}

// spar_keep_ratio: one block per sample. Combines the G chunk partials
// (thread g holds chunk g; a fixed tree adds them): mean = sum / N, and the
// total squared deviation q = sum_g [m2_g + n_g (mean_g - mean)^2] (the
// exact parallel-variance identity, so q is the CPU's sum (s - mean)^2 up
// to double rounding). Then, as internal/cpu keepRatio:
//   std = sqrt(q / (N-1 or N)), c = std / (mean |s| + eps),
//   rho = clip(rho0 (1 + beta tanh(c - 1)), rho_min, rho_max),
//   k = ceil(rho N - 1e-9) clamped to [1, N]     (cpu.CeilKeep, Alg. 1)
// and writes stats[3b..3b+2] = (c, rho, k) and the radix state for k.
// The scalar steps use __d*_rn so that no multiply-add is contracted into
// an FMA the CPU does not make (rho N - 1e-9 must round like Go's). A NaN
// rho is kept NaN (Go's math.Max/Min propagate NaN, CUDA's fmax/fmin
// drop it) and gives k = 1, what Go's int(NaN) clamps to.
__global__ void spar_keep_ratio(float *stats, int *state, const double *part, int N, int G, int chunk,
                                double rho0, double beta, double rhoMin, double rhoMax, double eps,
                                int unbiased, int B) {
    __shared__ double sh[SPAR_BLOCK];
    int b = spar_sample();
    if (b >= B) return;  // whole block
    int t = threadIdx.x;
    const double *p = part + 3 * (size_t)b * G;

    double sum = spar_block_sum(t < G ? p[3 * t] : 0.0, sh);
    double sumAbs = spar_block_sum(t < G ? p[3 * t + 1] : 0.0, sh);
    double mean = sum / (double)N;
    double q = 0.0;
    if (t < G) {
        double ng = (double)min(chunk, N - t * chunk);
        double dm = p[3 * t] / ng - mean;
        q = p[3 * t + 2] + ng * dm * dm;
    }
    q = spar_block_sum(q, sh);

    if (t == 0) {
        double div = unbiased ? (double)(N - 1) : (double)N;
        double sd = div > 0.0 ? sqrt(q / div) : 0.0;
        double c = sd / __dadd_rn(sumAbs / (double)N, eps);
        double r = __dmul_rn(rho0, __dadd_rn(1.0, __dmul_rn(beta, tanh(c - 1.0))));
        if (!isnan(r)) r = fmin(fmax(r, rhoMin), rhoMax);
        double kd = ceil(__dsub_rn(__dmul_rn(r, (double)N), 1e-9));
        int k = isnan(kd) ? 1 : (kd < 1.0 ? 1 : (kd > (double)N ? N : (int)kd));
        stats[3 * (size_t)b + 0] = (float)c;
        stats[3 * (size_t)b + 1] = (float)r;
        stats[3 * (size_t)b + 2] = (float)k;
        state[SPAR_STATE * b + 0] = 0;
        state[SPAR_STATE * b + 1] = k;
        state[SPAR_STATE * b + 2] = k;
    }
}

// ---------------------------------------------------------------------------
// Top-k: radix select of the threshold, then the mask.

// spar_topk_init (TopKMask): the radix state of sample b from its k (host
// ints uploaded bit for bit), clamped to [0, N]. k = 0 keeps nothing: the
// threshold 0xFFFFFFFF is above every key and no equal key is kept.
__global__ void spar_topk_init(int *state, const int *kv, int N, int B) {
    for (int b = blockIdx.x * blockDim.x + threadIdx.x; b < B; b += gridDim.x * blockDim.x) {
        int k = min(max(kv[b], 0), N);
        state[SPAR_STATE * b + 0] = k > 0 ? 0 : (int)0xFFFFFFFFu;
        state[SPAR_STATE * b + 1] = k;
        state[SPAR_STATE * b + 2] = k;
    }
}

// spar_radix_histogram: block (sample b, chunk g) counts, for the scores of
// its chunk whose key agrees with the threshold prefix found so far (the
// bits above shift + 8), the 256 values of the key's digit
// (key >> shift) & 255, and writes the counts to hist[(b G + g) 256 + d].
// Lanes of a warp with the same digit are aggregated (__match_any_sync) so
// that the skewed first pass (most scores share their exponent bits) does
// not serialise on one shared counter.
__global__ void spar_radix_histogram(unsigned *hist, const int *state, const float *s, int N, int G,
                                     int chunk, int shift) {
    __shared__ unsigned h[SPAR_BINS];
    int blk = blockIdx.x, b = blk / G, g = blk % G, t = threadIdx.x;
    unsigned prefix = (unsigned)state[SPAR_STATE * b + 0];
    if (state[SPAR_STATE * b + 1] <= 0) return;  // k = 0: nothing to select (whole block)
    unsigned high = shift + SPAR_RADIX_BITS >= 32 ? 0u : ~0u << (shift + SPAR_RADIX_BITS);
    const float *x = s + (size_t)b * N;
    int lo = g * chunk, hi = min(lo + chunk, N);

    h[t] = 0u;
    __syncthreads();
    // Every thread runs the same number of iterations, so the whole warp
    // takes part in __match_any_sync; out-of-range lanes carry bin SPAR_BINS.
    for (int i0 = lo; i0 < hi; i0 += blockDim.x) {
        int i = i0 + t;
        unsigned bin = SPAR_BINS;
        if (i < hi) {
            unsigned key = spar_key(x[i]);
            if ((key & high) == prefix) bin = (key >> shift) & (SPAR_BINS - 1);
        }
        unsigned peers = __match_any_sync(0xFFFFFFFFu, bin);
        if (bin < SPAR_BINS && (int)(t & 31) == __ffs(peers) - 1) atomicAdd(&h[bin], (unsigned)__popc(peers));
    }
    __syncthreads();
    hist[(size_t)blk * SPAR_BINS + t] = h[t];
}

// spar_radix_select: one block per sample, thread t for digit d = 255 - t
// (descending). Adds the G chunk histograms, finds the digit d* whose
// scores contain the remaining rank: above(d*) < rem <= above(d*) +
// count(d*), with above(d) the number of matching scores of larger digit;
// appends d* to the prefix and subtracts above(d*) from rem. After the
// last pass (shift 0) the prefix is the threshold key and rem the number
// of scores equal to it to keep, and eqBefore[b G + g] gets the number of
// scores equal to the threshold in the chunks before g (their count in
// chunk g is the last pass's histogram bin d*), so the mask kernel can keep
// the first rem of them in flat index order.
__global__ void spar_radix_select(int *state, unsigned *eqBefore, const unsigned *hist, int G, int shift,
                                  int B) {
    __shared__ unsigned sh[SPAR_BLOCK];
    __shared__ unsigned pick[2];
    int b = spar_sample();
    if (b >= B) return;  // whole block
    int t = threadIdx.x;
    int rem = state[SPAR_STATE * b + 1];
    if (rem <= 0) return;  // k = 0 (whole block)
    unsigned prefix = (unsigned)state[SPAR_STATE * b + 0];
    const unsigned *hb = hist + (size_t)b * G * SPAR_BINS;

    int d = SPAR_BINS - 1 - t;
    unsigned count = 0u;
    for (int g = 0; g < G; g++) count += hb[(size_t)g * SPAR_BINS + d];
    unsigned atLeast = spar_block_scan(count, sh);  // scores with digit >= d
    unsigned above = atLeast - count;
    if (above < (unsigned)rem && (unsigned)rem <= atLeast) {  // exactly one thread
        pick[0] = (unsigned)d;
        pick[1] = above;
    }
    __syncthreads();
    unsigned dstar = pick[0], skipped = pick[1];
    if (t == 0) {
        state[SPAR_STATE * b + 0] = (int)(prefix | (dstar << shift));
        state[SPAR_STATE * b + 1] = rem - (int)skipped;
    }
    if (shift == 0) {
        unsigned eq = t < G ? hb[(size_t)t * SPAR_BINS + dstar] : 0u;
        unsigned upTo = spar_block_scan(eq, sh);
        if (t < G) eqBefore[(size_t)b * G + t] = upTo - eq;
    }
}

// spar_topk_mask: block (sample b, chunk g) writes the mask of its chunk:
// 1 where key > threshold, 1 for the first rem keys equal to the threshold
// of the sample in flat index order (their rank is eqBefore of the chunk
// plus a block-wide prefix count, tile by tile), 0 elsewhere. This is the
// CPU's rule: ties go to the lower flat index.
__global__ void spar_topk_mask(float *mask, const int *state, const unsigned *eqBefore, const float *s,
                               int N, int G, int chunk) {
    __shared__ unsigned warpEq[SPAR_BLOCK / 32];
    int blk = blockIdx.x, b = blk / G, g = blk % G, t = threadIdx.x;
    int lane = t & 31, w = t >> 5, nw = blockDim.x >> 5;
    unsigned T = (unsigned)state[SPAR_STATE * b + 0];
    unsigned E = (unsigned)max(state[SPAR_STATE * b + 1], 0);
    unsigned base = E > 0u ? eqBefore[blk] : 0u;  // eqBefore is not written when k = 0
    const float *x = s + (size_t)b * N;
    float *m = mask + (size_t)b * N;
    int lo = g * chunk, hi = min(lo + chunk, N);

    for (int i0 = lo; i0 < hi; i0 += blockDim.x) {  // same trip count for every thread
        int i = i0 + t;
        bool valid = i < hi;
        unsigned key = valid ? spar_key(x[i]) : 0u;
        bool gt = valid && key > T, eq = valid && key == T;
        unsigned bal = __ballot_sync(0xFFFFFFFFu, eq);
        if (lane == 0) warpEq[w] = (unsigned)__popc(bal);
        __syncthreads();
        unsigned before = 0u, tile = 0u;
        for (int v = 0; v < nw; v++) {
            if (v < w) before += warpEq[v];
            tile += warpEq[v];
        }
        unsigned rank = base + before + (unsigned)__popc(bal & ((1u << lane) - 1u));
        if (valid) m[i] = (gt || (eq && rank < E)) ? 1.0f : 0.0f;
        base += tile;
        __syncthreads();  // warpEq is rewritten by the next tile
    }
}

// ---------------------------------------------------------------------------
// Routing (Sec. 3.3, App. A.1). zF, zG, r, dr are [B, C, sp]; hard, s, ds
// are [B, 1, sp]. The float operations are the CPU's, in its order, with
// explicit rounding (__f*_rn) so that none is contracted into an FMA.

// spar_route: r = zG + hard (zF - zG), the forward value of
// r = g zF + (1-g) zG with g = hard.
__global__ void spar_route(float *r, const float *zF, const float *zG, const float *hard, int B, int C, int sp) {
    long long n = (long long)B * C * sp;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long j = i / sp;  // b C + c
        long long x = i - j * sp;
        float h = hard[(j / C) * sp + x];
        float f = zF[i], g = zG[i];
        r[i] = __fadd_rn(g, __fmul_rn(h, __fsub_rn(f, g)));
    }
}

// spar_route_backward_direct (Eq. spar-direct): dzF += g dr,
// dzG += (1-g) dr with g = hard; a null gradient is skipped.
__global__ void spar_route_backward_direct(float *dzF, float *dzG, const float *dr, const float *hard, int B,
                                           int C, int sp) {
    long long n = (long long)B * C * sp;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long j = i / sp;
        long long x = i - j * sp;
        float h = hard[(j / C) * sp + x];
        float d = dr[i];
        if (dzF) dzF[i] = __fadd_rn(dzF[i], __fmul_rn(h, d));
        if (dzG) dzG[i] = __fadd_rn(dzG[i], __fmul_rn(__fsub_rn(1.0f, h), d));
    }
}

// spar_threshold (PerSample; spar.surrogate_centre: threshold, issue 20):
// tau[b] = the smallest score of sample b among the pixels with hard != 0,
// i.e. the hard decision's threshold tau_k (the k-th largest score); 0
// when no (non-NaN) pixel is kept. The CPU's sparThreshold. A minimum is
// exact in any order, so the fixed tree gives the CPU's value (up to the
// sign of a zero, which s - tau does not see).
__global__ void spar_threshold(float *tau, const float *s, const float *hard, int B, int N) {
    __shared__ float shv[SPAR_BLOCK];
    __shared__ int shf[SPAR_BLOCK];
    int b = spar_sample();
    if (b >= B) return;  // the whole block
    int t = threadIdx.x;
    const float *x = s + (size_t)b * N;
    const float *h = hard + (size_t)b * N;
    float m = 0.0f;
    int any = 0;
    for (int i = t; i < N; i += blockDim.x) {
        float v = x[i];
        if (h[i] != 0.0f && v == v && (!any || v < m)) m = v, any = 1;
    }
    shv[t] = m, shf[t] = any;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (t < st && shf[t + st] && (!shf[t] || shv[t + st] < shv[t])) shv[t] = shv[t + st], shf[t] = 1;
        __syncthreads();
    }
    if (t == 0) tau[b] = shf[0] ? shv[0] : 0.0f;
}

// spar_route_backward_score (App. A.1, Eq. spar-score-grad, score path):
// one thread per pixel (b, x): ds += [sum_c dr (zF - zG)] sigmoid'(u) / T
// with u = s/T, or u = (s - tau[b])/T when tau is given (the threshold
// centre, spar_threshold), the channel sum in channel order
// (deterministic, the CPU's order), sigmoid evaluated in double and
// rounded to float as the CPU does, and the product taken as
// ((acc sg) (1 - sg)) / T like the CPU's expression. The entry points are
// spar_route_backward_score (zero centre, its signature unchanged, so
// PTX compiled before the threshold centre still serves the default) and
// spar_route_backward_score_centred (with tau).
__device__ __forceinline__ void spar_score_impl(float *ds, const float *dr, const float *zF, const float *zG,
                                                const float *s, const float *tau, int B, int C, int sp,
                                                float temperature) {
    long long n = (long long)B * sp;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        long long b = i / sp;
        long long x = i - b * sp;
        float acc = 0.0f;
        for (int c = 0; c < C; c++) {
            long long off = (b * C + c) * sp + x;
            acc = __fadd_rn(acc, __fmul_rn(dr[off], __fsub_rn(zF[off], zG[off])));
        }
        float u = tau ? __fdiv_rn(__fsub_rn(s[i], tau[b]), temperature) : __fdiv_rn(s[i], temperature);
        float sg = (float)(1.0 / (1.0 + exp(-(double)u)));
        ds[i] = __fadd_rn(ds[i], __fdiv_rn(__fmul_rn(__fmul_rn(acc, sg), __fsub_rn(1.0f, sg)), temperature));
    }
}

__global__ void spar_route_backward_score(float *ds, const float *dr, const float *zF, const float *zG,
                                          const float *s, int B, int C, int sp, float temperature) {
    spar_score_impl(ds, dr, zF, zG, s, nullptr, B, C, sp, temperature);
}

__global__ void spar_route_backward_score_centred(float *ds, const float *dr, const float *zF, const float *zG,
                                                  const float *s, const float *tau, int B, int C, int sp,
                                                  float temperature) {
    spar_score_impl(ds, dr, zF, zG, s, tau, B, C, sp, temperature);
}

}  // extern "C"
