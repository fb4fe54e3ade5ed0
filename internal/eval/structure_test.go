package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// ramp is u = scale * i_axis.
func ramp(g Grid, axis int, scale func(c int) float64) []float32 {
	return field(g, func(c int, x []float64) float64 { return scale(c) * float64(index(g, x)[axis]) })
}

// TestStructureFunction checks S_r on ramps: r^2 per in-domain pair,
// r(N-r) on a periodic axis (N-r pairs differ by r, r by r-N), averaged
// over axes (a ramp along one axis is flat along the others) and channels.
func TestStructureFunction(t *testing.T) {
	one := func(int) float64 { return 1 }
	for _, tc := range []struct {
		name string
		g    Grid
		axis int
		sc   func(int) float64
		want func(r, n float64) float64
	}{
		{"1D", unitGrid(1, false, 40), 0, one, func(r, _ float64) float64 { return r * r }},
		{"1D periodic", unitGrid(1, true, 40), 0, one, func(r, n float64) float64 { return r * (n - r) }},
		{"2D axis 0", unitGrid(1, false, 40, 36), 0, one, func(r, _ float64) float64 { return r * r / 2 }},
		{"2D two channels", unitGrid(2, false, 40, 36), 0, func(c int) float64 { return float64(c + 1) },
			func(r, _ float64) float64 { return (r*r + 4*r*r) / 4 }},
		{"2D periodic axis 1", unitGrid(1, true, 36, 40), 1, one, func(r, n float64) float64 { return r * (n - r) / 2 }},
		{"3D last axis", unitGrid(1, false, 34, 34, 40), 2, one, func(r, _ float64) float64 { return r * r / 3 }},
		{"3D periodic middle axis", unitGrid(1, true, 34, 40, 34), 1, one, func(r, n float64) float64 { return r * (n - r) / 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := ramp(tc.g, tc.axis, tc.sc)
			n := float64(tc.g.Shape[tc.axis])
			for _, r := range []int{1, 2, 4, 8, 16, 32, 33} {
				if got, want := StructureFunction(tc.g, u, r), tc.want(float64(r), n); !near(got, want, 1e-12) {
					t.Errorf("S_%d = %v, want %v", r, got, want)
				}
			}
		})
	}
	g := unitGrid(1, true, 16, 20)
	u := make([]float32, g.Len())
	mustPanic(t, "lag 16 outside 1..15", func() { StructureFunction(g, u, 16) })
	mustPanic(t, "lag 0", func() { StructureFunction(g, u, 0) })
}

// roll shifts u periodically by s_d points along each axis.
func roll(g Grid, u []float32, s []int) []float32 {
	v := make([]float32, len(u))
	P := g.points()
	for c := 0; c < g.Channels; c++ {
		for p := 0; p < P; p++ {
			q, r, stride := 0, p, 1
			for d := len(g.Shape) - 1; d >= 0; d-- {
				i := r % g.Shape[d]
				r /= g.Shape[d]
				q += ((i + s[d]) % g.Shape[d]) * stride
				stride *= g.Shape[d]
			}
			v[c*P+q] = u[c*P+p]
		}
	}
	return v
}

// TestSFError checks Eq. sf: a periodic shift leaves every S_r unchanged
// (error 0), a scaled field û = a u gives |a^2 - 1|, and lags that do not
// fit the grid are skipped.
func TestSFError(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, g := range []Grid{unitGrid(1, true, 128), unitGrid(2, true, 64, 48), unitGrid(3, true, 40, 36, 34)} {
		t.Run(fmt.Sprint(g.Shape), func(t *testing.T) {
			u := randomField(g, rng)
			shift := []int{5, 11, 3}[:len(g.Shape)]
			if got := SFError(g, roll(g, u, shift), u, nil); got > 1e-12 {
				t.Errorf("shifted field: SF = %g, want 0", got)
			}
			for _, a := range []float32{0.5, 2, 1.5} {
				want := math.Abs(float64(a)*float64(a) - 1)
				if got := SFError(g, scaled(u, a), u, DefaultLags); !near(got, want, 1e-6) {
					t.Errorf("scaled by %g: SF = %v, want %v", a, got, want)
				}
			}
			// A noisy prediction: nil lags mean DefaultLags.
			p := make([]float32, len(u))
			for i := range p {
				p[i] = u[i] + float32(0.1*rng.NormFloat64())
			}
			if a, b := SFError(g, p, u, nil), SFError(g, p, u, DefaultLags); a != b || a == 0 {
				t.Errorf("nil lags %v, DefaultLags %v", a, b)
			}
		})
	}
	// On a 16 x 64 grid the lags 16 and 32 do not fit the first axis.
	g := unitGrid(1, false, 16, 64)
	u := randomField(g, rng)
	p := randomField(g, rng)
	if a, b := SFError(g, p, u, DefaultLags), SFError(g, p, u, []int{1, 2, 4, 8}); a != b {
		t.Errorf("lags >= 16 not skipped: %v vs %v", a, b)
	}
	if got := SFError(g, p, u, []int{16, 32}); !math.IsNaN(got) {
		t.Errorf("no usable lag: SF = %v, want NaN", got)
	}
	mustPanic(t, "lag 0", func() { SFError(g, p, u, []int{0, 1}) })
}

func BenchmarkSFError128Cubed(b *testing.B) {
	g, p, u := benchFrames(b)
	for b.Loop() {
		SFError(g, p, u, nil)
	}
}
