// Upsample2x of tensor.Backend: the decoder's linear / bilinear /
// trilinear doubling of every spatial axis (Sec. 3.2) with PyTorch's
// align_corners=false convention, and its adjoint.
//
// Along one axis of n input points, output j reads the source coordinate
// s = (j + 0.5)/2 - 0.5 clamped below at 0: i0 = floor(s), i1 =
// min(i0 + 1, n - 1), lambda = s - i0. With weights exact in float32:
//
//   y[0]    = x[0]
//   y[2m-1] = 3/4 x[m-1] + 1/4 x[m]     (1 <= m <= n-1)
//   y[2m]   = 1/4 x[m-1] + 3/4 x[m]     (1 <= m <= n-1)
//   y[2n-1] = 3/4 x[n-1] + 1/4 x[n-1]
//
// and the adjoint gathers, for input m, the outputs that read it:
//
//   g[0]   = y[0] + 3/4 y[1] + 1/4 y[2]
//   g[m]   = 1/4 y[2m-1] + 3/4 y[2m] + 3/4 y[2m+1] + 1/4 y[2m+2]
//   g[n-1] = 1/4 y[2n-3] + 3/4 y[2n-2] + y[2n-1]
//   g[0]   = y[0] + y[1]                 (n = 1)
//
// With periodic set (model.upsample: periodic) the source coordinate
// wraps around the axis instead of being clamped: every output reads the
// interior pair, indices mod n,
//
//   y[2m]   = 1/4 x[m-1] + 3/4 x[m]      y[0]    = 1/4 x[n-1] + 3/4 x[0]
//   y[2m+1] = 3/4 x[m] + 1/4 x[m+1]      y[2n-1] = 3/4 x[n-1] + 1/4 x[0]
//
// and the adjoint is the interior gather with output indices mod 2n for
// every m (n = 1 included).
//
// The d-dimensional interpolation is the tensor product of these. Both
// kernels are gathers with one thread per point they write (grid-stride,
// cuda.Elementwise), so the backward needs no atomics. They evaluate the
// tensor product in the order the CPU backend applies its axis passes
// (forward: last axis first; backward: first axis first), every product
// and sum rounded separately (__fmul_rn / __fadd_rn, never contracted to
// an FMA), so they reproduce the CPU's float32 rounding.
//
// Spatial axes are padded in front to three; a padded axis has one point,
// is not doubled, and has the single tap (0, weight 1).

// UpTaps is the list of (index, weight) pairs one point reads along one
// axis, in the order the CPU sums them.
struct UpTaps {
    int n;
    int i[4];
    float w[4];
};

// up_fwd_taps: the input points read by output j of an axis of n points.
__device__ __forceinline__ UpTaps up_fwd_taps(int j, int n, bool real, bool periodic) {
    UpTaps t;
    if (real && periodic) {
        const int m = j / 2;
        t.n = 2;
        if (j % 2 == 0) { // s = m - 1/4, i0 = m-1 wrapped
            t.i[0] = (m + n - 1) % n, t.w[0] = 0.25f;
            t.i[1] = m, t.w[1] = 0.75f;
        } else {          // s = m + 1/4, i1 = m+1 wrapped
            t.i[0] = m, t.w[0] = 0.75f;
            t.i[1] = (m + 1) % n, t.w[1] = 0.25f;
        }
        return t;
    }
    if (!real || j == 0) {
        t.n = 1, t.i[0] = 0, t.w[0] = 1.0f;
        return t;
    }
    const int m = j / 2;
    t.n = 2;
    if (j % 2 == 0) { // j = 2m >= 2: s = m - 1/4
        t.i[0] = m - 1, t.w[0] = 0.25f;
        t.i[1] = m, t.w[1] = 0.75f;
    } else {          // j = 2m+1: s = m + 1/4, i1 clamped at n-1
        t.i[0] = m, t.w[0] = 0.75f;
        t.i[1] = min(m + 1, n - 1), t.w[1] = 0.25f;
    }
    return t;
}

// up_bwd_taps: the output points (of 2n) that read input m, with weights.
__device__ __forceinline__ UpTaps up_bwd_taps(int m, int n, bool real, bool periodic) {
    UpTaps t;
    if (real && periodic) {
        t.n = 4;
        t.i[0] = (2 * m - 1 + 2 * n) % (2 * n), t.w[0] = 0.25f;
        t.i[1] = 2 * m, t.w[1] = 0.75f;
        t.i[2] = 2 * m + 1, t.w[2] = 0.75f;
        t.i[3] = (2 * m + 2) % (2 * n), t.w[3] = 0.25f;
        return t;
    }
    if (!real) {
        t.n = 1, t.i[0] = 0, t.w[0] = 1.0f;
    } else if (n == 1) {
        t.n = 2, t.i[0] = 0, t.w[0] = 1.0f, t.i[1] = 1, t.w[1] = 1.0f;
    } else if (m == 0) {
        t.n = 3;
        t.i[0] = 0, t.w[0] = 1.0f;
        t.i[1] = 1, t.w[1] = 0.75f;
        t.i[2] = 2, t.w[2] = 0.25f;
    } else if (m == n - 1) {
        t.n = 3;
        t.i[0] = 2 * n - 3, t.w[0] = 0.25f;
        t.i[1] = 2 * n - 2, t.w[1] = 0.75f;
        t.i[2] = 2 * n - 1, t.w[2] = 1.0f;
    } else {
        t.n = 4;
        t.i[0] = 2 * m - 1, t.w[0] = 0.25f;
        t.i[1] = 2 * m, t.w[1] = 0.75f;
        t.i[2] = 2 * m + 1, t.w[2] = 0.75f;
        t.i[3] = 2 * m + 2, t.w[3] = 0.25f;
    }
    return t;
}

