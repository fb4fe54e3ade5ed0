package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestRelL2MSEEnergy checks relL2, MSE, Energy and EnergyDrift on cases with
// known answers, including the zero-reference rule.
func TestRelL2MSEEnergy(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name              string
		pred, truth       []float32
		relL2, mse, drift float64
	}{
		{"exact", []float32{3, 4}, []float32{3, 4}, 0, 0, 0},
		{"3-4-5", []float32{0, 4}, []float32{3, 4}, 0.6, 4.5, 9.0 / 25},
		{"double", []float32{2, -4, 6}, []float32{1, -2, 3}, 1, 14.0 / 3, 3},
		{"zero prediction", []float32{0, 0, 0}, []float32{1, 2, 2}, 1, 3, 1},
		{"zero both", []float32{0, 0}, []float32{0, 0}, 0, 0, 0},
		{"zero truth", []float32{1, 0}, []float32{0, 0}, nan, 0.5, nan},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(what string, got, want float64) {
				if math.IsNaN(want) != math.IsNaN(got) || (!math.IsNaN(want) && !near(got, want, 1e-12)) {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("RelL2", RelL2(tc.pred, tc.truth), tc.relL2)
			check("MSE", MSE(tc.pred, tc.truth), tc.mse)
			check("EnergyDrift", EnergyDrift(tc.pred, tc.truth), tc.drift)
		})
	}
	if e := Energy([]float32{3, 4, -12}); e != 169 {
		t.Errorf("Energy = %v, want 169", e)
	}
	// A known energy ratio: û = a u drifts by |a^2 - 1| (Eq. ed), on a 2D
	// random field (powers of two scale exactly in float32).
	g := unitGrid(2, true, 16, 16)
	u := randomField(g, rand.New(rand.NewPCG(1, 1)))
	for _, a := range []float32{0.5, 1, 2, 1.1} {
		want := math.Abs(float64(a)*float64(a) - 1)
		if got := EnergyDrift(scaled(u, a), u); !near(got, want, 1e-6) {
			t.Errorf("EnergyDrift(%g u, u) = %v, want %v", a, got, want)
		}
	}
	mustPanic(t, "prediction has 2 values, truth 3", func() { RelL2(make([]float32, 2), make([]float32, 3)) })
}

// TestStencilConvergence checks the finite differences against the exact
// derivative of smooth fields: second order everywhere on a periodic axis
// and inside a non-periodic one, first order at the one-sided ends.
func TestStencilConvergence(t *testing.T) {
	// errs returns the largest interior error and the errors at the two
	// ends of the derivative of u on n points.
	errs := func(n int, periodic bool, u, du func(float64) float64) (inner, first, last float64) {
		h := 1 / float64(n)
		if !periodic {
			h = 1 / float64(n-1) // nodes 0, h, ..., 1
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = u(float64(i) * h)
		}
		e := make([]float64, n)
		for i := range v {
			im, ip, c := stencil(i, n, periodic, h)
			e[i] = math.Abs(c*(v[ip]-v[im]) - du(float64(i)*h))
		}
		for _, x := range e[1 : n-1] {
			inner = max(inner, x)
		}
		return inner, e[0], e[n-1]
	}
	per := func(x float64) float64 { return math.Sin(2*math.Pi*x) + 0.5*math.Cos(6*math.Pi*x) }
	dper := func(x float64) float64 { return 2*math.Pi*math.Cos(2*math.Pi*x) - 3*math.Pi*math.Sin(6*math.Pi*x) }
	non := func(x float64) float64 { return math.Exp(x) * math.Sin(3*x) }
	dnon := func(x float64) float64 { return math.Exp(x) * (math.Sin(3*x) + 3*math.Cos(3*x)) }

	for _, n := range []int{32, 64, 128} {
		// Periodic: the wrapped ends use the same stencil; x = 0 stays a
		// node on refinement (x = 1-h does not, so it joins the maximum).
		i1, f1, l1 := errs(n, true, per, dper)
		i2, f2, l2 := errs(2*n, true, per, dper)
		for _, r := range []float64{max(i1, f1, l1) / max(i2, f2, l2), f1 / f2} {
			if r < 3.6 || r > 4.4 {
				t.Errorf("periodic n=%d: error ratio %.3f on halving h, want about 4 (second order)", n, r)
			}
		}
		i1, f1, l1 = errs(n, false, non, dnon)
		i2, f2, l2 = errs(2*n-1, false, non, dnon) // same domain, half the spacing
		if r := i1 / i2; r < 3.6 || r > 4.4 {
			t.Errorf("non-periodic n=%d: interior error ratio %.3f, want about 4", n, r)
		}
		for end, r := range []float64{f1 / f2, l1 / l2} {
			if r < 1.8 || r > 2.2 {
				t.Errorf("non-periodic n=%d: end %d error ratio %.3f, want about 2 (one-sided, first order)", n, end, r)
			}
		}
	}
}

