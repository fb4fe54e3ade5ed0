package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// crashCase builds a trajectory: truth_t = grow(t) u and the prediction of
// step t from pred(t, truth_t).
type crashCase struct {
	name       string
	rule       CrashRule
	noU0       bool
	grow       func(t int) float32
	pred       func(t int, truth []float32) []float32
	crashStep  int
	reason     string
	meanRelL2  float64 // when not crashed
	checkCurve func(t *testing.T, m *TrajectoryMetrics)
}

// TestCrash plants each crash criterion of the paper (non-finite values,
// norm ratio > 1e3, relL2 > 10) in 1D, 2D and 3D trajectories and checks
// the outcome, the full-length curves after a crash and the means.
func TestCrash(t *testing.T) {
	const steps = 6
	same := func(int) float32 { return 1 }
	scaleAt := func(step int, a float32) func(int, []float32) []float32 {
		return func(t int, u []float32) []float32 {
			if t == step {
				return scaled(u, a)
			}
			return scaled(u, 1+0.01*float32(t))
		}
	}
	plant := func(step int, v float32) func(int, []float32) []float32 {
		return func(t int, u []float32) []float32 {
			p := scaled(u, 1+0.01*float32(t))
			if t == step {
				p[len(p)/3] = v
			}
			return p
		}
	}
	cases := []crashCase{
		{name: "clean", rule: DefaultCrashRule, grow: same, pred: scaleAt(0, 1), meanRelL2: 0.035},
		{name: "NaN at step 3", rule: DefaultCrashRule, grow: same, pred: plant(3, float32(math.NaN())),
			crashStep: 3, reason: "non-finite",
			checkCurve: func(t *testing.T, m *TrajectoryMetrics) {
				if !math.IsNaN(m.RelL2[2]) || math.IsNaN(m.RelL2[3]) {
					t.Errorf("relL2 curve %v: want NaN at step 3 only", m.RelL2)
				}
			}},
		{name: "Inf at step 2", rule: DefaultCrashRule, grow: same, pred: plant(2, float32(math.Inf(-1))),
			crashStep: 2, reason: "non-finite",
			checkCurve: func(t *testing.T, m *TrajectoryMetrics) {
				if !math.IsInf(m.MSE[1], 1) {
					t.Errorf("MSE at step 2 = %v, want +Inf kept", m.MSE[1])
				}
			}},
		// The truth grows tenfold a step and the prediction follows it within
		// 1% (relL2 0.01): only the norm ratio can fire, first at step 3,
		// where ||û_3||/||u_0|| = 1010 > 1e3.
		{name: "norm blow-up", rule: DefaultCrashRule,
			grow: func(t int) float32 { return float32(math.Pow(10, float64(t))) },
			pred: func(_ int, u []float32) []float32 { return scaled(u, 1.01) }, crashStep: 3, reason: "norm ratio"},
		{name: "norm blow-up without u0", rule: DefaultCrashRule, noU0: true,
			grow: func(t int) float32 { return float32(math.Pow(10, float64(t))) },
			pred: func(_ int, u []float32) []float32 { return scaled(u, 1.01) }, meanRelL2: 0.01},
		{name: "relL2 11 at step 5", rule: DefaultCrashRule, grow: same, pred: scaleAt(5, 12),
			crashStep: 5, reason: "relL2"},
		{name: "relL2 9.5 is no crash", rule: DefaultCrashRule, grow: same, pred: scaleAt(5, 10.5),
			meanRelL2: (0.01 + 0.02 + 0.03 + 0.04 + 9.5 + 0.06) / 6},
		{name: "relL2 test off", rule: CrashRule{}, grow: same, pred: scaleAt(5, 12),
			meanRelL2: (0.01 + 0.02 + 0.03 + 0.04 + 11 + 0.06) / 6},
		{name: "first crash kept", rule: DefaultCrashRule, grow: same,
			pred: func(t int, u []float32) []float32 {
				if t >= 2 {
					return scaled(u, 20)
				}
				return u
			}, crashStep: 2, reason: "relL2"},
	}
	for _, g := range []Grid{unitGrid(1, true, 64), unitGrid(2, true, 16, 16), unitGrid(5, true, 8, 8, 8)} {
		u := randomField(g, rand.New(rand.NewPCG(11, 11)))
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%dD/%s", len(g.Shape), tc.name), func(t *testing.T) {
				u0 := u
				if tc.noU0 {
					u0 = nil
				}
				m := NewTrajectoryMetrics(g, u0, steps, tc.rule, nil)
				for s := 1; s <= steps; s++ {
					truth := scaled(u, tc.grow(s))
					m.Add(s, tc.pred(s, truth), truth)
				}
				if m.Crashed != (tc.crashStep > 0) || m.CrashStep != tc.crashStep {
					t.Fatalf("Crashed %v at step %d (%s), want step %d", m.Crashed, m.CrashStep, m.CrashReason, tc.crashStep)
				}
				if !strings.Contains(m.CrashReason, tc.reason) {
					t.Errorf("reason %q, want one mentioning %q", m.CrashReason, tc.reason)
				}
				for _, name := range MetricNames() {
					if n := len(m.Curve(name)); n != steps {
						t.Errorf("%s curve has %d values after %d steps", name, n, steps)
					}
					mean := m.Mean(name)
					if m.Crashed && !math.IsNaN(mean) {
						t.Errorf("crashed trajectory: Mean(%s) = %v, want NaN", name, mean)
					}
				}
				if !m.Crashed {
					if got := m.Mean(MetricRelL2); !near(got, tc.meanRelL2, 1e-5) {
						t.Errorf("Mean(relL2) = %v, want %v", got, tc.meanRelL2)
					}
				}
				if tc.checkCurve != nil {
					tc.checkCurve(t, m)
				}
			})
		}
	}
	if DefaultCrashRule != (CrashRule{NormRatio: 1e3, RelL2: 10}) {
		t.Errorf("DefaultCrashRule = %+v, want the paper's {1e3, 10}", DefaultCrashRule)
	}
}
