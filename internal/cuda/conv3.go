//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// Conv3 implements tensor.Backend: the kernel-3, stride-1 circular
// convolution, y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,j+t-1] + bias[o], as the
// product Y_b = W P_b with the patch matrix P_b gathered on the fly into
// shared memory (kernels/conv3.cu c3_forward). bias may be nil.
func (b *Backend) Conv3(y, x, w, bias *tensor.Tensor) {
	if y.Numel() == 0 {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	b.launch("c3_forward", Gemm(y.Channels(), y.SpatialSize(), x.Batch()), buf(y), buf(x), buf(w), buf(bias),
		x.Batch(), x.Channels(), y.Channels(), d, n0, n1, n2, b.autocast)
}

// Conv3Backward implements tensor.Backend: dx += the gather of the taps
// that read each input point, one product per sample (c3_backward_dx, no
// atomics); dw += sum_b dy_b P_b^T, one product over the batch and grid
// folded into K, split deterministically like Pointwise's
// (c3_backward_dw, dense_splitk_reduce); dbias += sum_{b,j} dy
// (dense_bias_backward). A nil gradient is skipped.
func (b *Backend) Conv3Backward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	if dy.Numel() == 0 {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	nb, cin, cout, s := x.Batch(), x.Channels(), dy.Channels(), dy.SpatialSize()
	if dx != nil {
		b.launch("c3_backward_dx", Gemm(cin, s, nb), buf(dx), buf(dy), buf(w), nb, cin, cout, d, n0, n1, n2, b.autocast)
	}
	if dw != nil {
		taps := w.Numel() / (cout * cin)
		b.weightGrad("c3", buf(dw), cout, cin*taps, nb*s, func(g Geometry, out *Buf, chunk, splits, acc int) {
			b.launch("c3_backward_dw", g, out, buf(dy), buf(x), nb, cin, cout, d, n0, n1, n2, chunk, splits, acc, b.autocast)
		})
	}
	if dbias != nil {
		b.biasGrad(dbias, dy)
	}
}

// ReLU implements tensor.Backend: y = max(x, 0).
func (b *Backend) ReLU(y, x *tensor.Tensor) { b.ew("relu_forward", y.Numel(), buf(y), buf(x)) }

// ReLUBackward implements tensor.Backend: dx += dy where x > 0.
func (b *Backend) ReLUBackward(dx, dy, x *tensor.Tensor) {
	b.ew("relu_backward", dx.Numel(), buf(dx), buf(dy), buf(x))
}
