//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// dwBlock is the block size of dw_backward_dw (its shared array holds 256
// doubles; the tree needs a power of two).
const dwBlock = 256

// DepthwiseConv implements tensor.Backend: the 3-tap-per-axis depthwise
// circular convolution, y[b,c,j] = sum_t w[c,t] x[b,c,j+t-1] + bias[c],
// one thread per output value (kernels/depthwise.cu dw_forward). bias may
// be nil.
func (b *Backend) DepthwiseConv(y, x, w, bias *tensor.Tensor) {
	if y.Numel() == 0 {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	planes := x.Batch() * x.Channels()
	b.launch("dw_forward", Elementwise(y.Numel()), buf(y), buf(x), buf(w), buf(bias), planes, x.Channels(), d, n0, n1, n2, b.autocast)
}

// DepthwiseConvBackward implements tensor.Backend: dx += the gather of
// the taps that read each input point (dw_backward_dx, one thread per
// value); dw and dbias += their sums over the batch and the grid, one
// block per (channel, tap) and per channel's bias with fixed-order double
// sums (dw_backward_dw, deterministic, no atomics). A nil gradient is
// skipped.
func (b *Backend) DepthwiseConvBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	if dy.Numel() == 0 {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	nb, ch := x.Batch(), x.Channels()
	if dx != nil {
		b.launch("dw_backward_dx", Elementwise(dx.Numel()), buf(dx), buf(dy), buf(w), nb*ch, ch, d, n0, n1, n2, b.autocast)
	}
	if dw != nil || dbias != nil {
		taps := tensor.Numel(w.Shape) / ch
		b.launch("dw_backward_dw", PerRow(ch*(taps+1), dwBlock), buf(dw), buf(dbias), buf(dy), buf(x), nb, ch, d, n0, n1, n2, b.autocast)
	}
}
