//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// ChannelCopy implements tensor.Backend: channels [srcFrom, srcFrom+n) of
// src into [dstFrom, dstFrom+n) of dst, added when accumulate is set
// (kernels/small.cu cc_copy, one thread per value). It is the primitive
// behind concatenation, slicing and their backwards.
func (b *Backend) ChannelCopy(dst *tensor.Tensor, dstFrom int, src *tensor.Tensor, srcFrom, n int, accumulate bool) {
	nb, s := dst.Batch(), dst.SpatialSize()
	total := nb * n * s
	if total == 0 {
		return
	}
	acc := 0
	if accumulate {
		acc = 1
	}
	b.launch("cc_copy", Elementwise(total), buf(dst), buf(src), nb, dst.Channels(), dstFrom, src.Channels(), srcFrom, n, s, acc)
}
