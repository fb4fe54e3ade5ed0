//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// waveletSteps runs the (level, axis) steps of the db4 transform of src
// (kernels/wavelet.cu wv_step), in the CPU backend's order: forward levels
// 1..J with axes first to last, inverse levels J..1 with axes last to
// first. The steps ping-pong through two scratch buffers so that the last
// one writes dst (overwriting it, or adding into it with accumulate); src
// is only read.
func (b *Backend) waveletSteps(dst, src *Buf, sp []int, planes, levels int, inverse, accumulate bool) {
	n0, n1, n2 := padSpatial(sp)
	n := [3]int{n0, n1, n2}
	first := 3 - len(sp)
	type step struct{ l, a int }
	var steps []step
	if !inverse {
		for l := 1; l <= levels; l++ {
			for a := first; a < 3; a++ {
				steps = append(steps, step{l, a})
			}
		}
	} else {
		for l := levels; l >= 1; l-- {
			for a := 2; a >= first; a-- {
				steps = append(steps, step{l, a})
			}
		}
	}
	total := planes * n0 * n1 * n2
	tmp := [2]*Buf{bufWindow(b.scratchBuf("wavelet_a", total), total), bufWindow(b.scratchBuf("wavelet_b", total), total)}
	inv, acc := 0, 0
	if inverse {
		inv = 1
	}
	cur := src
	for k, s := range steps {
		var r [3]int
		for a := range 3 {
			r[a] = n[a]
			if a >= first {
				r[a] = n[a] >> (s.l - 1)
			}
		}
		out := tmp[k%2]
		if k == len(steps)-1 {
			out = dst
			if accumulate {
				acc = 1
			}
		}
		b.launch("wv_step", Elementwise(total), out, cur, planes, n0, n1, n2, r[0], r[1], r[2], s.a, inv, acc)
		cur = out
	}
}

// Wavelet implements tensor.Backend: the periodic multi-level db4
// transform (inverse false) or its inverse, one wv_step launch per level
// and axis.
func (b *Backend) Wavelet(y, x *tensor.Tensor, levels int, inverse bool) {
	if y.Numel() == 0 {
		return
	}
	b.waveletSteps(buf(y), buf(x), x.Spatial(), x.Batch()*x.Channels(), levels, inverse, false)
}

// WaveletBackward implements tensor.Backend: dx += the other direction of
// dy (the transform is orthogonal), the last step adding into dx.
func (b *Backend) WaveletBackward(dx, dy *tensor.Tensor, levels int, inverse bool) {
	if dx == nil || dy.Numel() == 0 {
		return
	}
	b.waveletSteps(buf(dx), buf(dy), dy.Spatial(), dy.Batch()*dy.Channels(), levels, !inverse, true)
}

// mixArgs is the padded grid and corner of a WaveletMix call.
func mixArgs(x, w *tensor.Tensor) (n0, n1, n2, m0, m1, m2 int) {
	n0, n1, n2 = padSpatial(x.Spatial())
	m0, m1, m2 = padSpatial(w.Shape[2:])
	return
}

// WaveletMix implements tensor.Backend: the per-point channel mixing of
// the corner, one thread per output value (wm_forward), zero elsewhere.
func (b *Backend) WaveletMix(y, x, w *tensor.Tensor) {
	if y.Numel() == 0 {
		return
	}
	n0, n1, n2, m0, m1, m2 := mixArgs(x, w)
	b.launch("wm_forward", Elementwise(y.Numel()), buf(y), buf(x), buf(w), x.Batch(), x.Channels(), y.Channels(), n0, n1, n2, m0, m1, m2)
}

// WaveletMixBackward implements tensor.Backend: dx += the transposed
// mixing on the corner (wm_backward_dx, one thread per input value) and
// dw += the batch sums in double (wm_backward_dw, one thread per weight,
// sample order: deterministic without atomics). A nil gradient is skipped.
func (b *Backend) WaveletMixBackward(dx, dw, dy, x, w *tensor.Tensor) {
	if dy.Numel() == 0 {
		return
	}
	n0, n1, n2, m0, m1, m2 := mixArgs(x, w)
	nb, cin, cout := x.Batch(), x.Channels(), dy.Channels()
	if dx != nil {
		b.launch("wm_backward_dx", Elementwise(dx.Numel()), buf(dx), buf(dy), buf(w), nb, cin, cout, n0, n1, n2, m0, m1, m2)
	}
	if dw != nil {
		b.launch("wm_backward_dw", Elementwise(dw.Numel()), buf(dw), buf(dy), buf(x), nb, cin, cout, n0, n1, n2, m0, m1, m2)
	}
}
