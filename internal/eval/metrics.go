package eval

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"

	"uhno/internal/tensor"
)

// Grid is the layout of one frame: Channels fields, each on a grid of
// Shape points, stored [Channels][Shape[0]]...[Shape[len-1]] row-major, the
// last axis fastest (the layout of a tensor.Tensor sample and of a PDEBench
// frame with its fields stacked).
type Grid struct {
	Channels int
	// Shape holds the spatial sizes, 1 to 3 axes.
	Shape []int
	// Spacing is the grid spacing h_d of each axis in the task's domain
	// units (domain / N, as the H1 loss term uses): it sets the scale of
	// the gradients in relH1.
	Spacing []float64
	// Periodic selects a periodic domain (every task except Darcy): wrapped
	// differences in relH1, wrapped pairs in the structure function.
	Periodic bool
}

// minAxis is the smallest axis size Validate accepts: central differences
// need a neighbour on each side that is not the point itself.
const minAxis = 3

// Validate reports the first field of g that cannot describe a frame.
func (g Grid) Validate() error {
	if g.Channels < 1 {
		return fmt.Errorf("eval: grid Channels = %d, want >= 1", g.Channels)
	}
	if len(g.Shape) < 1 || len(g.Shape) > 3 {
		return fmt.Errorf("eval: grid Shape %v has %d axes, want 1 to 3", g.Shape, len(g.Shape))
	}
	for d, n := range g.Shape {
		if n < minAxis {
			return fmt.Errorf("eval: grid Shape[%d] = %d, want >= %d points", d, n, minAxis)
		}
	}
	if len(g.Spacing) != len(g.Shape) {
		return fmt.Errorf("eval: grid Spacing has %d values for %d axes", len(g.Spacing), len(g.Shape))
	}
	for d, h := range g.Spacing {
		if !(h > 0) || math.IsInf(h, 0) {
			return fmt.Errorf("eval: grid Spacing[%d] = %g, want a finite value > 0", d, h)
		}
	}
	return nil
}

// Len is the number of values in one frame: Channels * prod(Shape).
func (g Grid) Len() int { return g.Channels * g.points() }

// points is the number of grid points of one channel, prod(Shape).
func (g Grid) points() int {
	p := 1
	for _, n := range g.Shape {
		p *= n
	}
	return p
}

// mustFrame panics unless g is valid and every frame has g.Len() values:
// a wrong grid or length is a programming error in the caller.
func (g Grid) mustFrame(frames ...[]float32) {
	if err := g.Validate(); err != nil {
		panic(err.Error())
	}
	for _, f := range frames {
		if len(f) != g.Len() {
			panic(fmt.Sprintf("eval: frame of %d values for grid %d x %v (%d values)", len(f), g.Channels, g.Shape, g.Len()))
		}
	}
}

// axisLayout views one channel's values along spatial axis a as
// [outer, n, inner]: outer is the product of the sizes before a, inner of
// those after it.
func axisLayout(shape []int, a int) (outer, n, inner int) { return tensor.AxisLayout(shape, a) }

// mustSameLen panics when pred and truth differ in length.
func mustSameLen(pred, truth []float32) {
	if len(pred) != len(truth) {
		panic(fmt.Sprintf("eval: prediction has %d values, truth %d", len(pred), len(truth)))
	}
}

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

// Band indices of BandErrors' result.
const (
	BandLow = iota
	BandMid
	BandHigh
)

// spectrum computes the binned spectral error of frames on one grid. It
// keeps the transform buffers and the band of every Fourier mode, so one
// spectrum serves a whole trajectory; it is not safe for concurrent use.
//
// Each channel's fields are transformed with a real FFT along the last
// axis (the half spectrum, m = 0..N/2) and complex FFTs along the others;
// a mode with 0 < m < N-m stands for itself and its mirror -k, which
// carries the same energy and lies in the same band, so it is counted
// twice (weight 2), m = 0 and m = N/2 once.
type spectrum struct {
	shape []int
	half  int          // last-axis half length N/2 + 1
	code  []uint8      // per half-spectrum mode: band | weight<<2
	d, t  []complex128 // spectra of the error and the truth, one channel
}

