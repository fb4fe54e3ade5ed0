package pde

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// NS2DParams are the settings of the 2D incompressible Navier-Stokes task
// (paper App. B "2D Navier-Stokes"; configs/ns2d.yaml), as plain values.
type NS2DParams struct {
	Grid      [2]int     // points per axis (pde.grid), powers of two
	Domain    [2]float64 // side lengths (pde.domain); the paper's [0,1]^2
	Nu        float64    // viscosity (pde.nu): 1e-3
	Forcing   float64    // forcing amplitude A in f = A (sin 2pi(x+y) + cos 2pi(x+y)) (pde.forcing): 0.1
	Dt        float64    // solver step (pde.dt); must divide TEnd/(Snapshots-1)
	TEnd      float64    // time of the last frame (pde.t_end)
	Snapshots int        // frames saved, the first at t = 0 (data.snapshots): 50
	Alpha     float64    // initial vorticity GRF N(0, Sigma^2 (-Delta + Tau^2 I)^(-Alpha)) (pde.ic)
	Tau       float64
	Sigma     float64
}

// NS2D generates 2D Navier-Stokes trajectories in vorticity form
//
//	w_t + u . grad w = nu Lap w + f,   u = (psi_y, -psi_x),  -Lap psi = w,
//
// on the periodic box, with f = A (sin 2pi(x+y) + cos 2pi(x+y)) and a GRF
// initial vorticity (paper App. B "2D Navier-Stokes"). Space is
// pseudo-spectral with the 2/3 rule (modes with |k_d| > n_d/3 are zeroed
// in the state, the forcing and every nonlinear term, so the quadratic
// product never aliases into a kept mode). Time is Crank-Nicolson on the
// viscous term with Heun's predictor-corrector on the advection and the
// forcing, the scheme of the FNO Navier-Stokes generator the paper follows:
//
//	w* = [(1 - dt nu k^2/2) w^n + dt F(w^n)] / (1 + dt nu k^2/2)
//	w^{n+1} = [(1 - dt nu k^2/2) w^n + dt (F(w^n) + F(w*))/2] / (1 + dt nu k^2/2)
//
// with F(w) = -P(u . grad w) + f (P the 2/3 mask), second order in time.
// The paper's step is dt = 1e-4; the step here is Dt (0.02 proposed: 50
// steps per frame, 0.7 s per trajectory instead of 150 s), capped per frame
// by a Courant-number control (courantTargetNS2D). The frames at
// Dt = 0.02 differ from those at 1e-4 by at most 2.3e-5 relative over
// t = 0..49 (TestNS2DStepAgainstPaperStep), the bound being 1e-3.
// The saved field is the vorticity on the grid, frames [T, x, y].
//
// NS2D is immutable after NewNS2D; Generate may run concurrently.
type NS2D struct {
	p      NS2DParams
	grf    *GRF
	waves  *waves2D
	keep   []bool       // 2/3-rule mask per half-spectrum index
	cols   int          // columns ky < cols hold every kept mode
	force  []complex128 // f, masked half spectrum
	steps  int          // solver steps per frame
	times  []float64
	invLap []float64 // 1/|k|^2 (0 at k = 0): psi = w/|k|^2
	// fixedStep turns off the Courant control (tests of the scheme's
	// order and of exact solutions need the step they ask for).
	fixedStep bool
}

