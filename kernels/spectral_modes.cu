// The spectral convolutions of two baselines on SpectralConv's plumbing
// (kernels/spectral.cu, internal/cuda/spectral.go and spectral_modes.go):
//
//   - SpectralConvModes (LogLo-FNO; tensor.Backend.SpectralConvModes):
//     SpectralConv with an explicit increasing list of last-axis (rfft)
//     frequencies, slot j of the weight's last mode axis multiplying
//     frequency modes[j] instead of j. The full axes keep SpectralConv's
//     corners. The kernels read a table uploaded once per list:
//     tab[f] for 0 <= f < half is the slot of frequency f, or -1 when f is
//     not kept (in place of spectral.cu's f2 < k2e test), and
//     tab[half + j] for j < kl is the frequency of slot j (for the weight
//     gradient, which runs over slots). The irfftn factor D is 1/prod(N)
//     for frequency 0 and 2/prod(N) otherwise (the list never holds the
//     Nyquist bin); in the forward and the input gradient it comes from
//     C2R and the DC-plane Hermitian part, as in spectral.cu.
//
//   - LowRankSpectralConv (F-FNO; tensor.Backend.LowRankSpectralConv): the
//     weight at every kept mode (and corner) is the product U V of
//     U [corner][Cin][R][K0...] and V [corner][R][Cout][K0...]. The mixing
//     goes through an R-channel spectrum:
//         Zr[b,j] = sum_i X[b,i] U[i,j]              (lowrank_mix_forward)
//         Z[b,o]  = scale sum_j Zr[b,j] V[j,o]        (spectral_mix_forward)
//     and back, with G = rfftn(dy):
//         dZr[b,j] = sum_o G[b,o] conj V[j,o]         (lowrank_mix_adjoint)
//         dV += D sum_b conj Zr[b,j] G[b,o]           (spectral_dw)
//         dU += D sum_b conj X[b,i] dZr[b,j]          (spectral_dw)
//         dx += C2R(scale sum_j dZr[b,j] conj U[i,j]) (spectral_mix_adjoint)
//     The two kernels here are the plain (unscaled, not symmetrised) first
//     stage and its adjoint: their outputs are intermediate spectra that
//     spectral.cu's kernels read at the kept modes only. The Hermitian
//     DC-plane part is taken once, by spectral_mix_forward/adjoint on the
//     spectrum C2R transforms; since everything is linear per mode and
//     those kernels evaluate the mixing at k and at -k from the
//     intermediate spectrum at k and -k, that is the Hermitian part of the
//     full product, as SpectralConv's.
//
// Layout as in spectral.cu: half spectra [batch][channel][n0][n1][half]
// complex (axes front-padded to three), weights [corner][Cin][Cout][K0]...
// [2]. Every kernel is a grid-stride loop with one thread per output
// element; reductions (the channel sums, the batch sum of the weight
// gradient) run in a fixed order inside one thread: deterministic, no
// atomics.