// newSpectrum precomputes the band of every mode of g's grid. Wavenumbers
// are the integer DFT frequencies per axis (k = m for m <= N/2, m - N
// above), |k| their Euclidean length and K = min_d floor(N_d/2) the Nyquist
// radius; the bands are thirds of [0, K]:
//
//	low   |k| <  K/3        (k = 0 included)
//	mid   K/3 <= |k| < 2K/3
//	high  |k| >= 2K/3       (the corner modes beyond K included)
//
// compared exactly in integers as 9|k|^2 against K^2 and 4K^2.
func newSpectrum(g Grid) *spectrum {
	D := len(g.Shape)
	nl := g.Shape[D-1]
	s := &spectrum{shape: append([]int(nil), g.Shape...), half: nl/2 + 1}
	K := g.Shape[0] / 2
	for _, n := range g.Shape {
		K = min(K, n/2)
	}
	K2 := K * K
	size := s.half
	for _, n := range g.Shape[:D-1] {
		size *= n
	}
	s.code = make([]uint8, size)
	idx := make([]int, D)
	for f := range s.code {
		// Multi-index of mode f in the [N_0, ..., N_{D-2}, half] layout.
		r := f
		for a := D - 1; a >= 0; a-- {
			n := s.half
			if a < D-1 {
				n = g.Shape[a]
			}
			idx[a] = r % n
			r /= n
		}
		r2 := 0
		for a, m := range idx {
			k := m
			if a < D-1 && m > g.Shape[a]/2 {
				k = m - g.Shape[a]
			}
			r2 += k * k
		}
		band := uint8(BandHigh)
		switch {
		case 9*r2 < K2:
			band = BandLow
		case 9*r2 < 4*K2:
			band = BandMid
		}
		w := uint8(2)
		if m := idx[D-1]; m == 0 || 2*m == nl {
			w = 1
		}
		s.code[f] = band | w<<2
	}
	s.d = make([]complex128, size)
	s.t = make([]complex128, size)
	return s
}

