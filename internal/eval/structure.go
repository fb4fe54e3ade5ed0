package eval

import (
	"fmt"
	"math"
)

// DefaultLags is the paper's lag grid R = {1, 2, 4, 8, 16, 32} in grid
// units (Eq. sf).
var DefaultLags = []int{1, 2, 4, 8, 16, 32}

// sfSums returns S_r of pred and of truth (see StructureFunction) in one
// pass; truth may be nil. Along an axis viewed as [outer, n, inner], the
// in-domain pairs (i, i+r) are the slab from row r on against the slab from
// row 0 on, one contiguous run of (n-r)*inner values; on a periodic axis
// the wrapped pairs (n-r+i, i), i < r, add rows 0..r-1 against rows n-r..
// n-1.
func sfSums(g Grid, pred, truth []float32, r int) (sp, st float64) {
	P := g.points()
	for a := range g.Shape {
		outer, n, inner := axisLayout(g.Shape, a)
		pairs := n
		if !g.Periodic {
			pairs = n - r
		}
		norm := 1 / float64(outer*pairs*inner*len(g.Shape)*g.Channels)
		for c := 0; c < g.Channels; c++ {
			var ap, at float64
			for o := 0; o < outer; o++ {
				off := c*P + o*n*inner
				ap += incrementSq(pred[off:off+n*inner], r*inner, g.Periodic)
				if truth != nil {
					at += incrementSq(truth[off:off+n*inner], r*inner, g.Periodic)
				}
			}
			sp += ap * norm
			st += at * norm
		}
	}
	return sp, st
}

// incrementSq is sum (v[j+s] - v[j])^2 over the slab v for j+s inside it,
// plus, when wrap is set, the pairs that wrap around: v[j] - v[len-s+j],
// j < s.
func incrementSq(v []float32, s int, wrap bool) float64 {
	acc := sqDist(v[s:], v)
	if wrap {
		acc += sqDist(v[:s], v[len(v)-s:])
	}
	return acc
}

// sqDist is sum_j (a[j] - b[j])^2 over j < len(a), in float64 with four
// partial sums (the adds of one running sum wait on each other; four
// independent ones keep the FPU busy), added in a fixed order.
func sqDist(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(a); j += 4 {
		d0 := float64(a[j]) - float64(b[j])
		d1 := float64(a[j+1]) - float64(b[j+1])
		d2 := float64(a[j+2]) - float64(b[j+2])
		d3 := float64(a[j+3]) - float64(b[j+3])
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; j < len(a); j++ {
		d := float64(a[j]) - float64(b[j])
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// maxLag is the largest lag every axis admits: one less than the smallest
// axis.
func (g Grid) maxLag() int {
	m := g.Shape[0]
	for _, n := range g.Shape {
		m = min(m, n)
	}
	return m - 1
}

// StructureFunction is the second-order structure function S_r(u) =
// E_x |u(x+r) - u(x)|^2 (paper, App. "Evaluation Metrics") for a lag of r
// grid points, taken along each spatial axis and averaged with equal weight
// over the axes and channels. On a periodic grid x+r wraps around and every
// point has a partner; otherwise only the pairs with both points inside the
// domain count. The lag must satisfy 1 <= lag < min_d N_d, or it panics.
func StructureFunction(g Grid, u []float32, lag int) float64 {
	g.mustFrame(u)
	if lag < 1 || lag > g.maxLag() {
		panic(fmt.Sprintf("eval: structure-function lag %d outside 1..%d for grid %v", lag, g.maxLag(), g.Shape))
	}
	s, _ := sfSums(g, u, nil, lag)
	return s
}

// SFError is the relative structure-function error (paper Eq. sf),
//
//	SF(û,u) = sum_r |S_r(û) - S_r(u)| / sum_r S_r(u),
//
// over the lags r (DefaultLags when nil). A lag that is not smaller than
// every axis (r >= min_d N_d) is skipped, so that each S_r averages the
// same axes: on a 32-point axis the lag 32 has no in-domain pair, and on a
// periodic one it would compare every point with itself. With no lag left
// the result is NaN. A lag < 1 panics. A zero truth gives 0 for a constant
// prediction, NaN otherwise.
func SFError(g Grid, pred, truth []float32, lags []int) float64 {
	g.mustFrame(pred, truth)
	if lags == nil {
		lags = DefaultLags
	}
	var use []int
	for _, r := range lags {
		if r < 1 {
			panic(fmt.Sprintf("eval: structure-function lag %d, want >= 1", r))
		}
		if r <= g.maxLag() {
			use = append(use, r)
		}
	}
	if len(use) == 0 {
		return math.NaN()
	}
	// One goroutine per lag at most; the sums are added in lag order, so
	// the result does not depend on the number of CPUs.
	sp, st := make([]float64, len(use)), make([]float64, len(use))
	parallelFor(len(use), 2*len(pred), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sp[i], st[i] = sfSums(g, pred, truth, use[i])
		}
	})
	var num, den float64
	for i := range use {
		num += math.Abs(sp[i] - st[i])
		den += st[i]
	}
	return relative(num, den)
}
