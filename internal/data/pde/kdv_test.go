package pde

import (
	"math"
	"math/rand/v2"
	"testing"
)

// paperKdV is the configs/kdv.yaml task at full size.
func paperKdV() Params {
	return Params{Domain: []float64{64}, Grid: []int{128}, Dt: 0.002, TEnd: 10, Snapshots: 51,
		IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: 3 * math.Pow(7, 1.5)}}
}

// kdvSoliton is the travelling wave u = (c/2) sech^2(sqrt(c)/2 (x - c t - x0))
// of u_t + 6 u u_x + u_xxx = 0 at x_j = j L/n, placed at the nearest
// periodic image (on L = 64 the tail at L/2 is below 1e-13 for c >= 1).
func kdvSoliton(n int, length, c, x0, t float64) []float64 {
	u := make([]float64, n)
	for j := range u {
		xi := float64(j)*length/float64(n) - c*t - x0
		xi -= length * math.Round(xi/length)
		s := 1 / math.Cosh(math.Sqrt(c)/2*xi)
		u[j] = c / 2 * s * s
	}
	return u
}

// kdvTo integrates KdV from u0 to t = steps dt and returns the last state.
func kdvTo(t *testing.T, u0 []float64, length, dt float64, steps int) []float64 {
	return lastFrame(t, func(f func(int, []float64) error) error {
		return solveSemilinear1D(u0, length, kdvSymbol, kdvFlux, dt, 0, steps, 2, f)
	})
}

// TestKdVSoliton compares the solver at the paper's step 0.002 with the
// exact soliton after it has travelled c t = 10 (c = 1) or 20 (c = 2)
// length units. Measured: c = 1 on the paper's N = 128, 3.0e-5; c = 2 on
// N = 256, 1.7e-7.
func TestKdVSoliton(t *testing.T) {
	cases := []struct {
		c   float64
		n   int
		tol float64
	}{{1, 128, 1e-4}, {2, 256, 1e-6}}
	for _, tc := range cases {
		got := kdvTo(t, kdvSoliton(tc.n, 64, tc.c, 20, 0), 64, 0.002, 5000)
		if e := relErr1D(got, kdvSoliton(tc.n, 64, tc.c, 20, 10)); e > tc.tol {
			t.Errorf("c=%g N=%d: error %.2e at t = 10, want <= %.0e", tc.c, tc.n, e, tc.tol)
		} else {
			t.Logf("c=%g N=%d: error %.2e", tc.c, tc.n, e)
		}
	}
}

// TestKdVSpatialAccuracy: on the c = 1 soliton (t = 10, dt = 0.002, time
// error ~1e-12) the observed algebraic order in N keeps growing, the
// spectral signature. Measured errors 1.8e-2, 7.1e-4, 3.0e-5, 6.9e-8 at
// N = 64, 96, 128, 192: orders 8.0, 11.0, 15.0.
func TestKdVSpatialAccuracy(t *testing.T) {
	ns := []int{64, 96, 128, 192}
	hs := make([]float64, len(ns))
	errs := make([]float64, len(ns))
	for i, n := range ns {
		hs[i] = 1 / float64(n)
		errs[i] = relErr1D(kdvTo(t, kdvSoliton(n, 64, 1, 20, 0), 64, 0.002, 5000), kdvSoliton(n, 64, 1, 20, 10))
	}
	p := orders(hs, errs)
	for i := 1; i < len(p); i++ {
		if p[i] <= p[i-1] {
			t.Errorf("observed orders %.2f do not keep growing (errors %.2e)", p, errs)
			break
		}
	}
	if errs[len(errs)-1] > 1e-6 {
		t.Errorf("N = 192: error %.2e, want <= 1e-6", errs[len(errs)-1])
	}
	t.Logf("errors %.2e, orders %.2f", errs, p)
}

// TestKdVTimeOrder: fourth order in time against the exact soliton
// (c = 1, N = 256, where the spatial error is 1e-10, t = 4), halving dt
// from 0.04. Measured errors 2.2e-6, 1.3e-7, 8.1e-9, 5.1e-10: orders
// 4.07, 4.02, 3.98.
func TestKdVTimeOrder(t *testing.T) {
	const n, tEnd = 256, 4.0
	want := kdvSoliton(n, 64, 1, 20, tEnd)
	dts := []float64{0.04, 0.02, 0.01, 0.005}
	errs := make([]float64, len(dts))
	for i, dt := range dts {
		errs[i] = relErr1D(kdvTo(t, kdvSoliton(n, 64, 1, 20, 0), 64, dt, int(math.Round(tEnd/dt))), want)
	}
	for i, p := range orders(dts, errs) {
		if p < 3.8 || p > 4.3 {
			t.Errorf("dt %g -> %g: observed order %.3f (errors %.2e), want 4", dts[i], dts[i+1], p, errs)
		}
	}
	t.Logf("errors %.2e, orders %.3f", errs, orders(dts, errs))
}