// NewNS2D validates p and precomputes the operators.
func NewNS2D(p NS2DParams) (*NS2D, error) {
	if err := checkGrid2D(p.Grid); err != nil {
		return nil, fmt.Errorf("ns2d: pde.%w", err)
	}
	if !(p.Domain[0] > 0) || !(p.Domain[1] > 0) {
		return nil, fmt.Errorf("ns2d: pde.domain = %v: sides must be positive", p.Domain)
	}
	if !(p.Nu >= 0) || math.IsInf(p.Nu, 0) {
		return nil, fmt.Errorf("ns2d: pde.nu = %v: must be non-negative and finite", p.Nu)
	}
	if math.IsNaN(p.Forcing) || math.IsInf(p.Forcing, 0) {
		return nil, fmt.Errorf("ns2d: pde.forcing = %v: must be finite", p.Forcing)
	}
	if p.Forcing != 0 && (p.Domain[0] != math.Round(p.Domain[0]) || p.Domain[1] != math.Round(p.Domain[1])) {
		return nil, fmt.Errorf("ns2d: pde.domain = %v: the forcing sin 2pi(x+y) + cos 2pi(x+y) is periodic only on whole-number sides", p.Domain)
	}
	if err := checkFrames2D(p.Snapshots, p.TEnd); err != nil {
		return nil, fmt.Errorf("ns2d: %w", err)
	}
	steps, err := stepsPerFrame2D(p.Dt, p.TEnd, p.Snapshots)
	if err != nil {
		return nil, fmt.Errorf("ns2d: pde.%w", err)
	}
	if !(p.Tau > 0) || !(p.Sigma > 0) || math.IsNaN(p.Alpha) {
		return nil, fmt.Errorf("ns2d: pde.ic alpha=%v tau=%v sigma=%v: need tau > 0, sigma > 0", p.Alpha, p.Tau, p.Sigma)
	}
	nx, ny := p.Grid[0], p.Grid[1]
	g := &NS2D{
		p:     p,
		grf:   NewGRF([]int{nx, ny}, []float64{p.Domain[0], p.Domain[1]}, p.Alpha, p.Tau, p.Sigma),
		waves: newWaves2D(nx, ny, p.Domain[0], p.Domain[1]),
		steps: steps,
		times: frameTimes2D(p.Snapshots, p.TEnd),
	}
	my := g.waves.my
	g.keep = make([]bool, nx*my)
	g.invLap = make([]float64, nx*my)
	for i := range nx {
		for j := range my {
			idx := i*my + j
			kx := signedIndex2D(i, nx)
			g.keep[idx] = 3*absInt(kx) <= nx && 3*j <= ny
			if g.keep[idx] && j+1 > g.cols {
				g.cols = j + 1
			}
			if k2 := g.waves.k2[idx]; k2 > 0 {
				g.invLap[idx] = 1 / k2
			}
		}
	}
	f := make([]float64, nx*ny)
	for i := range nx {
		for j := range ny {
			x := float64(i) * p.Domain[0] / float64(nx)
			y := float64(j) * p.Domain[1] / float64(ny)
			s, c := math.Sincos(2 * math.Pi * (x + y))
			f[i*ny+j] = p.Forcing * (s + c)
		}
	}
	g.force = make([]complex128, nx*my)
	newPlan2D(nx, ny).forward(g.force, f)
	g.mask(g.force)
	return g, nil
}

func absInt(k int) int {
	if k < 0 {
		return -k
	}
	return k
}

// mask zeroes the modes the 2/3 rule removes.
func (g *NS2D) mask(s []complex128) {
	for i, k := range g.keep {
		if !k {
			s[i] = 0
		}
	}
}

// Datasets implements Generator: the vorticity frames.
func (g *NS2D) Datasets() []string { return []string{"tensor"} }

// Shapes implements Generator: [snapshots, nx, ny].
func (g *NS2D) Shapes() [][]int { return [][]int{{g.p.Snapshots, g.p.Grid[0], g.p.Grid[1]}} }

// Attrs implements Generator: the solver settings.
func (g *NS2D) Attrs() map[string]any {
	return map[string]any{
		"equation":  "w_t + u.grad w = nu Lap w + f, f = A(sin 2pi(x+y) + cos 2pi(x+y))",
		"nu":        g.p.Nu,
		"forcing":   g.p.Forcing,
		"dt":        g.p.Dt,
		"t_end":     g.p.TEnd,
		"domain":    []float64{g.p.Domain[0], g.p.Domain[1]},
		"scheme":    "pseudo-spectral, 2/3 de-aliasing, Crank-Nicolson viscous + Heun advection",
		"ic":        "grf",
		"ic_alpha":  g.p.Alpha,
		"ic_tau":    g.p.Tau,
		"ic_sigma":  g.p.Sigma,
		"snapshots": g.p.Snapshots,
	}
}

