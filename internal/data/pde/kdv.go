package pde

func init() {
	Register("kdv", func(p Params) (Generator, error) { return NewKdV(p) })
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
// Its settings (Params; configs/kdv.yaml): Domain the period (paper: 64),
// Grid the saved points (paper: 128), SolverGrid a multiple of Grid or nil
// (configs/kdv.yaml has none), Dt the step (paper: 0.002), TEnd the time
// of the last frame (config: 10), Snapshots (paper: 51), IC the initial
// field, taken on the domain rescaled to the unit box.
//
// A KdV is immutable; Generate may run concurrently.
type KdV struct {
	line
}

// NewKdV validates p and returns the generator.
func NewKdV(p Params) (*KdV, error) {
	l, err := newLine("kdv", p)
	if err != nil {
		return nil, err
	}
	return &KdV{line: l}, nil
}

// kdvSymbol is the Fourier symbol of -u_xxx: -(ik)^3 = i k^3.
func kdvSymbol(k float64) complex128 { return complex(0, k*k*k) }

// kdvFlux is c in u_t = ... + c (u^2)_x: 6 u u_x = 3 (u^2)_x.
const kdvFlux = -3.0

// Attrs implements Generator.
func (g *KdV) Attrs() map[string]any {
	return g.attrs("korteweg-de vries: u_t + 6 u u_x + u_xxx = 0, periodic",
		"Fourier pseudo-spectral, 2/3 de-aliasing, ETDRK4 (Cox-Matthews, Kassam-Trefethen contour coefficients)")
}

// Generate implements Generator: trajectory i of seed, from a PCG stream
// seeded with (seed, i).
func (g *KdV) Generate(seed uint64, i int, dst [][]float32) error {
	return g.generate(seed, i, dst, func(u0 []float64, frame func(int, []float64) error) error {
		return solveSemilinear1D(u0, g.p.Domain[0], kdvSymbol, kdvFlux, g.p.Dt, 0, g.every, g.p.Snapshots, frame)
	})
}
