// Spectral convolution of the Fourier branch (Sec. 3.2, App. C.4;
// tensor.Backend.SpectralConv), the one spectral convolution of every
// FNO-type layer:
//
//     y = irfftn(R . rfftn(x)),
//
// with K = min(K0, floor(N/2)) modes (Eq. mode-cap) kept as [0:K] and
// [N-K:N] on every axis but the last, so 2^(d-1) weight corners, and on
// the last (rfft) axis the frequencies of a list: slot j of the weight's
// last mode axis multiplies frequency modes[j] (0..K-1 for FNO and U-HNO,
// tensor.LogModes for LogLo-FNO). The transforms are cuFFT's (R2C of x,
// C2R of the mixed spectrum, internal/cuda/spectral.go); the kernels here
// are the mode mixing between them and its adjoints.
//
// The list reaches the kernels as a table uploaded once per (half, list)
// (internal/cuda/spectral.go, modesTable), int32: tab[f] for 0 <= f < half
// is the slot of frequency f, or -1 when f is not kept, and tab[half + j]
// for j < kl is the frequency of slot j (the weight gradient runs over
// slots). For 0..K-1 the slot of f is f, so the arithmetic is the same as
// with a test f < K.
//
// Layout. The spatial axes are front-padded to three (cuda.SpectralDims):
// a half spectrum (cuFFT's packed R2C output) is [n0][n1][half] complex,
// half = N_last/2 + 1; an absent leading axis has n = k = 1. A field's
// spectra follow each other: [batch][channel][n0][n1][half]. The weight is
// [corner][Cin][Cout][K0]...[K0][2] (d mode axes of the nominal K0, real
// and imaginary last), read at the capped indices j < K only. Along a full
// axis an index f < K is the positive block (j = f), f >= n-K the negative
// one (j = f-(n-K)); slot 0 of the padded layout sets corner bit 1 and
// slot 1 bit 0, the CPU backend's bit d-2-a of full axis a.
//
// Normalisation and the Hermitian weighting. numpy's irfftn (the contract)
// is y = 1/prod(N) sum_k c_k Re(Z_k exp(+i theta)), c_k = 1 on the
// last-axis DC (and Nyquist) bins and 2 elsewhere: irfft drops the
// imaginary part of the DC bin. cuFFT's C2R computes the inverse of the
// Hermitian extension of its input, which supplies the factor 2 for
// 0 < k < N/2 by itself but is only defined for input whose DC plane is
// Hermitian (Z[-k, 0] = conj Z[k, 0]). The mixing kernels therefore write,
// on the DC plane, the Hermitian part (Z[k] + conj Z[-k]) / 2, whose
// inverse over the plane is exactly Re sum Z exp(+i theta); the Nyquist
// plane of the last axis is never kept (every listed f has 2f < N) and
// stays zero; when 0 is not listed the DC plane is zero. The 1/prod(N)
// factor is folded into the mixing ("scale").
//
// Backward (the CPU backend's derivation, internal/cpu/spectral.go): with
// G = rfftn(dy) restricted to the kept modes, dx += irfftn-as-above of
// sum_o G[o] conj(W[i,o]) (spectral_mix_adjoint, then C2R and
// spectral_accumulate), and dW += D sum_b conj(X[b,i]) G[b,o] with
// X = rfftn(x) and D = c_k / prod(N) (spectral_dw: one thread per weight
// entry, the batch summed in order inside it: deterministic, no atomics).
//
// F-FNO's LowRankSpectralConv (tensor.Backend.LowRankSpectralConv, on the
// list 0..K-1) uses these kernels with a rank-R intermediate spectrum, and
// adds the plain first stage and its adjoint (lowrank_mix_forward and
// lowrank_mix_adjoint, unscaled and not symmetrised):
//     Zr[b,j] = sum_i X[b,i] U[i,j]              (lowrank_mix_forward)
//     Z[b,o]  = scale sum_j Zr[b,j] V[j,o]        (spectral_mix_forward)
// and back, with G = rfftn(dy):
//     dZr[b,j] = sum_o G[b,o] conj V[j,o]         (lowrank_mix_adjoint)
//     dV += D sum_b conj Zr[b,j] G[b,o]           (spectral_dw)
//     dU += D sum_b conj X[b,i] dZr[b,j]          (spectral_dw)
//     dx += C2R(scale sum_j dZr[b,j] conj U[i,j]) (spectral_mix_adjoint)
// The Hermitian DC-plane part is taken once, by spectral_mix_forward or
// spectral_mix_adjoint on the spectrum C2R transforms; since everything is
// linear per mode and those kernels evaluate the mixing at k and at -k
// from the intermediate spectrum at k and -k, that is the Hermitian part
// of the full product.