// parallelFor runs fn over [0, n) split into one contiguous chunk per
// available CPU, or in the calling goroutine when the work (n items of
// cost each) is small. Each chunk's result must not depend on the split.
func parallelFor(n, cost int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 || n*cost < 1<<16 {
		fn(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// transform fills s.d and s.t with the spectra of pred-truth and truth of
// one channel (P values each). The DFT is unnormalised; only ratios of
// energies are used.
func (s *spectrum) transform(pred, truth []float32) {
	D := len(s.shape)
	nl := s.shape[D-1]
	lines := len(s.d) / s.half
	parallelFor(lines, nl, func(lo, hi int) {
		plan := fourier.NewFFT(nl)
		bd, bt := make([]float64, nl), make([]float64, nl)
		for l := lo; l < hi; l++ {
			p, t := pred[l*nl:(l+1)*nl], truth[l*nl:(l+1)*nl]
			for i := range p {
				bt[i] = float64(t[i])
				bd[i] = float64(p[i]) - bt[i]
			}
			plan.Coefficients(s.d[l*s.half:(l+1)*s.half], bd)
			plan.Coefficients(s.t[l*s.half:(l+1)*s.half], bt)
		}
	})
	// The other axes of the [N_0, ..., N_{D-2}, half] array.
	layout := append(append([]int(nil), s.shape[:D-1]...), s.half)
	for a := 0; a < D-1; a++ {
		outer, n, inner := axisLayout(layout, a)
		// Lines are taken in blocks of up to 8 neighbours along the inner
		// axis so that each strided gather reads whole cache lines.
		const blk = 8
		nb := (inner + blk - 1) / blk
		parallelFor(outer*nb, n*blk, func(lo, hi int) {
			plan := fourier.NewCmplxFFT(n)
			buf := make([]complex128, blk*n)
			for q := lo; q < hi; q++ {
				o, j0 := q/nb, (q%nb)*blk
				w := min(blk, inner-j0)
				base := o*n*inner + j0
				for _, arr := range [2][]complex128{s.d, s.t} {
					for i := 0; i < n; i++ {
						row := arr[base+i*inner:][:w]
						for j, v := range row {
							buf[j*n+i] = v
						}
					}
					for j := 0; j < w; j++ {
						line := buf[j*n : (j+1)*n]
						plan.Coefficients(line, line)
					}
					for i := 0; i < n; i++ {
						row := arr[base+i*inner:][:w]
						for j := range row {
							row[j] = buf[j*n+i]
						}
					}
				}
			}
		})
	}
}

// accumulate adds the weighted band energies of the current spectra:
// num[b] += sum |D(k)|^2, den[b] += sum |U(k)|^2 over the modes of band b.
// Sequential, so the sums do not depend on the number of CPUs.
func (s *spectrum) accumulate(num, den *[3]float64) {
	for f, c := range s.code {
		w := float64(c >> 2)
		b := c & 3
		d, t := s.d[f], s.t[f]
		num[b] += w * (real(d)*real(d) + imag(d)*imag(d))
		den[b] += w * (real(t)*real(t) + imag(t)*imag(t))
	}
}

// errors returns E_b for a frame on the spectrum's grid with channels
// channels.
func (s *spectrum) errors(channels int, pred, truth []float32) [3]float64 {
	P := len(pred) / channels
	var num, den [3]float64
	for c := 0; c < channels; c++ {
		s.transform(pred[c*P:(c+1)*P], truth[c*P:(c+1)*P])
		s.accumulate(&num, &den)
	}
	var e [3]float64
	for b := range e {
		e[b] = relative(num[b], den[b])
	}
	return e
}

// BandErrors is the binned spectral error of the paper (App. "Evaluation
// Metrics"),
//
//	E_b(û,u) = sum_{k in K_b} |Û(k)-U(k)|^2 / sum_{k in K_b} |U(k)|^2,
//
// for B = 3 bands, indexed BandLow, BandMid, BandHigh: thirds of the
// Nyquist radius K = min_d floor(N_d/2) in integer wavenumbers (see
// newSpectrum; the corners of the spectrum beyond K belong to the high
// band). Each channel is transformed on its own and the numerator and the
// denominator are summed over channels before the division, so a
// multi-channel frame is one field, as in RelL2. A band without truth
// energy gives 0 when the error has none there either, NaN otherwise
// (undefined; means in this package skip NaN).
func BandErrors(g Grid, pred, truth []float32) [3]float64 {
	g.mustFrame(pred, truth)
	return newSpectrum(g).errors(g.Channels, pred, truth)
}

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

// CrashRule holds the paper's divergence thresholds (App. "Evaluation
// Metrics", crash rate): a rollout step crashes when the prediction holds
// NaN or ±Inf (always checked), when ||û_t||_2 / ||u_0||_2 > NormRatio, or
// when relL2(û_t, u_t) > RelL2. A threshold <= 0 switches its test off.
type CrashRule struct {
	NormRatio, RelL2 float64
}

// DefaultCrashRule is the paper's rule: norm ratio 1e3, relL2 10.
var DefaultCrashRule = CrashRule{NormRatio: 1e3, RelL2: 10}

// Names of the per-trajectory metrics for TrajectoryMetrics.Curve and Mean.
const (
	MetricRelL2       = "relL2"
	MetricRelH1       = "relH1"
	MetricMSE         = "mse"
	MetricSF          = "sf"
	MetricBandLow     = "band_low"
	MetricBandMid     = "band_mid"
	MetricBandHigh    = "band_high"
	MetricEnergyDrift = "energy_drift"
)

// MetricNames lists the names Curve and Mean accept, in report order.
func MetricNames() []string {
	return []string{MetricRelL2, MetricRelH1, MetricMSE, MetricBandLow, MetricBandMid,
		MetricBandHigh, MetricSF, MetricEnergyDrift}
}

// TrajectoryMetrics accumulates the metrics of one test trajectory, step by
// step, as the rollout produces predictions. Each curve has one value per
// step added, index t-1 for step t. It is not safe for concurrent use;
// trajectories evaluated in parallel each need their own.
//
// After a crash the accumulator keeps going: Add still computes every
// metric, so the curves stay full length, and values of a blown-up or
// non-finite prediction are kept as they come (Inf, NaN). Crashed,
// CrashStep and CrashReason record the first crashing step only. A crashed
// trajectory counts in the crash rate and is left out of the metric means:
// Mean returns NaN for it, which Bootstrap skips.
type TrajectoryMetrics struct {
	// Per-step curves (paper, App. "Evaluation Metrics").
	RelL2, RelH1, MSE, SF []float64
	Band                  [][3]float64 // E_b, indexed BandLow, BandMid, BandHigh
	Drift                 []float64    // energy drift of step t against u_t (Eq. ed at each step)
	NormRatio             []float64    // ||û_t||_2 / ||u_0||_2 (NaN without u_0)

	// EnergyDrift is Eq. ed at the last step added, the test horizon once
	// all steps are in.
	EnergyDrift float64

	// Crash outcome: the first step (1-based) that met the crash rule and
	// why; CrashStep is 0 while Crashed is false.
	Crashed     bool
	CrashStep   int
	CrashReason string

	g     Grid
	steps int
	rule  CrashRule
	lags  []int
	norm0 float64 // ||u_0||_2, or NaN without u_0
	spec  *spectrum
}

// NewTrajectoryMetrics returns an accumulator for a rollout of steps steps
// on grid g. u0 is the state the rollout starts from, in g's layout (the
// last ground-truth frame given to the model), the reference of the crash
// rule's norm ratio; nil switches that test off (Darcy, a single
// prediction from the coefficient a, has no initial state of u: steps = 1
// and u0 = nil). lags are the structure-function lags (DefaultLags when
// nil). An invalid grid, steps < 1 or a u0 of the wrong length panics.
func NewTrajectoryMetrics(g Grid, u0 []float32, steps int, rule CrashRule, lags []int) *TrajectoryMetrics {
	if err := g.Validate(); err != nil {
		panic(err.Error())
	}
	if steps < 1 {
		panic(fmt.Sprintf("eval: trajectory of %d steps, want >= 1", steps))
	}
	if lags == nil {
		lags = DefaultLags
	}
	m := &TrajectoryMetrics{
		g:     Grid{Channels: g.Channels, Shape: append([]int(nil), g.Shape...), Spacing: append([]float64(nil), g.Spacing...), Periodic: g.Periodic},
		steps: steps,
		rule:  rule,
		lags:  append([]int(nil), lags...),
		norm0: math.NaN(),
		spec:  newSpectrum(g),
	}
	if u0 != nil {
		g.mustFrame(u0)
		m.norm0 = math.Sqrt(Energy(u0))
	}
	return m
}

// Steps is the number of steps the trajectory was declared with.
func (m *TrajectoryMetrics) Steps() int { return m.steps }

// Add scores the prediction of rollout step `step` against the truth u_t.
// Steps are 1..Steps() in order; any other step, or a frame of the wrong
// length, panics.
func (m *TrajectoryMetrics) Add(step int, pred, truth []float32) {
	if step != len(m.RelL2)+1 || step > m.steps {
		panic(fmt.Sprintf("eval: Add(step %d) after %d of %d steps, want step %d", step, len(m.RelL2), m.steps, len(m.RelL2)+1))
	}
	m.g.mustFrame(pred, truth)
	se, st, sp := l2Parts(pred, truth)
	ge, gt := gradParts(m.g, pred, truth)
	relL2 := relative(math.Sqrt(se), math.Sqrt(st))
	ratio := math.NaN()
	if !math.IsNaN(m.norm0) {
		ratio = relative(math.Sqrt(sp), m.norm0)
	}
	drift := relative(math.Abs(sp-st), st)
	m.RelL2 = append(m.RelL2, relL2)
	m.RelH1 = append(m.RelH1, relative(math.Sqrt(se+ge), math.Sqrt(st+gt)))
	m.MSE = append(m.MSE, se/float64(len(pred)))
	m.Band = append(m.Band, m.spec.errors(m.g.Channels, pred, truth))
	m.SF = append(m.SF, SFError(m.g, pred, truth, m.lags))
	m.Drift = append(m.Drift, drift)
	m.NormRatio = append(m.NormRatio, ratio)
	m.EnergyDrift = drift

	if m.Crashed {
		return
	}
	// sum pred^2 in float64 is finite exactly when every value is: the
	// square of the largest float32 is about 1.2e77, far below the float64
	// range even summed over 1e9 values.
	var reason string
	switch {
	case math.IsNaN(sp) || math.IsInf(sp, 0):
		reason = "non-finite value (NaN or Inf) in the prediction"
	case m.rule.NormRatio > 0 && ratio > m.rule.NormRatio:
		reason = fmt.Sprintf("norm ratio ||û_t||/||u_0|| = %.4g > %g", ratio, m.rule.NormRatio)
	case m.rule.RelL2 > 0 && relL2 > m.rule.RelL2:
		reason = fmt.Sprintf("relL2 = %.4g > %g", relL2, m.rule.RelL2)
	}
	if reason != "" {
		m.Crashed, m.CrashStep, m.CrashReason = true, step, reason
	}
}

// Curve returns the per-step values of the named metric (MetricNames), a
// copy; MetricEnergyDrift gives the Drift curve. An unknown name panics.
func (m *TrajectoryMetrics) Curve(name string) []float64 {
	band := func(b int) []float64 {
		v := make([]float64, len(m.Band))
		for t, e := range m.Band {
			v[t] = e[b]
		}
		return v
	}
	switch name {
	case MetricRelL2:
		return append([]float64(nil), m.RelL2...)
	case MetricRelH1:
		return append([]float64(nil), m.RelH1...)
	case MetricMSE:
		return append([]float64(nil), m.MSE...)
	case MetricSF:
		return append([]float64(nil), m.SF...)
	case MetricBandLow:
		return band(BandLow)
	case MetricBandMid:
		return band(BandMid)
	case MetricBandHigh:
		return band(BandHigh)
	case MetricEnergyDrift:
		return append([]float64(nil), m.Drift...)
	}
	panic(fmt.Sprintf("eval: unknown metric %q, want one of %s", name, strings.Join(MetricNames(), ", ")))
}

// Mean is the trajectory-level value of the named metric: the average over
// the steps added (the paper averages relL2, relH1 and MSE over all rollout
// steps; the spectral and structure-function errors are treated alike),
// skipping steps whose value is NaN (undefined: a zero reference), or NaN
// when no step is left. MetricEnergyDrift is not averaged: it is Eq. ed at
// the horizon, the value at the last step added. A crashed trajectory
// gives NaN for every metric, so it drops out of the means over
// trajectories (Bootstrap skips NaN) and shows only in the crash rate. An
// unknown name panics.
func (m *TrajectoryMetrics) Mean(name string) float64 {
	v := m.Curve(name)
	if m.Crashed || len(v) == 0 {
		return math.NaN()
	}
	if name == MetricEnergyDrift {
		return m.EnergyDrift
	}
	return nanMean(v)
}