extern "C" {

// sm_weight_offset returns the complex offset, inside one K0^d weight
// block, of the mode kept at full-axis positions (f0, f1) and last-axis
// slot j2, with its corner in *corner; -1 when j2 < 0 or a full-axis
// position is not kept (spectral.cu's spec_weight_offset with the slot
// given).
__device__ __forceinline__ int sm_weight_offset(int f0, int f1, int j2, int n0, int n1, int k0e, int k1e,
                                                int knom, int *corner) {
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

// sm_mix_at is the channel mixing at half-spectrum position (f0, f1, f2),
// last-axis slot j2 (-1: not kept), for sample b and output channel `out`
// of a layer with cin inputs and cout outputs (spectral.cu's spec_mix_at):
//   forward (adjoint = 0): sum_i in[b, i] W[corner, i, out]        (Cin terms)
//   adjoint (adjoint = 1): sum_o in[b, o] conj W[corner, out, o]   (Cout terms)
// accumulated in float in the order of the summed channel; zero where the
// position is not kept.
__device__ float2 sm_mix_at(const float2 *in, const float *w, int b, int out, int f0, int f1, int f2, int j2,
                            int cin, int cout, int n0, int n1, int half, int k0e, int k1e, int knom, int kvol,
                            int adjoint) {
    int corner;
    int off = sm_weight_offset(f0, f1, j2, n0, n1, k0e, k1e, knom, &corner);
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

// sm_modes_plane writes one output spectrum of SpectralConvModes' forward
// or adjoint mixing: out[t] for t < total = batch * chans * spec, chans
// the output channels (Cout forward, Cin adjoint), scaled by `scale` =
// 1/prod(N) and made Hermitian on the last-axis DC plane (spectral.cu's
// spec_mix_plane with the slot table tab).
__device__ void sm_modes_plane(float2 *out, const float2 *in, const float *w, const int *tab, int cin, int cout,
                               int n0, int n1, int half, int k0e, int k1e, int knom, int kvol, float scale,
                               int total, int adjoint) {
    int chans = adjoint ? cin : cout;
    int spec = n0 * n1 * half;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        int pos = t % spec, bc = t / spec;
        int c = bc % chans, b = bc / chans;
        int f2 = pos % half, f1 = (pos / half) % n1, f0 = pos / (half * n1);
        int j2 = tab[f2];
        float2 z = sm_mix_at(in, w, b, c, f0, f1, f2, j2, cin, cout, n0, n1, half, k0e, k1e, knom, kvol, adjoint);
        if (f2 == 0) {
            // DC plane (j2 is frequency 0's slot, or -1 when 0 is not
            // kept and the plane is zero): (Z[k] + conj Z[-k]) / 2.
            float2 m = sm_mix_at(in, w, b, c, (n0 - f0) % n0, (n1 - f1) % n1, 0, j2, cin, cout, n0, n1, half,
                                 k0e, k1e, knom, kvol, adjoint);
            z.x = 0.5f * (z.x + m.x);
            z.y = 0.5f * (z.y - m.y);
        }
        out[t] = make_float2(scale * z.x, scale * z.y);
    }
}

// spectral_modes_mix_forward: Z[b, o] = scale * sum_i X[b, i] W[corner, i, o]
// at every kept mode (last-axis slot tab[f2]), 0 elsewhere; the output
// spectrum is written whole. X [batch][cin][spec], Z [batch][cout][spec].
__global__ void spectral_modes_mix_forward(float2 *z, const float2 *x, const float *w, const int *tab, int cin,
                                           int cout, int n0, int n1, int half, int k0e, int k1e, int knom,
                                           int kvol, float scale, int total) {
    sm_modes_plane(z, x, w, tab, cin, cout, n0, n1, half, k0e, k1e, knom, kvol, scale, total, 0);
}

// spectral_modes_mix_adjoint: Z[b, i] = scale * sum_o G[b, o] conj W[corner, i, o];
// G [batch][cout][spec], Z [batch][cin][spec].
__global__ void spectral_modes_mix_adjoint(float2 *z, const float2 *g, const float *w, const int *tab, int cin,
                                           int cout, int n0, int n1, int half, int k0e, int k1e, int knom,
                                           int kvol, float scale, int total) {
    sm_modes_plane(z, g, w, tab, cin, cout, n0, n1, half, k0e, k1e, knom, kvol, scale, total, 1);
}

// spectral_modes_dw: dW[corner, i, o, j0, j1, j2] += D sum_b conj X[b, i, f] G[b, o, f]
// with f the half-spectrum position of the mode (last-axis frequency
// tab[half + j2]), D = scaleDC = 1/prod(N) at frequency 0 (or the Nyquist
// bin, which a list never holds) and scale2 = 2/prod(N) elsewhere. One
// thread per weight entry of the kept box, total = corners * cin * cout *
// k0e * k1e * kl; the batch is summed in order inside the thread
// (spectral.cu's spectral_dw). Weight entries of slots >= kl get nothing.
__global__ void spectral_modes_dw(float *dw, const float2 *x, const float2 *g, const int *tab, int batch, int cin,
                                  int cout, int n0, int n1, int n2, int half, int k0e, int k1e, int kl, int knom,
                                  int kvol, float scaleDC, float scale2, int total) {
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

// sm_plain_plane writes the whole plain mixing out[t], t < total = batch *
// chans * spec, on SpectralConv's uniform modes (last-axis f2 < k2e):
// the mixing at every kept mode, unscaled and not symmetrised, 0 elsewhere.
__device__ void sm_plain_plane(float2 *out, const float2 *in, const float *w, int cin, int cout, int n0, int n1,
                               int half, int k0e, int k1e, int k2e, int knom, int kvol, int total, int adjoint) {
    int chans = adjoint ? cin : cout;
    int spec = n0 * n1 * half;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        int pos = t % spec, bc = t / spec;
        int c = bc % chans, b = bc / chans;
        int f2 = pos % half, f1 = (pos / half) % n1, f0 = pos / (half * n1);
        int j2 = f2 < k2e ? f2 : -1;
        out[t] = sm_mix_at(in, w, b, c, f0, f1, f2, j2, cin, cout, n0, n1, half, k0e, k1e, knom, kvol, adjoint);
    }
}

// lowrank_mix_forward: the first stage Zr[b, j] = sum_i X[b, i] U[corner, i, j]
// (u [corner][cin][rank][K0...]), no scale, no symmetrisation. X
// [batch][cin][spec], Zr [batch][rank][spec].
__global__ void lowrank_mix_forward(float2 *zr, const float2 *x, const float *u, int cin, int rank, int n0,
                                    int n1, int half, int k0e, int k1e, int k2e, int knom, int kvol, int total) {
    sm_plain_plane(zr, x, u, cin, rank, n0, n1, half, k0e, k1e, k2e, knom, kvol, total, 0);
}

// lowrank_mix_adjoint: dZr[b, j] = sum_o G[b, o] conj V[corner, j, o]
// (v [corner][rank][cout][K0...]), no scale, no symmetrisation. G
// [batch][cout][spec], dZr [batch][rank][spec].
__global__ void lowrank_mix_adjoint(float2 *dzr, const float2 *g, const float *v, int rank, int cout, int n0,
                                    int n1, int half, int k0e, int k1e, int k2e, int knom, int kvol, int total) {
    sm_plain_plane(dzr, g, v, rank, cout, n0, n1, half, k0e, k1e, k2e, knom, kvol, total, 1);
}

}  // extern "C"
