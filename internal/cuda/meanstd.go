//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// MeanStd implements tensor.Backend: the spatial mean and unbiased std
// (divisor N-1, 0 when N = 1) per (sample, channel), one block per row
// reducing in double with a fixed tree (kernels/small.cu ms_forward).
func (b *Backend) MeanStd(mean, std, x *tensor.Tensor) {
	rows, s := x.Batch()*x.Channels(), x.SpatialSize()
	if rows == 0 || s == 0 {
		return
	}
	b.launch("ms_forward", RowReduce(rows, s), buf(mean), buf(std), buf(x), rows, s)
}

// MeanStdBackward implements tensor.Backend:
// dx += dmean/N + dstd (x - mean) / ((N-1) std), a nil dmean or dstd
// contributing nothing and the std term skipped where std = 0
// (ms_backward, one thread per value).
func (b *Backend) MeanStdBackward(dx, dmean, dstd, x, mean, std *tensor.Tensor) {
	rows, s := x.Batch()*x.Channels(), x.SpatialSize()
	if dx == nil || rows*s == 0 || (dmean == nil && dstd == nil) {
		return
	}
	b.launch("ms_backward", Elementwise(rows*s), buf(dx), buf(dmean), buf(dstd), buf(x), buf(mean), buf(std), rows, s)
}
