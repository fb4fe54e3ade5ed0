package pde

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// ns2DPaper is configs/ns2d.yaml with the solver step proposed for it
// (dt = 0.02) and a given horizon.
func ns2DPaper(dt, tEnd float64, snapshots int) Params {
	return Params{
		Grid: []int{64, 64}, Domain: []float64{1, 1},
		Nu: 1e-3, Forcing: 0.1, Dt: dt, TEnd: tEnd, Snapshots: snapshots,
		IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: math.Pow(7, 1.5)},
	}
}

// relDiff2D is |a - b|_2 / |b|_2.
func relDiff2D(a, b []float64) float64 {
	var d, n float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		n += b[i] * b[i]
	}
	return math.Sqrt(d / n)
}

// nsRun solves from w0 with parameters p and returns the frames; fixed
// turns the Courant control off.
func nsRun(t *testing.T, p Params, w0 []float64, fixed bool) [][]float64 {
	t.Helper()
	g, err := NewNS2D(p)
	if err != nil {
		t.Fatal(err)
	}
	g.fixedStep = fixed
	frames := make([][]float64, p.Snapshots)
	for k := range frames {
		frames[k] = make([]float64, len(w0))
	}
	if err := g.solve(w0, frames); err != nil {
		t.Fatal(err)
	}
	return frames
}

// nsGRF draws an initial vorticity of p's field, scaled by amp.
func nsGRF(p Params, seed uint64, amp float64) []float64 {
	g := NewGRF([]int{p.Grid[0], p.Grid[1]}, []float64{p.Domain[0], p.Domain[1]}, p.IC.Alpha, p.IC.Tau, p.IC.Sigma)
	w := make([]float64, g.Len())
	g.Sample(rand.New(rand.NewPCG(seed, 0)), w)
	for i := range w {
		w[i] *= amp
	}
	return w
}

// TestNS2DTaylorGreen runs the decaying Taylor-Green vortex
// w = 2k cos(kx) cos(ky), k = 4 pi, with f = 0: its advection term
// vanishes, so w(t) = w0 exp(-2 nu k^2 t) exactly. The error at t = 1
// must fall with order 2 in dt (Crank-Nicolson).
func TestNS2DTaylorGreen(t *testing.T) {
	const n = 32
	const nu = 0.01
	k := 4 * math.Pi
	w0 := make([]float64, n*n)
	for i := range n {
		for j := range n {
			w0[i*n+j] = 2 * k * math.Cos(k*float64(i)/n) * math.Cos(k*float64(j)/n)
		}
	}
	decay := math.Exp(-2 * nu * k * k * 1.0)
	var errs []float64
	dts := []float64{0.1, 0.05, 0.025, 0.0125}
	for _, dt := range dts {
		p := Params{Grid: []int{n, n}, Domain: []float64{1, 1}, Nu: nu, Dt: dt, TEnd: 1, Snapshots: 2,
			IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: 1}}
		got := nsRun(t, p, w0, true)[1]
		want := make([]float64, len(w0))
		for i := range want {
			want[i] = w0[i] * decay
		}
		errs = append(errs, relDiff2D(got, want))
	}
	for i := 1; i < len(errs); i++ {
		order := math.Log2(errs[i-1] / errs[i])
		t.Logf("dt %.4f: relative error %.3e, observed order %.3f", dts[i], errs[i], order)
		if order < 1.9 || order > 2.1 {
			t.Errorf("observed order %.3f between dt = %g and %g, want 2", order, dts[i-1], dts[i])
		}
	}
}

