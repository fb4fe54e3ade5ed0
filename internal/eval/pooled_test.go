package eval

import (
	"math"
	"testing"
)

// TestBandPooledKnownAnswer: the per-frame E_b (averaged over frames, then
// trajectories) and the pooled E_b (one ratio of sums over every frame and
// trajectory, D-band-pooled) on frames built from tones whose energies are
// known in closed form. A frame with almost no truth energy in the mid
// band dominates the per-frame mean (E_mid 1e4 there) but not the pooled
// ratio; a crashed trajectory counts in neither.
func TestBandPooledKnownAnswer(t *testing.T) {
	g := unitGrid(1, true, 32) // K = 16: k = 2 is low, k = 8 mid
	const low, mid = 2, 8
	frame := func(truthMid, errMid float64) (pred, truth []float32) {
		truth = tones(g, [][]tone{{{k: []int{low}, a: 1}, {k: []int{mid}, a: truthMid}}})
		pred = tones(g, [][]tone{{{k: []int{low}, a: 1}, {k: []int{mid}, a: truthMid + errMid}}})
		return pred, truth
	}
	traj := func(frames [][2]float64, blowUp bool) *TrajectoryMetrics {
		m := NewTrajectoryMetrics(g, nil, len(frames), DefaultCrashRule, nil)
		for i, f := range frames {
			p, u := frame(f[0], f[1])
			if blowUp {
				p = scaled(p, 100)
			}
			m.Add(i+1, p, u)
		}
		return m
	}
	// (truth amplitude, error amplitude) of the mid tone, per step. Energy
	// is a^2/2 per tone, so E_mid = (err/truth)^2 per frame.
	a := traj([][2]float64{{1, 0.1}, {0.001, 0.1}}, false) // E_mid 0.01, then 1e4
	b := traj([][2]float64{{1, 0.2}, {1, 0.2}}, false)     // 0.04, 0.04
	c := traj([][2]float64{{1, 0.1}, {1, 0.1}}, true)      // crashes: relL2 about 99
	if !c.Crashed || a.Crashed || b.Crashed {
		t.Fatalf("crashed: a %v, b %v, c %v; want c only", a.Crashed, b.Crashed, c.Crashed)
	}
	o := &Outcome{Steps: 2, Trajs: []int{0, 1, 2}, Metrics: []*TrajectoryMetrics{a, b, c}}
	s := Summarize(o, BootstrapSpec{Resamples: 2000, Level: 0.95, Seed: 7})

	const tol = 1e-4 // float32 frames
	rel := func(got, want float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }
	perFrame := ((0.01+1e4)/2 + 0.04) / 2
	if got := s.Metrics[MetricBandMid].Mean; !rel(got, perFrame) {
		t.Errorf("per-frame E_mid %v, want %v", got, perFrame)
	}
	// Pooled: numerators 0.01 + 0.01 + 0.04 + 0.04, denominators 1 + 1e-6
	// + 1 + 1 (in units of a^2/2).
	pooled := 0.10 / 3.000001
	iv := s.Metrics[MetricBandMidPooled]
	if !rel(iv.Mean, pooled) || iv.N != 2 {
		t.Errorf("pooled E_mid %+v, want %v over 2 trajectories", iv, pooled)
	}
	// With two trajectories a resample is aa, ab or bb: its ratio lies
	// between a's alone (0.02 / 1.000001) and b's (0.04).
	if !(iv.Low >= 0.02/1.000001*(1-tol) && iv.Low <= iv.Mean && iv.Mean <= iv.High && iv.High <= 0.04*(1+tol)) {
		t.Errorf("pooled E_mid interval [%v, %v] around %v, want within [0.02, 0.04]", iv.Low, iv.High, iv.Mean)
	}
	if got := s.Metrics[MetricBandLowPooled]; got.Mean > 1e-10 || got.High > 1e-10 {
		t.Errorf("pooled E_low %+v, want 0 (no error in the low band)", got)
	}
	// The pooled curve per step: step 2 is (0.01 + 0.04) / (1e-6 + 1).
	c2 := s.Curves[MetricBandMidPooled].Mean
	if len(c2) != 2 || !rel(c2[0], 0.05/2) || !rel(c2[1], 0.05/1.000001) {
		t.Errorf("pooled E_mid curve %v, want [%v %v]", c2, 0.05/2, 0.05/1.000001)
	}
	// The per-frame curve at step 2 is the mean of 1e4 and 0.04.
	if got := s.Curves[MetricBandMid].Mean[1]; !rel(got, (1e4+0.04)/2) {
		t.Errorf("per-frame E_mid at step 2 %v, want %v", got, (1e4+0.04)/2)
	}
}

// TestRatioBootstrap: the ratio of sums on known pairs, NaN pairs skipped,
// 0/0 as 0 and a zero denominator as NaN (relative), one pair a zero-width
// interval, the same seed the same bits, and mismatched lengths a panic.
func TestRatioBootstrap(t *testing.T) {
	iv := RatioBootstrap([]float64{1, 2, math.NaN(), 3}, []float64{2, 2, 1, 6}, 1000, 0.95, 1)
	if iv.Mean != 0.6 || iv.N != 3 || !(iv.Low <= 0.6 && 0.6 <= iv.High) || iv.Low < 0.5 || iv.High > 1 {
		t.Errorf("ratio %+v, want 6/10 = 0.6 over 3 pairs, interval within [0.5, 1]", iv)
	}
	if again := RatioBootstrap([]float64{1, 2, math.NaN(), 3}, []float64{2, 2, 1, 6}, 1000, 0.95, 1); again != iv {
		t.Errorf("same seed: %+v then %+v", iv, again)
	}
	if iv := RatioBootstrap([]float64{0, 0}, []float64{0, 0}, 10, 0.95, 1); iv.Mean != 0 || iv.Low != 0 || iv.High != 0 {
		t.Errorf("0/0: %+v, want 0", iv)
	}
	if iv := RatioBootstrap([]float64{1, 1}, []float64{0, 0}, 10, 0.95, 1); !math.IsNaN(iv.Mean) {
		t.Errorf("1/0: %+v, want NaN", iv)
	}
	if iv := RatioBootstrap([]float64{3}, []float64{4}, 10, 0.95, 1); iv.Mean != 0.75 || iv.Low != 0.75 || iv.High != 0.75 {
		t.Errorf("one pair: %+v, want 0.75 with zero width", iv)
	}
	if iv := RatioBootstrap(nil, nil, 10, 0.95, 1); !math.IsNaN(iv.Mean) {
		t.Errorf("no pairs: %+v, want NaN", iv)
	}
	mustPanic(t, "2 numerators and 1 denominators", func() { RatioBootstrap([]float64{1, 2}, []float64{1}, 10, 0.95, 1) })
}
