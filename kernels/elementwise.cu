// Elementwise operations of tensor.Backend: arithmetic, GELU and sigmoid,
// forward and backward. Grid-stride loops (cuda.Elementwise geometry).
// Backward kernels ADD into their gradient (dx += ...), like every
// backward of the Backend interface.

#define GRID_STRIDE(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += gridDim.x * blockDim.x)

extern "C" {

__global__ void ew_add(float *y, const float *a, const float *b, int n) {
    GRID_STRIDE(i, n) y[i] = a[i] + b[i];
}

__global__ void ew_sub(float *y, const float *a, const float *b, int n) {
    GRID_STRIDE(i, n) y[i] = a[i] - b[i];
}

__global__ void ew_mul(float *y, const float *a, const float *b, int n) {
    GRID_STRIDE(i, n) y[i] = a[i] * b[i];
}

__global__ void ew_scale(float *y, const float *x, float s, int n) {
    GRID_STRIDE(i, n) y[i] = s * x[i];
}

// y += s x
__global__ void ew_add_scaled(float *y, const float *x, float s, int n) {
    GRID_STRIDE(i, n) y[i] += s * x[i];
}

// y += a b
__global__ void ew_mul_acc(float *y, const float *a, const float *b, int n) {
    GRID_STRIDE(i, n) y[i] += a[i] * b[i];
}

// GELU, the exact form x Phi(x) = x (1 + erf(x / sqrt 2)) / 2.
__global__ void ew_gelu(float *y, const float *x, int n) {
    GRID_STRIDE(i, n) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

// dx += dy (Phi(x) + x phi(x)), phi the standard normal density.
__global__ void ew_gelu_backward(float *dx, const float *dy, const float *x, int n) {
    GRID_STRIDE(i, n) {
        float v = x[i];
        float cdf = 0.5f * (1.0f + erff(v * 0.70710678118654752f));
        float pdf = 0.39894228040143268f * expf(-0.5f * v * v);
        dx[i] += dy[i] * (cdf + v * pdf);
    }
}

__global__ void ew_sigmoid(float *y, const float *x, int n) {
    GRID_STRIDE(i, n) y[i] = 1.0f / (1.0f + expf(-x[i]));
}

// dx += dy y (1 - y), with y = sigmoid(x) from the forward pass.
__global__ void ew_sigmoid_backward(float *dx, const float *dy, const float *y, int n) {
    GRID_STRIDE(i, n) dx[i] += dy[i] * y[i] * (1.0f - y[i]);
}

}  // extern "C"
