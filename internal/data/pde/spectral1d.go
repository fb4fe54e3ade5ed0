package pde

import (
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// This file holds the Fourier pseudo-spectral machinery shared by the 1D
// solvers (burgers.go, ks.go, kdv.go): transforms between grid values and
// Fourier coefficients, the conservative nonlinearity c (u^2)_x with the
// 2/3 de-aliasing rule, the ETDRK4 integrator of Cox and Matthews with the
// contour-integral coefficients of Kassam and Trefethen (SIAM J. Sci.
// Comput. 26, 2005), and the snapshot bookkeeping common to the generators.
//
// Convention: on n points x_j = j L / n of the periodic domain [0, L),
//
//	u(x_j) = sum_{m=-n/2+1}^{n/2} v_m exp(i k_m x_j),  k_m = 2 pi m / L,
//
// and only v_0 ... v_{n/2} are stored (u is real, v_{-m} = conj(v_m)).

// spectral1D transforms one periodic 1D grid. It keeps an FFT plan and
// scratch space, so each goroutine needs its own.
type spectral1D struct {
	n    int
	fft  *fourier.FFT
	k    []float64 // k_m = 2 pi m / L, m = 0..n/2
	kOdd []float64 // k_m for odd derivatives: 0 at the Nyquist mode m = n/2 of an even grid, whose sine is not on the grid
	cut  int       // the 2/3 rule keeps m <= cut = (n-1)/3, the largest m with 3m < n
	phys []float64 // scratch grid values
}

// newSpectral1D returns the transforms of n points on a domain of length L.
func newSpectral1D(n int, length float64) *spectral1D {
	s := &spectral1D{
		n:    n,
		fft:  fourier.NewFFT(n),
		k:    make([]float64, n/2+1),
		kOdd: make([]float64, n/2+1),
		cut:  (n - 1) / 3,
		phys: make([]float64, n),
	}
	for m := range s.k {
		s.k[m] = 2 * math.Pi * float64(m) / length
		s.kOdd[m] = s.k[m]
	}
	if n%2 == 0 {
		s.kOdd[n/2] = 0
	}
	return s
}

// modes is the number of stored coefficients, n/2 + 1.
func (s *spectral1D) modes() int { return s.n/2 + 1 }

// forward sets v to the normalised coefficients of the grid values u.
func (s *spectral1D) forward(v []complex128, u []float64) {
	s.fft.Coefficients(v, u)
	inv := complex(1/float64(s.n), 0)
	for m := range v {
		v[m] *= inv
	}
}

// inverse sets u to the grid values of the coefficients v (v is not changed).
func (s *spectral1D) inverse(u []float64, v []complex128) {
	s.fft.Sequence(u, v)
}

// truncate applies the 2/3 rule: it zeroes every mode m > (n-1)/3. A
// product of two kept modes has |m| <= 2 cut, and it aliases to m - n with
// |m - n| >= n - 2 cut > cut, so no alias lands on a kept mode.
func (s *spectral1D) truncate(v []complex128) {
	for m := s.cut + 1; m < len(v); m++ {
		v[m] = 0
	}
}

// flux sets dst to the coefficients of c (u^2)_x, where u has the
// coefficients v. With dealias, v must already vanish above the cut; the
// product's modes above it are then dropped, which removes every aliased
// contribution (Orszag's 2/3 rule), so dst is the exact Galerkin projection
// of c (u^2)_x. Without dealias it is the collocation derivative.
func (s *spectral1D) flux(dst, v []complex128, c float64, dealias bool) {
	s.inverse(s.phys, v)
	for j, x := range s.phys {
		s.phys[j] = x * x
	}
	s.forward(dst, s.phys)
	for m := range dst {
		dst[m] *= complex(0, c*s.kOdd[m])
	}
	if dealias {
		s.truncate(dst)
	}
}

// etdrk4In1D is the fourth-order exponential time-differencing Runge-Kutta
// scheme (Cox and Matthews, J. Comput. Phys. 176, 2002, their ETD4RK) for
// v' = Lin v + N(v) with diagonal Lin, one step of size h:
//
//	a  = E2 v + Q N(v)
//	b  = E2 v + Q N(a)
//	c  = E2 a + Q (2 N(b) - N(v))
//	v' = E v + F1 N(v) + 2 F2 (N(a) + N(b)) + F3 N(c)
//
// with E = e^{z}, E2 = e^{z/2}, z = h Lin, and
//
//	Q  = h (e^{z/2} - 1)/z
//	F1 = h (-4 - z + e^z (4 - 3z + z^2)) / z^3
//	F2 = h ( 2 + z + e^z (z - 2)) / z^3
//	F3 = h (-4 - 3z - z^2 + e^z (4 - z)) / z^3.
//
// These formulas cancel catastrophically for small |z|, so, as Kassam and
// Trefethen propose, each is evaluated as the mean over contourPoints1D
// points of the circle of radius 1 about z (the trapezoid rule for the
// Cauchy integral, exact to rounding for these entire functions). The full
// circle is used, so Lin may be complex (KdV's i k^3 as well as KS's
// k^2 - k^4).
type etdrk4In1D struct {
	e, e2, q, f1, f2, f3 []complex128
}

// contourPoints1D is the number of trapezoid nodes on the unit circle. With
// 64 nodes the coefficients agree with their Taylor series near z = 0 and
// with the closed forms at |z| >= 1 to 1e-13 (TestETDRK4Coefficients).
const contourPoints1D = 64

// newETDRK4In1D precomputes the coefficients for the diagonal operator lin
// and step h.
func newETDRK4In1D(lin []complex128, h float64) *etdrk4In1D {
	m := len(lin)
	e := &etdrk4In1D{
		e: make([]complex128, m), e2: make([]complex128, m),
		q: make([]complex128, m), f1: make([]complex128, m),
		f2: make([]complex128, m), f3: make([]complex128, m),
	}
	roots := make([]complex128, contourPoints1D)
	for j := range roots {
		roots[j] = cmplx.Exp(complex(0, 2*math.Pi*(float64(j)+0.5)/contourPoints1D))
	}
	hc := complex(h, 0)
	for i, l := range lin {
		z := hc * l
		e.e[i] = cmplx.Exp(z)
		e.e2[i] = cmplx.Exp(z / 2)
		var q, f1, f2, f3 complex128
		for _, r := range roots {
			w := z + r
			ew := cmplx.Exp(w)
			w3 := w * w * w
			q += (cmplx.Exp(w/2) - 1) / w
			f1 += (-4 - w + ew*(4-3*w+w*w)) / w3
			f2 += (2 + w + ew*(w-2)) / w3
			f3 += (-4 - 3*w - w*w + ew*(4-w)) / w3
		}
		inv := hc / complex(contourPoints1D, 0)
		e.q[i], e.f1[i], e.f2[i], e.f3[i] = q*inv, f1*inv, f2*inv, f3*inv
	}
	return e
}

// etdWork1D holds one ETDRK4 step's stage buffers.
type etdWork1D struct {
	nv, na, nb, nc, a, b, c []complex128
}

func newETDWork1D(m int) *etdWork1D {
	return &etdWork1D{
		nv: make([]complex128, m), na: make([]complex128, m), nb: make([]complex128, m),
		nc: make([]complex128, m), a: make([]complex128, m), b: make([]complex128, m),
		c: make([]complex128, m),
	}
}

// step advances v by one step in place; nl(dst, v) must set dst = N(v).
func (e *etdrk4In1D) step(v []complex128, w *etdWork1D, nl func(dst, v []complex128)) {
	nl(w.nv, v)
	for i := range v {
		w.a[i] = e.e2[i]*v[i] + e.q[i]*w.nv[i]
	}
	nl(w.na, w.a)
	for i := range v {
		w.b[i] = e.e2[i]*v[i] + e.q[i]*w.na[i]
	}
	nl(w.nb, w.b)
	for i := range v {
		w.c[i] = e.e2[i]*w.a[i] + e.q[i]*(2*w.nb[i]-w.nv[i])
	}
	nl(w.nc, w.c)
	for i := range v {
		v[i] = e.e[i]*v[i] + e.f1[i]*w.nv[i] + 2*e.f2[i]*(w.na[i]+w.nb[i]) + e.f3[i]*w.nc[i]
	}
}

// stepCount1D returns the number of steps of size dt in span, which must be a
// whole number (to 1e-9 relative) and positive; what names the quantity
// in the error.
func stepCount1D(what string, span, dt float64) (int, error) {
	if !(dt > 0) || math.IsInf(dt, 0) {
		return 0, fmt.Errorf("dt = %v: must be positive and finite", dt)
	}
	r := span / dt
	n := math.Round(r)
	if n < 1 || math.Abs(r-n) > 1e-9*n {
		return 0, fmt.Errorf("%s %v is not a whole number of steps dt = %v (ratio %v)", what, span, dt, r)
	}
	return int(n), nil
}

// gridPoints returns the saved coordinates of one axis x_j = j L / n (the collocation
// points themselves, not cell centres) as float32.
func gridPoints(n int, length float64) []float32 {
	x := make([]float32, n)
	for j := range x {
		x[j] = float32(float64(j) * length / float64(n))
	}
	return x
}

// snapshotTimes returns t_0 + k (t_end / (S-1)), k = 0..S-1 (docs/DECISIONS.md
// D-snapshot-times): frame 0 is the state at t_0, the last at t_0 + t_end.
func snapshotTimes(t0, tEnd float64, s int) []float32 {
	t := make([]float32, s)
	for k := range t {
		t[k] = float32(t0 + float64(k)*tEnd/float64(s-1))
	}
	return t
}

// storeFrame1D writes every stride-th value of u into dst as float32 and
// reports the first non-finite value.
func storeFrame1D(dst []float32, u []float64, stride int) error {
	for j := range dst {
		x := u[j*stride]
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("non-finite value %v at grid point %d", x, j*stride)
		}
		dst[j] = float32(x)
	}
	return nil
}

