package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// unitGrid is a grid on the unit domain: spacing 1/N per axis, the
// spacing of a periodic task on [0,1)^d.
func unitGrid(channels int, periodic bool, shape ...int) Grid {
	h := make([]float64, len(shape))
	for d, n := range shape {
		h[d] = 1 / float64(n)
	}
	return Grid{Channels: channels, Shape: shape, Spacing: h, Periodic: periodic}
}

// field samples f(c, x) at every point of g, x_d = i_d h_d, in g's layout.
func field(g Grid, f func(c int, x []float64) float64) []float32 {
	u := make([]float32, g.Len())
	x := make([]float64, len(g.Shape))
	P := g.points()
	for c := 0; c < g.Channels; c++ {
		for p := 0; p < P; p++ {
			r := p
			for d := len(g.Shape) - 1; d >= 0; d-- {
				x[d] = float64(r%g.Shape[d]) * g.Spacing[d]
				r /= g.Shape[d]
			}
			u[c*P+p] = float32(f(c, x))
		}
	}
	return u
}

// index returns the grid indices i_d of point x (x_d = i_d h_d).
func index(g Grid, x []float64) []int {
	i := make([]int, len(x))
	for d := range x {
		i[d] = int(math.Round(x[d] / g.Spacing[d]))
	}
	return i
}

// randomField is a smooth random periodic field: a few random Fourier
// modes per channel.
func randomField(g Grid, rng *rand.Rand) []float32 {
	type mode struct {
		k    []float64
		a, p float64
	}
	modes := make([][]mode, g.Channels)
	for c := range modes {
		for range 6 {
			k := make([]float64, len(g.Shape))
			for d := range k {
				k[d] = float64(rng.IntN(7) - 3)
			}
			modes[c] = append(modes[c], mode{k, rng.NormFloat64(), 2 * math.Pi * rng.Float64()})
		}
	}
	return field(g, func(c int, x []float64) float64 {
		v := 0.3
		for _, m := range modes[c] {
			th := m.p
			for d := range x {
				th += 2 * math.Pi * m.k[d] * x[d] / (g.Spacing[d] * float64(g.Shape[d]))
			}
			v += m.a * math.Cos(th)
		}
		return v
	})
}

func scaled(u []float32, a float32) []float32 {
	v := make([]float32, len(u))
	for i, x := range u {
		v[i] = a * x
	}
	return v
}

// near reports whether got is within tol of want, relative to max(1, |want|).
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// mustPanic fails unless fn panics with a message containing want.
func mustPanic(t *testing.T, want string, fn func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want one mentioning %q", want)
		}
		if msg := fmt.Sprint(r); !strings.Contains(msg, want) {
			t.Fatalf("panic %q, want one mentioning %q", msg, want)
		}
	}()
	fn()
}

