//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// Pointwise implements tensor.Backend: the 1x1 channel mixing of every
// layer, y[b,o,s] = sum_i w[o,i] x[b,i,s] + bias[o], as one tiled product
// Y_b = W X_b per sample (kernels/dense.cu pw_forward; the batch runs
// along grid z). bias may be nil.
func (b *Backend) Pointwise(y, x, w, bias *tensor.Tensor) {
	nb, cin, cout, s := x.Batch(), x.Channels(), y.Channels(), x.SpatialSize()
	if y.Numel() == 0 {
		return
	}
	b.launch("pw_forward", Gemm(cout, s, nb), buf(y), buf(x), buf(w), buf(bias), nb, cin, cout, s, b.autocast)
}

// PointwiseBackward implements tensor.Backend:
// dx_b += W^T dy_b, dw += sum_b dy_b x_b^T, dbias[o] += sum_{b,s} dy[b,o,s];
// a nil gradient is skipped. The weight gradient is one product over the
// batch and space folded into K, split into shape-determined chunks whose
// partials are added in order (deterministic, see SplitK).
func (b *Backend) PointwiseBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	nb, cin, cout, s := x.Batch(), x.Channels(), dy.Channels(), x.SpatialSize()
	if dy.Numel() == 0 {
		return
	}
	if dx != nil {
		b.launch("pw_backward_dx", Gemm(cin, s, nb), buf(dx), buf(dy), buf(w), nb, cin, cout, s, b.autocast)
	}
	if dw != nil && SmallChannels(cout, cin) {
		b.smallWeightGrad(buf(dw), dy, x)
	} else if dw != nil {
		b.weightGrad("pw", buf(dw), cout, cin, nb*s, func(g Geometry, out *Buf, chunk, splits, acc int) {
			b.launch("pw_backward_dw", g, out, buf(dy), buf(x), nb, cin, cout, s, chunk, splits, acc, b.autocast)
		})
	}
	if dbias != nil {
		b.biasGrad(dbias, dy)
	}
}

// weightGrad runs an m x n weight-gradient product over a K of k values
// into dw (m n floats) via run(geometry, out, chunk, splits, accumulate):
// unsplit, the kernel adds into dw itself; split, each chunk writes its
// partial into the op's scratch ("<op>_splitk") and dense_splitk_reduce
// adds the partials into dw in chunk order.
func (b *Backend) weightGrad(op string, dw *Buf, m, n, k int, run func(g Geometry, out *Buf, chunk, splits, acc int)) {
	splits, chunk := SplitK(m, n, k)
	g := Gemm(m, n, splits)
	if splits == 1 {
		run(g, dw, chunk, splits, 1)
		return
	}
	part := b.scratchBuf(op+"_splitk", splits*m*n)
	run(g, part, chunk, splits, 0)
	b.launch("dense_splitk_reduce", Elementwise(m*n), dw, part, splits, m*n)
}

// smallWeightGrad is the pointwise weight gradient at small channel
// counts (SmallChannels): one block per K chunk computing all Cout x Cin
// dot products from shared-memory slabs of dy and x
// (pw_backward_dw_small); with several chunks the partials go to the
// "pw_splitk" scratch and dense_splitk_reduce adds them in chunk order.
func (b *Backend) smallWeightGrad(dw *Buf, dy, x *tensor.Tensor) {
	nb, cin, cout, s := x.Batch(), x.Channels(), dy.Channels(), x.SpatialSize()
	g, splits, chunk := SplitKSmall(nb * s)
	if splits == 1 {
		b.launch("pw_backward_dw_small", g, dw, buf(dy), buf(x), nb, cin, cout, s, chunk, splits, 1, b.autocast)
		return
	}
	part := b.scratchBuf("pw_splitk", splits*cout*cin)
	b.launch("pw_backward_dw_small", g, part, buf(dy), buf(x), nb, cin, cout, s, chunk, splits, 0, b.autocast)
	b.launch("dense_splitk_reduce", Elementwise(cout*cin), dw, part, splits, cout*cin)
}

// biasGrad is the bias gradient of Pointwise and ConvDown,
// dbias[o] += sum_{b,s} dy[b,o,s]: per channel, shape-determined chunks
// of its B S values summed by fixed-order trees (dense_bias_backward);
// with more than one chunk the partial sums go to the "dense_bias"
// scratch and dense_bias_reduce adds them in chunk order.
func (b *Backend) biasGrad(dbias, dy *tensor.Tensor) {
	nb, c, s := dy.Batch(), dy.Channels(), dy.SpatialSize()
	g, parts, chunk := BiasParts(c, nb*s)
	if parts == 1 {
		b.launch("dense_bias_backward", g, buf(dbias), buf(dy), nb, c, s, chunk, parts, 1)
		return
	}
	part := b.scratchBuf("dense_bias", c*parts)
	b.launch("dense_bias_backward", g, part, buf(dy), nb, c, s, chunk, parts, 0)
	b.launch("dense_bias_reduce", Elementwise(c), buf(dbias), part, c, parts)
}