// check1DGrid validates the grid, solver grid and length shared by the 1D
// parameter structs; task names the solver in the error.
func check1DGrid(task string, grid, solverGrid int, length float64) error {
	switch {
	case grid < 4 || grid%2 != 0:
		return fmt.Errorf("%s: grid = %d: need an even number of points >= 4", task, grid)
	case solverGrid < grid || solverGrid%grid != 0:
		return fmt.Errorf("%s: solver_grid = %d: must be a multiple of grid = %d", task, solverGrid, grid)
	case !(length > 0) || math.IsInf(length, 0):
		return fmt.Errorf("%s: domain = %v: must be positive and finite", task, length)
	}
	return nil
}

// checkSnapshots1D validates the snapshot count and end time and returns the
// solver steps between frames.
func checkSnapshots1D(task string, snapshots int, tEnd, dt float64) (int, error) {
	if snapshots < 2 {
		return 0, fmt.Errorf("%s: snapshots = %d: need at least 2", task, snapshots)
	}
	if !(tEnd > 0) || math.IsInf(tEnd, 0) {
		return 0, fmt.Errorf("%s: t_end = %v: must be positive and finite", task, tEnd)
	}
	n, err := stepCount1D("snapshot interval", tEnd/float64(snapshots-1), dt)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", task, err)
	}
	return n, nil
}

