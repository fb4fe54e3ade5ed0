package pde

import (
	"fmt"
	"math"
	"math/rand/v2"
)

func init() {
	Register("darcy", darcyFromParams)
}

// darcyFromParams builds Darcy from a task's Params: PDEBench's settings
// (PDEBenchDarcy) with the source amplitude beta = Forcing, the saved Grid
// and the SourceGrid solved on.
func darcyFromParams(p Params) (Generator, error) {
	if len(p.Grid) != 2 || (p.SourceGrid != nil && len(p.SourceGrid) != 2) {
		return nil, fmt.Errorf("darcy: pde.grid %v, data.source_grid %v: want 2 axes each", p.Grid, p.SourceGrid)
	}
	dp := PDEBenchDarcy(p.Forcing)
	dp.Grid = [2]int{p.Grid[0], p.Grid[1]}
	if p.SourceGrid != nil {
		dp.SolverGrid = [2]int{p.SourceGrid[0], p.SourceGrid[1]}
	}
	return NewDarcy(dp)
}

// DarcyParams are the settings of the self-generated 2D Darcy task (paper
// App. B "2D Darcy Flow"; configs/darcy.yaml), as plain values. The paper
// uses PDEBench's files; this generator gives users without them the same
// task.
type DarcyParams struct {
	Grid       [2]int  // saved points per axis (pde.grid): 64 x 64
	SolverGrid [2]int  // finite-volume cells per axis, a multiple of Grid (data.source_grid: PDEBench's 128 x 128)
	Forcing    float64 // the constant source f = beta (pde.forcing): 1.0
	High, Low  float64 // the two coefficient values (PDEBench: 1 and 0.1)
	Bumps      int     // Gaussian bumps in the thresholded field (PDEBench: 5)
	Tol        float64 // conjugate-gradient tolerance on |r|_2 / |b|_2: 1e-10
}

// PDEBenchDarcy returns the PDEBench 2D Darcy settings (its generator
// reaction_diffusion_2D_multi_solution_Hydra.py with config_2D.yaml, the
// source of 2D_DarcyFlow_beta*.hdf5) for a given beta, saved on 64 x 64.
func PDEBenchDarcy(beta float64) DarcyParams {
	return DarcyParams{
		Grid: [2]int{64, 64}, SolverGrid: [2]int{128, 128},
		Forcing: beta, High: 1, Low: 0.1, Bumps: 5, Tol: 1e-10,
	}
}

// Darcy generates samples (a, u) of the steady Darcy problem
//
//	-div(a grad u) = f  in D = [0,1]^2,   u = 0 on the boundary,
//
// with a constant source f and a piecewise-constant random coefficient a
// (paper App. B "2D Darcy Flow").
//
// Coefficient, as PDEBench draws it: a sum of B Gaussian bumps
// g(x) = sum_m exp(-|x - c_m|^2 / s_m), centres c_m uniform on D, widths
// s_m uniform on [0, 1/2], thresholded at its mean: a = High where
// g > mean, else Low. PDEBench takes the mean over its whole batch of 200
// samples; this generator uses the expectation of g, which that batch mean
// estimates, so that a sample depends on its own seed only
// (darcyThreshold; checked against a Monte-Carlo mean in the tests). FNO's
// Darcy data differ: a = 12 where a GRF N(0, (-Delta + 9I)^(-2)) is >= 0,
// else 3.
//
// Solver: cell-centred finite volumes on SolverGrid cells, the 5-point flux
// with the harmonic mean of a on interior faces (exact flux continuity for
// a piecewise-constant a) and u = 0 imposed on the boundary faces through
// the half-cell distance. PDEBench instead relaxes the time-dependent
// problem u_t = div(a grad u) + f with arithmetic face means and zero ghost
// cells; both converge to the same steady solution as the grid is refined.
// The symmetric positive-definite system is solved by conjugate gradients
// with an incomplete-Cholesky IC(0) preconditioner to a relative residual
// Tol; the true residual is checked after convergence. The saved fields are
// every (SolverGrid/Grid)-th cell from the first, as [::2] down-sampling
// takes PDEBench's 128 x 128 to the paper's 64 x 64.
//
// Darcy is immutable after NewDarcy; Generate may run concurrently.
type Darcy struct {
	p         DarcyParams
	threshold float64
	stride    [2]int
}

