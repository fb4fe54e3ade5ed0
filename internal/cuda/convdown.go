//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// convArgs are the shape parameters of the cd_* kernels: the number of
// spatial axes and the input axes padded in front to three.
func convArgs(x *tensor.Tensor) (d, n0, n1, n2 int) {
	n0, n1, n2 = padSpatial(x.Spatial())
	return x.Dims(), n0, n1, n2
}

// ConvDown implements tensor.Backend: the encoder's kernel-3, stride-2
// convolution with circular padding 1 (Sec. 3.2),
// y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,(2j+t-1) mod N] + bias[o] per axis,
// as the product Y_b = W P_b with the im2col patch matrix P_b gathered
// on the fly into shared memory (kernels/dense.cu cd_forward). bias may be
// nil.
func (b *Backend) ConvDown(y, x, w, bias *tensor.Tensor) {
	nb, cin, cout, p := x.Batch(), x.Channels(), y.Channels(), y.SpatialSize()
	if y.Numel() == 0 {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	b.launch("cd_forward", Gemm(cout, p, nb), buf(y), buf(x), buf(w), buf(bias), nb, cin, cout, d, n0, n1, n2, b.autocast)
}

// ConvDownBackward implements tensor.Backend:
// dx += P^T-scatter of W^T dy, computed as a gather per parity class of
// the input points (cd_backward_dx: each input point sums the taps that
// read it, no atomics); dw += sum_b dy_b P_b^T, one product over the
// batch and output points folded into K, split deterministically like
// Pointwise's; dbias += sum_{b,j} dy. A nil gradient is skipped.
func (b *Backend) ConvDownBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	nb, cin, cout, p := x.Batch(), x.Channels(), dy.Channels(), dy.SpatialSize()
	if dy.Numel() == 0 {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	if dx != nil {
		b.launch("cd_backward_dx", Gemm(cin, p, nb<<d), buf(dx), buf(dy), buf(w), nb, cin, cout, d, n0, n1, n2, b.autocast)
	}
	if dw != nil {
		taps := w.Numel() / (cout * cin)
		b.weightGrad("cd", buf(dw), cout, cin*taps, nb*p, func(g Geometry, out *Buf, chunk, splits, acc int) {
			b.launch("cd_backward_dw", g, out, buf(dy), buf(x), nb, cin, cout, d, n0, n1, n2, chunk, splits, acc, b.autocast)
		})
	}
	if dbias != nil {
		b.biasGrad(dbias, dy)
	}
}