// Coords implements Generator: grid points and frame times.
func (g *NS2D) Coords() map[string][]float32 {
	t := make([]float32, len(g.times))
	for k, v := range g.times {
		t[k] = float32(v)
	}
	return map[string][]float32{
		"x-coordinate": periodicCoords2D(g.p.Grid[0], g.p.Domain[0]),
		"y-coordinate": periodicCoords2D(g.p.Grid[1], g.p.Domain[1]),
		"t-coordinate": t,
	}
}

// Generate implements Generator: trajectory i draws its initial vorticity
// from the GRF with a PCG stream seeded (seed, i).
func (g *NS2D) Generate(seed uint64, i int, dst [][]float32) error {
	if len(dst) != 1 || len(dst[0]) != g.p.Snapshots*g.p.Grid[0]*g.p.Grid[1] {
		return fmt.Errorf("ns2d: trajectory %d: dst must be one slice of %d values", i, g.p.Snapshots*g.p.Grid[0]*g.p.Grid[1])
	}
	w0 := make([]float64, g.grf.Len())
	g.grf.Sample(rand.New(rand.NewPCG(seed, uint64(i))), w0)
	frames := make([][]float64, g.p.Snapshots)
	n := len(w0)
	for k := range frames {
		frames[k] = make([]float64, n)
	}
	if err := g.solve(w0, frames); err != nil {
		return fmt.Errorf("ns2d: trajectory %d: %w", i, err)
	}
	for k, f := range frames {
		copyFloat32(dst[0][k*n:(k+1)*n], f)
	}
	return nil
}

// nsWork is one trajectory's solver state and buffers.
type nsWork struct {
	g                *NS2D
	plan             *plan2D
	w, ws, f1, f2    []complex128 // state, predictor, F(w^n), F(w*)
	uh, vh, wxh, wyh []complex128
	u, v, wx, wy     []float64
	dt               float64   // current step
	num, den         []float64 // CN factors 1 - dt nu k^2/2, 1/(1 + dt nu k^2/2)
}

func (g *NS2D) newWork() *nsWork {
	nx, ny, my := g.p.Grid[0], g.p.Grid[1], g.waves.my
	ns, nr := nx*my, nx*ny
	c := func() []complex128 { return make([]complex128, ns) }
	r := func() []float64 { return make([]float64, nr) }
	s := &nsWork{g: g, plan: newPlan2D(nx, ny),
		w: c(), ws: c(), f1: c(), f2: c(), uh: c(), vh: c(), wxh: c(), wyh: c(),
		u: r(), v: r(), wx: r(), wy: r(),
		num: make([]float64, ns), den: make([]float64, ns)}
	s.setStep(g.p.Dt)
	return s
}

// setStep sets the step and its Crank-Nicolson factors.
func (s *nsWork) setStep(dt float64) {
	s.dt = dt
	for i, k2 := range s.g.waves.k2 {
		a := 0.5 * dt * s.g.p.Nu * k2
		s.num[i] = 1 - a
		s.den[i] = 1 / (1 + a)
	}
}

// Courant-number control. Each frame interval is split into steps of at
// most Dt; when the advective Courant number dt (max|u|/dx + max|v|/dy) at
// the start of a frame would exceed courantTargetNS2D, that frame takes
// proportionally more, equal steps (the step depends only on the
// trajectory, so generation stays deterministic). Heun's method is not
// stable on the imaginary axis: a mode of advective frequency lam grows by
// about (lam dt)^4/8 per step while viscosity damps it by nu |k|^2 dt. At
// the de-aliasing cutoff |k_d| = 2 pi n/3, lam dt is up to 2.1 C, and at
// nu = 1e-3, n = 64, dt = 0.02 the damping balances the growth from
// C = 0.63 (axis modes) up, so a frame that ends above maxCourantNS2D is
// an error rather than data. The paper's flows at Dt = 0.02 peak near
// C = 0.49 (6 trajectories over t = 0..49), so a few frames take smaller
// steps.
const (
	courantTargetNS2D = 0.4
	maxCourantNS2D    = 0.6
)

