// The tiled matrix-product core shared by the dense products (dense.cu)
// and the kernel-3 convolutions (conv3.cu): C (M x N) = A (M x K) B (K x N)
// by blocks of 256 threads owning a 64 x 64 tile of C, K in stages of 16,
// each thread 4 x 4 outputs in registers (dense.cu's top comment says how
// the operations use it). The kernels differ only in their loaders, which
// fill one 16 x 64 stage of A or B from global memory, and in their
// epilogues; the plain row-major loaders are here, the gathering ones beside
// their kernels.

#pragma once

#include "common.cuh" // bf16_round

#define GT 64        // C tile: GT x GT outputs per block
#define GK 16        // K depth of one shared-memory stage
#define GTHREADS 256 // threads per block: 16 x 16, each 4 x 4 outputs

// Tile is one stage of an operand in shared memory, s[k][row or column];
// the +1 column staggers the banks for the loaders that store along k.
typedef float Tile[GK][GT + 1];

// round_stage rounds one stage of both operands to bf16 in place, four
// elements of each per thread (256 threads x 4 = GK x GT).
__device__ __forceinline__ void round_stage(Tile &as, Tile &bs) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int e = threadIdx.x + GTHREADS * i, k = e / GT, c = e % GT;
        as[k][c] = bf16_round(as[k][c]);
        bs[k][c] = bf16_round(bs[k][c]);
    }
}

// gemm_mainloop accumulates acc[r][c] += sum_{k in [k0, k1)} A[ty+16r, k]
// B[k, tx+16c] for the block's tile, with la and lb filling the stages
// (their tile origins are their own). k runs in increasing order. With
// bf16 != 0 (uniform over the grid) each stage is rounded to bf16 after
// it is loaded, behind a second barrier.
template <class LA, class LB>
__device__ __forceinline__ void gemm_mainloop(const LA &la, const LB &lb, int k0, int k1, float acc[4][4], int bf16) {
    __shared__ Tile as, bs;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (int kb = k0; kb < k1; kb += GK) {
        la(as, kb, k1);
        lb(bs, kb, k1);
        __syncthreads();
        if (bf16) {
            round_stage(as, bs);
            __syncthreads();
        }
#pragma unroll
        for (int k = 0; k < GK; k++) {
            float a[4], b[4];
#pragma unroll
            for (int r = 0; r < 4; r++) a[r] = as[k][ty + 16 * r];
#pragma unroll
            for (int c = 0; c < 4; c++) b[c] = bs[k][tx + 16 * c];
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int c = 0; c < 4; c++) acc[r][c] += a[r] * b[c];
        }
        __syncthreads();
    }
}

__device__ __forceinline__ void zero_acc(float acc[4][4]) {
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 4; c++) acc[r][c] = 0.0f;
}

// ---------------------------------------------------------------------------
// Loaders for plain row-major operands.

// LoadRowK reads the operand element (r, k) = p[r ld + k] for rows
// r0 + [0, 64) below `rows` (k contiguous in memory: 16 consecutive
// threads read 16 consecutive k). Zero outside.
struct LoadRowK {
    const float *p;
    int ld, rows, r0;
    __device__ void operator()(Tile &s, int kb, int k1) const {
        const int kk = threadIdx.x % GK, rr = threadIdx.x / GK;
        const int k = kb + kk;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int r = rr + 16 * i;
            s[kk][r] = (k < k1 && r0 + r < rows) ? p[(size_t)(r0 + r) * ld + k] : 0.0f;
        }
    }
};

// LoadKRow reads the operand element (k, c) = p[k ld + c] for columns
// c0 + [0, 64) below `cols` (c contiguous: 64 consecutive threads read 64
// consecutive words). Zero outside.
struct LoadKRow {
    const float *p;
    int ld, cols, c0;
    __device__ void operator()(Tile &s, int kb, int k1) const {
        const int cc = threadIdx.x % GT, kq = threadIdx.x / GT;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int kk = kq + 4 * i, k = kb + kk;
            s[kk][cc] = (k < k1 && c0 + cc < cols) ? p[(size_t)k * ld + c0 + cc] : 0.0f;
        }
    }
};

// LoadFolded reads the operand element (r, k) of a [B, R, S] field viewed
// as R x (B S): k = b S + s folded over the batch, value p[(b R + r) S + s],
// for rows r0 + [0, 64) below R. This is the K operand of the weight
// gradients (dY_b and X_b side by side along k).
struct LoadFolded {
    const float *p;
    int R, S, r0;
    __device__ void operator()(Tile &s, int kb, int k1) const {
        const int kk = threadIdx.x % GK, rr = threadIdx.x / GK;
        const int k = kb + kk;
        const int b = k / S, sp = k - b * S;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int r = rr + 16 * i;
            s[kk][r] = (k < k1 && r0 + r < R) ? p[((size_t)b * R + r0 + r) * S + sp] : 0.0f;
        }
    }
};

// store_dw writes one thread's 4 x 4 block of an M x N weight-gradient
// product: added to out when the product is not split (accumulate != 0),
// else stored into split z's partial out[z M N + ...].
__device__ __forceinline__ void store_dw(float *out, const float acc[4][4], int m0, int n0, int M, int N,
                                         int z, int accumulate) {
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    float *dst = accumulate ? out : out + (size_t)z * M * N;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int m = m0 + ty + 16 * r;
        if (m >= M) continue;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int n = n0 + tx + 16 * c;
            if (n >= N) continue;
            if (accumulate) dst[(size_t)m * N + n] += acc[r][c];
            else dst[(size_t)m * N + n] = acc[r][c];
        }
    }
}
