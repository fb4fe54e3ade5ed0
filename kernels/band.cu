// Band-limited (Fourier) resampling, CNO's anti-aliased up- and
// down-sampling (tensor.Backend.BandResample; the operator is described in
// internal/cpu/bandresample.go). Each changed axis is one dense matrix
// A [N_out, N_in] applied along that axis:
//
//   - br_matrix: A[j, m] (or its transpose) in double, rounded to float,
//                one thread per entry: the same terms in the same order as
//                cpu.BandKernel.
//   - br_axis:   dst[l, j, p] (+)= sum_m A[j, m] src[l, m, p] for lines l
//                (planes x the axes before), rows j and the points p of
//                the axes after, as a shared-memory tiled matrix product
//                (the CPU backend's bandApply makes the same two
//                products):
//                  inner axis (post > 1): per line, D_l = A S_l,
//                    [rows x post] = [rows x nin] [nin x post];
//                  last axis (post = 1): all lines at once, D = S A^T,
//                    [lines x rows] = [lines x nin] [nin x rows],
//                    the lines the long dimension of one product.
//                Every output is still one sum in increasing m with
//                __fmul_rn / __fadd_rn, the order and rounding of the CPU
//                backend (bit-identical given the same matrix).

extern "C" {

// br_matrix: cuda.Elementwise geometry over nin * nout entries. transpose
// stores A^T [nin, nout].
__global__ void br_matrix(float *a, int nin, int nout, int transpose) {
    const int total = nin * nout;
    const int mm = nin < nout ? nin : nout;
    const int period = nin * nout;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        int j, m;
        if (transpose) m = e / nout, j = e % nout;
        else j = e / nin, m = e % nin;
        const int num = ((j * nin - m * nout) % period + period) % period;
        double s = 1.0;
        for (int k = 1; 2 * k <= mm; k++) {
            const double c = (2 * k == mm && nout >= nin) ? 1.0 : 2.0;
            s += c * cos(2.0 * 3.141592653589793 * (double)((long long)k * num % period) / (double)period);
        }
        a[e] = (float)(s / (double)nin);
    }
}

// br_axis: one tiled product C = X Y per problem, X [M, K] with k
// contiguous, Y [K, N] with n contiguous, K = nin:
//
//   - post > 1: X = A [rows, nin], Y = S_l [nin, post], C = D_l; one
//     problem per line l (M = rows, N = post);
//   - post = 1: X = S [lines, nin], Y = A^T [nin, rows], C = D; one problem
//     (M = lines, N = rows). a then holds A^T: the Go side (bandRun) has
//     br_matrix store the transpose, so that both operands are read along
//     their contiguous axis.
//
// A block of BTHREADS = 256 threads owns a BT x BT = 64 x 64 tile of C
// and walks K in stages of BK = 16: the stage of X (64 rows x 16 k) and of
// Y (16 k x 64 columns) are read once from global memory, coalesced (16
// consecutive threads read 16 consecutive k of a row of X, 64 consecutive
// threads 64 consecutive n of a row of Y), into shared memory, where every
// value is used by 64 outputs. Thread (tx, ty) = (tid % 16, tid / 16)
// keeps 4 x 4 outputs in registers, rows 4 ty + r (one float4 of the X
// stage, a broadcast within the warp) and columns tx + 16 c (consecutive
// words of the Y stage, so the stores of C are coalesced too). X is
// stored k-major, xs[k][i], so a thread's four rows are one float4; the
// row length BLD = 68 keeps float4 alignment and makes the transposing
// stores of the X stage at most 2-way bank conflicts.
//
// Each output is acc = 0, then acc = acc + x[k] y[k] for k = 0, 1, ...
// in increasing order, unfused, and dst = acc (accumulate: dst + acc): the
// sum of the old one-thread-per-output kernel and of the CPU backend,
// term for term. Stage entries beyond K are zero on both operands; the
// product 0 * 0 = +0 added to an accumulator that started at +0 leaves
// its bits unchanged (a round-to-nearest sum is -0 only when both terms
// are -0), so the padding changes nothing.
//
// Geometry (cuda.BandAxis): grid (ceil(N / 64), ceil(M / 64), problems),
// y and z capped at 65,535; the block loops over row tiles and problems
// beyond the grid (both bounds are uniform over the block, so the
// barriers are reached by every thread). Row offsets are 64-bit.
#define BT 64         // output tile: BT x BT values per block
#define BK 16         // K depth of one shared-memory stage
#define BTHREADS 256  // 16 x 16 threads, 4 x 4 outputs each
#define BLD (BT + 4)  // row length of a stage in shared memory

__launch_bounds__(BTHREADS) __global__ void br_axis(float *dst, const float *src, const float *a, int lines, int nin,
                                                    int rows, int post, int accumulate) {
    __align__(16) __shared__ float xs[BK][BLD]; // X stage, xs[k][i]
    __align__(16) __shared__ float ys[BK][BLD]; // Y stage, ys[k][n]
    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const bool last = post == 1;
    const int M = last ? lines : rows, N = last ? rows : post, K = nin;
    const int problems = last ? 1 : lines;
    const int n0 = blockIdx.x * BT;
    for (int z = blockIdx.z; z < problems; z += gridDim.z) {
        const float *x = last ? src : a;
        const float *y = last ? a : src + (size_t)z * K * N;
        float *c = last ? dst : dst + (size_t)z * M * N;
        for (int m0 = blockIdx.y * BT; m0 < M; m0 += gridDim.y * BT) {
            float acc[4][4];
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int q = 0; q < 4; q++) acc[r][q] = 0.0f;
            for (int k0 = 0; k0 < K; k0 += BK) {
                // The stages, zero outside the operands.
                {
                    const int kk = tid % BK, k = k0 + kk;
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        const int i = tid / BK + 16 * q;
                        xs[kk][i] = (k < K && m0 + i < M) ? x[(size_t)(m0 + i) * K + k] : 0.0f;
                    }
                }
                {
                    const int nn = tid % BT;
#pragma unroll
                    for (int q = 0; q < 4; q++) {
                        const int kk = tid / BT + 4 * q, k = k0 + kk;
                        ys[kk][nn] = (k < K && n0 + nn < N) ? y[(size_t)k * N + n0 + nn] : 0.0f;
                    }
                }
                __syncthreads();
#pragma unroll
                for (int kk = 0; kk < BK; kk++) {
                    const float4 xv = *reinterpret_cast<const float4 *>(&xs[kk][4 * ty]);
                    const float xr[4] = {xv.x, xv.y, xv.z, xv.w};
                    float yr[4];
#pragma unroll
                    for (int q = 0; q < 4; q++) yr[q] = ys[kk][tx + 16 * q];
#pragma unroll
                    for (int r = 0; r < 4; r++)
#pragma unroll
                        for (int q = 0; q < 4; q++) acc[r][q] = __fadd_rn(acc[r][q], __fmul_rn(xr[r], yr[q]));
                }
                __syncthreads();
            }
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int i = m0 + 4 * ty + r;
                if (i >= M) continue;
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const int n = n0 + tx + 16 * q;
                    if (n >= N) continue;
                    float *d = c + (size_t)i * N + n;
                    *d = accumulate ? __fadd_rn(*d, acc[r][q]) : acc[r][q];
                }
            }
        }
    }
}

}  // extern "C"
