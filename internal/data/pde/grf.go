package pde

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/dsp/fourier"
)

// GRF is a periodic Gaussian random field with covariance operator
//
//	C = sigma^2 (-Delta + tau^2 I)^(-alpha)
//
// on the box [0, L_1) x ... x [0, L_d), sampled on a uniform grid with the
// mean (k = 0) mode set to zero. This is the initial-condition law of paper
// Appendix B ("1D Burgers": N(0, 7^{3/2}(-Delta + 49 I)^{-2.5}); "2D
// Navier-Stokes": the same field for the initial vorticity).
//
// The field is the Karhunen-Loeve expansion of C in the L2-orthonormal
// Fourier basis e_k(x) = exp(2 pi i k.x / L) / sqrt(|box|): the complex
// coefficient of mode k has E|u_k|^2 = lambda_k with
//
//	lambda_k = sigma^2 (sum_d (2 pi k_d / L_d)^2 + tau^2)^(-alpha),
//
// so the pointwise variance is sum_{k != 0} lambda_k / |box|. On the unit
// box (docs/DECISIONS.md D-grf-convention: every task's field is taken on its domain rescaled to
// the unit box, so callers pass lengths of 1) mode k has standard deviation
// sigma (4 pi^2 |k|^2 + tau^2)^(-alpha/2), FNO's GaussianRF spectrum. FNO's
// Python sampler draws both the real and imaginary parts at that standard
// deviation times sqrt 2, which doubles the variance; this type follows the
// covariance operator literally.
//
// Only modes with |k_d| < N_d/2 on every axis are drawn: the Nyquist mode of
// an even grid has no sine partner, and its variance is a negligible
// (tau^2/(pi^2 N^2 + tau^2))^alpha of lambda_0 on the unit box (5e-8 at
// N = 64, alpha = 2.5, tau = 7, falling as N^(-2 alpha)).
//
// A GRF is immutable after NewGRF; Sample may be called concurrently.
type GRF struct {
	grid    []int     // points per axis, row-major (last axis fastest)
	lengths []float64 // side lengths L_d
	alpha   float64
	tau     float64
	sigma   float64
	amp     []float64 // sqrt(lambda_k / |box|) per flat index of the grid's DFT layout; 0 where not drawn
	n       int       // total grid points
}

// GRFParams are the initial-condition parameters of a config's pde.ic
// block: the field N(0, Sigma^2 (-Delta + Tau^2 I)^(-Alpha)).
type GRFParams struct {
	Alpha, Tau, Sigma float64
}

// check validates the parameters; task names the solver in the error.
func (p GRFParams) check(task string) error {
	switch {
	case math.IsNaN(p.Alpha) || math.IsInf(p.Alpha, 0):
		return fmt.Errorf("%s: ic.alpha = %v: must be finite", task, p.Alpha)
	case !(p.Tau > 0) || math.IsInf(p.Tau, 0):
		return fmt.Errorf("%s: ic.tau = %v: must be positive and finite", task, p.Tau)
	case !(p.Sigma > 0) || math.IsInf(p.Sigma, 0):
		return fmt.Errorf("%s: ic.sigma = %v: must be positive and finite", task, p.Sigma)
	}
	return nil
}

// NewGRF returns the field N(0, sigma^2(-Delta + tau^2 I)^(-alpha)) on a
// periodic box with the given side lengths, sampled on grid (one entry per
// axis, 1D or more; the last axis varies fastest in Sample's output).
// It panics on a misuse: mismatched lengths, a grid below 2 points, or a
// non-positive length, tau or sigma.
func NewGRF(grid []int, lengths []float64, alpha, tau, sigma float64) *GRF {
	if len(grid) == 0 || len(grid) != len(lengths) {
		panic(fmt.Sprintf("pde: NewGRF grid %v and lengths %v must be non-empty and of equal length", grid, lengths))
	}
	n := 1
	for d, m := range grid {
		if m < 2 {
			panic(fmt.Sprintf("pde: NewGRF grid %v: axis %d has fewer than 2 points", grid, d))
		}
		if !(lengths[d] > 0) {
			panic(fmt.Sprintf("pde: NewGRF lengths %v: axis %d is not positive", lengths, d))
		}
		n *= m
	}
	if !(tau > 0) || !(sigma > 0) || math.IsNaN(alpha) {
		panic(fmt.Sprintf("pde: NewGRF needs tau > 0, sigma > 0 and a finite alpha; got alpha=%v tau=%v sigma=%v", alpha, tau, sigma))
	}
	g := &GRF{
		grid:    append([]int(nil), grid...),
		lengths: append([]float64(nil), lengths...),
		alpha:   alpha, tau: tau, sigma: sigma,
		amp: make([]float64, n),
		n:   n,
	}
	vol := 1.0
	for _, l := range lengths {
		vol *= l
	}
	k := make([]int, len(grid))
	for idx := 0; idx < n; idx++ {
		g.wavenumber(idx, k)
		if !g.drawn(k) {
			continue
		}
		g.amp[idx] = math.Sqrt(g.Eigenvalue(k) / vol)
	}
	return g
}

