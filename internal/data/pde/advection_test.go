package pde

import (
	"math"
	"math/rand/v2"
	"testing"
)

// adv2DTestParams is the configs/adv2d.yaml task with the velocity range
// proposed for it, on a given grid.
func adv2DTestParams(grid []int) Params {
	return Params{
		Grid: grid, Domain: []float64{1, 1},
		VelocityMin: []float64{-1, -1}, VelocityMax: []float64{1, 1},
		TEnd: 0.98, Snapshots: 50,
		IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: math.Pow(7, 1.5)},
	}
}

// TestAdv2DExactShift translates a band-limited field (a few Fourier modes,
// none at Nyquist) by non-integer displacements and compares with the
// analytic translate u0(x - s) at the grid points: the spectral shift is
// exact for such a field, so the error must be round-off (1e-13 of the
// amplitude). A rectangular box and grid catch swapped axes.
func TestAdv2DExactShift(t *testing.T) {
	type mode struct {
		kx, ky int
		re, im float64 // u0 includes re cos(th) - im sin(th), th = 2pi(kx x/Lx + ky y/Ly)
	}
	modes := []mode{{1, 0, 1, 0}, {3, -5, 0.4, -0.7}, {0, 4, -0.3, 0.2}, {7, 2, 0.05, 0.1}, {-2, 3, 0.6, 0}}
	u := func(x, y, lx, ly float64) float64 {
		v := 0.0
		for _, m := range modes {
			s, c := math.Sincos(2 * math.Pi * (float64(m.kx)*x/lx + float64(m.ky)*y/ly))
			v += m.re*c - m.im*s
		}
		return v
	}
	cases := []struct {
		name   string
		grid   [2]int
		domain [2]float64
		shift  [2]float64
	}{
		{"unit square 32x32", [2]int{32, 32}, [2]float64{1, 1}, [2]float64{0.1234, -0.377}},
		{"rectangle 16x64", [2]int{16, 64}, [2]float64{2, 0.5}, [2]float64{-3.71, 0.0217}},
		{"unit square, several periods", [2]int{32, 16}, [2]float64{1, 1}, [2]float64{5.5, 2.25}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nx, ny := c.grid[0], c.grid[1]
			lx, ly := c.domain[0], c.domain[1]
			u0 := make([]float64, nx*ny)
			want := make([]float64, nx*ny)
			for i := range nx {
				for j := range ny {
					x, y := float64(i)*lx/float64(nx), float64(j)*ly/float64(ny)
					u0[i*ny+j] = u(x, y, lx, ly)
					want[i*ny+j] = u(x-c.shift[0], y-c.shift[1], lx, ly)
				}
			}
			got := make([]float64, nx*ny)
			newShifter2D(newWaves2D(nx, ny, lx, ly), u0).shift(got, c.shift[0], c.shift[1])
			maxErr := 0.0
			for k := range got {
				maxErr = math.Max(maxErr, math.Abs(got[k]-want[k]))
			}
			t.Logf("max |shifted - analytic| = %.2e", maxErr)
			if maxErr > 1e-13 {
				t.Errorf("max error %.3e, want round-off (< 1e-13)", maxErr)
			}
		})
	}
}

// TestAdv2DIntegerShiftIsRoll shifts white noise (every mode, Nyquist
// included) by whole numbers of cells and compares with the periodic roll
// of the array (np.roll(u, (mx, my), axis=(0, 1))), which must be
// reproduced to round-off.
func TestAdv2DIntegerShiftIsRoll(t *testing.T) {
	cases := []struct {
		grid   [2]int
		domain [2]float64
		mx, my int
	}{
		{[2]int{16, 8}, [2]float64{1, 1}, 3, -2},
		{[2]int{8, 32}, [2]float64{2, 0.5}, -9, 31},
		{[2]int{4, 4}, [2]float64{1, 1}, 2, 2},
	}
	for _, c := range cases {
		nx, ny := c.grid[0], c.grid[1]
		rng := rand.New(rand.NewPCG(11, uint64(nx*ny)))
		u0 := make([]float64, nx*ny)
		for k := range u0 {
			u0[k] = rng.NormFloat64()
		}
		sx := float64(c.mx) * c.domain[0] / float64(nx)
		sy := float64(c.my) * c.domain[1] / float64(ny)
		got := make([]float64, nx*ny)
		newShifter2D(newWaves2D(nx, ny, c.domain[0], c.domain[1]), u0).shift(got, sx, sy)
		for i := range nx {
			for j := range ny {
				si := ((i-c.mx)%nx + nx) % nx
				sj := ((j-c.my)%ny + ny) % ny
				if d := math.Abs(got[i*ny+j] - u0[si*ny+sj]); d > 1e-13 {
					t.Fatalf("grid %v roll (%d,%d): point (%d,%d) differs from the rolled array by %.3e", c.grid, c.mx, c.my, i, j, d)
				}
			}
		}
	}
}

