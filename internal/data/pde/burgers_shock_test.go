package pde

import (
	"math"
	"math/cmplx"
	"testing"
)

// Verification of the shock-forming Burgers regime (configs/burgers-shock.yaml:
// nu = 0.001, solver grid 2048, dt = 5e-5, every 16th point saved to 128).
// At nu = 0.001 a front of jump J is about 4 nu/J = 0.002-0.004 wide, well
// under one saved cell, so the tests check the scheme there directly: against
// the exact Cole-Hopf solution, its order in time, and a grid twice as fine.

// shockNu, shockGrid and shockDt are the regime's solver settings.
const (
	shockNu   = 0.001
	shockGrid = 2048
	shockDt   = 5e-5
)

// shockWave is the two-mode initial wave u0 = sin(2 pi x) + 0.5 sin(4 pi x + 1.1)
// at nu = 0.001: max |u0| = 1.5 (advective number |u| k_max dt = 0.32 at
// the regime's settings); its steepest negative slope, about -12, forms a
// shock at t = 0.085, and by t = 0.2 the exact solution's fronts have
// one-cell slopes of 300-460 on the 2048 grid.
func shockWave(quad int) *coleHopf {
	return &coleHopf{a: []float64{1, 0.5}, p: []float64{0, 1.1}, length: 1, nu: shockNu, quad: quad}
}

// heatSeries is Cole-Hopf evaluated the other way, independent of the
// quadrature in coleHopf.at: phi_0 = exp(-Phi/(2 nu)) expanded in a Fourier
// series on m points, each mode decayed by the heat equation, and
// u = -2 nu phi_x / phi at x_j = j L/n. It needs phi_0 smooth and of
// moderate range (nu not small), so it checks the quadrature at nu = 0.05.
func heatSeries(ch *coleHopf, m, n int, t float64) []float64 {
	c := make([]complex128, m)
	for j := range m {
		x := float64(j) * ch.length / float64(m)
		f := math.Exp(-ch.phi(x) / (2 * ch.nu))
		for k := range c {
			c[k] += complex(f/float64(m), 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(k*j)/float64(m)))
		}
	}
	u := make([]float64, n)
	for j := range u {
		x := float64(j) * ch.length / float64(n)
		var phi, phiX complex128
		for k := range c {
			kk := k
			if k > m/2 {
				kk = k - m
			}
			if 2*k == m {
				continue // the Nyquist mode: negligible for smooth phi_0
			}
			w := 2 * math.Pi * float64(kk) / ch.length
			e := c[k] * complex(math.Exp(-ch.nu*w*w*t), 0) * cmplx.Exp(complex(0, w*x))
			phi += e
			phiX += complex(0, w) * e
		}
		u[j] = -2 * ch.nu * real(phiX) / real(phi)
	}
	return u
}

// TestColeHopfQuadrature checks the exact solution the shock tests compare
// with. At nu = 0.05 (phi_0 spans e^4) the log-sum-exp quadrature agrees
// with the heat-equation Fourier series; at nu = 0.001, after the shock,
// where phi_0 spans e^200 and the series is useless, it has converged in dy
// (halving it) and in the cut (exp(-50) against exp(-100)).
// Measured: series 3.8e-14 and 2.8e-14 (t = 0.1, 0.3); dy 1.9e-15; cut 1.9e-15.
func TestColeHopfQuadrature(t *testing.T) {
	smooth := &coleHopf{a: []float64{1, 0.5}, p: []float64{0, 1.1}, length: 1, nu: 0.05, quad: 4096}
	for _, tt := range []float64{0.1, 0.3} {
		if e := relErr1D(smooth.at(128, tt), heatSeries(smooth, 256, 128, tt)); e > 1e-12 {
			t.Errorf("nu = 0.05, t = %g: quadrature and heat series differ by %.2e, want <= 1e-12", tt, e)
		} else {
			t.Logf("nu = 0.05, t = %g: quadrature vs heat series %.1e", tt, e)
		}
	}
	const tt = 0.3
	ref := shockWave(4096).at(128, tt)
	coarse := shockWave(2048).at(128, tt)
	wide := shockWave(4096)
	wide.cut = 100
	if e := relErr1D(coarse, ref); e > 1e-12 {
		t.Errorf("nu = 0.001, t = %g: dy = 1/2048 vs 1/4096 differ by %.2e, want <= 1e-12", tt, e)
	} else {
		t.Logf("nu = 0.001: dy = 1/2048 vs 1/4096: %.1e", e)
	}
	if e := relErr1D(wide.at(128, tt), ref); e > 1e-14 {
		t.Errorf("nu = 0.001, t = %g: cut exp(-100) vs exp(-50) differ by %.2e, want <= 1e-14", tt, e)
	} else {
		t.Logf("nu = 0.001: cut exp(-100) vs exp(-50): %.1e", e)
	}
}

