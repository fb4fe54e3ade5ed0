package cpu

import (
	"sync"

	"uhno/internal/tensor"
)

// The depthwise 3-tap convolution of the flat additive hybrid's local
// branch (tensor.Backend.DepthwiseConv):
//
//	y[b,c,j] = sum_t w[c,t] x[b,c,j+o(t)] + bias[c]
//
// with circular indices, where tap t = (t_0, ..., t_{d-1}) in {0,1,2}^d
// (row-major, last axis fastest) reads the offset o(t) = t - 1 on every
// axis. Every (sample, channel) plane is independent, so the forward pass
// and the input gradient are split over planes; each plane is walked as
// rows along the last axis, and a tap adds a shifted copy of a row
// (depthwiseAxpy), its wrap-around handled at the two ends of the row.
//
// The spatial axes are padded in front to three (a padded axis has one
// point and one tap, offset 0), so 1D, 2D and 3D share the code.
//
// The weight and bias gradients are reductions over the batch and the
// grid. Each plane's contributions are summed in float64 into a partial of
// its own (taps + 1 values), and the partials of a channel are added in
// sample order, so the result does not depend on the thread count.

// dwGeom is the geometry of one call: the spatial axes padded to three,
// the taps per axis (3 on a real axis, 1 on a padded one) and their
// product, and the points per plane.
type dwGeom struct {
	n    [3]int
	taps [3]int
	k    int // taps per channel, 3^d
	s    int // points per plane
}

func newDWGeom(x *tensor.Tensor) dwGeom {
	g := dwGeom{n: [3]int{1, 1, 1}, taps: [3]int{1, 1, 1}}
	sp := x.Spatial()
	for i, n := range sp {
		a := 3 - len(sp) + i
		g.n[a], g.taps[a] = n, 3
	}
	g.k = g.taps[0] * g.taps[1] * g.taps[2]
	g.s = g.n[0] * g.n[1] * g.n[2]
	return g
}

// offset is the shift of tap index ti (0..taps-1) on axis a: -1, 0 or +1
// on a real axis, 0 on a padded one.
func (g *dwGeom) offset(a, ti int) int {
	if g.taps[a] == 1 {
		return 0
	}
	return ti - 1
}

// wrap is i mod n for i in [-n, 2n).
func wrap(i, n int) int {
	switch {
	case i < 0:
		return i + n
	case i >= n:
		return i - n
	}
	return i
}

// forTaps calls fn for every tap in weight order with its flat index and
// its offsets on the three (padded) axes.
func (g *dwGeom) forTaps(fn func(t, o0, o1, o2 int)) {
	t := 0
	for t0 := 0; t0 < g.taps[0]; t0++ {
		for t1 := 0; t1 < g.taps[1]; t1++ {
			for t2 := 0; t2 < g.taps[2]; t2++ {
				fn(t, g.offset(0, t0), g.offset(1, t1), g.offset(2, t2))
				t++
			}
		}
	}
}

// shiftRows calls fn for every row of a plane with the row's start and
// the start of the source row it reads, shifted by (o0, o1) circularly.
func (g *dwGeom) shiftRows(o0, o1 int, fn func(dst, src int)) {
	n0, n1, n2 := g.n[0], g.n[1], g.n[2]
	for i0 := 0; i0 < n0; i0++ {
		s0 := wrap(i0+o0, n0)
		for i1 := 0; i1 < n1; i1++ {
			fn((i0*n1+i1)*n2, (s0*n1+wrap(i1+o1, n1))*n2)
		}
	}
}

// depthwiseAxpy adds a x[(i+o) mod n] to y[i] for every i < n = len(y),
// o in {-1, 0, 1}.
func depthwiseAxpy(y, x []float32, a float32, o int) {
	n := len(y)
	x = x[:n]
	switch o {
	case 0:
		for i := range y {
			y[i] += a * x[i]
		}
	case 1:
		for i := 0; i < n-1; i++ {
			y[i] += a * x[i+1]
		}
		y[n-1] += a * x[0]
	case -1:
		y[0] += a * x[n-1]
		for i := 1; i < n; i++ {
			y[i] += a * x[i-1]
		}
	}
}

// depthwiseDot is sum_i y[i] x[(i+o) mod n] in float64, n = len(y),
// o in {-1, 0, 1}.
func depthwiseDot(y, x []float32, o int) float64 {
	n := len(y)
	x = x[:n]
	var s float64
	switch o {
	case 0:
		for i := range y {
			s += float64(y[i]) * float64(x[i])
		}
	case 1:
		for i := 0; i < n-1; i++ {
			s += float64(y[i]) * float64(x[i+1])
		}
		s += float64(y[n-1]) * float64(x[0])
	case -1:
		s += float64(y[0]) * float64(x[n-1])
		for i := 1; i < n; i++ {
			s += float64(y[i]) * float64(x[i-1])
		}
	}
	return s
}

