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
	// Interior outputs (2k+7 < L) read src[2k:2k+8] without wrapping;
	// the taps are added in the same order as the wrapping loop below.
	k := 0
	for ; 2*k+8 <= L; k++ {
		s := src[2*k:][:8]
		a := db4Lo[0] * s[0]
		d := db4Hi[0] * s[0]
		a += db4Lo[1] * s[1]
		d += db4Hi[1] * s[1]
		a += db4Lo[2] * s[2]
		d += db4Hi[2] * s[2]
		a += db4Lo[3] * s[3]
		d += db4Hi[3] * s[3]
		a += db4Lo[4] * s[4]
		d += db4Hi[4] * s[4]
		a += db4Lo[5] * s[5]
		d += db4Hi[5] * s[5]
		a += db4Lo[6] * s[6]
		d += db4Hi[6] * s[6]
		a += db4Lo[7] * s[7]
		d += db4Hi[7] * s[7]
		dst[k], dst[h+k] = a, d
	}
	for ; k < h; k++ {
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
	// The first outputs (j < 8) wrap around the line; from j = 8 on, the
	// pair (j, j+1) reads a and d at k = j/2, j/2-1, j/2-2, j/2-3 (t = 0,
	// 2, 4, 6 for j and 1, 3, 5, 7 for j+1), added in the same order as
	// the wrapping loop.
	for j := 0; j < min(L, 8); j++ {
		var s float32
		for t := j & 1; t < 8; t += 2 {
			k := ((j-t)%L + L) % L / 2
			s += db4Lo[t] * src[k]
			s += db4Hi[t] * src[h+k]
		}
		dst[j] = s
	}
	a, d := src[:h], src[h:L]
	for j := 8; j+1 < L; j += 2 {
		k := j / 2
		a0, a1, a2, a3 := a[k], a[k-1], a[k-2], a[k-3]
		d0, d1, d2, d3 := d[k], d[k-1], d[k-2], d[k-3]
		e := db4Lo[0] * a0
		e += db4Hi[0] * d0
		e += db4Lo[2] * a1
		e += db4Hi[2] * d1
		e += db4Lo[4] * a2
		e += db4Hi[4] * d2
		e += db4Lo[6] * a3
		e += db4Hi[6] * d3
		o := db4Lo[1] * a0
		o += db4Hi[1] * d0
		o += db4Lo[3] * a1
		o += db4Hi[3] * d1
		o += db4Lo[5] * a2
		o += db4Hi[5] * d2
		o += db4Lo[7] * a3
		o += db4Hi[7] * d3
		dst[j], dst[j+1] = e, o
	}
}

// wvScratchLen is the scratch a plane's transform needs: the Go loops use
// 2 max(N) floats of it, the C kernel a whole plane plus 2 max(N) + 8.
func wvScratchLen(g *wvGeom) int { return g.s + 2*max(g.n[0], g.n[1], g.n[2]) + 8 }

// waveletPlane transforms one plane in place (levels levels, forward or
// inverse): in the C kernel where it is built (waveletPlaneFast), else in
// Go. w holds wvScratchLen(g) floats.
func (b *Backend) waveletPlane(p []float32, g *wvGeom, levels int, inverse bool, w []float32) {
	if haveFastWavelet && !b.rs.forceGo {
		waveletPlaneFast(p, g, levels, inverse, w)
		return
	}
	waveletPlaneGo(p, g, levels, inverse, w)
}

// waveletPlaneGo transforms one plane in place (levels levels, forward or
// inverse), line by line with dwtLine and idwtLine: the definition the C
// kernel reproduces bit for bit. line holds at least 2 max(N) floats.
func waveletPlaneGo(p []float32, g *wvGeom, levels int, inverse bool, line []float32) {
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
	nw := wvScratchLen(&g)
	b.parallel(planes, grainFor(16*g.s*levels), func(lo, hi int) {
		pp := wvScratch.Get().(*[]float32)
		defer wvScratch.Put(pp)
		need := nw
		if accumulate {
			need += g.s
		}
		if cap(*pp) < need {
			*pp = make([]float32, need)
		}
		scratch := (*pp)[:need]
		w := scratch[:nw]
		for pl := lo; pl < hi; pl++ {
			sp, dp := src[pl*g.s:][:g.s], dst[pl*g.s:][:g.s]
			if !accumulate {
				copy(dp, sp)
				b.waveletPlane(dp, &g, levels, inverse, w)
				continue
			}
			tmp := scratch[nw:][:g.s]
			copy(tmp, sp)
			b.waveletPlane(tmp, &g, levels, inverse, w)
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

// mixRun is a stretch of the corner that is contiguous in the plane: the
// corner points q0, q0+1, ..., q0+n-1 at plane offsets p, p+1, ..., p+n-1.
// A 1D corner is one run, a 2D corner one run per row; the loops over a
// run index plain slices, which the compiler keeps free of bounds checks.
type mixRun struct{ p, q0, n int }

// mixRuns cuts the corner's offsets (mixCorner) into contiguous runs.
func mixRuns(off []int) []mixRun {
	var runs []mixRun
	for q, p := range off {
		if k := len(runs) - 1; k >= 0 && runs[k].p+runs[k].n == p {
			runs[k].n++
			continue
		}
		runs = append(runs, mixRun{p: p, q0: q, n: 1})
	}
	return runs
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
	runs := mixRuns(off)
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
				for _, r := range runs {
					yr, xr, wr := yp[r.p:][:r.n], xp[r.p:][:r.n], wp[r.q0:][:r.n]
					for k := range yr {
						yr[k] += wr[k] * xr[k]
					}
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
	runs := mixRuns(off)
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
					for _, r := range runs {
						ar, gr, wr := acc[r.q0:][:r.n], gp[r.p:][:r.n], wp[r.q0:][:r.n]
						for k := range ar {
							ar[k] += wr[k] * gr[k]
						}
					}
				}
				dp := DX[pl*s:][:s]
				for _, r := range runs {
					dr, ar := dp[r.p:][:r.n], acc[r.q0:][:r.n]
					for k := range dr {
						dr[k] += ar[k]
					}
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
					for _, r := range runs {
						ar, xr, gr := acc[r.q0:][:r.n], xp[r.p:][:r.n], gp[r.p:][:r.n]
						for k := range ar {
							ar[k] += float64(xr[k]) * float64(gr[k])
						}
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
