//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// bandRun applies the axes' matrices one after the other (kernels/band.cu:
// br_matrix builds each axis's matrix on the device into a scratch buffer,
// br_axis applies it); intermediate fields ping-pong between two scratch
// buffers, the last pass writes (or, accumulate, adds) into out. transpose
// is the backward pass: the forward matrix of an axis maps to[a] -> from[a]
// points, and its transpose is applied.
func (b *Backend) bandRun(out, x *Buf, planes int, from, to [3]int, axes []int, transpose, accumulate bool) {
	cur := from
	src := x
	for n, a := range axes {
		rows := to[a]
		mat := b.scratchBuf("band_matrix", rows*cur[a])
		if transpose {
			b.launch("br_matrix", Elementwise(rows*cur[a]), mat, rows, cur[a], 1)
		} else {
			b.launch("br_matrix", Elementwise(rows*cur[a]), mat, cur[a], rows, 0)
		}
		next := cur
		next[a] = rows
		lines, post := planes, 1
		for i := 0; i < a; i++ {
			lines *= cur[i]
		}
		for i := a + 1; i < 3; i++ {
			post *= cur[i]
		}
		dst, acc := out, accumulate
		if n < len(axes)-1 {
			dst = b.scratchBuf([2]string{"band_t0", "band_t1"}[n%2], planes*next[0]*next[1]*next[2])
			acc = false
		}
		b.launch("br_axis", Elementwise(lines*rows*post), dst, src, mat, lines, cur[a], rows, post, boolInt(acc))
		src, cur = dst, next
	}
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// BandResample implements tensor.Backend: band-limited resampling axis by
// axis (see bandRun). When no axis changes it is a copy.
func (b *Backend) BandResample(y, x *tensor.Tensor) {
	if y.Numel() == 0 {
		return
	}
	nf, nt, axes := tensor.BandAxes(x.Spatial(), y.Spatial())
	if len(axes) == 0 {
		b.Copy(y.Data, x.Data)
		return
	}
	b.bandRun(buf(y), buf(x), x.Batch()*x.Channels(), nf, nt, axes, false, false)
}

// BandResampleBackward implements tensor.Backend: dx += A^T dy per axis,
// in reverse axis order.
func (b *Backend) BandResampleBackward(dx, dy *tensor.Tensor) {
	if dx == nil || dy.Numel() == 0 {
		return
	}
	nf, nt, axes := tensor.BandAxes(dy.Spatial(), dx.Spatial())
	if len(axes) == 0 {
		b.AddScaled(dx, dy, 1)
		return
	}
	rev := make([]int, len(axes))
	for i, a := range axes {
		rev[len(axes)-1-i] = a
	}
	b.bandRun(buf(dx), buf(dy), dy.Batch()*dy.Channels(), nf, nt, rev, true, true)
}