// solveSemilinear1D integrates the periodic problem
//
//	u_t = Lin u + c (u^2)_x,  Lin diagonal in Fourier space with symbol lin(k),
//
// from the grid values u0 on [0, length) with ETDRK4 at step dt and the 2/3
// rule (u0 is projected onto the kept modes first). It takes burn steps
// without output, then calls frame(k, u) with the grid values every `every`
// steps for k = 0..frames-1 (frame 0 right after the burn-in).
// KS (ks.go) and KdV (kdv.go) are both of this form.
func solveSemilinear1D(u0 []float64, length float64, lin func(k float64) complex128, c, dt float64, burn, every, frames int, frame func(k int, u []float64) error) error {
	sp := newSpectral1D(len(u0), length)
	m := sp.modes()
	sym := make([]complex128, m)
	for j, k := range sp.k {
		sym[j] = lin(k)
	}
	etd := newETDRK4In1D(sym, dt)
	w := newETDWork1D(m)
	nl := func(dst, v []complex128) { sp.flux(dst, v, c, true) }
	v := make([]complex128, m)
	u := make([]float64, len(u0))
	sp.forward(v, u0)
	sp.truncate(v)
	for range burn {
		etd.step(v, w, nl)
	}
	for k := 0; k < frames; k++ {
		if k > 0 {
			for range every {
				etd.step(v, w, nl)
			}
		}
		sp.inverse(u, v)
		if err := frame(k, u); err != nil {
			return fmt.Errorf("t = %g: %w", float64(burn+k*every)*dt, err)
		}
	}
	return nil
}
