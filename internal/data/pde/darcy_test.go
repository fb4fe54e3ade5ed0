package pde

import (
	"math"
	"math/rand/v2"
	"testing"
)

// darcyCentres evaluates fn at the cell centres of an n x n grid of
// [0,1]^2, row-major [x][y].
func darcyCentres(n int, fn func(x, y float64) float64) []float64 {
	v := make([]float64, n*n)
	for i := range n {
		for j := range n {
			v[i*n+j] = fn((float64(i)+0.5)/float64(n), (float64(j)+0.5)/float64(n))
		}
	}
	return v
}

func darcyMaxDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// TestDarcyManufactured solves -div(a grad u) = f for the smooth variable
// coefficient a = 1 + 0.5 sin(2 pi x + 1) cos(2 pi y) and the exact
// solution u = sin(pi x) sin(pi y) exp(x - y/2) (zero on the boundary),
// f computed analytically, on 32^2 .. 128^2 cells: the maximum error at
// the cell centres must fall with order 2 in h (16^2 is pre-asymptotic,
// order 1.8, from the half-cell boundary flux).
func TestDarcyManufactured(t *testing.T) {
	pi := math.Pi
	a := func(x, y float64) float64 { return 1 + 0.5*math.Sin(2*pi*x+1)*math.Cos(2*pi*y) }
	ax := func(x, y float64) float64 { return pi * math.Cos(2*pi*x+1) * math.Cos(2*pi*y) }
	ay := func(x, y float64) float64 { return -pi * math.Sin(2*pi*x+1) * math.Sin(2*pi*y) }
	u := func(x, y float64) float64 { return math.Sin(pi*x) * math.Sin(pi*y) * math.Exp(x-y/2) }
	f := func(x, y float64) float64 {
		sx, cx := math.Sincos(pi * x)
		sy, cy := math.Sincos(pi * y)
		e := math.Exp(x - y/2)
		ux := (pi*cx + sx) * sy * e
		uy := sx * (pi*cy - 0.5*sy) * e
		uxx := (-pi*pi*sx + 2*pi*cx + sx) * sy * e
		uyy := sx * (-pi*pi*sy - pi*cy + 0.25*sy) * e
		return -(ax(x, y)*ux + a(x, y)*uxx + ay(x, y)*uy + a(x, y)*uyy)
	}
	sizes := []int{32, 64, 128}
	errs := make([]float64, len(sizes))
	for k, n := range sizes {
		got, _, err := solveDarcyFV(n, n, darcyCentres(n, a), darcyCentres(n, f), 1e-12)
		if err != nil {
			t.Fatal(err)
		}
		errs[k] = darcyMaxDiff(got, darcyCentres(n, u))
	}
	for k := 1; k < len(sizes); k++ {
		order := math.Log2(errs[k-1] / errs[k])
		t.Logf("n = %d: max error %.3e, observed order %.3f", sizes[k], errs[k], order)
		if order < 1.85 || order > 2.2 {
			t.Errorf("observed order %.3f between n = %d and %d, want 2", order, sizes[k-1], sizes[k])
		}
	}
}

// darcySineSeries is the exact solution of -Lap u = 1 on the unit square
// with u = 0 on the boundary, in its separable form
//
//	u = x(1-x)/2 - sum_{m odd} 4/(pi^3 m^3) sin(m pi x) cosh(m pi (y-1/2)) / cosh(m pi/2),
//
// the sine series of x(1-x)/2 corrected by the harmonic function that
// cancels it on y = 0 and y = 1. The terms fall as exp(-m pi min(y, 1-y)):
// 2000 terms leave less than 1e-15 at the probes used below.
func darcySineSeries(x, y float64) float64 {
	s := 0.0
	d := math.Abs(y - 0.5)
	for m := 1; m < 4000; m += 2 {
		mp := float64(m) * math.Pi
		// cosh(mp d)/cosh(mp/2) without overflow.
		ratio := math.Exp(mp*(d-0.5)) * (1 + math.Exp(-2*mp*d)) / (1 + math.Exp(-mp))
		s += 4 / (mp * mp * mp) * math.Sin(mp*x) * ratio
	}
	return x*(1-x)/2 - s
}

