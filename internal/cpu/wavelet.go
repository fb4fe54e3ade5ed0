package cpu

import (
	"sync"

	"uhno/internal/tensor"
)

// The WNO baseline's operations (tensor.Backend.Wavelet, WaveletMix).
//
// Wavelet is the periodic orthonormal db4 transform (tensor.DB4), separable
// and applied level by level in Mallat's in-place layout: level l (1 =
// finest) transforms the corner [0, N/2^(l-1)) of every real axis, axis 0
// first, each line along the axis by
//
//	a[k] = sum_t h[t] x[(2k+t) mod L],  d[k] = sum_t g[t] x[(2k+t) mod L]
//
// (L the line's length, k < L/2, written [a | d]), the taps added in
// order t = 0..7 in float32. The inverse runs the levels from the coarsest
// and the axes from the last, and reconstructs each line by the gather
//
//	x[j] = sum over t = j mod 2, j mod 2 + 2, ..., 6 + j mod 2 of
//	       h[t] a[k] + g[t] d[k],  k = ((j - t) mod L) / 2
//
// (the products added in that order, h's before g's). A line of length 2
// or 4 wraps the filter around it more than once; the sums above then add
// the periodised filter, which is still orthogonal. Every (sample, channel)
// plane is independent, so the work is split over planes and the result
// does not depend on the thread count. The spatial axes are padded in
// front to three (a padded axis has one point and is not transformed).
//
// The backward of one direction is the other direction added into dx (the
// transform is orthogonal, so its adjoint is its inverse).

var (
	db4Lo, db4Hi = func() (lo, hi [8]float32) {
		for t := range 8 {
			lo[t], hi[t] = float32(tensor.DB4[t]), float32(tensor.DB4High[t])
		}
		return lo, hi
	}()
)

// wvGeom is a plane's geometry with the spatial axes padded to three.
type wvGeom struct {
	n    [3]int
	real [3]bool
	s    int
}

func newWVGeom(sp []int) wvGeom {
	g := wvGeom{n: [3]int{1, 1, 1}}
	for i, n := range sp {
		a := 3 - len(sp) + i
		g.n[a], g.real[a] = n, true
	}
	g.s = g.n[0] * g.n[1] * g.n[2]
	return g
}

// dwtLine writes one analysis step of src (length L, even) into dst:
// [a | d].
func dwtLine(dst, src []float32) {
	L := len(src)
	h := L / 2
	for k := 0; k < h; k++ {
		var a, d float32
		for t := 0; t < 8; t++ {
			v := src[(2*k+t)%L]
			a += db4Lo[t] * v
			d += db4Hi[t] * v
		}
		dst[k], dst[h+k] = a, d
	}
}

// idwtLine writes one synthesis step of src = [a | d] (length L, even)
// into dst.
func idwtLine(dst, src []float32) {
	L := len(src)
	h := L / 2
	for j := 0; j < L; j++ {
		var s float32
		for t := j & 1; t < 8; t += 2 {
			k := ((j-t)%L + L) % L / 2
			s += db4Lo[t] * src[k]
			s += db4Hi[t] * src[h+k]
		}
		dst[j] = s
	}
}

// waveletPlane transforms one plane in place (levels levels, forward or
// inverse). line holds 2 max(N) floats of scratch.
func waveletPlane(p []float32, g *wvGeom, levels int, inverse bool, line []float32) {
	step := func(l, a int) {
		var r [3]int
		for b := range 3 {
			r[b] = g.n[b]
			if g.real[b] {
				r[b] = g.n[b] >> (l - 1)
			}
		}
		stride := [3]int{g.n[1] * g.n[2], g.n[2], 1}
		L := r[a]
		in, out := line[:L], line[L:2*L]
		// The two other axes, in order.
		var o [2]int
		for b, i := 0, 0; b < 3; b++ {
			if b != a {
				o[i] = b
				i++
			}
		}
		for i0 := 0; i0 < r[o[0]]; i0++ {
			for i1 := 0; i1 < r[o[1]]; i1++ {
				base := i0*stride[o[0]] + i1*stride[o[1]]
				for j := 0; j < L; j++ {
					in[j] = p[base+j*stride[a]]
				}
				if inverse {
					idwtLine(out, in)
				} else {
					dwtLine(out, in)
				}
				for j := 0; j < L; j++ {
					p[base+j*stride[a]] = out[j]
				}
			}
		}
	}
	if !inverse {
		for l := 1; l <= levels; l++ {
			for a := 0; a < 3; a++ {
				if g.real[a] {
					step(l, a)
				}
			}
		}
		return
	}
	for l := levels; l >= 1; l-- {
		for a := 2; a >= 0; a-- {
			if g.real[a] {
				step(l, a)
			}
		}
	}
}

// wvScratch pools per-chunk scratch for the wavelet planes.
var wvScratch = sync.Pool{New: func() any { return new([]float32) }}