// TestGridValidate checks that each bad field is named, and Len.
func TestGridValidate(t *testing.T) {
	ok := Grid{Channels: 5, Shape: []int{8, 6, 4}, Spacing: []float64{0.1, 0.2, 0.3}, Periodic: true}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid grid: %v", err)
	}
	if ok.Len() != 5*8*6*4 {
		t.Errorf("Len = %d, want %d", ok.Len(), 5*8*6*4)
	}
	for _, tc := range []struct {
		name string
		g    Grid
		want string
	}{
		{"no channels", Grid{Channels: 0, Shape: []int{8}, Spacing: []float64{1}}, "Channels"},
		{"no axes", Grid{Channels: 1}, "Shape"},
		{"four axes", Grid{Channels: 1, Shape: []int{4, 4, 4, 4}, Spacing: []float64{1, 1, 1, 1}}, "Shape"},
		{"short axis", Grid{Channels: 1, Shape: []int{8, 2}, Spacing: []float64{1, 1}}, "Shape[1]"},
		{"spacing count", Grid{Channels: 1, Shape: []int{8, 8}, Spacing: []float64{1}}, "Spacing"},
		{"zero spacing", Grid{Channels: 1, Shape: []int{8, 8}, Spacing: []float64{1, 0}}, "Spacing[1]"},
		{"NaN spacing", Grid{Channels: 1, Shape: []int{8}, Spacing: []float64{math.NaN()}}, "Spacing[0]"},
		{"Inf spacing", Grid{Channels: 1, Shape: []int{8}, Spacing: []float64{math.Inf(1)}}, "Spacing[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.g.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
	mustPanic(t, "frame of 3 values", func() { RelH1(unitGrid(1, true, 4), make([]float32, 3), make([]float32, 3)) })
}

// TestTrajectoryMetrics checks that the accumulator's curves are the
// per-frame functions, the means and the energy drift at the horizon, and
// the misuse panics; with a Darcy-like single prediction on a non-periodic
// grid as well.
func TestTrajectoryMetrics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	lags := []int{1, 3, 9}
	for _, tc := range []struct {
		name  string
		g     Grid
		steps int
		noU0  bool
	}{
		{"1D", unitGrid(1, true, 96), 4, false},
		{"2D", Grid{Channels: 2, Shape: []int{24, 20}, Spacing: []float64{0.5, 0.25}, Periodic: true}, 3, false},
		{"3D", unitGrid(5, true, 12, 10, 16), 3, false},
		{"Darcy", unitGrid(1, false, 32, 32), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u0 := randomField(tc.g, rng)
			var first []float32
			if !tc.noU0 {
				first = u0
			}
			m := NewTrajectoryMetrics(tc.g, first, tc.steps, DefaultCrashRule, lags)
			var sum float64
			var pred, truth []float32
			for s := 1; s <= tc.steps; s++ {
				truth = randomField(tc.g, rng)
				pred = make([]float32, len(truth))
				for i := range pred {
					pred[i] = truth[i] + float32(0.05*float64(s)*rng.NormFloat64())
				}
				m.Add(s, pred, truth)
				want := []float64{RelL2(pred, truth), RelH1(tc.g, pred, truth), MSE(pred, truth),
					SFError(tc.g, pred, truth, lags), EnergyDrift(pred, truth)}
				got := []float64{m.RelL2[s-1], m.RelH1[s-1], m.MSE[s-1], m.SF[s-1], m.Drift[s-1]}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("step %d: curve value %d = %v, function %v", s, i, got[i], want[i])
					}
				}
				if b := BandErrors(tc.g, pred, truth); m.Band[s-1] != b {
					t.Errorf("step %d: bands %v, BandErrors %v", s, m.Band[s-1], b)
				}
				if tc.noU0 != math.IsNaN(m.NormRatio[s-1]) {
					t.Errorf("step %d: norm ratio %v with u0 given: %v", s, m.NormRatio[s-1], !tc.noU0)
				}
				sum += m.RelL2[s-1]
			}
			if m.Crashed {
				t.Fatalf("crashed: %s", m.CrashReason)
			}
			if got := m.Mean(MetricRelL2); !near(got, sum/float64(tc.steps), 1e-14) {
				t.Errorf("Mean(relL2) = %v, want %v", got, sum/float64(tc.steps))
			}
			if ed := EnergyDrift(pred, truth); m.EnergyDrift != ed || m.Mean(MetricEnergyDrift) != ed {
				t.Errorf("energy drift %v, Mean %v, want Eq. ed at the last step %v", m.EnergyDrift, m.Mean(MetricEnergyDrift), ed)
			}
			if got := m.Curve(MetricBandHigh)[0]; got != m.Band[0][BandHigh] {
				t.Errorf("Curve(band_high)[0] = %v, want %v", got, m.Band[0][BandHigh])
			}
			mustPanic(t, "after", func() { m.Add(tc.steps+1, pred, truth) })
			mustPanic(t, "unknown metric", func() { m.Mean("relL3") })
		})
	}
	g := unitGrid(1, true, 16)
	m := NewTrajectoryMetrics(g, nil, 3, DefaultCrashRule, nil)
	u := make([]float32, 16)
	mustPanic(t, "want step 1", func() { m.Add(2, u, u) })
	mustPanic(t, "Channels", func() { NewTrajectoryMetrics(Grid{}, nil, 1, DefaultCrashRule, nil) })
	mustPanic(t, "steps", func() { NewTrajectoryMetrics(g, nil, 0, DefaultCrashRule, nil) })
}

// TestMeanSkipsUndefined checks that a step with an undefined relative
// error (a zero truth against a nonzero prediction) is not a crash and is
// left out of the mean.
func TestMeanSkipsUndefined(t *testing.T) {
	g := unitGrid(1, true, 32)
	u := randomField(g, rand.New(rand.NewPCG(2, 2)))
	m := NewTrajectoryMetrics(g, u, 3, DefaultCrashRule, nil)
	m.Add(1, scaled(u, 1.1), u)
	m.Add(2, u, make([]float32, len(u)))
	m.Add(3, scaled(u, 1.3), u)
	if m.Crashed {
		t.Fatalf("crashed: %s", m.CrashReason)
	}
	if !math.IsNaN(m.RelL2[1]) {
		t.Fatalf("relL2 against a zero truth = %v, want NaN", m.RelL2[1])
	}
	if got := m.Mean(MetricRelL2); !near(got, 0.2, 1e-6) {
		t.Errorf("Mean(relL2) = %v, want 0.2 (steps 1 and 3)", got)
	}
}

// Benchmarks at the largest size, one 128^3 channel of 3D-CFD.
func benchFrames(b *testing.B) (Grid, []float32, []float32) {
	g := unitGrid(1, true, 128, 128, 128)
	rng := rand.New(rand.NewPCG(1, 2))
	u, p := make([]float32, g.Len()), make([]float32, g.Len())
	for i := range u {
		u[i] = float32(rng.NormFloat64())
		p[i] = u[i] + 0.1*float32(rng.NormFloat64())
	}
	return g, p, u
}