// Grid returns the points per axis.
func (g *GRF) Grid() []int { return append([]int(nil), g.grid...) }

// Len is the number of grid points, the length Sample expects.
func (g *GRF) Len() int { return g.n }

// Eigenvalue returns lambda_k = sigma^2 (|2 pi k / L|^2 + tau^2)^(-alpha)
// for the integer wavenumber k (one entry per axis).
func (g *GRF) Eigenvalue(k []int) float64 {
	s := g.tau * g.tau
	for d, kd := range k {
		w := 2 * math.Pi * float64(kd) / g.lengths[d]
		s += w * w
	}
	return g.sigma * g.sigma * math.Pow(s, -g.alpha)
}

// Variance is the pointwise variance of a sample on this grid:
// sum over the drawn modes k != 0 of lambda_k / |box|.
func (g *GRF) Variance() float64 {
	v := 0.0
	for _, a := range g.amp {
		v += a * a
	}
	return v
}

// wavenumber writes the signed wavenumber of DFT flat index idx into k
// (index j on an axis of n points is wavenumber j for j <= n/2, j-n above).
func (g *GRF) wavenumber(idx int, k []int) {
	for d := len(g.grid) - 1; d >= 0; d-- {
		m := g.grid[d]
		j := idx % m
		idx /= m
		if j > m/2 {
			j -= m
		}
		k[d] = j
	}
}

// drawn reports whether mode k is sampled: k != 0 and |k_d| < N_d/2.
func (g *GRF) drawn(k []int) bool {
	zero := true
	for d, kd := range k {
		if 2*kd >= g.grid[d] || -2*kd >= g.grid[d] {
			return false
		}
		if kd != 0 {
			zero = false
		}
	}
	return !zero
}

// grfPositiveHalf reports whether k is the representative of the pair {k, -k}:
// its first non-zero component is positive.
func grfPositiveHalf(k []int) bool {
	for _, kd := range k {
		if kd != 0 {
			return kd > 0
		}
	}
	return false
}

// flatIndex is the DFT flat index of the signed wavenumber k.
func (g *GRF) flatIndex(k []int) int {
	idx := 0
	for d, kd := range k {
		m := g.grid[d]
		j := kd
		if j < 0 {
			j += m
		}
		idx = idx*m + j
	}
	return idx
}

// Sample draws one field into dst (length Len(), row-major, last axis
// fastest; value at grid point j is u(j_1 L_1/N_1, ..., j_d L_d/N_d)).
// For each pair {k, -k} it draws two standard normals a, b from rng in
// flat-index order of the representative k and sets
// u_k = amp_k (a + i b)/sqrt 2, u_{-k} = conj(u_k), so each real mode
// sqrt2 cos, sqrt2 sin carries variance lambda_k/|box|. The same rng
// state always gives the same field. Sample allocates its own FFT work
// space and is safe for concurrent use with different rng values.
func (g *GRF) Sample(rng *rand.Rand, dst []float64) {
	if len(dst) != g.n {
		panic(fmt.Sprintf("pde: GRF.Sample dst has %d values, grid %v needs %d", len(dst), g.grid, g.n))
	}
	spec := make([]complex128, g.n)
	k := make([]int, len(g.grid))
	neg := make([]int, len(g.grid))
	for idx := 0; idx < g.n; idx++ {
		if g.amp[idx] == 0 {
			continue
		}
		g.wavenumber(idx, k)
		if !grfPositiveHalf(k) {
			continue
		}
		a, b := rng.NormFloat64(), rng.NormFloat64()
		c := complex(a, b) * complex(g.amp[idx]/math.Sqrt2, 0)
		spec[idx] = c
		for d := range k {
			neg[d] = -k[d]
		}
		spec[g.flatIndex(neg)] = complex(real(c), -imag(c))
	}
	grfInverseDFT(spec, g.grid)
	for i, c := range spec {
		dst[i] = real(c)
	}
}

// grfInverseDFT applies the unnormalised inverse DFT
// x_j = sum_k X_k exp(+2 pi i k.j / N) in place along every axis of the
// row-major array a with the given shape.
func grfInverseDFT(a []complex128, shape []int) {
	total := len(a)
	stride := 1
	for d := len(shape) - 1; d >= 0; d-- {
		m := shape[d]
		plan := fourier.NewCmplxFFT(m)
		line := make([]complex128, m)
		block := stride * m
		for base := 0; base < total; base += block {
			for off := 0; off < stride; off++ {
				for j := 0; j < m; j++ {
					line[j] = a[base+off+j*stride]
				}
				plan.Sequence(line, line)
				for j := 0; j < m; j++ {
					a[base+off+j*stride] = line[j]
				}
			}
		}
		stride = block
	}
}