// TestKdVConservation: on random fields from the configured law, offset by
// 0.1 so the mass is not zero, the mass int u and the energy int u^2 are
// conserved over the configured window (t = 10, dt = 0.002) on N = 128 and
// 256: the de-aliased Fourier-Galerkin system conserves both exactly, and
// ETDRK4 keeps the energy to O(dt^4). Measured drifts: mass <= 2e-15,
// energy <= 2e-10.
func TestKdVConservation(t *testing.T) {
	p := paperKdV()
	for _, n := range []int{128, 256} {
		g := NewGRF([]int{n}, []float64{1}, p.IC.Alpha, p.IC.Tau, p.IC.Sigma)
		for i := 0; i < 2; i++ {
			u0 := make([]float64, n)
			g.Sample(rand.New(rand.NewPCG(0, uint64(i))), u0)
			for j := range u0 {
				u0[j] += 0.1
			}
			var m0, e0, dm, de float64
			err := solveSemilinear1D(u0, p.Domain[0], kdvSymbol, kdvFlux, p.Dt, 0, 100, p.Snapshots, func(k int, u []float64) error {
				m, e := 0.0, 0.0
				for _, x := range u {
					m += x
					e += x * x
				}
				if k == 0 {
					m0, e0 = m, e
				}
				dm = math.Max(dm, math.Abs(m-m0)/math.Abs(m0))
				de = math.Max(de, math.Abs(e-e0)/e0)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if dm > 1e-13 || de > 1e-9 {
				t.Errorf("N=%d draw %d: relative drift of mass %.1e, energy %.1e; want <= 1e-13, 1e-9", n, i, dm, de)
			}
			t.Logf("N=%d draw %d: mass drift %.1e, energy drift %.1e", n, i, dm, de)
		}
	}
}

// TestKdVResolution measures how fine the solver grid must be for the
// configured field (sigma = 3 x 7^{3/2}). The initial field is band-limited
// to the modes that 128 points keep (m <= 42), so every run starts from the
// same function; runs on 128, 256 and 512 points are compared at the saved
// 128 points over the whole window. Draws 3 and 5 are the two largest of
// the first six (peaks 1.8 and 1.5). Solving on 256 points agrees with 512
// to < 1e-3 (measured 6.9e-5 and 2.0e-5), while the paper's 128 points
// with the 2/3 rule differ by 6e-2 and 2e-2: tall solitons are narrower
// than 42 modes resolve. Hence the recommendation solver_grid = 256 for
// kdv (Params.SolverGrid).
func TestKdVResolution(t *testing.T) {
	p := paperKdV()
	g := NewGRF([]int{128}, []float64{1}, p.IC.Alpha, p.IC.Tau, p.IC.Sigma)
	for _, i := range []int{3, 5} {
		u128 := make([]float64, 128)
		g.Sample(rand.New(rand.NewPCG(0, uint64(i))), u128)
		coarse := newSpectral1D(128, p.Domain[0])
		v := make([]complex128, coarse.modes())
		coarse.forward(v, u128)
		coarse.truncate(v)
		runs := map[int][]float64{}
		for _, n := range []int{128, 256, 512} {
			sp := newSpectral1D(n, p.Domain[0])
			w := make([]complex128, sp.modes())
			copy(w, v)
			u0 := make([]float64, n)
			sp.inverse(u0, w)
			var frames []float64
			err := solveSemilinear1D(u0, p.Domain[0], kdvSymbol, kdvFlux, p.Dt, 0, 100, p.Snapshots, func(_ int, u []float64) error {
				for j := 0; j < 128; j++ {
					frames = append(frames, u[j*n/128])
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			runs[n] = frames
		}
		worst := func(a, b []float64) float64 {
			m := 0.0
			for k := 0; k < p.Snapshots; k++ {
				m = math.Max(m, relErr1D(a[k*128:(k+1)*128], b[k*128:(k+1)*128]))
			}
			return m
		}
		d256, d128 := worst(runs[256], runs[512]), worst(runs[128], runs[512])
		if d256 > 1e-3 {
			t.Errorf("draw %d: solver grid 256 differs from 512 by %.1e, want < 1e-3", i, d256)
		}
		t.Logf("draw %d: worst frame vs 512 points: 256 points %.1e, 128 points %.1e", i, d256, d128)
	}
}

// BenchmarkKdVTrajectory times one paper-size trajectory (configs/kdv.yaml)
// on the solver grid 128 of the config and on 256.
func BenchmarkKdVTrajectory(b *testing.B) {
	for _, sg := range []int{128, 256} {
		b.Run(map[int]string{128: "solver128", 256: "solver256"}[sg], func(b *testing.B) {
			p := paperKdV()
			p.SolverGrid = []int{sg}
			g, err := NewKdV(p)
			if err != nil {
				b.Fatal(err)
			}
			dst := [][]float32{make([]float32, 51*128)}
			for i := 0; b.Loop(); i++ {
				if err := g.Generate(0, i, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