// TestDarcyConstantCoefficient compares the solver with a = 1, f = 1
// against the separable series solution at 9 interior points. Grids of
// 20, 60 and 180 cells (refined by 3) all have cell centres there: the
// error must fall as h^2 (a factor 9 per refinement) and be below 5e-6 at
// n = 180 (the peak of u is 0.0737).
func TestDarcyConstantCoefficient(t *testing.T) {
	sizes := []int{20, 60, 180}
	errs := make([]float64, len(sizes))
	var probes [][2]float64
	for _, px := range []float64{5.0 / 40, 19.0 / 40, 31.0 / 40} {
		for _, py := range []float64{3.0 / 40, 15.0 / 40, 21.0 / 40} {
			probes = append(probes, [2]float64{px, py})
		}
	}
	want := make([]float64, len(probes))
	for k, pr := range probes {
		want[k] = darcySineSeries(pr[0], pr[1])
	}
	for k, n := range sizes {
		ones := darcyCentres(n, func(x, y float64) float64 { return 1 })
		u, _, err := solveDarcyFV(n, n, ones, ones, 1e-12)
		if err != nil {
			t.Fatal(err)
		}
		for q, pr := range probes {
			i, j := int(pr[0]*float64(n)), int(pr[1]*float64(n))
			if math.Abs((float64(i)+0.5)/float64(n)-pr[0]) > 1e-12 || math.Abs((float64(j)+0.5)/float64(n)-pr[1]) > 1e-12 {
				t.Fatalf("probe %v is not a cell centre at n = %d", pr, n)
			}
			errs[k] = math.Max(errs[k], math.Abs(u[i*n+j]-want[q]))
		}
	}
	for k := 1; k < len(sizes); k++ {
		order := math.Log(errs[k-1]/errs[k]) / math.Log(3)
		t.Logf("n = %d: max error %.3e at the probes, observed order %.3f", sizes[k], errs[k], order)
		if order < 1.85 || order > 2.2 {
			t.Errorf("observed order %.3f between n = %d and %d, want 2", order, sizes[k-1], sizes[k])
		}
	}
	if errs[len(errs)-1] > 5e-6 {
		t.Errorf("error %.3e at n = 180, want < 5e-6", errs[len(errs)-1])
	}
}

// TestDarcyOperator checks on a PDEBench coefficient (contrast 10) that
// the assembled matrix is symmetric (<Ax, y> = <x, Ay> to round-off) and
// positive definite on random vectors, that its rows sum to the boundary
// transmissibilities (constants are only annihilated away from the
// boundary), and that CG reaches the tolerance with the true residual
// below it.
func TestDarcyOperator(t *testing.T) {
	g, err := NewDarcy(PDEBenchDarcy(1))
	if err != nil {
		t.Fatal(err)
	}
	const n = 128
	a := make([]float64, n*n)
	g.Coefficient(0, 3, a)
	op := newDarcyOperator(n, n, a)
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := make([]float64, n*n), make([]float64, n*n)
	ax, ay := make([]float64, n*n), make([]float64, n*n)
	for trial := range 5 {
		for k := range x {
			x[k], y[k] = rng.NormFloat64(), rng.NormFloat64()
		}
		op.apply(ax, x)
		op.apply(ay, y)
		l, r := darcyDot(ax, y), darcyDot(x, ay)
		if math.Abs(l-r) > 1e-12*math.Sqrt(darcyDot(ax, ax)*darcyDot(y, y)) {
			t.Fatalf("trial %d: <Ax,y> = %.15g, <x,Ay> = %.15g", trial, l, r)
		}
		if q := darcyDot(x, ax); !(q > 0) {
			t.Fatalf("trial %d: <x,Ax> = %g is not positive", trial, q)
		}
	}
	ones := make([]float64, n*n)
	for k := range ones {
		ones[k] = 1
	}
	op.apply(ax, ones)
	for i := 1; i < n-1; i++ {
		for j := 1; j < n-1; j++ {
			if v := ax[i*n+j]; math.Abs(v) > 1e-12 {
				t.Fatalf("interior row (%d,%d) sums to %g, want 0", i, j, v)
			}
		}
	}
	if c := ax[0]; math.Abs(c-4*a[0]) > 1e-12 {
		t.Fatalf("corner row sums to %g, want the two half-cell boundary terms 4a = %g", c, 4*a[0])
	}
	f := make([]float64, n*n)
	for k := range f {
		f[k] = 1
	}
	u, iters, err := solveDarcyFV(n, n, a, f, 1e-10)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]float64, n*n)
	for k := range b {
		b[k] = f[k] / (n * n)
	}
	op.apply(ax, u)
	res := 0.0
	for k := range ax {
		res += (b[k] - ax[k]) * (b[k] - ax[k])
	}
	rel := math.Sqrt(res / darcyDot(b, b))
	t.Logf("IC(0)-PCG: %d iterations, true relative residual %.2e", iters, rel)
	if rel > 1e-10 {
		t.Errorf("true relative residual %.3e above the tolerance 1e-10", rel)
	}
	for k, v := range u {
		if !(v > 0) {
			t.Fatalf("u = %g at cell %d: a positive source with zero boundary data must give u > 0", v, k)
		}
	}
}