// TestNS2DForcedSteadyState checks the forcing and the viscous operator
// together: w_s = f/(nu |k|^2), |k|^2 = 8 pi^2, depends on x + y only, so
// its advection term vanishes and it is an exact steady solution; started
// from 0 the solution is w_s (1 - exp(-nu |k|^2 t)) exactly. Both are
// checked at the paper's grid, viscosity, forcing and the proposed step.
func TestNS2DForcedSteadyState(t *testing.T) {
	p := ns2DPaper(0.02, 10, 11)
	n := p.Grid[0]
	lam := p.Nu * 8 * math.Pi * math.Pi
	ws := make([]float64, n*n)
	for i := range n {
		for j := range n {
			s, c := math.Sincos(2 * math.Pi * float64(i+j) / float64(n))
			ws[i*n+j] = p.Forcing * (s + c) / lam
		}
	}
	steady := nsRun(t, p, ws, false)
	if e := relDiff2D(steady[len(steady)-1], ws); e > 1e-12 {
		t.Errorf("steady state drifted by %.3e relative at t = %g", e, p.TEnd)
	}
	fromRest := nsRun(t, p, make([]float64, n*n), false)
	worst := 0.0
	for k, f := range fromRest[1:] {
		tk := p.TEnd * float64(k+1) / float64(p.Snapshots-1)
		want := make([]float64, n*n)
		for i := range want {
			want[i] = ws[i] * (1 - math.Exp(-lam*tk))
		}
		worst = math.Max(worst, relDiff2D(f, want))
	}
	t.Logf("steady: drift %.2e; spin-up from rest: max relative error %.2e", relDiff2D(steady[len(steady)-1], ws), worst)
	if worst > 1e-6 {
		t.Errorf("spin-up from rest: max relative error %.3e, want < 1e-6", worst)
	}
}

// TestNS2DAdvectionTerm checks F(w) = f - u . grad w with u = psi_y,
// v = -psi_x, -Lap psi = w against the analytic value for a band-limited
// vorticity whose products stay inside the 2/3 band (so de-aliasing is the
// identity): this fixes the signs and the stream-function convention that
// the exact solutions above cannot see.
func TestNS2DAdvectionTerm(t *testing.T) {
	const n = 32
	p := Params{Grid: []int{n, n}, Domain: []float64{1, 1}, Nu: 1e-3, Forcing: 0.1, Dt: 0.01, TEnd: 1, Snapshots: 2,
		IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: 1}}
	g, err := NewNS2D(p)
	if err != nil {
		t.Fatal(err)
	}
	type mode struct {
		kx, ky int
		a, b   float64 // a cos(th) + b sin(th)
	}
	modes := []mode{{1, 2, 1, 0.5}, {3, -1, -0.7, 0.2}, {0, 2, 0.3, 0}, {2, 0, 0, -0.4}}
	w0 := make([]float64, n*n)
	want := make([]float64, n*n)
	for i := range n {
		for j := range n {
			x, y := float64(i)/n, float64(j)/n
			var w, psix, psiy, wx, wy float64
			for _, m := range modes {
				kx, ky := 2*math.Pi*float64(m.kx), 2*math.Pi*float64(m.ky)
				k2 := kx*kx + ky*ky
				s, c := math.Sincos(kx*x + ky*y)
				w += m.a*c + m.b*s
				d := -m.a*s + m.b*c // derivative of (a cos + b sin) along the phase
				wx += kx * d
				wy += ky * d
				psix += kx * d / k2
				psiy += ky * d / k2
			}
			u, v := psiy, -psix
			s, c := math.Sincos(2 * math.Pi * (x + y))
			w0[i*n+j] = w
			want[i*n+j] = p.Forcing*(s+c) - (u*wx + v*wy)
		}
	}
	s := g.newWork()
	s.plan.forward(s.w, w0)
	g.mask(s.w)
	rhs := make([]complex128, len(s.w))
	s.rhs(rhs, s.w)
	got := make([]float64, n*n)
	s.plan.inverse(got, rhs)
	maxErr := 0.0
	for i := range got {
		maxErr = math.Max(maxErr, math.Abs(got[i]-want[i]))
	}
	t.Logf("max |F - (f - u.grad w)| = %.2e", maxErr)
	if maxErr > 1e-12 {
		t.Errorf("advection term differs from the analytic value by %.3e", maxErr)
	}
}