// NewDarcy validates p.
func NewDarcy(p DarcyParams) (*Darcy, error) {
	for d := range 2 {
		if p.Grid[d] < 2 || p.SolverGrid[d] < p.Grid[d] || p.SolverGrid[d]%p.Grid[d] != 0 {
			return nil, fmt.Errorf("darcy: pde.grid %v and solver grid %v: need grid >= 2 and a solver grid that is a multiple of it", p.Grid, p.SolverGrid)
		}
	}
	if math.IsNaN(p.Forcing) || math.IsInf(p.Forcing, 0) {
		return nil, fmt.Errorf("darcy: pde.forcing = %v: must be finite", p.Forcing)
	}
	if !(p.Low > 0) || !(p.High > 0) || math.IsInf(p.Low, 0) || math.IsInf(p.High, 0) {
		return nil, fmt.Errorf("darcy: coefficient values %v and %v: must be positive and finite", p.High, p.Low)
	}
	if p.Bumps < 1 {
		return nil, fmt.Errorf("darcy: bumps = %d: need at least 1", p.Bumps)
	}
	if !(p.Tol > 0 && p.Tol < 1) {
		return nil, fmt.Errorf("darcy: tolerance = %v: must be in (0, 1)", p.Tol)
	}
	return &Darcy{
		p:         p,
		threshold: darcyThreshold(p.Bumps),
		stride:    [2]int{p.SolverGrid[0] / p.Grid[0], p.SolverGrid[1] / p.Grid[1]},
	}, nil
}

// darcyThreshold is E[g] at a point averaged over D for B bumps: each bump
// contributes E_s[I(s)^2] with s uniform on [0, 1/2] and
//
//	I(s) = int_0^1 int_0^1 exp(-(x-c)^2/s) dx dc = sqrt(pi s) erf(1/sqrt s) - s (1 - exp(-1/s)),
//
// the mean over the unit interval of a bump with a uniform centre (the x
// and y factors are independent given s). The s-integral is Simpson's rule
// on 2000 intervals (the integrand is smooth, ~pi s at 0).
func darcyThreshold(bumps int) float64 {
	i2 := func(s float64) float64 {
		if s == 0 {
			return 0
		}
		r := math.Sqrt(math.Pi*s)*math.Erf(1/math.Sqrt(s)) - s*(1-math.Exp(-1/s))
		return r * r
	}
	const n = 2000
	const b = 0.5
	h := b / n
	sum := i2(0) + i2(b)
	for k := 1; k < n; k++ {
		w := 2.0
		if k%2 == 1 {
			w = 4
		}
		sum += w * i2(float64(k)*h)
	}
	mean := sum * h / 3 / b
	return float64(bumps) * mean
}

// Datasets implements Generator: the coefficient and the solution, as
// PDEBench names them.
func (g *Darcy) Datasets() []string { return []string{"nu", "tensor"} }

// Shapes implements Generator: nu [x, y] and tensor [1, x, y].
func (g *Darcy) Shapes() [][]int {
	return [][]int{{g.p.Grid[0], g.p.Grid[1]}, {1, g.p.Grid[0], g.p.Grid[1]}}
}

// Attrs implements Generator; beta is PDEBench's name for the source.
func (g *Darcy) Attrs() map[string]any {
	return map[string]any{
		"equation":    "-div(a grad u) = beta on [0,1]^2, u = 0 on the boundary",
		"beta":        g.p.Forcing,
		"a_high":      g.p.High,
		"a_low":       g.p.Low,
		"bumps":       g.p.Bumps,
		"threshold":   g.threshold,
		"solver_grid": []float64{float64(g.p.SolverGrid[0]), float64(g.p.SolverGrid[1])},
		"scheme":      "cell-centred finite volumes, harmonic face means, IC(0)-preconditioned conjugate gradients",
		"cg_tol":      g.p.Tol,
	}
}

// Coords implements Generator: the centres of the saved cells.
func (g *Darcy) Coords() map[string][]float32 {
	c := func(d int) []float32 {
		out := make([]float32, g.p.Grid[d])
		h := 1 / float64(g.p.SolverGrid[d])
		for k := range out {
			out[k] = float32((float64(k*g.stride[d]) + 0.5) * h)
		}
		return out
	}
	return map[string][]float32{"x-coordinate": c(0), "y-coordinate": c(1)}
}

// Coefficient writes the coefficient of sample i on the solver grid
// (row-major [x][y], cell centres) into a.
func (g *Darcy) Coefficient(seed uint64, i int, a []float64) {
	g.coefficient(rand.New(rand.NewPCG(seed, uint64(i))), a)
}

