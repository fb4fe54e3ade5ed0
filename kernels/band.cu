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
//                the axes after; one thread per output value, the sum in
//                increasing m with __fmul_rn / __fadd_rn, the order and
//                rounding of the CPU backend (bit-identical given the same
//                matrix).

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

// br_axis: cuda.Elementwise geometry over lines * rows * post values;
// a is [rows, nin].
__global__ void br_axis(float *dst, const float *src, const float *a, int lines, int nin, int rows, int post,
                        int accumulate) {
    const int total = lines * rows * post;
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < total; e += gridDim.x * blockDim.x) {
        const int p = e % post, j = (e / post) % rows, l = e / (post * rows);
        const float *s = src + (size_t)l * nin * post + p;
        const float *row = a + (size_t)j * nin;
        float acc = 0.0f;
        for (int m = 0; m < nin; m++) acc = __fadd_rn(acc, __fmul_rn(row[m], s[(size_t)m * post]));
        dst[e] = accumulate ? __fadd_rn(dst[e], acc) : acc;
    }
}

}  // extern "C"