// TestNS2DInviscidInvariants runs the unforced inviscid flow (nu = 0,
// f = 0) from a strong random vorticity (ten times the paper's field; it
// changes by 84% over the run). The de-aliased Galerkin system conserves
// energy sum |w_k|^2/|k|^2 and enstrophy sum |w_k|^2 exactly, so their drift
// must be the time-stepping error alone and vanish as dt^3 (Heun's
// amplification on the imaginary axis is 1 + O(dt^4) per step): a wrong
// velocity (u = psi_x, say) or aliasing would leave a drift that does not
// converge.
func TestNS2DInviscidInvariants(t *testing.T) {
	drift := func(dt float64) (energy, enstrophy float64) {
		p := Params{Grid: []int{32, 32}, Domain: []float64{1, 1}, Nu: 0, Forcing: 0, Dt: dt, TEnd: 2, Snapshots: 3,
			IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: math.Pow(7, 1.5)}}
		frames := nsRun(t, p, nsGRF(p, 21, 10), true)
		g, _ := NewNS2D(p)
		plan := newPlan2D(32, 32)
		inv := func(w []float64) (e, z float64) {
			s := make([]complex128, 32*17)
			plan.forward(s, w)
			for idx, c := range s {
				m := 2.0 // the half spectrum holds each ky > 0 once for +-ky
				if j := idx % 17; j == 0 || j == 16 {
					m = 1
				}
				a := m * (real(c)*real(c) + imag(c)*imag(c))
				z += a
				e += a * g.invLap[idx]
			}
			return e, z
		}
		e0, z0 := inv(frames[0])
		e1, z1 := inv(frames[len(frames)-1])
		return math.Abs(e1-e0) / e0, math.Abs(z1-z0) / z0
	}
	e1, z1 := drift(0.005)
	e2, z2 := drift(0.0025)
	oe, oz := math.Log2(e1/e2), math.Log2(z1/z2)
	t.Logf("dt 0.0025: energy drift %.2e (order %.2f), enstrophy drift %.2e (order %.2f)", e2, oe, z2, oz)
	if e2 > 1e-7 || z2 > 1e-5 || oe < 2.7 || oz < 2.7 {
		t.Errorf("invariant drift does not vanish as dt^3: energy %.3e (order %.2f), enstrophy %.3e (order %.2f)", e2, oe, z2, oz)
	}
}

// TestNS2DTemporalOrder measures the observed order of the full nonlinear,
// forced scheme against a run at a 32 times smaller step, from a random
// vorticity five times the paper's (strongly nonlinear), on 32 x 32.
func TestNS2DTemporalOrder(t *testing.T) {
	base := Params{Grid: []int{32, 32}, Domain: []float64{1, 1}, Nu: 1e-3, Forcing: 0.1, TEnd: 2, Snapshots: 3,
		IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: math.Pow(7, 1.5)}}
	w0 := nsGRF(base, 8, 5)
	run := func(dt float64) []float64 {
		p := base
		p.Dt = dt
		return nsRun(t, p, w0, true)[2]
	}
	ref := run(0.1 / 32)
	dts := []float64{0.1, 0.05, 0.025}
	errs := make([]float64, len(dts))
	for i, dt := range dts {
		errs[i] = relDiff2D(run(dt), ref)
	}
	for i := 1; i < len(errs); i++ {
		order := math.Log2(errs[i-1] / errs[i])
		t.Logf("dt %.3f: relative error %.3e, observed order %.3f", dts[i], errs[i], order)
		if order < 1.8 || order > 2.3 {
			t.Errorf("observed order %.3f between dt = %g and %g, want 2", order, dts[i-1], dts[i])
		}
	}
}

// TestNS2DStepAgainstPaperStep is the condition for a step larger
// than the paper's: the saved frames at the proposed dt = 0.02 must differ
// from those at the paper's dt = 1e-4 by less than 1e-3 relative. CI runs
// the first frame interval (t = 1, 10,000 fine steps) at the paper's grid,
// viscosity, forcing and initial field and asks for 1e-4, a margin of 10
// for the growth over the rest of the window. With UHNO_LONG_TESTS=1 it
// runs the whole window, t = 0..49 (50 frames, about 2.5 minutes per seed
// for the reference), on two seeds and asks for 1e-3 (recorded: 1.4e-5
// and 2.3e-5; the first interval alone: 6.8e-6).
func TestNS2DStepAgainstPaperStep(t *testing.T) {
	tEnd, frames, seeds, limit := 1.0, 2, []uint64{1}, 1e-4
	if os.Getenv("UHNO_LONG_TESTS") == "1" {
		tEnd, frames, seeds, limit = 49, 50, []uint64{1, 2}, 1e-3
	}
	for _, seed := range seeds {
		w0 := nsGRF(ns2DPaper(0.02, tEnd, frames), seed, 1)
		ref := nsRun(t, ns2DPaper(1e-4, tEnd, frames), w0, true)
		got := nsRun(t, ns2DPaper(0.02, tEnd, frames), w0, false)
		worst := 0.0
		for k := range ref {
			worst = math.Max(worst, relDiff2D(got[k], ref[k]))
		}
		t.Logf("seed %d, t_end %g: max relative difference dt = 0.02 vs 1e-4 over %d frames: %.3e", seed, tEnd, frames, worst)
		if worst > limit {
			t.Errorf("seed %d: frames at dt = 0.02 differ from dt = 1e-4 by %.3e relative, limit %g", seed, worst, limit)
		}
	}
}

