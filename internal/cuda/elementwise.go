//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// ew launches one elementwise kernel over n values (kernels/elementwise.cu).
func (b *Backend) ew(name string, n int, args ...arg) {
	if n == 0 {
		return
	}
	b.launch(name, Elementwise(n), append(args, n)...)
}

// Add implements tensor.Backend: y = a + c.
func (b *Backend) Add(y, a, c *tensor.Tensor) { b.ew("ew_add", y.Numel(), buf(y), buf(a), buf(c)) }

// Sub implements tensor.Backend: y = a - c.
func (b *Backend) Sub(y, a, c *tensor.Tensor) { b.ew("ew_sub", y.Numel(), buf(y), buf(a), buf(c)) }

// Mul implements tensor.Backend: y = a * c.
func (b *Backend) Mul(y, a, c *tensor.Tensor) { b.ew("ew_mul", y.Numel(), buf(y), buf(a), buf(c)) }

// Scale implements tensor.Backend: y = s x.
func (b *Backend) Scale(y, x *tensor.Tensor, s float32) {
	b.ew("ew_scale", y.Numel(), buf(y), buf(x), s)
}

// AddScaled implements tensor.Backend: y += s x.
func (b *Backend) AddScaled(y, x *tensor.Tensor, s float32) {
	b.ew("ew_add_scaled", y.Numel(), buf(y), buf(x), s)
}

// MulAcc implements tensor.Backend: y += a * c.
func (b *Backend) MulAcc(y, a, c *tensor.Tensor) {
	b.ew("ew_mul_acc", y.Numel(), buf(y), buf(a), buf(c))
}

// GELU implements tensor.Backend (exact form x Phi(x)).
func (b *Backend) GELU(y, x *tensor.Tensor) { b.ew("ew_gelu", y.Numel(), buf(y), buf(x)) }

// GELUBackward implements tensor.Backend: dx += dy (Phi(x) + x phi(x)).
func (b *Backend) GELUBackward(dx, dy, x *tensor.Tensor) {
	b.ew("ew_gelu_backward", dx.Numel(), buf(dx), buf(dy), buf(x))
}

// Sigmoid implements tensor.Backend.
func (b *Backend) Sigmoid(y, x *tensor.Tensor) { b.ew("ew_sigmoid", y.Numel(), buf(y), buf(x)) }

// SigmoidBackward implements tensor.Backend: dx += dy y (1 - y).
func (b *Backend) SigmoidBackward(dx, dy, y *tensor.Tensor) {
	b.ew("ew_sigmoid_backward", dx.Numel(), buf(dx), buf(dy), buf(y))
}
