package pde

import (
	"math"
	"math/rand/v2"
	"testing"
)

// grfNaiveDFT is the naive unnormalised forward DFT
// X_k = sum_j x_j exp(-2 pi i k.j / N) of a real row-major array: an oracle
// independent of the FFT used by the sampler.
func grfNaiveDFT(x []float64, shape []int) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	kk := make([]int, len(shape))
	jj := make([]int, len(shape))
	unflat := func(idx int, dst []int) {
		for d := len(shape) - 1; d >= 0; d-- {
			dst[d] = idx % shape[d]
			idx /= shape[d]
		}
	}
	for k := 0; k < n; k++ {
		unflat(k, kk)
		var s complex128
		for j := 0; j < n; j++ {
			unflat(j, jj)
			ph := 0.0
			for d := range shape {
				ph += float64(kk[d]*jj[d]) / float64(shape[d])
			}
			sn, cs := math.Sincos(-2 * math.Pi * ph)
			s += complex(x[j]*cs, x[j]*sn)
		}
		out[k] = s
	}
	return out
}

// TestGRFSpectrum draws many fields and checks, per wavenumber shell
// floor(|k|), that the mean of |u_k|^2 / (lambda_k/|box|) is 1 within
// sampling error. Each ratio is Exp(1) (mean 1, std 1), so the shell mean
// over m independent pairs and M samples has std 1/sqrt(mM); the test
// allows 4.5 of them. It also checks that the mean and the Nyquist modes
// are exactly zero and that the pointwise variance matches Variance().
func TestGRFSpectrum(t *testing.T) {
	cases := []struct {
		name    string
		grid    []int
		lengths []float64
		alpha   float64
		tau     float64
		sigma   float64
		samples int
	}{
		{"1D unit box, paper Burgers field", []int{32}, []float64{1}, 2.5, 7, math.Pow(7, 1.5), 4000},
		{"1D L=64 box, KS domain", []int{32}, []float64{64}, 2.5, 7, math.Pow(7, 1.5), 4000},
		{"2D unit box, paper NS field", []int{16, 16}, []float64{1, 1}, 2.5, 7, math.Pow(7, 1.5), 400},
		{"2D anisotropic box, rough field", []int{8, 12}, []float64{1, 2}, 1.0, 3, 2, 800},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGRF(tc.grid, tc.lengths, tc.alpha, tc.tau, tc.sigma)
			vol := 1.0
			for _, l := range tc.lengths {
				vol *= l
			}
			n := g.Len()
			rng := rand.New(rand.NewPCG(1, 2))
			u := make([]float64, n)
			type shell struct {
				sum   float64
				pairs int
			}
			shells := map[int]*shell{}
			k := make([]int, len(tc.grid))
			sumSq := 0.0
			for s := 0; s < tc.samples; s++ {
				g.Sample(rng, u)
				for _, v := range u {
					sumSq += v * v
				}
				spec := grfNaiveDFT(u, tc.grid)
				for idx, c := range spec {
					g.wavenumber(idx, k)
					p := real(c)*real(c) + imag(c)*imag(c)
					p /= float64(n) * float64(n) // |u_k|^2 in the convention u_j = sum_k u_k e^{...}
					if !g.drawn(k) {
						if p > 1e-24 {
							t.Fatalf("mode %v is not drawn but has power %g", k, p)
						}
						continue
					}
					if !grfPositiveHalf(k) {
						continue
					}
					r := 0.0
					for d := range k {
						r += float64(k[d] * k[d])
					}
					key := int(math.Sqrt(r))
					if shells[key] == nil {
						shells[key] = &shell{}
					}
					shells[key].sum += p / (g.Eigenvalue(k) / vol)
					shells[key].pairs++
				}
			}
			for key, sh := range shells {
				mean := sh.sum / float64(sh.pairs)
				tol := 4.5 / math.Sqrt(float64(sh.pairs))
				if math.Abs(mean-1) > tol {
					t.Errorf("shell |k| in [%d,%d): mean power / lambda_k = %.4f, want 1 +- %.4f (%d draws)", key, key+1, mean, tol, sh.pairs)
				}
			}
			// Pointwise variance: the per-sample mean of u^2 is a sum of
			// independent Exp-like terms; a 5% tolerance is > 4 standard
			// errors for these sample counts (checked: the dominant shell
			// holds >= 2 pairs per sample).
			emp := sumSq / float64(tc.samples*n)
			if math.Abs(emp/g.Variance()-1) > 0.05 {
				t.Errorf("pointwise variance %.5g, want %.5g", emp, g.Variance())
			}
		})
	}
}

// TestGRFPaperAmplitude checks the pointwise standard deviation of the
// paper's field N(0, 7^{3/2}(-Delta + 49 I)^{-2.5}) on the unit interval
// against the closed sum sum_{k != 0} lambda_k (about 0.103, the value
// docs/DECISIONS.md D-grf-convention quotes), computed here independently over |k| < 10^4.
func TestGRFPaperAmplitude(t *testing.T) {
	sigma := math.Pow(7, 1.5)
	g := NewGRF([]int{1024}, []float64{1}, 2.5, 7, sigma)
	want := 0.0
	for k := 1; k < 10000; k++ {
		want += 2 * sigma * sigma * math.Pow(4*math.Pi*math.Pi*float64(k*k)+49, -2.5)
	}
	if got := g.Variance(); math.Abs(got/want-1) > 1e-9 {
		t.Fatalf("Variance() = %.12g, want %.12g", got, want)
	}
	if s := math.Sqrt(want); s < 0.1 || s > 0.11 {
		t.Fatalf("std %.4f, expected about 0.103", s)
	}
}

// TestGRFDeterministic checks that the same PCG state gives the same field
// bit for bit and a different stream a different field, and that
// concurrent sampling is race-free (run with -race).
func TestGRFDeterministic(t *testing.T) {
	g := NewGRF([]int{8, 16}, []float64{1, 1}, 2.5, 7, 10)
	a := make([]float64, g.Len())
	b := make([]float64, g.Len())
	c := make([]float64, g.Len())
	done := make(chan struct{})
	go func() {
		g.Sample(rand.New(rand.NewPCG(5, 9)), c)
		close(done)
	}()
	g.Sample(rand.New(rand.NewPCG(5, 7)), a)
	g.Sample(rand.New(rand.NewPCG(5, 7)), b)
	<-done
	same := true
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different value at %d: %v vs %v", i, a[i], b[i])
		}
		if a[i] != c[i] {
			same = false
		}
	}
	if same {
		t.Fatal("different seeds gave the same field")
	}
}
