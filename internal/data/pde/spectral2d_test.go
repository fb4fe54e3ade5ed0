package pde

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// naiveDFT2D is the O(N^2) half spectrum F(kx, ky) = sum f(i,j)
// exp(-2 pi i (kx i/nx + ky j/ny)), ky = 0..ny/2: the oracle for plan2D.
func naiveDFT2D(f []float64, nx, ny int) []complex128 {
	my := ny/2 + 1
	out := make([]complex128, nx*my)
	for kx := range nx {
		for ky := range my {
			var s complex128
			for i := range nx {
				for j := range ny {
					ph := -2 * math.Pi * (float64(kx*i)/float64(nx) + float64(ky*j)/float64(ny))
					sn, cs := math.Sincos(ph)
					s += complex(f[i*ny+j]*cs, f[i*ny+j]*sn)
				}
			}
			out[kx*my+ky] = s
		}
	}
	return out
}

// TestPlan2DMatchesNaiveDFT checks the forward transform against the naive
// DFT and the inverse as its exact inverse, on square and rectangular grids
// (rectangles catch a swapped axis), to 1e-12 relative.
func TestPlan2DMatchesNaiveDFT(t *testing.T) {
	for _, g := range [][2]int{{2, 2}, {4, 8}, {8, 4}, {16, 16}, {32, 2}} {
		nx, ny := g[0], g[1]
		rng := rand.New(rand.NewPCG(3, uint64(nx*100+ny)))
		f := make([]float64, nx*ny)
		for i := range f {
			f[i] = rng.NormFloat64()
		}
		want := naiveDFT2D(f, nx, ny)
		p := newPlan2D(nx, ny)
		got := make([]complex128, len(want))
		p.forward(got, f)
		scale := 0.0
		for _, v := range want {
			scale = math.Max(scale, cmplx.Abs(v))
		}
		for i := range want {
			if d := cmplx.Abs(got[i] - want[i]); d > 1e-12*scale {
				t.Fatalf("grid %v: forward mode %d: got %v, want %v", g, i, got[i], want[i])
			}
		}
		back := make([]float64, nx*ny)
		p.inverse(back, got)
		for i := range f {
			if d := math.Abs(back[i] - f[i]); d > 1e-12 {
				t.Fatalf("grid %v: inverse(forward(f)) differs at %d by %g", g, i, d)
			}
		}
	}
}

// TestPlan2DColumnPruning checks that forwardCols and inverseCols give the
// full transform's values on the kept columns when the discarded ones are
// empty, as the de-aliased Navier-Stokes solver uses them.
func TestPlan2DColumnPruning(t *testing.T) {
	const n = 16
	p := newPlan2D(n, n)
	my := n/2 + 1
	w := 6
	rng := rand.New(rand.NewPCG(4, 4))
	spec := make([]complex128, n*my)
	for i := range n {
		for j := range w {
			spec[i*my+j] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
	}
	full := make([]float64, n*n)
	pruned := make([]float64, n*n)
	p.inverse(full, spec)
	p.inverseCols(pruned, spec, w)
	for i := range full {
		if d := math.Abs(full[i] - pruned[i]); d > 1e-13 {
			t.Fatalf("inverseCols differs from inverse at %d by %g", i, d)
		}
	}
	a := make([]complex128, n*my)
	b := make([]complex128, n*my)
	p.forward(a, full)
	p.forwardCols(b, full, w)
	for i := range n {
		for j := range w {
			if d := cmplx.Abs(a[i*my+j] - b[i*my+j]); d > 1e-12 {
				t.Fatalf("forwardCols differs at (%d,%d) by %g", i, j, d)
			}
		}
	}
}

// TestWaves2DDerivative checks the wavenumber tables: the spectral
// derivative of sin(2 pi (2x/Lx)) cos(2 pi (3y/Ly)) on a rectangle matches
// the analytic one to round-off.
func TestWaves2DDerivative(t *testing.T) {
	const nx, ny = 16, 8
	lx, ly := 2.0, 0.5
	p := newPlan2D(nx, ny)
	w := newWaves2D(nx, ny, lx, ly)
	f := make([]float64, nx*ny)
	fx := make([]float64, nx*ny)
	fy := make([]float64, nx*ny)
	a, b := 2*math.Pi*2/lx, 2*math.Pi*3/ly
	for i := range nx {
		for j := range ny {
			x, y := float64(i)*lx/nx, float64(j)*ly/ny
			f[i*ny+j] = math.Sin(a*x) * math.Cos(b*y)
			fx[i*ny+j] = a * math.Cos(a*x) * math.Cos(b*y)
			fy[i*ny+j] = -b * math.Sin(a*x) * math.Sin(b*y)
		}
	}
	s := make([]complex128, nx*w.my)
	p.forward(s, f)
	dx := make([]complex128, len(s))
	dy := make([]complex128, len(s))
	for i := range nx {
		for j := range w.my {
			dx[i*w.my+j] = complex(0, w.dx[i]) * s[i*w.my+j]
			dy[i*w.my+j] = complex(0, w.dy[j]) * s[i*w.my+j]
		}
	}
	gx := make([]float64, nx*ny)
	gy := make([]float64, nx*ny)
	p.inverse(gx, dx)
	p.inverse(gy, dy)
	for i := range f {
		if math.Abs(gx[i]-fx[i]) > 1e-12 || math.Abs(gy[i]-fy[i]) > 1e-12 {
			t.Fatalf("derivative at %d: got (%g, %g), want (%g, %g)", i, gx[i], gy[i], fx[i], fy[i])
		}
	}
}

// TestStepsPerFrame2D checks the time-step validation shared by the
// generators.
func TestStepsPerFrame2D(t *testing.T) {
	cases := []struct {
		dt, tEnd float64
		frames   int
		want     int
		ok       bool
	}{
		{1e-4, 4.9, 50, 1000, true},
		{1e-3, 49, 50, 1000, true},
		{0.003, 49, 50, 0, false},
		{0, 1, 2, 0, false},
		{2, 1, 2, 0, false},
	}
	for _, c := range cases {
		got, err := stepsPerFrame2D(c.dt, c.tEnd, c.frames)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("stepsPerFrame2D(%v, %v, %d) = %d, %v; want %d, ok=%v", c.dt, c.tEnd, c.frames, got, err, c.want, c.ok)
		}
	}
}

