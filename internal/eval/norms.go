package eval

import "math"

// relative is num/den for the package's relative metrics, with the rule for
// a zero reference: 0 when num is 0 as well (a zero field predicted
// exactly has no error), NaN otherwise (a relative error against nothing
// is undefined; means in this package skip NaN).
func relative(num, den float64) float64 {
	if den > 0 {
		return num / den
	}
	if num == 0 {
		return 0
	}
	return math.NaN()
}

// l2Parts returns sum (pred-truth)^2, sum truth^2 and sum pred^2 in float64.
func l2Parts(pred, truth []float32) (se, st, sp float64) {
	mustSameLen(pred, truth)
	for i, p := range pred {
		pv, tv := float64(p), float64(truth[i])
		e := pv - tv
		se += e * e
		st += tv * tv
		sp += pv * pv
	}
	return se, st, sp
}

// RelL2 is the relative L2 error relL2(û,u) = ||û-u||_2 / ||u||_2 (paper,
// App. "Evaluation Metrics"), with one norm over the whole frame (all
// channels together). A zero truth gives 0 for a zero prediction, NaN
// otherwise.
func RelL2(pred, truth []float32) float64 {
	se, st, _ := l2Parts(pred, truth)
	return relative(math.Sqrt(se), math.Sqrt(st))
}

// MSE is the mean squared error over all values of the frame (grid points
// and channels): ||û-u||_2^2 / len(u). The paper's rollout MSE (1/T)
// sum_t ||û_t-u_t||_2^2 is written with the plain squared norm; uhno
// divides each step's squared norm by the number of values so that the
// figure does not grow with the grid (the convention of the FNO and
// PDEBench MSE), and the rollout average is the mean of these per-step
// values. An empty frame gives NaN.
func MSE(pred, truth []float32) float64 {
	se, _, _ := l2Parts(pred, truth)
	return se / float64(len(pred))
}

// Energy is the field's l2 energy ||u||_2^2, summed over every value of the
// frame in float64.
func Energy(u []float32) float64 {
	var s float64
	for _, v := range u {
		s += float64(v) * float64(v)
	}
	return s
}

// EnergyDrift is ED(û,u) = | ||û_T||^2 - ||u_T||^2 | / ||u_T||^2 (paper Eq.
// ed) for the frames at the test horizon T. A zero-energy truth gives 0 for
// a zero prediction, NaN otherwise.
func EnergyDrift(predT, truthT []float32) float64 {
	mustSameLen(predT, truthT)
	ep, et := Energy(predT), Energy(truthT)
	return relative(math.Abs(ep-et), et)
}

// stencil gives the first-difference stencil at point i of an axis of n
// points with spacing h: the derivative there is c (v[ip] - v[im]).
// Periodic: the central difference (v[i+1]-v[i-1])/(2h) with indices
// wrapped. Otherwise central inside, the forward difference
// (v[1]-v[0])/h at i = 0 and the backward difference (v[n-1]-v[n-2])/h at
// i = n-1: the paper's "forward-difference at the boundaries", read as the
// one-sided difference that stays in the domain at each end (a forward
// difference does not exist at the last point). This is the stencil of
// the H1 loss term (cpu.Diff), so the metric measures what training
// penalises.
func stencil(i, n int, periodic bool, h float64) (im, ip int, c float64) {
	switch {
	case i > 0 && i < n-1:
		return i - 1, i + 1, 1 / (2 * h)
	case periodic:
		return (i - 1 + n) % n, (i + 1) % n, 1 / (2 * h)
	case i == 0:
		return 0, 1, 1 / h
	default:
		return n - 2, n - 1, 1 / h
	}
}

// gradParts returns sum_d ||D_d(û-u)||^2 and sum_d ||D_d u||^2 over all
// channels, D_d the difference of stencil along axis d with spacing
// g.Spacing[d]. The error's gradient is taken as D(û) - D(u) (the operator
// is linear), each term in float64. Along an axis viewed as [outer, n,
// inner], the interior points i = 1..n-2 pair row i+1 with row i-1, that is
// the slab from row 2 on with the slab from row 0 on: one contiguous run of
// (n-2)*inner values; the two end rows follow with their own stencil.
func gradParts(g Grid, pred, truth []float32) (ge, gt float64) {
	P := g.points()
	for a := range g.Shape {
		outer, n, inner := axisLayout(g.Shape, a)
		h := g.Spacing[a]
		_, _, cIn := stencil(1, n, g.Periodic, h)
		for c := 0; c < g.Channels; c++ {
			for o := 0; o < outer; o++ {
				off := c*P + o*n*inner
				ps, ts := pred[off:off+n*inner], truth[off:off+n*inner]
				e, u := diffSq(ps[2*inner:], ps, ts[2*inner:], ts, cIn)
				ge, gt = ge+e, gt+u
				for _, i := range [2]int{0, n - 1} {
					im, ip, k := stencil(i, n, g.Periodic, h)
					e, u := diffSq(ps[ip*inner:(ip+1)*inner], ps[im*inner:], ts[ip*inner:], ts[im*inner:], k)
					ge, gt = ge+e, gt+u
				}
			}
		}
	}
	return ge, gt
}

// diffSq returns sum_j (k((p1-p0) - (t1-t0)))^2 and sum_j (k(t1-t0))^2 over
// j < len(p1): the squared differences of the error and of the truth
// between two runs of rows.
func diffSq(p1, p0, t1, t0 []float32, k float64) (se, st float64) {
	p0, t1, t0 = p0[:len(p1)], t1[:len(p1)], t0[:len(p1)]
	for j, v := range p1 {
		du := k * (float64(t1[j]) - float64(t0[j]))
		de := k*(float64(v)-float64(p0[j])) - du
		se += de * de
		st += du * du
	}
	return se, st
}

// RelH1 is the relative H1 error (paper, App. "Evaluation Metrics"):
//
//	relH1(û,u) = (||û-u||^2 + ||∇û-∇u||^2)^(1/2) / (||u||^2 + ||∇u||^2)^(1/2)
//
// with ||∇v||^2 = sum_d ||D_d v||^2 over the spatial axes, D_d the finite
// difference of stencil (periodic central differences, or one-sided at the
// ends of a non-periodic axis) with the grid's spacing, and every norm a
// plain sum over the grid points and channels of the frame (a uniform cell
// volume would cancel in the ratio). A zero truth gives 0 for a zero
// prediction, NaN otherwise.
func RelH1(g Grid, pred, truth []float32) float64 {
	g.mustFrame(pred, truth)
	se, st, _ := l2Parts(pred, truth)
	ge, gt := gradParts(g, pred, truth)
	return relative(math.Sqrt(se+ge), math.Sqrt(st+gt))
}
