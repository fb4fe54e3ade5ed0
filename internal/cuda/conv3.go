//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// c3Block is the block size of c3_backward_dw (its shared array holds 256
// doubles; the tree needs a power of two).
const c3Block = 256

// Conv3 implements tensor.Backend: the kernel-3, stride-1 circular
// convolution, y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,j+t-1] + bias[o], one
// thread per output value (kernels/conv3.cu c3_forward). bias may be nil.
func (b *Backend) Conv3(y, x, w, bias *tensor.Tensor) {
	if y.Numel() == 0 {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	b.launch("c3_forward", Elementwise(y.Numel()), buf(y), buf(x), buf(w), buf(bias), x.Batch(), x.Channels(), y.Channels(), d, n0, n1, n2, b.autocast)
}

// Conv3Backward implements tensor.Backend: dx += the gather of the taps
// that read each input point (c3_backward_dx, one thread per value); dw
// and dbias += their sums over the batch and the grid, one block per
// weight and per bias with fixed-order double sums (c3_backward_dw,
// deterministic, no atomics). A nil gradient is skipped.
func (b *Backend) Conv3Backward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	if dy.Numel() == 0 {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	nb, cin, cout := x.Batch(), x.Channels(), dy.Channels()
	if dx != nil {
		b.launch("c3_backward_dx", Elementwise(dx.Numel()), buf(dx), buf(dy), buf(w), nb, cin, cout, d, n0, n1, n2, b.autocast)
	}
	if dw != nil || dbias != nil {
		k := tensor.Numel(w.Shape) / cout
		b.launch("c3_backward_dw", PerRow(cout*(k+1), c3Block), buf(dw), buf(dbias), buf(dy), buf(x), nb, cin, cout, d, n0, n1, n2, b.autocast)
	}
}

// ReLU implements tensor.Backend: y = max(x, 0).
func (b *Backend) ReLU(y, x *tensor.Tensor) { b.ew("relu_forward", y.Numel(), buf(y), buf(x)) }

// ReLUBackward implements tensor.Backend: dx += dy where x > 0.
func (b *Backend) ReLUBackward(dx, dy, x *tensor.Tensor) {
	b.ew("relu_backward", dx.Numel(), buf(dx), buf(dy), buf(x))
}