// TestDarcyCoefficient checks PDEBench's coefficient law: only the two
// values occur, both occur, and the threshold (the expectation of the bump
// sum, darcyThreshold) matches the Monte-Carlo mean of the bump sum over
// many samples, which is what PDEBench thresholds at.
func TestDarcyCoefficient(t *testing.T) {
	g, err := NewDarcy(PDEBenchDarcy(1))
	if err != nil {
		t.Fatal(err)
	}
	const n = 128
	a := make([]float64, n*n)
	highFrac := 0.0
	const samples = 50
	for i := range samples {
		g.Coefficient(2, i, a)
		high := 0
		for k, v := range a {
			switch v {
			case 1:
				high++
			case 0.1:
			default:
				t.Fatalf("sample %d cell %d: coefficient %v is neither 1 nor 0.1", i, k, v)
			}
		}
		highFrac += float64(high) / float64(n*n) / samples
	}
	if highFrac < 0.2 || highFrac > 0.8 {
		t.Errorf("mean fraction of high cells %.3f: the threshold does not split the field", highFrac)
	}
	// Monte-Carlo mean of the bump sum with the generator's draw order.
	const m = 20000
	rng := rand.New(rand.NewPCG(9, 9))
	sum, sum2 := 0.0, 0.0
	for range m {
		x, y := rng.Float64(), rng.Float64()
		v := 0.0
		for range 5 {
			cx, cy, s := rng.Float64(), rng.Float64(), 0.5*rng.Float64()
			v += math.Exp(-((x-cx)*(x-cx) + (y-cy)*(y-cy)) / s)
		}
		sum += v
		sum2 += v * v
	}
	mean := sum / m
	se := math.Sqrt((sum2/m - mean*mean) / m)
	t.Logf("threshold %.5f, Monte-Carlo mean %.5f +- %.5f, high fraction %.3f", g.threshold, mean, se, highFrac)
	if math.Abs(mean-g.threshold) > 4*se {
		t.Errorf("threshold %.5f differs from the Monte-Carlo mean %.5f by more than 4 standard errors (%.5f)", g.threshold, mean, se)
	}
}

// TestDarcyGenerate checks the generator end to end: PDEBench shapes
// (nu [64, 64], tensor [1, 64, 64]), the saved fields are every second
// cell of the 128^2 solve, determinism, and the one-line errors.
func TestDarcyGenerate(t *testing.T) {
	g, err := NewDarcy(PDEBenchDarcy(1))
	if err != nil {
		t.Fatal(err)
	}
	sh := g.Shapes()
	if len(sh) != 2 || sh[0][0] != 64 || sh[0][1] != 64 || sh[1][0] != 1 || sh[1][1] != 64 || sh[1][2] != 64 {
		t.Fatalf("Shapes %v, want [[64 64] [1 64 64]]", sh)
	}
	if ds := g.Datasets(); len(ds) != 2 || ds[0] != "nu" || ds[1] != "tensor" {
		t.Fatalf("Datasets %v", ds)
	}
	gen := func(i int) [][]float32 {
		dst := [][]float32{make([]float32, 64*64), make([]float32, 64*64)}
		if err := g.Generate(5, i, dst); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	d1, d2 := gen(7), gen(7)
	for k := range d1[0] {
		if d1[0][k] != d2[0][k] || d1[1][k] != d2[1][k] {
			t.Fatalf("same (seed, i) differs at %d", k)
		}
	}
	a := make([]float64, 128*128)
	g.Coefficient(5, 7, a)
	f := make([]float64, len(a))
	for k := range f {
		f[k] = 1
	}
	u, _, err := solveDarcyFV(128, 128, a, f, 1e-10)
	if err != nil {
		t.Fatal(err)
	}
	for p := range 64 {
		for q := range 64 {
			k := 2*p*128 + 2*q
			if d1[0][p*64+q] != float32(a[k]) || d1[1][p*64+q] != float32(u[k]) {
				t.Fatalf("saved point (%d,%d) is not solver cell (%d,%d)", p, q, 2*p, 2*q)
			}
		}
	}
	x := g.Coords()["x-coordinate"]
	if len(x) != 64 || math.Abs(float64(x[0])-0.5/128) > 1e-7 || math.Abs(float64(x[1])-2.5/128) > 1e-7 {
		t.Fatalf("x-coordinate starts %v, want the centres of cells 0, 2, ... of 128", x[:2])
	}
	bad := []func(*DarcyParams){
		func(p *DarcyParams) { p.SolverGrid = [2]int{100, 128} },
		func(p *DarcyParams) { p.Low = 0 },
		func(p *DarcyParams) { p.Tol = 0 },
		func(p *DarcyParams) { p.Bumps = 0 },
		func(p *DarcyParams) { p.Forcing = math.Inf(1) },
	}
	for i, edit := range bad {
		p := PDEBenchDarcy(1)
		edit(&p)
		if _, err := NewDarcy(p); err == nil {
			t.Errorf("case %d: NewDarcy accepted %+v", i, p)
		}
	}
}