// TestNS2DCourantControl starts the paper's setting from a vorticity eight
// times the paper's field, whose Courant number at Dt = 0.02 (0.8) is
// twice the target 0.4: the controller must halve the step, which shows
// as a quarter of the fixed-step error against a run at dt = 1e-3 (a
// second-order scheme).
func TestNS2DCourantControl(t *testing.T) {
	p := ns2DPaper(0.02, 1, 2)
	w0 := nsGRF(p, 4, 8)
	g, err := NewNS2D(p)
	if err != nil {
		t.Fatal(err)
	}
	s := g.newWork()
	s.plan.forward(s.w, w0)
	g.mask(s.w)
	c := s.courant(p.Dt)
	ref := nsRun(t, ns2DPaper(1e-3, 1, 2), w0, true)[1]
	adaptive := nsRun(t, p, w0, false)[1]
	fixed := nsRun(t, p, w0, true)[1]
	ea, ef := relDiff2D(adaptive, ref), relDiff2D(fixed, ref)
	t.Logf("initial Courant number %.2f at dt = 0.02; error vs dt = 1e-3: controlled %.2e, fixed %.2e", c, ea, ef)
	if c <= courantTargetNS2D {
		t.Fatalf("initial Courant number %.2f does not exceed the target %.2f: the test needs a stronger field", c, courantTargetNS2D)
	}
	if ea > ef/3 {
		t.Errorf("controlled run error %.3e, fixed step %.3e: want at most a third of it", ea, ef)
	}
}

// TestNS2DGenerate checks the generator end to end: shapes, determinism,
// frame 0 is the (de-aliased) GRF draw of stream (seed, i), finite frames.
func TestNS2DGenerate(t *testing.T) {
	p := ns2DPaper(0.02, 0.2, 3)
	g, err := NewNS2D(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 64 * 64
	gen := func(i int) []float32 {
		dst := [][]float32{make([]float32, 3*n)}
		if err := g.Generate(9, i, dst); err != nil {
			t.Fatal(err)
		}
		return dst[0]
	}
	a, b := gen(2), gen(2)
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("same (seed, i) differs at %d", k)
		}
	}
	w0 := make([]float64, n)
	g.grf.Sample(rand.New(rand.NewPCG(9, 2)), w0)
	// Frame 0 is the draw with the modes |k_d| > 21 removed (the solver's
	// de-aliased state; they hold 1e-4 of the draw's variance).
	plan := newPlan2D(64, 64)
	spec := make([]complex128, 64*33)
	plan.forward(spec, w0)
	g.mask(spec)
	plan.inverse(w0, spec)
	if e := relDiff2D(widen2D(a[:n]), w0); e > 1e-6 {
		t.Fatalf("frame 0 differs from the de-aliased GRF draw by %.3e relative", e)
	}
	if e := relDiff2D(widen2D(a[2*n:]), w0); e < 1e-3 {
		t.Fatalf("frame 2 equals frame 0 to %.3e: the flow did not evolve", e)
	}
	bad := []func(*Params){
		func(p *Params) { p.Dt = 0.03 }, // does not divide the frame interval 1.0
		func(p *Params) { p.Domain = []float64{1, 0.5} },
		func(p *Params) { p.Nu = -1 },
		func(p *Params) { p.Grid = []int{64, 96} },
		func(p *Params) { p.IC.Sigma = 0 },
	}
	for i, edit := range bad {
		q := ns2DPaper(0.02, 49, 50)
		edit(&q)
		if _, err := NewNS2D(q); err == nil {
			t.Errorf("case %d: NewNS2D accepted %+v", i, q)
		}
	}
}

func widen2D(a []float32) []float64 {
	out := make([]float64, len(a))
	for i, v := range a {
		out[i] = float64(v)
	}
	return out
}
