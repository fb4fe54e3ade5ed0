//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// diffArgs returns the [outer, n, inner] view of x along spatial axis
// `axis` and the coefficients c = 1/(2h) and invH = 1/h, computed in
// float64 and rounded to float32 exactly as the CPU backend does.
func diffArgs(x *tensor.Tensor, axis int, h float32) (outer, n, inner int, c, invH float32) {
	outer, n, inner = tensor.AxisLayout(x.Spatial(), axis)
	return x.Batch() * x.Channels() * outer, n, inner, float32(1 / (2 * float64(h))), float32(1 / float64(h))
}

// boolArg passes a bool as a kernel int (1 or 0).
func boolArg(v bool) int {
	if v {
		return 1
	}
	return 0
}

// Diff implements tensor.Backend: the first derivative along a spatial
// axis, periodic central differences or central inside and one-sided at
// the two ends (kernels/small.cu diff_forward, one thread per value).
func (b *Backend) Diff(y, x *tensor.Tensor, axis int, h float32, periodic bool) {
	outer, n, inner, c, invH := diffArgs(x, axis, h)
	if total := outer * n * inner; total > 0 {
		b.launch("diff_forward", Elementwise(total), buf(y), buf(x), outer, n, inner, c, invH, boolArg(periodic))
	}
}

// DiffBackward implements tensor.Backend: dx += D^T dy, a gather of the
// (at most three) dy values that row j of D^T combines (diff_backward).
func (b *Backend) DiffBackward(dx, dy *tensor.Tensor, axis int, h float32, periodic bool) {
	outer, n, inner, c, invH := diffArgs(dx, axis, h)
	if total := outer * n * inner; total > 0 {
		b.launch("diff_backward", Elementwise(total), buf(dx), buf(dy), outer, n, inner, c, invH, boolArg(periodic))
	}
}
