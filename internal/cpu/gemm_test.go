package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGEMMKernels compares the C kernels with a float64 triple loop on
// shapes that exercise the register block and both tails.
func TestGEMMKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.Float64()*2 - 1)
		}
		return s
	}
	for _, c := range []struct{ m, n, k int }{{1, 1, 1}, {4, 24, 3}, {5, 25, 7}, {7, 50, 33}, {32, 192, 32}, {3, 8, 1}} {
		const pad = 3 // row strides larger than the row length
		a := fill(c.m * (c.k + pad))
		b := fill(c.k * (c.n + pad))
		cc := fill(c.m * (c.n + pad))
		for _, acc := range []bool{false, true} {
			got := append([]float32(nil), cc...)
			gemmNN(c.m, c.n, c.k, a, c.k+pad, b, c.n+pad, got, c.n+pad, acc)
			for i := 0; i < c.m; i++ {
				for j := 0; j < c.n; j++ {
					var s float64
					if acc {
						s = float64(cc[i*(c.n+pad)+j])
					}
					for p := 0; p < c.k; p++ {
						s += float64(a[i*(c.k+pad)+p]) * float64(b[p*(c.n+pad)+j])
					}
					if g := float64(got[i*(c.n+pad)+j]); math.Abs(g-s) > 1e-5*float64(c.k+1) {
						t.Fatalf("nn %v acc=%v at (%d,%d): %g, want %g", c, acc, i, j, g, s)
					}
				}
			}
		}
		// NT: b is n x k.
		bt := fill(c.n * (c.k + pad))
		got := append([]float32(nil), cc...)
		gemmNT(c.m, c.n, c.k, a, c.k+pad, bt, c.k+pad, got, c.n+pad)
		for i := 0; i < c.m; i++ {
			for j := 0; j < c.n; j++ {
				s := float64(cc[i*(c.n+pad)+j])
				for p := 0; p < c.k; p++ {
					s += float64(a[i*(c.k+pad)+p]) * float64(bt[j*(c.k+pad)+p])
				}
				if g := float64(got[i*(c.n+pad)+j]); math.Abs(g-s) > 1e-5*float64(c.k+1) {
					t.Fatalf("nt %v at (%d,%d): %g, want %g", c, i, j, g, s)
				}
			}
		}
	}
}
