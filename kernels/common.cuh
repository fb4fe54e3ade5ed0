// common.cuh: the device helpers several kernel files share, written once.
// Each .cu file is a PTX module of its own (and, in the emulator, a C++
// namespace of its own), so each file that includes this header gets its
// own inlined copy; this file is their one source. Included by dense.cu,
// conv3.cu, depthwise.cu and gaussian.cu. Helpers only: no kernels, no
// __shared__ state, no includes.
#pragma once

// ---------------------------------------------------------------------
// bf16 autocast (internal/cuda's package documentation, "bf16 autocast")

// bf16_round rounds v to bfloat16 (8-bit significand, round to nearest,
// ties to even) and returns it as a float. It is written with integer
// operations only, so the emulator runs exactly this code (no
// cuda_bf16.h). NaN stays NaN (quiet bit set, so a payload in the low 16
// bits does not turn it into Inf), Inf stays Inf, a finite value that
// rounds beyond the largest bf16 becomes Inf (as __float2bfloat16_rn
// does), and subnormals round on the same bits (no flush to zero).
__device__ __forceinline__ float bf16_round(float v) {
    unsigned u = __float_as_uint(v);
    if ((u & 0x7f800000u) == 0x7f800000u) { // Inf or NaN
        if (u & 0x007fffffu) u |= 0x00400000u;
        return __uint_as_float(u & 0xffff0000u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return __uint_as_float(u & 0xffff0000u);
}

// bf16_if rounds v to bf16 when on is non-zero (a kernel's bf16 argument).
__device__ __forceinline__ float bf16_if(float v, int on) { return on ? bf16_round(v) : v; }

// ---------------------------------------------------------------------
// Periodic indices

// wrap_once is i mod n for i in [-n, 2n): one tap off either end.
__device__ __forceinline__ int wrap_once(int i, int n) {
    return i < 0 ? i + n : (i >= n ? i - n : i);
}

// wrap_mod is i mod n in [0, n) for any i.
__device__ __forceinline__ int wrap_mod(int i, int n) {
    i %= n;
    return i < 0 ? i + n : i;
}

// ---------------------------------------------------------------------
// Kernel-3 stencils on 1-3 axes padded in front to three (conv3.cu,
// depthwise.cu): a padded axis has one point and one tap, offset 0.

// Tap3Shape is the padded geometry of one call.
struct Tap3Shape {
    int n[3]; // points per axis (1 on padded axes)
    int T[3]; // taps per axis: 3, or 1 on padded axes
    int s;    // points per plane
    int taps; // 3^d
};

// tap3_shape is the geometry of d spatial axes of n0, n1, n2 points (the
// first 3 - d of them 1).
__device__ __forceinline__ Tap3Shape tap3_shape(int d, int n0, int n1, int n2) {
    Tap3Shape g;
    g.n[0] = n0, g.n[1] = n1, g.n[2] = n2;
#pragma unroll
    for (int a = 0; a < 3; a++) g.T[a] = a >= 3 - d ? 3 : 1;
    g.s = n0 * n1 * n2;
    g.taps = g.T[0] * g.T[1] * g.T[2];
    return g;
}

// tap3_point splits a plane index p into its per-axis indices.
__device__ __forceinline__ void tap3_point(const Tap3Shape &g, int p, int q[3]) {
    q[2] = p % g.n[2];
    q[1] = (p / g.n[2]) % g.n[1];
    q[0] = p / (g.n[2] * g.n[1]);
}

// tap3_offset is the plane offset of point q shifted by sign * o(t) for
// tap (t0, t1, t2), o = t - 1 on every unpadded axis, wrapped.
__device__ __forceinline__ int tap3_offset(const Tap3Shape &g, const int q[3], int t0, int t1, int t2, int sign) {
    const int o0 = g.T[0] == 3 ? sign * (t0 - 1) : 0;
    const int o1 = g.T[1] == 3 ? sign * (t1 - 1) : 0;
    const int o2 = g.T[2] == 3 ? sign * (t2 - 1) : 0;
    return (wrap_once(q[0] + o0, g.n[0]) * g.n[1] + wrap_once(q[1] + o1, g.n[1])) * g.n[2] + wrap_once(q[2] + o2, g.n[2]);
}