// TestAdv2DGenerate checks the generator end to end on the paper's grid:
// frame k is frame 0 translated by c t_k (the trajectory's own velocity,
// within the configured range), frame 0 is the GRF draw that follows the
// two velocity draws, the same (seed, i) gives the same bits and another i
// another trajectory.
func TestAdv2DGenerate(t *testing.T) {
	p := adv2DTestParams([]int{64, 64})
	p.Snapshots = 6
	p.TEnd = 0.1
	g, err := NewAdv2D(p)
	if err != nil {
		t.Fatal(err)
	}
	n := 64 * 64
	gen := func(i int) []float32 {
		dst := [][]float32{make([]float32, p.Snapshots*n)}
		if err := g.Generate(3, i, dst); err != nil {
			t.Fatal(err)
		}
		return dst[0]
	}
	a, b, other := gen(5), gen(5), gen(6)
	same, differ := true, false
	for k := range a {
		same = same && a[k] == b[k]
		differ = differ || a[k] != other[k]
	}
	if !same || !differ {
		t.Fatalf("determinism: same (seed, i) identical = %v, different i differs = %v", same, differ)
	}
	c := g.Velocity(3, 5)
	for d := range 2 {
		if c[d] < -1 || c[d] > 1 {
			t.Fatalf("velocity %v outside [-1, 1]", c)
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	rng.Float64()
	rng.Float64()
	u0 := make([]float64, n)
	g.grf.Sample(rng, u0)
	sh := newShifter2D(g.waves, u0)
	want := make([]float64, n)
	coords := g.Coords()
	for k, tk := range coords["t-coordinate"] {
		sh.shift(want, c[0]*float64(tk), c[1]*float64(tk))
		for j := range want {
			if d := math.Abs(float64(a[k*n+j]) - want[j]); d > 1e-6*(1+math.Abs(want[j])) {
				t.Fatalf("frame %d point %d: %v, want u0 shifted by c t = %v", k, j, a[k*n+j], want[j])
			}
		}
	}
	if len(coords["x-coordinate"]) != 64 || len(coords["y-coordinate"]) != 64 || len(coords["t-coordinate"]) != p.Snapshots {
		t.Fatalf("coordinate lengths %d %d %d", len(coords["x-coordinate"]), len(coords["y-coordinate"]), len(coords["t-coordinate"]))
	}
	if got := g.Shapes()[0]; got[0] != p.Snapshots || got[1] != 64 || got[2] != 64 {
		t.Fatalf("Shapes %v", got)
	}
}

// TestAdv2DVelocityRange checks over many trajectories that each component
// of c fills its range (uniform: the sample mean and extremes) and that a
// degenerate range fixes it, as the config's constant (1, 0.6) needs.
func TestAdv2DVelocityRange(t *testing.T) {
	p := adv2DTestParams([]int{8, 8})
	p.VelocityMin = []float64{-1, 0.6}
	p.VelocityMax = []float64{1, 0.6}
	g, err := NewAdv2D(p)
	if err != nil {
		t.Fatal(err)
	}
	const m = 4000
	sum, lo, hi := 0.0, 1.0, -1.0
	for i := range m {
		c := g.Velocity(0, i)
		if c[1] != 0.6 {
			t.Fatalf("fixed component drawn as %v", c[1])
		}
		sum += c[0]
		lo, hi = math.Min(lo, c[0]), math.Max(hi, c[0])
	}
	// Uniform on [-1, 1]: mean 0 with standard error sqrt(1/3)/sqrt(m).
	if mean := sum / m; math.Abs(mean) > 4.5*math.Sqrt(1.0/3/m) || lo > -0.99 || hi < 0.99 {
		t.Fatalf("c_x over %d draws: mean %.4f, range [%.3f, %.3f]; want uniform on [-1, 1]", m, mean, lo, hi)
	}
}

// TestNewAdv2DRejects checks the one-line errors for bad settings.
func TestNewAdv2DRejects(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Params)
	}{
		{"grid not a power of two", func(p *Params) { p.Grid = []int{48, 64} }},
		{"inverted velocity range", func(p *Params) { p.VelocityMin[0], p.VelocityMax[0] = 1, -1 }},
		{"NaN velocity", func(p *Params) { p.VelocityMax[1] = math.NaN() }},
		{"one snapshot", func(p *Params) { p.Snapshots = 1 }},
		{"zero end time", func(p *Params) { p.TEnd = 0 }},
		{"zero domain", func(p *Params) { p.Domain[1] = 0 }},
		{"zero tau", func(p *Params) { p.IC.Tau = 0 }},
	}
	for _, c := range cases {
		p := adv2DTestParams([]int{64, 64})
		c.edit(&p)
		if _, err := NewAdv2D(p); err == nil {
			t.Errorf("%s: NewAdv2D accepted %+v", c.name, p)
		}
	}
}