extern "C" {

// spec_weight_offset returns the complex offset, inside one K0^d weight
// block, of the mode kept at full-axis positions (f0, f1) and last-axis
// slot j2, and its corner in *corner; -1 when the position is not kept
// (j2 < 0: the last-axis frequency is not listed).
__device__ __forceinline__ int spec_weight_offset(int f0, int f1, int j2, int n0, int n1,
                                                  int k0e, int k1e, int knom, int *corner) {
    if (j2 < 0) return -1;
    int c = 0, j0, j1;
    if (f0 < k0e) {
        j0 = f0;
    } else if (f0 >= n0 - k0e) {
        j0 = f0 - (n0 - k0e);
        c |= 2;
    } else {
        return -1;
    }
    if (f1 < k1e) {
        j1 = f1;
    } else if (f1 >= n1 - k1e) {
        j1 = f1 - (n1 - k1e);
        c |= 1;
    } else {
        return -1;
    }
    *corner = c;
    return (j0 * knom + j1) * knom + j2;
}

// spec_mix_at is the channel mixing at half-spectrum position (f0, f1,
// f2), last-axis slot j2 (-1: not kept), for sample b and output channel
// `out` of a layer with cin inputs and cout outputs:
//   forward (adjoint = 0): sum_i in[b, i] W[corner, i, out]        (Cin terms)
//   adjoint (adjoint = 1): sum_o in[b, o] conj W[corner, out, o]   (Cout terms)
// in is [batch][terms][spec]; zero where the position is not kept. The
// products are accumulated in float in the order of the summed channel,
// as the CPU backend's rowmix does.
__device__ float2 spec_mix_at(const float2 *in, const float *w, int b, int out, int f0, int f1, int f2, int j2,
                              int cin, int cout, int n0, int n1, int half, int k0e, int k1e, int knom, int kvol,
                              int adjoint) {
    int corner;
    int off = spec_weight_offset(f0, f1, j2, n0, n1, k0e, k1e, knom, &corner);
    if (off < 0) return make_float2(0.f, 0.f);
    size_t spec = (size_t)n0 * n1 * half;
    size_t pos = ((size_t)f0 * n1 + f1) * half + f2;
    int terms = adjoint ? cout : cin;
    const float2 *ip = in + (size_t)b * terms * spec + pos;
    // Weight element (corner, i, o) is at ((corner*cin + i)*cout + o)*kvol + off.
    size_t wstride, wbase;
    if (adjoint) {  // out = i, summing over o
        wbase = (((size_t)corner * cin + out) * cout) * kvol + off;
        wstride = kvol;
    } else {  // out = o, summing over i
        wbase = ((size_t)corner * cin * cout + out) * kvol + off;
        wstride = (size_t)cout * kvol;
    }
    float sgn = adjoint ? -1.f : 1.f;  // conjugate W in the adjoint
    float re = 0.f, im = 0.f;
    for (int t = 0; t < terms; t++) {
        float2 a = ip[(size_t)t * spec];
        size_t wi = 2 * (wbase + (size_t)t * wstride);
        float wr = w[wi], wim = sgn * w[wi + 1];
        re += a.x * wr - a.y * wim;
        im += a.x * wim + a.y * wr;
    }
    return make_float2(re, im);
}

// spec_mix_plane writes one output spectrum: out[t] for t < total =
// batch * chans * spec, chans the output channels (Cout forward, Cin
// adjoint): the mixing at every kept mode (last-axis slot tab[f2]), 0
// elsewhere, scaled by `scale` (1/prod(N)) and, when hermitian is set,
// made Hermitian on the last-axis DC plane (see the file comment). The
// low-rank first stage passes scale 1 and hermitian 0 (a plain mixing).
// Grid-stride loop (cuda.Elementwise).
__device__ void spec_mix_plane(float2 *out, const float2 *in, const float *w, const int *tab, int cin, int cout,
                               int n0, int n1, int half, int k0e, int k1e, int knom, int kvol, float scale,
                               int total, int adjoint, int hermitian) {
    int chans = adjoint ? cin : cout;
    int spec = n0 * n1 * half;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        int pos = t % spec, bc = t / spec;
        int c = bc % chans, b = bc / chans;
        int f2 = pos % half, f1 = (pos / half) % n1, f0 = pos / (half * n1);
        int j2 = tab[f2];
        float2 z = spec_mix_at(in, w, b, c, f0, f1, f2, j2, cin, cout, n0, n1, half, k0e, k1e, knom, kvol, adjoint);
        if (hermitian && f2 == 0) {
            // DC plane: (Z[k] + conj Z[-k]) / 2, so that C2R's inverse of
            // the plane is Re sum Z exp(+i theta), numpy's irfft (j2 is
            // frequency 0's slot, or -1 and the plane is zero).
            float2 m = spec_mix_at(in, w, b, c, (n0 - f0) % n0, (n1 - f1) % n1, 0, j2, cin, cout, n0, n1, half,
                                   k0e, k1e, knom, kvol, adjoint);
            z.x = 0.5f * (z.x + m.x);
            z.y = 0.5f * (z.y - m.y);
        }
        out[t] = make_float2(scale * z.x, scale * z.y);
    }
}