// waveletInto computes op(src) plane by plane; with accumulate it adds the
// result into dst, otherwise it overwrites dst.
func (b *Backend) waveletInto(dst, src []float32, sp []int, planes, levels int, inverse, accumulate bool) {
	g := newWVGeom(sp)
	maxN := max(g.n[0], g.n[1], g.n[2])
	b.parallel(planes, grainFor(16*g.s*levels), func(lo, hi int) {
		pp := wvScratch.Get().(*[]float32)
		defer wvScratch.Put(pp)
		need := 2 * maxN
		if accumulate {
			need += g.s
		}
		if cap(*pp) < need {
			*pp = make([]float32, need)
		}
		scratch := (*pp)[:need]
		line := scratch[:2*maxN]
		for pl := lo; pl < hi; pl++ {
			sp, dp := src[pl*g.s:][:g.s], dst[pl*g.s:][:g.s]
			if !accumulate {
				copy(dp, sp)
				waveletPlane(dp, &g, levels, inverse, line)
				continue
			}
			tmp := scratch[2*maxN:][:g.s]
			copy(tmp, sp)
			waveletPlane(tmp, &g, levels, inverse, line)
			for i, v := range tmp {
				dp[i] += v
			}
		}
	})
}

// Wavelet implements tensor.Backend.
func (b *Backend) Wavelet(y, x *tensor.Tensor, levels int, inverse bool) {
	if y.Numel() == 0 {
		return
	}
	b.waveletInto(data(y), data(x), x.Spatial(), x.Batch()*x.Channels(), levels, inverse, false)
}

// WaveletBackward implements tensor.Backend: dx += the other direction of
// dy.
func (b *Backend) WaveletBackward(dx, dy *tensor.Tensor, levels int, inverse bool) {
	if dx == nil || dy.Numel() == 0 {
		return
	}
	b.waveletInto(data(dx), data(dy), dy.Spatial(), dy.Batch()*dy.Channels(), levels, !inverse, true)
}

// mixCorner returns the plane offsets of the corner [0, m_0) x ... of a
// plane of spatial shape sp, in row-major order of the corner (the order
// of w's trailing axes).
func mixCorner(sp, m []int) []int {
	g := newWVGeom(sp)
	r := newWVGeom(m).n
	off := make([]int, 0, r[0]*r[1]*r[2])
	for i0 := 0; i0 < r[0]; i0++ {
		for i1 := 0; i1 < r[1]; i1++ {
			for i2 := 0; i2 < r[2]; i2++ {
				off = append(off, (i0*g.n[1]+i1)*g.n[2]+i2)
			}
		}
	}
	return off
}

// WaveletMix implements tensor.Backend: every output plane (b, o) is
// zeroed and its corner point q gets sum_i w[i,o,q] x[b,i,q], added in
// input-channel order in float32.
func (b *Backend) WaveletMix(y, x, w *tensor.Tensor) {
	if y.Numel() == 0 {
		return
	}
	X, Y, W := data(x), data(y), data(w)
	sp := x.Spatial()
	off := mixCorner(sp, w.Shape[2:])
	mq, s := len(off), tensor.Numel(sp)
	cin, cout := x.Channels(), y.Channels()
	b.parallel(x.Batch()*cout, grainFor(2*cin*mq+s), func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			bi, o := pl/cout, pl%cout
			yp := Y[pl*s:][:s]
			clear(yp)
			for i := 0; i < cin; i++ {
				xp := X[(bi*cin+i)*s:][:s]
				wp := W[(i*cout+o)*mq:][:mq]
				for q, p := range off {
					yp[p] += wp[q] * xp[p]
				}
			}
		}
	})
}

// WaveletMixBackward implements tensor.Backend:
// dx[b,i,q] += sum_o w[i,o,q] dy[b,o,q] (summed in output-channel order in
// float32, then added) on the corner, and
// dw[i,o,q] += sum_b x[b,i,q] dy[b,o,q] (summed in sample order in
// float64, rounded once when added). A nil gradient is skipped.
func (b *Backend) WaveletMixBackward(dx, dw, dy, x, w *tensor.Tensor) {
	if dy.Numel() == 0 {
		return
	}
	X, DY, W := data(x), data(dy), data(w)
	sp := x.Spatial()
	off := mixCorner(sp, w.Shape[2:])
	mq, s := len(off), tensor.Numel(sp)
	nb, cin, cout := x.Batch(), x.Channels(), dy.Channels()
	if dx != nil {
		DX := data(dx)
		b.parallel(nb*cin, grainFor(2*cout*mq), func(lo, hi int) {
			acc := make([]float32, mq)
			for pl := lo; pl < hi; pl++ {
				bi, i := pl/cin, pl%cin
				clear(acc)
				for o := 0; o < cout; o++ {
					gp := DY[(bi*cout+o)*s:][:s]
					wp := W[(i*cout+o)*mq:][:mq]
					for q, p := range off {
						acc[q] += wp[q] * gp[p]
					}
				}
				dp := DX[pl*s:][:s]
				for q, p := range off {
					dp[p] += acc[q]
				}
			}
		})
	}
	if dw != nil {
		DW := data(dw)
		b.parallel(cin*cout, grainFor(2*nb*mq), func(lo, hi int) {
			acc := make([]float64, mq)
			for pr := lo; pr < hi; pr++ {
				i, o := pr/cout, pr%cout
				clear(acc)
				for bi := 0; bi < nb; bi++ {
					xp := X[(bi*cin+i)*s:][:s]
					gp := DY[(bi*cout+o)*s:][:s]
					for q, p := range off {
						acc[q] += float64(xp[p]) * float64(gp[p])
					}
				}
				wp := DW[pr*mq:][:mq]
				for q := range wp {
					wp[q] += float32(acc[q])
				}
			}
		})
	}
}
