package pde

import (
	"fmt"
	"math"
)

func init() {
	Register("ns2d", func(p Params) (Generator, error) { return NewNS2D(p) })
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
// Its settings (Params; configs/ns2d.yaml): Grid the points per axis,
// powers of two; Domain the sides (the paper's [0,1]^2); Nu the viscosity
// (1e-3); Forcing the amplitude A (0.1); Dt the step, dividing
// TEnd/(Snapshots-1); TEnd the time of the last frame; Snapshots the
// frames from t = 0 (50); IC the initial vorticity.
//
// NS2D is immutable after NewNS2D; Generate may run concurrently.
type NS2D struct {
	box
	keep   []bool       // 2/3-rule mask per half-spectrum index
	cols   int          // columns ky < cols hold every kept mode
	force  []complex128 // f, masked half spectrum
	steps  int          // solver steps per frame
	invLap []float64    // 1/|k|^2 (0 at k = 0): psi = w/|k|^2
	// fixedStep turns off the Courant control (tests of the scheme's
	// order and of exact solutions need the step they ask for).
	fixedStep bool
}

// NewNS2D validates p and precomputes the operators.
func NewNS2D(p Params) (*NS2D, error) {
	b, err := newBox("ns2d", p)
	if err != nil {
		return nil, err
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
	g := &NS2D{box: b}
	if g.steps, err = b.steps(); err != nil {
		return nil, err
	}
	nx, ny := p.Grid[0], p.Grid[1]
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

// Attrs implements Generator: the solver settings.
func (g *NS2D) Attrs() map[string]any {
	return g.attrs(map[string]any{
		"equation": "w_t + u.grad w = nu Lap w + f, f = A(sin 2pi(x+y) + cos 2pi(x+y))",
		"nu":       g.p.Nu,
		"forcing":  g.p.Forcing,
		"dt":       g.p.Dt,
		"scheme":   "pseudo-spectral, 2/3 de-aliasing, Crank-Nicolson viscous + Heun advection",
	})
}

// Generate implements Generator: trajectory i draws its initial vorticity
// from the GRF with a PCG stream seeded (seed, i); the saved field is the
// vorticity.
func (g *NS2D) Generate(seed uint64, i int, dst [][]float32) error {
	return g.generate(seed, i, dst, g.solve)
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