// BenchmarkPlan2D times one 64x64 forward transform of plan2D against the
// same transform built from gonum's fourier.FFT (rows) and CmplxFFT
// (columns): the measurement behind the hand-written FFT.
func BenchmarkPlan2D(b *testing.B) {
	const n = 64
	my := n/2 + 1
	src := make([]float64, n*n)
	for i := range src {
		src[i] = math.Sin(0.37 * float64(i))
	}
	dst := make([]complex128, n*my)
	b.Run("plan2D", func(b *testing.B) {
		p := newPlan2D(n, n)
		for b.Loop() {
			p.forward(dst, src)
		}
	})
	b.Run("gonum", func(b *testing.B) {
		r, c := fourier.NewFFT(n), fourier.NewCmplxFFT(n)
		col := make([]complex128, n)
		for b.Loop() {
			for i := range n {
				r.Coefficients(dst[i*my:(i+1)*my], src[i*n:(i+1)*n])
			}
			for j := range my {
				for i := range n {
					col[i] = dst[i*my+j]
				}
				c.Coefficients(col, col)
				for i := range n {
					dst[i*my+j] = col[i]
				}
			}
		}
	})
}

// BenchmarkGenerate2D times one paper-size trajectory (sample, for Darcy)
// of each 2D generator with the settings proposed for the configs:
// adv2d (c in [-1,1]^2), ac2d (ETDRK4, dt 0.01, t_end 4.9), ns2d (dt 0.02,
// t_end 49) and darcy (PDEBench's coefficient, 128^2 solve).
func BenchmarkGenerate2D(b *testing.B) {
	adv, err := NewAdv2D(adv2DTestParams([]int{64, 64}))
	if err != nil {
		b.Fatal(err)
	}
	ac, err := NewAC2D(ac2DPaper(0.01, 4.9, 50))
	if err != nil {
		b.Fatal(err)
	}
	ns, err := NewNS2D(ns2DPaper(0.02, 49, 50))
	if err != nil {
		b.Fatal(err)
	}
	darcy, err := NewDarcy(PDEBenchDarcy(1))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		g    Generator
	}{{"adv2d", adv}, {"ac2d", ac}, {"ns2d", ns}, {"darcy", darcy}} {
		b.Run(c.name, func(b *testing.B) {
			var dst [][]float32
			for _, sh := range c.g.Shapes() {
				n := 1
				for _, d := range sh {
					n *= d
				}
				dst = append(dst, make([]float32, n))
			}
			i := 0
			for b.Loop() {
				if err := c.g.Generate(0, i, dst); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
