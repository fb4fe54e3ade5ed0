//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// bandRun applies the axes' matrices one after the other (kernels/band.cu:
// br_matrix builds each axis's matrix on the device into a scratch buffer,
// br_axis applies it, see bandAxis); intermediate fields ping-pong between
// two scratch buffers, the last pass writes (or, accumulate, adds) into
// out. transpose is the backward pass: the forward matrix of an axis maps
// to[a] -> from[a] points, and its transpose is applied.
func (b *Backend) bandRun(out, x *Buf, planes int, from, to [3]int, axes []int, transpose, accumulate bool) {
	cur := from
	src := x
	for n, a := range axes {
		rows := to[a]
		lines, post := planes, 1
		for i := 0; i < a; i++ {
			lines *= cur[i]
		}
		for i := a + 1; i < 3; i++ {
			post *= cur[i]
		}
		// The applied matrix is [rows, cur[a]]; br_axis wants it
		// transposed on the last axis (post = 1).
		last := post == 1
		mat := b.scratchBuf("band_matrix", rows*cur[a])
		if transpose {
			b.launch("br_matrix", Elementwise(rows*cur[a]), mat, rows, cur[a], boolInt(!last))
		} else {
			b.launch("br_matrix", Elementwise(rows*cur[a]), mat, cur[a], rows, boolInt(last))
		}
		next := cur
		next[a] = rows
		dst, acc := out, accumulate
		if n < len(axes)-1 {
			dst = b.scratchBuf([2]string{"band_t0", "band_t1"}[n%2], planes*next[0]*next[1]*next[2])
			acc = false
		}
		b.bandAxis(BandAxis(lines, rows, post), dst, src, mat, lines, cur[a], rows, post, acc)
		src, cur = dst, next
	}
}

// bandAxis launches br_axis with geometry g (BandAxis; the tests also
// pass smaller grids, which the kernel strides over): dst[l, j, p] (+)=
// sum_m A[j, m] src[l, m, p] for l < lines, j < rows, m < nin, p < post,
// with mat holding A [rows, nin] row-major for post > 1 and A^T
// [nin, rows] for post = 1 (the last axis, where the kernel's product is
// D = S A^T).
func (b *Backend) bandAxis(g Geometry, dst, src, mat *Buf, lines, nin, rows, post int, accumulate bool) {
	b.launch("br_axis", g, dst, src, mat, lines, nin, rows, post, boolInt(accumulate))
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