// coefficient draws the bump centres (x then y for each bump) and widths
// from rng and thresholds the bump sum into a.
func (g *Darcy) coefficient(rng *rand.Rand, a []float64) {
	nx, ny := g.p.SolverGrid[0], g.p.SolverGrid[1]
	if len(a) != nx*ny {
		panic(fmt.Sprintf("pde: Darcy coefficient needs %d values, got %d", nx*ny, len(a)))
	}
	b := g.p.Bumps
	cx, cy, s := make([]float64, b), make([]float64, b), make([]float64, b)
	for m := range b {
		cx[m] = rng.Float64()
		cy[m] = rng.Float64()
		s[m] = 0.5 * rng.Float64()
	}
	for i := range nx {
		x := (float64(i) + 0.5) / float64(nx)
		for j := range ny {
			y := (float64(j) + 0.5) / float64(ny)
			v := 0.0
			for m := range b {
				if s[m] > 0 {
					v += math.Exp(-((x-cx[m])*(x-cx[m]) + (y-cy[m])*(y-cy[m])) / s[m])
				}
			}
			if v > g.threshold {
				a[i*ny+j] = g.p.High
			} else {
				a[i*ny+j] = g.p.Low
			}
		}
	}
}

// Generate implements Generator: sample i draws its coefficient from a PCG
// stream seeded (seed, i) and solves for u.
func (g *Darcy) Generate(seed uint64, i int, dst [][]float32) error {
	gx, gy := g.p.Grid[0], g.p.Grid[1]
	if len(dst) != 2 || len(dst[0]) != gx*gy || len(dst[1]) != gx*gy {
		return fmt.Errorf("darcy: sample %d: dst must be two slices of %d values (nu, tensor)", i, gx*gy)
	}
	nx, ny := g.p.SolverGrid[0], g.p.SolverGrid[1]
	a := make([]float64, nx*ny)
	g.coefficient(rand.New(rand.NewPCG(seed, uint64(i))), a)
	f := make([]float64, nx*ny)
	for k := range f {
		f[k] = g.p.Forcing
	}
	u, _, err := solveDarcyFV(nx, ny, a, f, g.p.Tol)
	if err != nil {
		return fmt.Errorf("darcy: sample %d: %w", i, err)
	}
	for p := range gx {
		for q := range gy {
			k := p*g.stride[0]*ny + q*g.stride[1]
			dst[0][p*gy+q] = float32(a[k])
			dst[1][p*gy+q] = float32(u[k])
		}
	}
	return nil
}

// darcyOperator is the finite-volume matrix of -div(a grad .) with zero
// Dirichlet data on an nx x ny cell grid of [0,1]^2, scaled by the cell
// area: row k = i*ny + j reads
//
//	diag_k u_k + east_k u_{k+1} + east_{k-1} u_{k-1} + north_k u_{k+ny} + north_{k-ny} u_{k-ny},
//
// east coupling (i,j)-(i,j+1), north coupling (i,j)-(i+1,j). It is
// symmetric by construction and, with positive a, positive definite.
type darcyOperator struct {
	nx, ny      int
	diag        []float64
	east, north []float64 // off-diagonal entries (negative); 0 on the last column / row
}

// newDarcyOperator assembles the operator for cell values a. A face of
// length l between centres a distance d apart carries the transmissibility
// a_face l / d: for square-ish cells hy/hx and hx/hy; boundary faces use
// the cell's a and the half-cell distance.
func newDarcyOperator(nx, ny int, a []float64) *darcyOperator {
	hx, hy := 1/float64(nx), 1/float64(ny)
	tx, ty := hy/hx, hx/hy // across x-faces (i,i+1) and y-faces (j,j+1)
	op := &darcyOperator{nx: nx, ny: ny,
		diag: make([]float64, nx*ny), east: make([]float64, nx*ny), north: make([]float64, nx*ny)}
	harm := func(p, q float64) float64 { return 2 * p * q / (p + q) }
	for i := range nx {
		for j := range ny {
			k := i*ny + j
			ak := a[k]
			if j+1 < ny {
				t := ty * harm(ak, a[k+1])
				op.east[k] = -t
				op.diag[k] += t
				op.diag[k+1] += t
			}
			if i+1 < nx {
				t := tx * harm(ak, a[k+ny])
				op.north[k] = -t
				op.diag[k] += t
				op.diag[k+ny] += t
			}
			if j == 0 || j == ny-1 {
				op.diag[k] += 2 * ty * ak
			}
			if i == 0 || i == nx-1 {
				op.diag[k] += 2 * tx * ak
			}
		}
	}
	return op
}

