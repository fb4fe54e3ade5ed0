//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// Upsample2x implements tensor.Backend: linear, bilinear or trilinear
// doubling of every spatial axis with align_corners=false, one thread per
// output point gathering its 2^d sources (kernels/resample.cu up_forward,
// in the CPU's rounding order); periodic wraps at the edges instead of
// clamping.
func (b *Backend) Upsample2x(y, x *tensor.Tensor, periodic bool) {
	if y.Numel() == 0 {
		return
	}
	n0, n1, n2 := padSpatial(x.Spatial())
	name := "up_forward"
	if periodic {
		name = "up_forward_periodic"
	}
	b.launch(name, Elementwise(y.Numel()), buf(y), buf(x), x.Batch()*x.Channels(), x.Dims(), n0, n1, n2)
}

// Upsample2xBackward implements tensor.Backend: dx += A^T dy for the
// interpolation A of Upsample2x, as a gather: one thread per input point
// sums the (up to 4^d) outputs that read it (up_backward), so the result
// is deterministic without atomics.
func (b *Backend) Upsample2xBackward(dx, dy *tensor.Tensor, periodic bool) {
	if dx.Numel() == 0 {
		return
	}
	n0, n1, n2 := padSpatial(dx.Spatial())
	name := "up_backward"
	if periodic {
		name = "up_backward_periodic"
	}
	b.launch(name, Elementwise(dx.Numel()), buf(dx), buf(dy), dx.Batch()*dx.Channels(), dx.Dims(), n0, n1, n2)
}
