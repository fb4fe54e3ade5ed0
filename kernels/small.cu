// Small operations of tensor.Backend: ChannelCopy, the MSE loss, the
// finite differences of the H1 loss term, the per-(sample, channel)
// MeanStd, and the fused AdamW step.
//
// Elementwise kernels are grid-stride loops (cuda.Elementwise geometry).
// Reductions are deterministic: fixed partitions, fixed-order trees, no
// atomics. Where the CPU backend (internal/cpu, the reference) rounds a
// float32 product and a sum separately, the kernels do so too with
// __fmul_rn / __fadd_rn (nvcc would otherwise contract them into an FMA),
// so they reproduce its results.

#define GRID_STRIDE(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += gridDim.x * blockDim.x)

// block_sum_double returns the sum of v over the block (a power of two of
// at most 1024 threads) to thread 0, by a fixed tree in shared memory.
__device__ double block_sum_double(double v) {
    __shared__ double sh[1024];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    const double s = sh[0];
    __syncthreads(); // sh may be reused by a second call
    return s;
}

extern "C" {

// ChannelCopy (concatenation, slicing and their backwards): channels
// [srcFrom, srcFrom+nch) of src go to [dstFrom, dstFrom+nch) of dst,
// added when accumulate != 0. dst is [B, dstC, S], src [B, srcC, S].
__global__ void cc_copy(float *dst, const float *src, int batch, int dstC, int dstFrom, int srcC, int srcFrom,
                        int nch, int s, int accumulate) {
    const int total = batch * nch * s;
    GRID_STRIDE(e, total) {
        const int sp = e % s, bc = e / s;
        const int c = bc % nch, b = bc / nch;
        const float v = src[((size_t)b * srcC + srcFrom + c) * s + sp];
        float *d = dst + ((size_t)b * dstC + dstFrom + c) * s + sp;
        if (accumulate) *d += v;
        else *d = v;
    }
}

// MSE, pass 1: block g sums (a-b)^2 over its chunk [g chunk, (g+1) chunk)
// in double (the CPU sums in float64 too) and writes part[g]. The chunks
// depend on n only (cuda.MSEParts), so the sum is the same every run.
__global__ void mse_partial(double *part, const float *a, const float *b, int n, int chunk) {
    const int lo = blockIdx.x * chunk, hi = min(n, lo + chunk);
    double s = 0.0;
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        const double d = (double)a[i] - (double)b[i];
        s += d * d;
    }
    s = block_sum_double(s);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

// MSE, pass 2 (one block): out[0] = (sum of the parts) / n, in part order
// per thread and by a fixed tree across threads.
__global__ void mse_final(float *out, const double *part, int parts, int n) {
    double s = 0.0;
    for (int g = threadIdx.x; g < parts; g += blockDim.x) s += part[g];
    s = block_sum_double(s);
    if (threadIdx.x == 0) out[0] = (float)(s / (double)n);
}

// MSEBackward: da += k (a-b), db -= k (a-b) with k = 2 dout[0] / n, as the
// CPU computes it in float32. dout stays on the device; da or db may be
// NULL (not needed).
__global__ void mse_backward(float *da, float *db, const float *dout, const float *a, const float *b, int n) {
    const float k = 2.0f * dout[0] / (float)n;
    GRID_STRIDE(i, n) {
        const float g = __fmul_rn(k, a[i] - b[i]);
        if (da) da[i] = __fadd_rn(da[i], g);
        if (db) db[i] = __fsub_rn(db[i], g);
    }
}

// Diff: y = D x along one spatial axis, the field viewed as
// [outer, n, inner]. Row i of D: periodic, (x[i+1] - x[i-1]) c with the
// neighbours wrapped; otherwise central inside and one-sided at the ends,
// (x[1] - x[0]) invH and (x[n-1] - x[n-2]) invH. c = 1/(2h) and invH = 1/h
// are rounded to float32 on the host as the CPU does.
__global__ void diff_forward(float *y, const float *x, int outer, int n, int inner, float c, float invH, int periodic) {
    const int total = outer * n * inner;
    GRID_STRIDE(e, total) {
        const int i = (e / inner) % n;
        const float *row = x + (e - i * inner); // x[o, 0, k], e = (o n + i) inner + k
        float v;
        if (i > 0 && i < n - 1) v = c * (row[(size_t)(i + 1) * inner] - row[(size_t)(i - 1) * inner]);
        else if (periodic) {
            const int ip = i + 1 == n ? 0 : i + 1, im = i == 0 ? n - 1 : i - 1;
            v = c * (row[(size_t)ip * inner] - row[(size_t)im * inner]);
        } else if (i == 0) v = invH * (row[inner] - row[0]);
        else v = invH * (row[(size_t)(n - 1) * inner] - row[(size_t)(n - 2) * inner]);
        y[e] = v;
    }
}

// diff_row returns row i of the non-periodic D (left, diagonal and right
// coefficients), the CPU's diffRow.
__device__ __forceinline__ void diff_row(int i, int n, float c, float invH, float *left, float *diag, float *right) {
    if (i > 0 && i < n - 1) *left = -c, *diag = 0.0f, *right = c;
    else if (i == 0) *left = 0.0f, *diag = -invH, *right = invH;
    else *left = -invH, *diag = invH, *right = 0.0f;
}

// DiffBackward: dx += D^T dy as a gather, row j of D^T dy being
// right(j-1) dy[j-1] + diag(j) dy[j] + left(j+1) dy[j+1]. Where rows j-1
// and j+1 are both central (always when periodic, neighbours wrapped) it
// is c (dy[j-1] - dy[j+1]), added in one step; at the four rows next to
// the ends of a non-periodic axis (and on every row when n <= 4) the three
// terms are added one by one in the CPU's order.
__global__ void diff_backward(float *dx, const float *dy, int outer, int n, int inner, float c, float invH, int periodic) {
    const int total = outer * n * inner;
    GRID_STRIDE(e, total) {
        const int j = (e / inner) % n;
        const float *row = dy + (e - j * inner); // dy[o, 0, k]
        float d = dx[e];
        if (periodic || (n > 4 && j >= 2 && j < n - 2)) {
            const int jm = j == 0 ? n - 1 : j - 1, jp = j + 1 == n ? 0 : j + 1;
            d = __fadd_rn(d, __fmul_rn(c, row[(size_t)jm * inner] - row[(size_t)jp * inner]));
        } else {
            float left, diag, right;
            diff_row(j, n, c, invH, &left, &diag, &right);
            if (diag != 0.0f) d = __fadd_rn(d, __fmul_rn(diag, row[(size_t)j * inner]));
            if (j > 0) {
                diff_row(j - 1, n, c, invH, &left, &diag, &right);
                d = __fadd_rn(d, __fmul_rn(right, row[(size_t)(j - 1) * inner]));
            }
            if (j < n - 1) {
                diff_row(j + 1, n, c, invH, &left, &diag, &right);
                d = __fadd_rn(d, __fmul_rn(left, row[(size_t)(j + 1) * inner]));
            }
        }
        dx[e] = d;
    }
}

// MeanStd: one block per (sample, channel) row of s points (cuda.PerRow,
// a power-of-two block): the mean, then the sum of squared deviations
// from it, both accumulated in double like the CPU; std is unbiased
// (divisor s-1), 0 when s = 1.
__global__ void ms_forward(float *mean, float *std, const float *x, int rows, int s) {
    const int r = blockIdx.y * gridDim.x + blockIdx.x;
    if (r >= rows) return; // uniform over the block
    const float *v = x + (size_t)r * s;
    double sum = 0.0;
    for (int i = threadIdx.x; i < s; i += blockDim.x) sum += (double)v[i];
    const double mu = block_sum_double(sum) / (double)s;
    double q = 0.0;
    for (int i = threadIdx.x; i < s; i += blockDim.x) {
        const double d = (double)v[i] - mu;
        q += d * d;
    }
    q = block_sum_double(q);
    if (threadIdx.x == 0) {
        mean[r] = (float)mu;
        std[r] = s > 1 ? (float)sqrt(q / (double)(s - 1)) : 0.0f;
    }
}

// MeanStdBackward: dx += dmean/s + dstd (x - mean) / ((s-1) std), per row;
// dmean or dstd may be NULL, and the std term is skipped where std = 0 or
// s = 1 (as the CPU does). Float32, in the CPU's order of operations.
__global__ void ms_backward(float *dx, const float *dmean, const float *dstd, const float *x, const float *mean,
                            const float *std, int rows, int s) {
    const int total = rows * s;
    GRID_STRIDE(e, total) {
        const int r = e / s;
        float gm = 0.0f, gs = 0.0f;
        if (dmean) gm = dmean[r] / (float)s;
        if (dstd && std[r] > 0.0f && s > 1) gs = dstd[r] / __fmul_rn((float)(s - 1), std[r]);
        dx[e] = __fadd_rn(dx[e], __fadd_rn(gm, __fmul_rn(gs, x[e] - mean[r])));
    }
}

// AdamW: one step of torch.optim.AdamW on n elements, each computed in
// double from its float32 values and rounded once per stored buffer, in
// the order of PyTorch's single-tensor implementation (and of the CPU
// backend):
//   p *= 1 - lr wd;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//   p -= (lr / (1-b1^t)) m / (sqrt(v) / sqrt(1-b2^t) + eps).
// decay = 1 - lr wd, stepSize = lr / (1-b1^t) and bc2Sqrt = sqrt(1-b2^t)
// come from the host in double. Products and sums are rounded separately
// (__dmul_rn / __dadd_rn) as in the CPU's Go code, so results match it.
__global__ void adamw_step(float *p, const float *g, float *m, float *v, int n, double b1, double b2, double decay,
                           double stepSize, double bc2Sqrt, double eps) {
    GRID_STRIDE(i, n) {
        const double gi = (double)g[i];
        const double mi = __dadd_rn(__dmul_rn(b1, (double)m[i]), __dmul_rn(1.0 - b1, gi));
        const double vi = __dadd_rn(__dmul_rn(b2, (double)v[i]), __dmul_rn(__dmul_rn(1.0 - b2, gi), gi));
        m[i] = (float)mi;
        v[i] = (float)vi;
        const double den = __dadd_rn(sqrt(vi) / bc2Sqrt, eps);
        p[i] = (float)__dsub_rn(__dmul_rn((double)p[i], decay), __dmul_rn(stepSize, mi) / den);
    }
}

}  // extern "C"