// solve integrates from the vorticity w0 (grid values) and writes frame k
// (time times[k]) into frames[k]; frames[0] is w0 after the 2/3 mask.
func (g *NS2D) solve(w0 []float64, frames [][]float64) error {
	s := g.newWork()
	s.plan.forward(s.w, w0)
	g.mask(s.w)
	s.plan.inverse(frames[0], s.w)
	interval := g.p.TEnd / float64(len(frames)-1)
	for k := 1; k < len(frames); k++ {
		steps := g.steps
		if c := s.courant(g.p.Dt); c > courantTargetNS2D && !g.fixedStep {
			steps = int(math.Ceil(float64(g.steps) * c / courantTargetNS2D))
		}
		if dt := interval / float64(steps); dt != s.dt {
			s.setStep(dt)
		}
		for range steps {
			s.step()
		}
		s.plan.inverse(frames[k], s.w)
		if err := checkFinite2D(frames[k], "vorticity", g.times[k]); err != nil {
			return err
		}
		if c := s.courant(s.dt); c > maxCourantNS2D && !g.fixedStep {
			return fmt.Errorf("advective Courant number %.2f at t = %g exceeds %.2f with dt = %g", c, g.times[k], maxCourantNS2D, s.dt)
		}
	}
	return nil
}

// velocity writes the grid velocity u = psi_y, v = -psi_x of the masked
// vorticity spectrum w (psi = w/|k|^2) into s.u and s.v.
func (s *nsWork) velocity(w []complex128) {
	g := s.g
	my, cols := g.waves.my, g.cols
	for i := range g.p.Grid[0] {
		kx := g.waves.dx[i]
		for j := range cols {
			idx := i*my + j
			ky := g.waves.dy[j]
			psi := w[idx] * complex(g.invLap[idx], 0)
			s.uh[idx] = complex(-ky*imag(psi), ky*real(psi))
			s.vh[idx] = complex(kx*imag(psi), -kx*real(psi))
		}
	}
	s.plan.inverseCols(s.u, s.uh, cols)
	s.plan.inverseCols(s.v, s.vh, cols)
}

// courant returns dt (max|u|/dx + max|v|/dy) for the current state.
func (s *nsWork) courant(dt float64) float64 {
	s.velocity(s.w)
	var mu, mv float64
	for i := range s.u {
		mu = math.Max(mu, math.Abs(s.u[i]))
		mv = math.Max(mv, math.Abs(s.v[i]))
	}
	dx := s.g.p.Domain[0] / float64(s.g.p.Grid[0])
	dy := s.g.p.Domain[1] / float64(s.g.p.Grid[1])
	return dt * (mu/dx + mv/dy)
}

// step advances the state by one Heun / Crank-Nicolson step.
func (s *nsWork) step() {
	dt := s.dt
	s.rhs(s.f1, s.w)
	for i := range s.w {
		s.ws[i] = (complex(s.num[i], 0)*s.w[i] + complex(dt, 0)*s.f1[i]) * complex(s.den[i], 0)
	}
	s.rhs(s.f2, s.ws)
	for i := range s.w {
		s.w[i] = (complex(s.num[i], 0)*s.w[i] + complex(0.5*dt, 0)*(s.f1[i]+s.f2[i])) * complex(s.den[i], 0)
	}
}

// rhs writes F(w) = -P(u . grad w) + f for the masked spectrum w.
func (s *nsWork) rhs(dst, w []complex128) {
	g := s.g
	my, cols := g.waves.my, g.cols
	s.velocity(w)
	for i := range g.p.Grid[0] {
		kx := g.waves.dx[i]
		for j := range cols {
			idx := i*my + j
			ky := g.waves.dy[j]
			wk := w[idx]
			s.wxh[idx] = complex(-kx*imag(wk), kx*real(wk))
			s.wyh[idx] = complex(-ky*imag(wk), ky*real(wk))
		}
	}
	p := s.plan
	p.inverseCols(s.wx, s.wxh, cols)
	p.inverseCols(s.wy, s.wyh, cols)
	for i := range s.u {
		s.u[i] = s.u[i]*s.wx[i] + s.v[i]*s.wy[i]
	}
	p.forwardCols(dst, s.u, cols)
	for i, k := range g.keep {
		if k {
			dst[i] = g.force[i] - dst[i]
		} else {
			dst[i] = 0
		}
	}
}