// TestRelH1Modes checks relH1 on single Fourier modes in 1D, 2D and 3D on
// anisotropic periodic domains. The central difference of a discrete mode
// sin(2π k.x) is exact up to the factor λ_d = sin(2π k_d/N_d)/h_d, so
// with û = u + ε v, u and v modes k and m,
//
//	relH1 = ε sqrt(1 + Σ_d λ_d(m)^2) / sqrt(1 + Σ_d λ_d(k)^2),
//
// and the continuous value has 2π k_d/L_d for λ_d: relH1 must match the
// first to float32 accuracy and converge to the second at second order.
func TestRelH1Modes(t *testing.T) {
	const eps = 0.1
	for _, tc := range []struct {
		name   string
		domain []float64
		k, m   []float64
	}{
		{"1D", []float64{1}, []float64{1}, []float64{2}},
		{"2D", []float64{1, 2}, []float64{1, 0}, []float64{1, 2}},
		{"3D", []float64{1, 0.5, 2}, []float64{0, 1, 1}, []float64{1, 0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exact := func(lam func(d int, k float64) float64) float64 {
				s := func(k []float64) float64 {
					v := 1.0
					for d, kd := range k {
						v += lam(d, kd) * lam(d, kd)
					}
					return v
				}
				return eps * math.Sqrt(s(tc.m)/s(tc.k))
			}
			cont := exact(func(d int, k float64) float64 { return 2 * math.Pi * k / tc.domain[d] })
			var prev float64
			for _, n := range []int{16, 32, 64} {
				if len(tc.domain) == 3 && n == 64 {
					continue
				}
				g := Grid{Channels: 1, Periodic: true}
				for _, L := range tc.domain {
					g.Shape = append(g.Shape, n)
					g.Spacing = append(g.Spacing, L/float64(n))
				}
				mode := func(k []float64, x []float64) float64 {
					th := 0.0
					for d := range x {
						th += 2 * math.Pi * k[d] * x[d] / tc.domain[d]
					}
					return math.Sin(th + 0.4)
				}
				truth := field(g, func(_ int, x []float64) float64 { return mode(tc.k, x) })
				pred := field(g, func(_ int, x []float64) float64 { return mode(tc.k, x) + eps*mode(tc.m, x) })
				got := RelH1(g, pred, truth)
				disc := exact(func(d int, k float64) float64 {
					return math.Sin(2*math.Pi*k/float64(g.Shape[d])) / g.Spacing[d]
				})
				if !near(got, disc, 1e-5) {
					t.Errorf("n=%d: relH1 = %.8f, discrete mode answer %.8f", n, got, disc)
				}
				err := math.Abs(got - cont)
				if prev != 0 {
					if r := prev / err; r < 3.5 || r > 4.5 {
						t.Errorf("n=%d: error against the continuous relH1 fell by %.3f, want about 4", n, r)
					}
				}
				prev = err
			}
		})
	}
}

// TestRelH1Boundary checks the non-periodic stencil inside relH1 exactly:
// u = 1 and û = 1 + x_0^2 + sum_{d>0} (d+1) x_d on nodes x = i h (all
// values exact in float32). The error's derivative along axis 0 is h at
// the first node (forward difference), 2x inside (central, exact for a
// quadratic) and x_{n-1} + x_{n-2} at the last node (backward difference);
// along the other axes it is d+1 everywhere.
func TestRelH1Boundary(t *testing.T) {
	for _, shape := range [][]int{{17}, {17, 9}, {17, 9, 5}} {
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			g := Grid{Channels: 1, Shape: shape}
			for d := range shape {
				g.Spacing = append(g.Spacing, 1/float64(int(1)<<(4-d)))
			}
			e := func(x []float64) float64 {
				v := x[0] * x[0]
				for d := 1; d < len(x); d++ {
					v += float64(d+1) * x[d]
				}
				return v
			}
			truth := field(g, func(int, []float64) float64 { return 1 })
			pred := field(g, func(_ int, x []float64) float64 { return 1 + e(x) })
			var num float64
			h, n := g.Spacing[0], shape[0]
			field(g, func(_ int, x []float64) float64 {
				ev := e(x)
				num += ev * ev
				var d0 float64
				switch i := index(g, x)[0]; i {
				case 0:
					d0 = h
				case n - 1:
					d0 = x[0] + (x[0] - h)
				default:
					d0 = 2 * x[0]
				}
				num += d0 * d0
				for d := 1; d < len(x); d++ {
					num += float64((d + 1) * (d + 1))
				}
				return 0
			})
			want := math.Sqrt(num / float64(g.points()))
			if got := RelH1(g, pred, truth); !near(got, want, 1e-12) {
				t.Errorf("relH1 = %.15g, want %.15g", got, want)
			}
			g.Periodic = true
			if got := RelH1(g, pred, truth); near(got, want, 1e-3) {
				t.Errorf("periodic grid gave the one-sided answer %.6g: wrap-around not used", got)
			}
		})
	}
}

func BenchmarkRelH1128Cubed(b *testing.B) {
	g, p, u := benchFrames(b)
	for b.Loop() {
		RelH1(g, p, u)
	}
}