// spectral_mix_forward: Z[b, o] = scale * sum_i X[b, i] W[corner, i, o] at
// every kept mode (last-axis slot tab[f2]), 0 elsewhere (the output
// spectrum is written whole, so it needs no zeroing); X = rfftn(x)
// [batch][cin][spec], Z [batch][cout][spec].
__global__ void spectral_mix_forward(float2 *z, const float2 *x, const float *w, const int *tab, int cin, int cout,
                                     int n0, int n1, int half, int k0e, int k1e, int knom, int kvol, float scale,
                                     int total) {
    spec_mix_plane(z, x, w, tab, cin, cout, n0, n1, half, k0e, k1e, knom, kvol, scale, total, 0, 1);
}

// spectral_mix_adjoint: Z[b, i] = scale * sum_o G[b, o] conj W[corner, i, o]
// (the adjoint of the mixing, Mix^H); G = rfftn(dy) [batch][cout][spec],
// Z [batch][cin][spec].
__global__ void spectral_mix_adjoint(float2 *z, const float2 *g, const float *w, const int *tab, int cin, int cout,
                                     int n0, int n1, int half, int k0e, int k1e, int knom, int kvol, float scale,
                                     int total) {
    spec_mix_plane(z, g, w, tab, cin, cout, n0, n1, half, k0e, k1e, knom, kvol, scale, total, 1, 1);
}

// spectral_dw: dW[corner, i, o, j] += D_j sum_b conj X[b, i, f] G[b, o, f]
// for every kept mode j (f its half-spectrum position, last-axis
// frequency tab[half + j2]), D_j = scaleDC = 1/prod(N) on the last-axis DC
// (and Nyquist, never listed) bins and scale2 = 2/prod(N) elsewhere (the
// CPU backend's p.scale). One thread per weight entry of the kept box,
// total = corners * cin * cout * k0e * k1e * kl; the batch is summed in
// order inside the thread (deterministic). Entries of the weight beyond
// the kept modes get nothing, as on the CPU.
__global__ void spectral_dw(float *dw, const float2 *x, const float2 *g, const int *tab, int batch, int cin, int cout,
                            int n0, int n1, int n2, int half, int k0e, int k1e, int kl, int knom, int kvol,
                            float scaleDC, float scale2, int total) {
    size_t spec = (size_t)n0 * n1 * half;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        int r = t;
        int j2 = r % kl; r /= kl;
        int j1 = r % k1e; r /= k1e;
        int j0 = r % k0e; r /= k0e;
        int o = r % cout; r /= cout;
        int i = r % cin;
        int corner = r / cin;
        int f0 = (corner & 2) ? n0 - k0e + j0 : j0;
        int f1 = (corner & 1) ? n1 - k1e + j1 : j1;
        int f2 = tab[half + j2];
        size_t pos = ((size_t)f0 * n1 + f1) * half + f2;
        const float2 *xp = x + (size_t)i * spec + pos;
        const float2 *gp = g + (size_t)o * spec + pos;
        float re = 0.f, im = 0.f;
        for (int b = 0; b < batch; b++) {
            float2 a = xp[(size_t)b * cin * spec];
            float2 c = gp[(size_t)b * cout * spec];
            float ar = a.x, ai = -a.y;  // conj X
            re += ar * c.x - ai * c.y;
            im += ar * c.y + ai * c.x;
        }
        float s = (f2 == 0 || 2 * f2 == n2) ? scaleDC : scale2;
        size_t wi = 2 * ((((size_t)corner * cin + i) * cout + o) * kvol + (j0 * knom + j1) * knom + j2);
        dw[wi] += s * re;
        dw[wi + 1] += s * im;
    }
}

// spectral_accumulate: dx += t over n values (the C2R output of the
// adjoint, already scaled; cuFFT cannot accumulate). Grid-stride.
__global__ void spectral_accumulate(float *dx, const float *t, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dx[i] += t[i];
}

// lowrank_mix_forward: the first stage Zr[b, j] = sum_i X[b, i] U[corner, i, j]
// (u [corner][cin][rank][K0...]), no scale, no symmetrisation. X
// [batch][cin][spec], Zr [batch][rank][spec].
__global__ void lowrank_mix_forward(float2 *zr, const float2 *x, const float *u, const int *tab, int cin, int rank,
                                    int n0, int n1, int half, int k0e, int k1e, int knom, int kvol, int total) {
    spec_mix_plane(zr, x, u, tab, cin, rank, n0, n1, half, k0e, k1e, knom, kvol, 1.f, total, 0, 0);
}

// lowrank_mix_adjoint: dZr[b, j] = sum_o G[b, o] conj V[corner, j, o]
// (v [corner][rank][cout][K0...]), no scale, no symmetrisation. G
// [batch][cout][spec], dZr [batch][rank][spec].
__global__ void lowrank_mix_adjoint(float2 *dzr, const float2 *g, const float *v, const int *tab, int rank, int cout,
                                    int n0, int n1, int half, int k0e, int k1e, int knom, int kvol, int total) {
    spec_mix_plane(dzr, g, v, tab, rank, cout, n0, n1, half, k0e, k1e, knom, kvol, 1.f, total, 1, 0);
}

}  // extern "C"