// up_dot is sum_u w[u] v[u] over a tap list, left to right, each product
// and sum rounded on its own.
#define UP_ACC(sum, u, w, v) ((u) == 0 ? __fmul_rn((w), (v)) : __fadd_rn((sum), __fmul_rn((w), (v))))

// up_forward: y[p, j0, j1, j2] = sum over the taps of the three axes, the
// last axis innermost. x is [planes, n0, n1, n2] (padded axes 1), y is
// [planes, m0, m1, m2] with m = 2n on real axes. d is the number of real
// (trailing) axes; periodic wraps instead of clamping. The entry points
// are up_forward (clamped) and up_forward_periodic: separate kernels with
// the clamped one's signature unchanged, so PTX compiled before the
// periodic rule existed still serves the default.
__device__ __forceinline__ void up_forward_impl(float *y, const float *x, int planes, int d, int n0, int n1, int n2, bool p) {
    const bool r0 = d >= 3, r1 = d >= 2;
    const int m0 = r0 ? 2 * n0 : 1, m1 = r1 ? 2 * n1 : 1, m2 = 2 * n2;
    const int sin = n0 * n1 * n2, sout = m0 * m1 * m2;
    const int total = planes * sout;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pl = e / sout;
        int q = e - pl * sout;
        const int j2 = q % m2;
        q /= m2;
        const int j1 = q % m1, j0 = q / m1;
        const UpTaps a0 = up_fwd_taps(j0, n0, r0, p), a1 = up_fwd_taps(j1, n1, r1, p), a2 = up_fwd_taps(j2, n2, true, p);
        const float *xp = x + (size_t)pl * sin;
        float s0 = 0.0f;
#pragma unroll
        for (int u0 = 0; u0 < 2; u0++) {
            if (u0 >= a0.n) break;
            float s1 = 0.0f;
#pragma unroll
            for (int u1 = 0; u1 < 2; u1++) {
                if (u1 >= a1.n) break;
                const float *row = xp + (a0.i[u0] * n1 + a1.i[u1]) * n2;
                float s2 = 0.0f;
#pragma unroll
                for (int u2 = 0; u2 < 2; u2++) {
                    if (u2 >= a2.n) break;
                    s2 = UP_ACC(s2, u2, a2.w[u2], row[a2.i[u2]]);
                }
                s1 = UP_ACC(s1, u1, a1.w[u1], s2);
            }
            s0 = UP_ACC(s0, u0, a0.w[u0], s1);
        }
        y[e] = s0;
    }
}

// up_backward: dx[p, i0, i1, i2] += sum over the adjoint taps, the first
// axis innermost (the CPU's pass order). dy is [planes, m0, m1, m2].
// Entry points up_backward and up_backward_periodic, as for the forward.
__device__ __forceinline__ void up_backward_impl(float *dx, const float *dy, int planes, int d, int n0, int n1, int n2, bool p) {
    const bool r0 = d >= 3, r1 = d >= 2;
    const int m0 = r0 ? 2 * n0 : 1, m1 = r1 ? 2 * n1 : 1, m2 = 2 * n2;
    const int sin = n0 * n1 * n2, sout = m0 * m1 * m2;
    const int total = planes * sin;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int pl = e / sin;
        int q = e - pl * sin;
        const int i2 = q % n2;
        q /= n2;
        const int i1 = q % n1, i0 = q / n1;
        const UpTaps a0 = up_bwd_taps(i0, n0, r0, p), a1 = up_bwd_taps(i1, n1, r1, p), a2 = up_bwd_taps(i2, n2, true, p);
        const float *yp = dy + (size_t)pl * sout;
        float s2 = 0.0f;
#pragma unroll
        for (int u2 = 0; u2 < 4; u2++) {
            if (u2 >= a2.n) break;
            float s1 = 0.0f;
#pragma unroll
            for (int u1 = 0; u1 < 4; u1++) {
                if (u1 >= a1.n) break;
                float s0 = 0.0f;
#pragma unroll
                for (int u0 = 0; u0 < 4; u0++) {
                    if (u0 >= a0.n) break;
                    s0 = UP_ACC(s0, u0, a0.w[u0], yp[(a0.i[u0] * m1 + a1.i[u1]) * m2 + a2.i[u2]]);
                }
                s1 = UP_ACC(s1, u1, a1.w[u1], s0);
            }
            s2 = UP_ACC(s2, u2, a2.w[u2], s1);
        }
        dx[e] = __fadd_rn(dx[e], s2);
    }
}

extern "C" __global__ void up_forward(float *y, const float *x, int planes, int d, int n0, int n1, int n2) {
    up_forward_impl(y, x, planes, d, n0, n1, n2, false);
}

extern "C" __global__ void up_forward_periodic(float *y, const float *x, int planes, int d, int n0, int n1, int n2) {
    up_forward_impl(y, x, planes, d, n0, n1, n2, true);
}

extern "C" __global__ void up_backward(float *dx, const float *dy, int planes, int d, int n0, int n1, int n2) {
    up_backward_impl(dx, dy, planes, d, n0, n1, n2, false);
}

extern "C" __global__ void up_backward_periodic(float *dx, const float *dy, int planes, int d, int n0, int n1, int n2) {
    up_backward_impl(dx, dy, planes, d, n0, n1, n2, true);
}
