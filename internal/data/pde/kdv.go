package pde

import (
	"fmt"
	"math/rand/v2"
)

// KdVParams are the settings of the 1D Korteweg-de Vries task (paper
// App. B "1D Korteweg-de Vries"; configs/kdv.yaml pde block).
type KdVParams struct {
	Length     float64   // domain [0, Length), periodic; paper: 64
	Grid       int       // saved points per frame; paper: 128
	SolverGrid int       // points the solver uses, a multiple of Grid; 0 means Grid (configs/kdv.yaml has none)
	Dt         float64   // step of the fourth-order integrator; paper: 0.002
	TEnd       float64   // time of the last frame; config: 10
	Snapshots  int       // frames, t = 0 included; paper: 51
	IC         GRFParams // initial field, taken on the domain rescaled to the unit box
}

// KdV generates trajectories of
//
//	u_t + 6 u u_x + u_xxx = 0,  x in [0, L) periodic,
//
// (paper App. B) from a Gaussian random field.
//
// Scheme: Fourier pseudo-spectral with the 2/3 rule and ETDRK4 (the
// paper's "fourth-order time integration"; spectral1d.go): the dispersive
// part, symbol i k^3, is integrated exactly, so the step is limited only by
// the advection -3 (u^2)_x, and Kassam and Trefethen's contour coefficients
// handle the purely imaginary symbol. With the 2/3 rule the semi-discrete
// system is the Fourier-Galerkin truncation, which conserves the mass
// int u and the energy int u^2 exactly; the time stepping changes the
// energy only at O(dt^4) (TestKdVConservation).
//
// A KdV is immutable; Generate may run concurrently.
type KdV struct {
	p     KdVParams
	every int
	grf   *GRF
}

// NewKdV validates p and returns the generator.
func NewKdV(p KdVParams) (*KdV, error) {
	if p.SolverGrid == 0 {
		p.SolverGrid = p.Grid
	}
	if err := check1DGrid("kdv", p.Grid, p.SolverGrid, p.Length); err != nil {
		return nil, err
	}
	every, err := checkSnapshots1D("kdv", p.Snapshots, p.TEnd, p.Dt)
	if err != nil {
		return nil, err
	}
	if err := p.IC.check("kdv"); err != nil {
		return nil, err
	}
	return &KdV{
		p: p, every: every,
		grf: NewGRF([]int{p.SolverGrid}, []float64{1}, p.IC.Alpha, p.IC.Tau, p.IC.Sigma),
	}, nil
}

// kdvSymbol is the Fourier symbol of -u_xxx: -(ik)^3 = i k^3.
func kdvSymbol(k float64) complex128 { return complex(0, k*k*k) }

// kdvFlux is c in u_t = ... + c (u^2)_x: 6 u u_x = 3 (u^2)_x.
const kdvFlux = -3.0

// Datasets implements Generator.
func (g *KdV) Datasets() []string { return []string{"tensor"} }

// Shapes implements Generator: [Snapshots, Grid].
func (g *KdV) Shapes() [][]int { return [][]int{{g.p.Snapshots, g.p.Grid}} }

// Attrs implements Generator.
func (g *KdV) Attrs() map[string]any {
	return map[string]any{
		"pde":         "korteweg-de vries: u_t + 6 u u_x + u_xxx = 0, periodic",
		"scheme":      "Fourier pseudo-spectral, 2/3 de-aliasing, ETDRK4 (Cox-Matthews, Kassam-Trefethen contour coefficients)",
		"dt":          g.p.Dt,
		"t_end":       g.p.TEnd,
		"domain":      []float64{g.p.Length},
		"grid":        g.p.Grid,
		"solver_grid": g.p.SolverGrid,
		"snapshots":   g.p.Snapshots,
		"ic":          "grf on the unit-rescaled domain, zero mean",
		"ic_alpha":    g.p.IC.Alpha,
		"ic_tau":      g.p.IC.Tau,
		"ic_sigma":    g.p.IC.Sigma,
	}
}

// Coords implements Generator: the saved collocation points x_j = j L/N
// (grid points, not cell centres) and the frame times.
func (g *KdV) Coords() map[string][]float32 {
	return map[string][]float32{
		"x-coordinate": gridPoints1D(g.p.Grid, g.p.Length),
		"t-coordinate": snapshotTimes1D(0, g.p.TEnd, g.p.Snapshots),
	}
}

// Generate implements Generator: trajectory i of seed, from a PCG stream
// seeded with (seed, i).
func (g *KdV) Generate(seed uint64, i int, dst [][]float32) error {
	if len(dst) != 1 || len(dst[0]) != g.p.Snapshots*g.p.Grid {
		return fmt.Errorf("kdv: trajectory %d: destination must be one slice of %d x %d values", i, g.p.Snapshots, g.p.Grid)
	}
	u0 := make([]float64, g.p.SolverGrid)
	g.grf.Sample(rand.New(rand.NewPCG(seed, uint64(i))), u0)
	stride := g.p.SolverGrid / g.p.Grid
	out := dst[0]
	n := g.p.Grid
	err := solveSemilinear1D(u0, g.p.Length, kdvSymbol, kdvFlux, g.p.Dt, 0, g.every, g.p.Snapshots, func(k int, u []float64) error {
		return storeFrame1D(out[k*n:(k+1)*n], u, stride)
	})
	if err != nil {
		return fmt.Errorf("kdv: trajectory %d: %w", i, err)
	}
	return nil
}
