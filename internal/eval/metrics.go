package eval

import (
	"fmt"
	"math"
	"strings"

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

	// The pooled band errors: E_b as one ratio of sums over every frame
	// and trajectory (Summary only; BandSum, docs/DECISIONS.md,
	// D-band-pooled). The band metrics above are per-frame ratios
	// averaged over the frames and then the trajectories.
	MetricBandLowPooled  = "band_low_pooled"
	MetricBandMidPooled  = "band_mid_pooled"
	MetricBandHighPooled = "band_high_pooled"
)

// PooledBandNames are the pooled band metrics, indexed BandLow, BandMid,
// BandHigh.
func PooledBandNames() [3]string {
	return [3]string{MetricBandLowPooled, MetricBandMidPooled, MetricBandHighPooled}
}

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
	BandSums              []BandSum    // E_b's numerators and denominators (Band[t] = BandSums[t].Errors())
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
	bs := m.spec.sums(m.g.Channels, pred, truth)
	m.BandSums = append(m.BandSums, bs)
	m.Band = append(m.Band, bs.Errors())
	m.SF = append(m.SF, SFError(m.g, pred, truth, m.lags))
	m.Drift = append(m.Drift, drift)
	m.NormRatio = append(m.NormRatio, ratio)
	m.EnergyDrift = drift

	if m.Crashed {
		return
	}
	if reason := m.rule.crash(sp, ratio, relL2); reason != "" {
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