// TestBurgersShockColeHopf runs the regime's scheme (solver grid 2048,
// dt = 5e-5, every 16th point saved) on shockWave and compares the 128
// saved points with Cole-Hopf after the shock has formed.
// Measured: 1.67e-6 at t = 0.2 and 2.7e-7 at t = 0.4 (exact one-cell
// slopes 457 at both), the O(dt^2) time error (TestBurgersShockTimeOrder):
// halving dt divides it by 3.5-4, and a 4096 grid changes it by under 5%.
func TestBurgersShockColeHopf(t *testing.T) {
	ch := shockWave(4096)
	cases := []struct {
		t, tol, minSlope float64
	}{{0.2, 2.5e-6, 300}, {0.4, 5e-7, 250}}
	every := int(math.Round(cases[0].t / shockDt))
	var frames [][]float64
	err := solveBurgers(ch.initial(shockGrid), 1, shockNu, shockDt, every, len(cases)+1, func(_ int, u []float64) error {
		frames = append(frames, saved(u, shockGrid/128))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		slope := maxSlope(ch.at(shockGrid, tc.t), 1)
		if slope < tc.minSlope {
			t.Fatalf("t=%g: exact max |u_x| = %.0f: the case no longer tests a shock", tc.t, slope)
		}
		want := ch.at(128, tc.t)
		if e := relErr1D(frames[i+1], want); e > tc.tol {
			t.Errorf("t=%g: relative L2 error %.2e against Cole-Hopf, want <= %.1e", tc.t, e, tc.tol)
		} else {
			t.Logf("t=%g (max |u_x| %.0f): error %.2e", tc.t, slope, e)
		}
	}
}

// TestBurgersShockTimeOrder is TestBurgersTimeOrder at nu = 0.001 on the
// regime's 2048-point grid (spatial error below 1e-7 there) at t = 0.3,
// after the shock, with dt from 1e-4 (advective number 0.64) down to
// 2.5e-5. Measured errors 6.23e-6, 1.56e-6, 3.89e-7: orders 2.000, 2.000.
func TestBurgersShockTimeOrder(t *testing.T) {
	dts := []float64{1e-4, 5e-5, 2.5e-5}
	errs, ps := burgersTimeOrder(t, shockWave(4096), shockGrid, 0.3, dts)
	for i, p := range ps {
		if p < 1.9 || p > 2.1 {
			t.Errorf("dt %g -> %g: observed order %.3f (errors %.2e), want 2", dts[i], dts[i+1], p, errs)
		}
	}
	t.Logf("errors %.2e, orders %.3f", errs, ps)
}

// TestBurgersShockSolverGrid measures what the regime's solver grid
// resolves on its own random fields: the saved frames from solver grids
// 2048 and 4096 agree to 1e-5 relative L2 through shock formation
// (t <= 0.3, frames every 0.05). Measured on trajectory 3 of seed 0:
// 1.8e-6 at t = 0 (the 4096 grid keeps GRF modes the 2048 grid drops),
// 0 at t = 0.05 and 0.1, then 1e-7, 5.1e-6 and 2.2e-6 at t = 0.15-0.25 as
// the fronts steepen (largest one-cell jump 0.87 of the range at t = 0.2).
func TestBurgersShockSolverGrid(t *testing.T) {
	p := Params{Domain: []float64{1}, Grid: []int{128}, SolverGrid: []int{shockGrid}, Nu: shockNu, Dt: shockDt, TEnd: 0.3, Snapshots: 7,
		IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: math.Pow(7, 2.5)}}
	frames := framesAtSolverGrids(t, p, shockGrid, 2*shockGrid)
	worst := 0.0
	for k := range p.Snapshots {
		a, b := frames[shockGrid][k*128:(k+1)*128], frames[2*shockGrid][k*128:(k+1)*128]
		d := relErr32(a, b)
		if d > 1e-5 {
			t.Errorf("frame %d: solver grids %d and %d differ by %.1e, want <= 1e-5", k, shockGrid, 2*shockGrid, d)
		}
		worst = math.Max(worst, d)
	}
	t.Logf("largest difference %.1e", worst)
}
