package pde

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
)

func init() {
	Register("adv2d", func(p Params) (Generator, error) { return NewAdv2D(p) })
}

// Adv2D generates trajectories of u_t + c . grad u = 0 on the periodic box
// by exact spectral shifting (paper App. B "2D Advection"): the solution is
// u(x, t) = u0(x - c t), and in Fourier space each coefficient of the GRF
// initial field is multiplied by exp(-i k . c t), k the angular wavenumber.
// This is exact for the trigonometric interpolant of u0; the GRF draws no
// Nyquist mode, so it is exact for the sampled field itself, and for any
// field when c t is a whole number of cells (a periodic roll of the grid).
// No time stepping is involved, so there is no dt.
//
// Its settings (Params; configs/adv2d.yaml): Grid the points per axis,
// powers of two; Domain the sides (the paper's [0,1]^2); VelocityMin and
// VelocityMax, per axis: each trajectory draws c = (c_x, c_y) with c_d
// uniform on [VelocityMin[d], VelocityMax[d]] (equal bounds fix c_d; the
// issue asks for a random c per trajectory, the suggested range [-1, 1]
// per component: |c| <= sqrt 2, at most 1.4 domain lengths over t_end =
// 0.98, 1.8 cells per frame at 64 points and frame interval 0.02); TEnd
// the time of the last frame; Snapshots the frames from t = 0 (50); IC the
// initial field. Dt is not used.
//
// Adv2D is immutable after NewAdv2D; Generate may run concurrently.
type Adv2D struct {
	box
}

// NewAdv2D validates p.
func NewAdv2D(p Params) (*Adv2D, error) {
	b, err := newBox("adv2d", p)
	if err != nil {
		return nil, err
	}
	if len(p.VelocityMin) != 2 || len(p.VelocityMax) != 2 {
		return nil, fmt.Errorf("adv2d: pde.velocity or pde.velocity_range: want bounds for 2 axes, have %v and %v", p.VelocityMin, p.VelocityMax)
	}
	for d := range 2 {
		lo, hi := p.VelocityMin[d], p.VelocityMax[d]
		if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || lo > hi {
			return nil, fmt.Errorf("adv2d: pde.velocity range [%v, %v] on axis %d: need finite bounds with min <= max", lo, hi, d)
		}
	}
	return &Adv2D{box: b}, nil
}

// Attrs implements Generator.
func (g *Adv2D) Attrs() map[string]any {
	return g.attrs(map[string]any{
		"equation":     "u_t + c.grad u = 0",
		"scheme":       "exact spectral shift, c uniform per component in [velocity_min, velocity_max] per trajectory",
		"velocity_min": []float64{g.p.VelocityMin[0], g.p.VelocityMin[1]},
		"velocity_max": []float64{g.p.VelocityMax[0], g.p.VelocityMax[1]},
	})
}

// drawVelocity draws c from rng (two uniforms, always, so the stream that
// follows does not depend on whether a component is fixed).
func (g *Adv2D) drawVelocity(rng *rand.Rand) [2]float64 {
	var c [2]float64
	for d := range c {
		u := rng.Float64()
		c[d] = g.p.VelocityMin[d] + (g.p.VelocityMax[d]-g.p.VelocityMin[d])*u
	}
	return c
}

// Velocity returns the velocity of trajectory i: the first two draws of
// its PCG stream (seed, i).
func (g *Adv2D) Velocity(seed uint64, i int) [2]float64 {
	return g.drawVelocity(rand.New(rand.NewPCG(seed, uint64(i))))
}

// Generate implements Generator: trajectory i draws c, then the initial
// field, from one PCG stream seeded (seed, i).
func (g *Adv2D) Generate(seed uint64, i int, dst [][]float32) error {
	if err := g.checkDst(i, dst); err != nil {
		return err
	}
	n := g.frameLen()
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	c := g.drawVelocity(rng)
	u0 := make([]float64, n)
	g.grf.Sample(rng, u0)
	frame := make([]float64, n)
	sh := newShifter2D(g.waves, u0)
	for k, t := range g.times {
		sh.shift(frame, c[0]*t, c[1]*t)
		copyFloat32(dst[0][k*n:(k+1)*n], frame)
	}
	return nil
}

// shifter2D translates one periodic field by arbitrary displacements.
type shifter2D struct {
	waves *waves2D
	plan  *plan2D
	u0    []complex128 // spectrum of the field
	work  []complex128
}

func newShifter2D(w *waves2D, u0 []float64) *shifter2D {
	s := &shifter2D{waves: w, plan: newPlan2D(w.nx, w.ny)}
	s.u0 = make([]complex128, w.nx*w.my)
	s.work = make([]complex128, w.nx*w.my)
	s.plan.forward(s.u0, u0)
	return s
}

// shift writes u0(x - sx, y - sy) on the grid into dst: coefficient k is
// multiplied by exp(-i (kx sx + ky sy)). At a Nyquist index the signed
// wavenumber -n/2 is used; whole-cell shifts give the same factor either
// way, and the inverse transform keeps the real part of self-conjugate
// modes.
func (s *shifter2D) shift(dst []float64, sx, sy float64) {
	w := s.waves
	for i := range w.nx {
		for j := range w.my {
			idx := i*w.my + j
			s.work[idx] = s.u0[idx] * cmplx.Exp(complex(0, -(w.kx[i]*sx+w.ky[j]*sy)))
		}
	}
	s.plan.inverse(dst, s.work)
}
