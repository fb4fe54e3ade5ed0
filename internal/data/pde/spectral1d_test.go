package pde

import (
	"math"
	"math/cmplx"
	"strings"
	"sync"
	"testing"
)

// relErr1D is the relative L2 error ||a - b|| / ||b||.
func relErr1D(a, b []float64) float64 {
	num, den := 0.0, 0.0
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

// relErr32 is relErr1D for float32 frames.
func relErr32(a, b []float32) float64 {
	num, den := 0.0, 0.0
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num / den)
}

// orders returns the observed orders log(e_i/e_{i+1}) / log(h_i/h_{i+1}).
func orders(h, e []float64) []float64 {
	p := make([]float64, len(e)-1)
	for i := range p {
		p[i] = math.Log(e[i]/e[i+1]) / math.Log(h[i]/h[i+1])
	}
	return p
}

// lastFrame runs a frame-producing solver and returns a copy of its last
// frame.
func lastFrame(t *testing.T, solve func(frame func(k int, u []float64) error) error) []float64 {
	t.Helper()
	var out []float64
	if err := solve(func(_ int, u []float64) error {
		out = append(out[:0], u...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSpectral1DFlux checks the transforms and the de-aliased flux
// c (u^2)_x against closed forms: for u = sin(2 pi x/L) + 0.5 cos(6 pi x/L),
// (u^2)_x is a trigonometric polynomial of degree 6, exact on any grid with
// n/3 >= 6; and the 2/3 rule must remove a product mode that would alias.
func TestSpectral1DFlux(t *testing.T) {
	const length = 3.0
	cases := []struct {
		n    int
		want float64 // max error
	}{{24, 1e-13}, {64, 1e-13}, {100, 1e-13}}
	for _, tc := range cases {
		sp := newSpectral1D(tc.n, length)
		u := make([]float64, tc.n)
		w := 2 * math.Pi / length
		for j := range u {
			x := float64(j) * length / float64(tc.n)
			u[j] = math.Sin(w*x) + 0.5*math.Cos(3*w*x)
		}
		v := make([]complex128, sp.modes())
		sp.forward(v, u)
		back := make([]float64, tc.n)
		sp.inverse(back, v)
		if e := relErr1D(back, u); e > 1e-14 {
			t.Errorf("n=%d: round trip error %.2e", tc.n, e)
		}
		f := make([]complex128, sp.modes())
		sp.flux(f, v, -0.5, true)
		got := make([]float64, tc.n)
		sp.inverse(got, f)
		maxErr := 0.0
		for j := range got {
			x := float64(j) * length / float64(tc.n)
			uu := math.Sin(w*x) + 0.5*math.Cos(3*w*x)
			ux := w*math.Cos(w*x) - 1.5*w*math.Sin(3*w*x)
			maxErr = math.Max(maxErr, math.Abs(got[j]-(-uu*ux)))
		}
		if maxErr > tc.want {
			t.Errorf("n=%d: flux error %.2e, want <= %.0e", tc.n, maxErr, tc.want)
		}
	}
	// De-aliasing: with every kept mode m <= cut filled, the flux on n
	// points must equal the exact Galerkin projection of (u^2)_x, computed
	// on 64 points where the products (|m| <= 2 cut < 32) are exact. Grids
	// with 3 | n catch a cut of n/3 instead of (n-1)/3: mode n/3 squared
	// folds onto mode -n/3.
	for _, n := range []int{9, 10, 11, 12, 24} {
		sp := newSpectral1D(n, 2*math.Pi)
		fine := newSpectral1D(64, 2*math.Pi)
		v := make([]complex128, sp.modes())
		vf := make([]complex128, fine.modes())
		for m := 1; m <= sp.cut; m++ {
			v[m] = complex(math.Cos(float64(m)), math.Sin(float64(3*m)))
			vf[m] = v[m]
		}
		f := make([]complex128, sp.modes())
		ff := make([]complex128, fine.modes())
		sp.flux(f, v, 1, true)
		fine.flux(ff, vf, 1, false)
		for m := range f {
			want := ff[m]
			if m > sp.cut {
				want = 0
			}
			if cmplx.Abs(f[m]-want) > 1e-13 {
				t.Errorf("n=%d (cut %d): de-aliased flux mode %d = %v, want %v", n, sp.cut, m, f[m], want)
			}
		}
	}
}

// TestETDRK4Coefficients checks the contour-integral coefficients against
// their Taylor series for |z| < 1e-3 (at z = 0: Q = h/2, F1 = F2 = F3 = h/6,
// where the closed forms are 0/0) and against the
// closed forms (evaluated directly, where they are well conditioned) at
// real, imaginary and complex z, including KS-like stiff z = -1250.
func TestETDRK4Coefficients(t *testing.T) {
	const h = 0.5
	zs := []complex128{0, 1e-9, 2e-4i, -3, 2i, -1250, 1.5 - 2.5i, 40i}
	lin := make([]complex128, len(zs))
	for i, z := range zs {
		lin[i] = z / h
	}
	e := newETDRK4In1D(lin, h)
	for i, z := range zs {
		var q, f1, f2, f3 complex128
		if cmplx.Abs(z) < 1e-3 {
			// Taylor series through z^3 (phi-function expansions).
			z2, z3 := z*z, z*z*z
			q = h * (0.5 + z/8 + z2/48 + z3/384)
			f1 = h * (1.0/6 + z/6 + 3*z2/40 + z3/45)
			f2 = h * (1.0/6 + z/12 + z2/40 + z3/180)
			f3 = h * (1.0/6 - z2/120 - z3/360)
		} else {
			ez := cmplx.Exp(z)
			z3 := z * z * z
			q = h * (cmplx.Exp(z/2) - 1) / z
			f1 = h * (-4 - z + ez*(4-3*z+z*z)) / z3
			f2 = h * (2 + z + ez*(z-2)) / z3
			f3 = h * (-4 - 3*z - z*z + ez*(4-z)) / z3
		}
		for _, c := range []struct {
			name      string
			got, want complex128
		}{{"Q", e.q[i], q}, {"F1", e.f1[i], f1}, {"F2", e.f2[i], f2}, {"F3", e.f3[i], f3}} {
			if d := cmplx.Abs(c.got - c.want); d > 1e-13*math.Max(1, cmplx.Abs(c.want)) {
				t.Errorf("z=%v: %s = %v, want %v (diff %.1e)", z, c.name, c.got, c.want, d)
			}
		}
	}
}

// generatorCase is one small configuration of a 1D generator.
type generatorCase struct {
	name string
	gen  func() (Generator, error)
	n, s int     // grid and snapshots
	t0   float64 // first frame time
	dtT  float64 // frame interval
	l    float64 // domain length
}

func smallGenerators() []generatorCase {
	ic := GRFParams{Alpha: 2.5, Tau: 7, Sigma: math.Pow(7, 2.5)}
	return []generatorCase{
		{"burgers", func() (Generator, error) {
			return NewBurgers(Params{Domain: []float64{1}, Grid: []int{32}, SolverGrid: []int{64}, Nu: 0.01, Dt: 1e-3, TEnd: 0.1, Snapshots: 6, IC: ic})
		}, 32, 6, 0, 0.02, 1},
		{"ks", func() (Generator, error) {
			return NewKS(Params{Domain: []float64{64}, Grid: []int{64}, SolverGrid: []int{128}, Dt: 0.05, TBurn: 1, TEnd: 2, Snapshots: 5, IC: ic})
		}, 64, 5, 1, 0.5, 64},
		{"kdv", func() (Generator, error) {
			return NewKdV(Params{Domain: []float64{64}, Grid: []int{32}, SolverGrid: []int{64}, Dt: 0.01, TEnd: 0.4, Snapshots: 5, IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: 3 * math.Pow(7, 1.5)}})
		}, 32, 5, 0, 0.1, 64},
	}
}

// TestGenerators1D checks the Generator contract of the three 1D solvers
// on small grids: shapes, coordinates, attributes, finite output that
// changes in time, bit-identical repeats of (seed, i), different fields for
// different i or seed, the same bits when trajectories run concurrently
// (run with -race), and an error for a wrongly sized destination.
func TestGenerators1D(t *testing.T) {
	for _, tc := range smallGenerators() {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tc.gen()
			if err != nil {
				t.Fatal(err)
			}
			if ds := g.Datasets(); len(ds) != 1 || ds[0] != "tensor" {
				t.Fatalf("Datasets() = %v", ds)
			}
			sh := g.Shapes()
			if len(sh) != 1 || len(sh[0]) != 2 || sh[0][0] != tc.s || sh[0][1] != tc.n {
				t.Fatalf("Shapes() = %v, want [[%d %d]]", sh, tc.s, tc.n)
			}
			co := g.Coords()
			x, tt := co["x-coordinate"], co["t-coordinate"]
			if len(x) != tc.n || len(tt) != tc.s {
				t.Fatalf("coords have %d x and %d t values", len(x), len(tt))
			}
			if math.Abs(float64(x[1])-tc.l/float64(tc.n)) > 1e-6 || x[0] != 0 {
				t.Errorf("x-coordinate starts %v, %v; want grid points 0, L/N", x[0], x[1])
			}
			if math.Abs(float64(tt[0])-tc.t0) > 1e-6 || math.Abs(float64(tt[tc.s-1]-tt[tc.s-2])-tc.dtT) > 1e-5 {
				t.Errorf("t-coordinate = %v", tt)
			}
			attrs := g.Attrs()
			for _, key := range []string{"pde", "scheme", "dt", "t_end", "grid", "solver_grid", "ic_sigma"} {
				if _, ok := attrs[key]; !ok {
					t.Errorf("Attrs lacks %q", key)
				}
			}
			run := func(seed uint64, i int) []float32 {
				dst := make([]float32, tc.s*tc.n)
				if err := g.Generate(seed, i, [][]float32{dst}); err != nil {
					t.Fatal(err)
				}
				return dst
			}
			a := run(3, 1)
			for k := 1; k < tc.s; k++ {
				if d := relErr32(a[k*tc.n:(k+1)*tc.n], a[:tc.n]); d < 1e-3 {
					t.Errorf("frame %d differs from frame 0 by only %.1e", k, d)
				}
			}
			if relErr32(run(3, 1), a) != 0 {
				t.Error("same (seed, i) gave different bits")
			}
			if relErr32(run(3, 2), a) < 0.1 || relErr32(run(4, 1), a) < 0.1 {
				t.Error("another trajectory index or seed gave nearly the same trajectory")
			}
			var wg sync.WaitGroup
			par := make([][]float32, 4)
			for w := range par {
				wg.Add(1)
				go func() {
					defer wg.Done()
					par[w] = make([]float32, tc.s*tc.n)
					if err := g.Generate(3, w, [][]float32{par[w]}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if relErr32(par[1], a) != 0 {
				t.Error("concurrent generation changed trajectory 1")
			}
			err = g.Generate(3, 7, [][]float32{make([]float32, 5)})
			if err == nil || !strings.Contains(err.Error(), "trajectory 7") {
				t.Errorf("wrong destination size: err = %v", err)
			}
		})
	}
}

// TestParams1DErrors checks that invalid settings give one-line errors
// that name the solver and the offending key.
func TestParams1DErrors(t *testing.T) {
	ic := GRFParams{Alpha: 2.5, Tau: 7, Sigma: 1}
	b := Params{Domain: []float64{1}, Grid: []int{32}, SolverGrid: []int{64}, Nu: 0.01, Dt: 1e-3, TEnd: 0.1, Snapshots: 6, IC: ic}
	k := Params{Domain: []float64{64}, Grid: []int{64}, Dt: 0.05, TBurn: 1, TEnd: 2, Snapshots: 5, IC: ic}
	d := Params{Domain: []float64{64}, Grid: []int{32}, Dt: 0.01, TEnd: 0.4, Snapshots: 5, IC: ic}
	cases := []struct {
		name string
		make func() error
		want string
	}{
		{"burgers solver grid", func() error { p := b; p.SolverGrid = []int{48}; _, err := NewBurgers(p); return err }, "burgers: solver_grid = 48"},
		{"burgers nu", func() error { p := b; p.Nu = 0; _, err := NewBurgers(p); return err }, "burgers: nu = 0"},
		{"burgers dt", func() error { p := b; p.Dt = 3e-3; _, err := NewBurgers(p); return err }, "burgers: snapshot interval 0.02 is not a whole number of steps dt = 0.003"},
		{"burgers snapshots", func() error { p := b; p.Snapshots = 1; _, err := NewBurgers(p); return err }, "burgers: snapshots = 1"},
		{"burgers sigma", func() error { p := b; p.IC.Sigma = -1; _, err := NewBurgers(p); return err }, "burgers: ic.sigma = -1"},
		{"ks burn", func() error { p := k; p.TBurn = 1.01; _, err := NewKS(p); return err }, "ks: t_burn 1.01 is not a whole number"},
		{"ks grid", func() error { p := k; p.Grid = []int{63}; _, err := NewKS(p); return err }, "ks: grid = 63"},
		{"ks t_end", func() error { p := k; p.TEnd = math.Inf(1); _, err := NewKS(p); return err }, "ks: t_end = +Inf"},
		{"kdv length", func() error { p := d; p.Domain = []float64{0}; _, err := NewKdV(p); return err }, "kdv: domain = 0"},
		{"kdv tau", func() error { p := d; p.IC.Tau = 0; _, err := NewKdV(p); return err }, "kdv: ic.tau = 0"},
	}
	for _, tc := range cases {
		err := tc.make()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
}