// DepthwiseConv implements tensor.Backend: every output plane is set to
// its bias (or 0), then each tap in weight order adds its shifted,
// weighted copy of the input plane.
func (b *Backend) DepthwiseConv(y, x, w, bias *tensor.Tensor) {
	if y.Numel() == 0 {
		return
	}
	X, Y, W, Bias := data(x), data(y), data(w), data(bias)
	g := newDWGeom(x)
	ch := x.Channels()
	b.parallel(x.Batch()*ch, grainFor(2*g.k*g.s), func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			c := pl % ch
			xp, yp := X[pl*g.s:][:g.s], Y[pl*g.s:][:g.s]
			var b0 float32
			if Bias != nil {
				b0 = Bias[c]
			}
			for i := range yp {
				yp[i] = b0
			}
			wc := W[c*g.k:][:g.k]
			g.forTaps(func(t, o0, o1, o2 int) {
				g.shiftRows(o0, o1, func(dst, src int) {
					depthwiseAxpy(yp[dst:dst+g.n[2]], xp[src:], wc[t], o2)
				})
			})
		}
	})
}

// dwParts is a pool of float64 scratch for the per-plane partial sums of
// DepthwiseConvBackward.
var dwParts = sync.Pool{New: func() any { return new([]float64) }}

// DepthwiseConvBackward implements tensor.Backend:
// dx[b,c,i] += sum_t w[c,t] dy[b,c,i-o(t)] (each tap's shifted copy of dy,
// in weight order), dw[c,t] += sum_{b,j} dy[b,c,j] x[b,c,j+o(t)] and
// dbias[c] += sum_{b,j} dy[b,c,j]; a nil gradient is skipped. The
// reductions are summed per plane in float64, then over the batch in
// sample order, and rounded to float32 once when added.
func (b *Backend) DepthwiseConvBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	if dy.Numel() == 0 {
		return // nothing to add
	}
	DY, X, W := data(dy), data(x), data(w)
	g := newDWGeom(x)
	nb, ch := x.Batch(), x.Channels()
	planes := nb * ch
	if dx != nil {
		DX := data(dx)
		b.parallel(planes, grainFor(2*g.k*g.s), func(lo, hi int) {
			for pl := lo; pl < hi; pl++ {
				c := pl % ch
				gp, dp := DY[pl*g.s:][:g.s], DX[pl*g.s:][:g.s]
				wc := W[c*g.k:][:g.k]
				g.forTaps(func(t, o0, o1, o2 int) {
					g.shiftRows(-o0, -o1, func(dst, src int) {
						depthwiseAxpy(dp[dst:dst+g.n[2]], gp[src:], wc[t], -o2)
					})
				})
			}
		})
	}
	if dw == nil && dbias == nil {
		return
	}
	// parts[pl*(k+1) + t] is plane pl's sum for tap t; [k] is its bias sum.
	stride := g.k + 1
	pp := dwParts.Get().(*[]float64)
	defer dwParts.Put(pp)
	if cap(*pp) < planes*stride {
		*pp = make([]float64, planes*stride)
	}
	parts := (*pp)[:planes*stride]
	b.parallel(planes, grainFor(2*g.k*g.s), func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			gp, xp := DY[pl*g.s:][:g.s], X[pl*g.s:][:g.s]
			part := parts[pl*stride:][:stride]
			if dw != nil {
				g.forTaps(func(t, o0, o1, o2 int) {
					var s float64
					g.shiftRows(o0, o1, func(dst, src int) {
						s += depthwiseDot(gp[dst:dst+g.n[2]], xp[src:], o2)
					})
					part[t] = s
				})
			}
			if dbias != nil {
				var s float64
				for _, v := range gp {
					s += float64(v)
				}
				part[g.k] = s
			}
		}
	})
	var DW, DB []float32
	if dw != nil {
		DW = data(dw)
	}
	if dbias != nil {
		DB = data(dbias)
	}
	for c := 0; c < ch; c++ {
		for t := 0; t < stride; t++ {
			if (t < g.k && dw == nil) || (t == g.k && dbias == nil) {
				continue
			}
			s := parts[c*stride+t]
			for bi := 1; bi < nb; bi++ {
				s += parts[(bi*ch+c)*stride+t]
			}
			if t < g.k {
				DW[c*g.k+t] += float32(s)
			} else {
				DB[c] += float32(s)
			}
		}
	}
}