// apply writes A x into dst.
func (op *darcyOperator) apply(dst, x []float64) {
	ny := op.ny
	n := len(x)
	for k := range n {
		v := op.diag[k] * x[k]
		if op.east[k] != 0 {
			v += op.east[k] * x[k+1]
		}
		if k >= 1 {
			v += op.east[k-1] * x[k-1]
		}
		if k+ny < n {
			v += op.north[k] * x[k+ny]
		}
		if k >= ny {
			v += op.north[k-ny] * x[k-ny]
		}
		dst[k] = v
	}
}

// ic0 returns the pivots d of the IC(0) factorisation
// A ~ (D + L) D^{-1} (D + L)^T, L the strict lower triangle of A: for the
// 5-point pattern there is no fill, and d_k = A_kk - A_{k,k-1}^2/d_{k-1} -
// A_{k,k-ny}^2/d_{k-ny}.
func (op *darcyOperator) ic0() []float64 {
	ny := op.ny
	d := make([]float64, len(op.diag))
	for k := range d {
		v := op.diag[k]
		if k >= 1 && op.east[k-1] != 0 {
			v -= op.east[k-1] * op.east[k-1] / d[k-1]
		}
		if k >= ny {
			v -= op.north[k-ny] * op.north[k-ny] / d[k-ny]
		}
		d[k] = v
	}
	return d
}

// precondition solves (D + L) D^{-1} (D + L)^T z = r.
func (op *darcyOperator) precondition(z, r, d []float64) {
	ny := op.ny
	n := len(r)
	for k := range n { // (D + L) y = r
		v := r[k]
		if k >= 1 {
			v -= op.east[k-1] * z[k-1]
		}
		if k >= ny {
			v -= op.north[k-ny] * z[k-ny]
		}
		z[k] = v / d[k]
	}
	for k := n - 1; k >= 0; k-- { // (D + L^T) z = D y
		v := 0.0
		if k+1 < n {
			v += op.east[k] * z[k+1]
		}
		if k+ny < n {
			v += op.north[k] * z[k+ny]
		}
		z[k] -= v / d[k]
	}
}

// solveDarcyFV solves -div(a grad u) = f with u = 0 on the boundary of
// [0,1]^2 on an nx x ny cell grid (a, f: cell-centre values, row-major)
// and returns u and the number of CG iterations. It fails, naming the
// residual, when CG does not reach tol within 10 (nx + ny) + 100
// iterations or the true residual |f - A u| exceeds tol |f| (times 10 for
// round-off).
func solveDarcyFV(nx, ny int, a, f []float64, tol float64) ([]float64, int, error) {
	n := nx * ny
	op := newDarcyOperator(nx, ny, a)
	cellArea := 1 / float64(n)
	b := make([]float64, n)
	for k := range b {
		b[k] = f[k] * cellArea
	}
	d := op.ic0()
	u := make([]float64, n)
	r := append([]float64(nil), b...)
	z := make([]float64, n)
	p := make([]float64, n)
	q := make([]float64, n)
	bnorm := math.Sqrt(darcyDot(b, b))
	if bnorm == 0 {
		return u, 0, nil
	}
	op.precondition(z, r, d)
	copy(p, z)
	rz := darcyDot(r, z)
	maxIter := 10*(nx+ny) + 100
	it := 0
	for ; it < maxIter; it++ {
		if math.Sqrt(darcyDot(r, r)) <= tol*bnorm {
			break
		}
		op.apply(q, p)
		alpha := rz / darcyDot(p, q)
		for k := range u {
			u[k] += alpha * p[k]
			r[k] -= alpha * q[k]
		}
		op.precondition(z, r, d)
		rzNew := darcyDot(r, z)
		beta := rzNew / rz
		rz = rzNew
		for k := range p {
			p[k] = z[k] + beta*p[k]
		}
	}
	op.apply(q, u)
	res := 0.0
	for k := range q {
		res += (b[k] - q[k]) * (b[k] - q[k])
	}
	res = math.Sqrt(res) / bnorm
	if it == maxIter || res > 10*tol || math.IsNaN(res) {
		return nil, it, fmt.Errorf("conjugate gradients stopped after %d iterations at relative residual %.3g (tolerance %g)", it, res, tol)
	}
	return u, it, nil
}

func darcyDot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
