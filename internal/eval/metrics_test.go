package eval

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"
)

// unitGrid is a grid on the unit domain: spacing 1/N per axis, the
// spacing of a periodic task on [0,1)^d.
func unitGrid(channels int, periodic bool, shape ...int) Grid {
	h := make([]float64, len(shape))
	for d, n := range shape {
		h[d] = 1 / float64(n)
	}
	return Grid{Channels: channels, Shape: shape, Spacing: h, Periodic: periodic}
}

// field samples f(c, x) at every point of g, x_d = i_d h_d, in g's layout.
func field(g Grid, f func(c int, x []float64) float64) []float32 {
	u := make([]float32, g.Len())
	x := make([]float64, len(g.Shape))
	P := g.points()
	for c := 0; c < g.Channels; c++ {
		for p := 0; p < P; p++ {
			r := p
			for d := len(g.Shape) - 1; d >= 0; d-- {
				x[d] = float64(r%g.Shape[d]) * g.Spacing[d]
				r /= g.Shape[d]
			}
			u[c*P+p] = float32(f(c, x))
		}
	}
	return u
}

// index returns the grid indices i_d of point x (x_d = i_d h_d).
func index(g Grid, x []float64) []int {
	i := make([]int, len(x))
	for d := range x {
		i[d] = int(math.Round(x[d] / g.Spacing[d]))
	}
	return i
}

// randomField is a smooth random periodic field: a few random Fourier
// modes per channel.
func randomField(g Grid, rng *rand.Rand) []float32 {
	type mode struct {
		k    []float64
		a, p float64
	}
	modes := make([][]mode, g.Channels)
	for c := range modes {
		for range 6 {
			k := make([]float64, len(g.Shape))
			for d := range k {
				k[d] = float64(rng.IntN(7) - 3)
			}
			modes[c] = append(modes[c], mode{k, rng.NormFloat64(), 2 * math.Pi * rng.Float64()})
		}
	}
	return field(g, func(c int, x []float64) float64 {
		v := 0.3
		for _, m := range modes[c] {
			th := m.p
			for d := range x {
				th += 2 * math.Pi * m.k[d] * x[d] / (g.Spacing[d] * float64(g.Shape[d]))
			}
			v += m.a * math.Cos(th)
		}
		return v
	})
}

func scaled(u []float32, a float32) []float32 {
	v := make([]float32, len(u))
	for i, x := range u {
		v[i] = a * x
	}
	return v
}

// near reports whether got is within tol of want, relative to max(1, |want|).
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// mustPanic fails unless fn panics with a message containing want.
func mustPanic(t *testing.T, want string, fn func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want one mentioning %q", want)
		}
		if msg := fmt.Sprint(r); !strings.Contains(msg, want) {
			t.Fatalf("panic %q, want one mentioning %q", msg, want)
		}
	}()
	fn()
}

// TestGridValidate checks that each bad field is named, and Len.
func TestGridValidate(t *testing.T) {
	ok := Grid{Channels: 5, Shape: []int{8, 6, 4}, Spacing: []float64{0.1, 0.2, 0.3}, Periodic: true}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid grid: %v", err)
	}
	if ok.Len() != 5*8*6*4 {
		t.Errorf("Len = %d, want %d", ok.Len(), 5*8*6*4)
	}
	for _, tc := range []struct {
		name string
		g    Grid
		want string
	}{
		{"no channels", Grid{Channels: 0, Shape: []int{8}, Spacing: []float64{1}}, "Channels"},
		{"no axes", Grid{Channels: 1}, "Shape"},
		{"four axes", Grid{Channels: 1, Shape: []int{4, 4, 4, 4}, Spacing: []float64{1, 1, 1, 1}}, "Shape"},
		{"short axis", Grid{Channels: 1, Shape: []int{8, 2}, Spacing: []float64{1, 1}}, "Shape[1]"},
		{"spacing count", Grid{Channels: 1, Shape: []int{8, 8}, Spacing: []float64{1}}, "Spacing"},
		{"zero spacing", Grid{Channels: 1, Shape: []int{8, 8}, Spacing: []float64{1, 0}}, "Spacing[1]"},
		{"NaN spacing", Grid{Channels: 1, Shape: []int{8}, Spacing: []float64{math.NaN()}}, "Spacing[0]"},
		{"Inf spacing", Grid{Channels: 1, Shape: []int{8}, Spacing: []float64{math.Inf(1)}}, "Spacing[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.g.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
	mustPanic(t, "frame of 3 values", func() { RelH1(unitGrid(1, true, 4), make([]float32, 3), make([]float32, 3)) })
}

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

// tone is a cosine of amplitude a at integer wavenumber k (per axis).
type tone struct {
	k []int
	a float64
}

// selfConjugate reports whether mode k equals -k on g (every component 0
// or N/2): such a tone has one Fourier coefficient, mean square a^2 (at
// phase 0), the others two, mean square a^2/2.
func (tn tone) meanSquare(g Grid) float64 {
	for d, k := range tn.k {
		if k != 0 && 2*k != g.Shape[d] {
			return tn.a * tn.a / 2
		}
	}
	return tn.a * tn.a
}

// phase is 0 for self-conjugate modes (whose sine part would vanish) and
// 0.3 otherwise.
func (tn tone) phase(g Grid) float64 {
	if tn.meanSquare(g) == tn.a*tn.a {
		return 0
	}
	return 0.3
}

// tones samples the sum of the channel's tones on g.
func tones(g Grid, ts [][]tone) []float32 {
	return field(g, func(c int, x []float64) float64 {
		v := 0.0
		for _, tn := range ts[c] {
			th := tn.phase(g)
			for d, i := range index(g, x) {
				th += 2 * math.Pi * float64(tn.k[d]*i) / float64(g.Shape[d])
			}
			v += tn.a * math.Cos(th)
		}
		return v
	})
}

// TestBandErrorsTones plants pure tones in each band, in 1D, 2D and 3D, one
// and two channels: the truth holds tones in every band and the prediction
// changes one tone's amplitude, so the error must land in that tone's band
// only, E_b = (δa)^2 ms / sum of the band's truth mean squares (Parseval),
// and the other bands must be zero to float32 rounding.
func TestBandErrorsTones(t *testing.T) {
	type bandTone struct {
		tone
		band int
	}
	for _, tc := range []struct {
		name     string
		g        Grid
		bg       []bandTone // background tones, every channel
		tested   []bandTone // each is scaled by 1.5 in turn
		channels int
	}{
		{
			// N = 128: K = 64, low |k| <= 21, mid 22..42, high 43..64.
			name: "1D edges", g: unitGrid(1, true, 128),
			bg: []bandTone{{tone{[]int{0}, 0.7}, BandLow}, {tone{[]int{5}, 1}, BandLow},
				{tone{[]int{30}, 0.5}, BandMid}, {tone{[]int{50}, 0.25}, BandHigh}},
			tested: []bandTone{{tone{[]int{21}, 0.3}, BandLow}, {tone{[]int{22}, 0.3}, BandMid},
				{tone{[]int{42}, 0.3}, BandMid}, {tone{[]int{43}, 0.3}, BandHigh},
				{tone{[]int{64}, 0.3}, BandHigh}},
		},
		{
			// 64 x 64: K = 32, low |k| < 10.67, mid < 21.33.
			name: "2D", g: unitGrid(2, true, 64, 64),
			bg: []bandTone{{tone{[]int{0, 0}, 0.5}, BandLow}, {tone{[]int{3, 4}, 1}, BandLow},
				{tone{[]int{12, -9}, 0.5}, BandMid}, {tone{[]int{24, 18}, 0.25}, BandHigh}},
			tested: []bandTone{{tone{[]int{-6, 8}, 0.3}, BandLow}, {tone{[]int{0, 15}, 0.3}, BandMid},
				{tone{[]int{30, 30}, 0.3}, BandHigh}, {tone{[]int{32, 0}, 0.3}, BandHigh},
				{tone{[]int{10, 3}, 0.3}, BandLow}, {tone{[]int{11, 0}, 0.3}, BandMid}},
		},
		{
			// 32 x 16 x 16: K = 8, low |k| < 2.67, mid < 5.33.
			name: "3D", g: unitGrid(1, true, 32, 16, 16),
			bg: []bandTone{{tone{[]int{0, 0, 0}, 1}, BandLow}, {tone{[]int{1, 1, 0}, 1}, BandLow},
				{tone{[]int{0, 3, 2}, 0.5}, BandMid}, {tone{[]int{6, 0, 0}, 0.25}, BandHigh}},
			tested: []bandTone{{tone{[]int{0, 0, 2}, 0.3}, BandLow}, {tone{[]int{-4, 0, 1}, 0.3}, BandMid},
				{tone{[]int{16, 8, 8}, 0.3}, BandHigh}, {tone{[]int{3, -5, 4}, 0.3}, BandHigh}},
		},
		{
			// 64^3, large enough for the parallel FFT path: K = 32.
			name: "3D 64^3", g: unitGrid(1, true, 64, 64, 64),
			bg: []bandTone{{tone{[]int{0, 0, 0}, 1}, BandLow}, {tone{[]int{2, 3, 0}, 1}, BandLow},
				{tone{[]int{0, 12, 9}, 0.5}, BandMid}, {tone{[]int{20, 20, 20}, 0.25}, BandHigh}},
			tested: []bandTone{{tone{[]int{-7, 0, 7}, 0.3}, BandLow}, {tone{[]int{13, -13, 1}, 0.3}, BandMid},
				{tone{[]int{0, 0, 32}, 0.3}, BandHigh}},
		},
	} {
		for _, tt := range tc.tested {
			for channel := range tc.g.Channels {
				t.Run(fmt.Sprintf("%s/k=%v/c%d", tc.name, tt.k, channel), func(t *testing.T) {
					truthTones := make([][]tone, tc.g.Channels)
					predTones := make([][]tone, tc.g.Channels)
					var den [3]float64
					for c := range truthTones {
						for _, b := range append(append([]bandTone(nil), tc.bg...), tt) {
							truthTones[c] = append(truthTones[c], b.tone)
							den[b.band] += b.meanSquare(tc.g)
							p := b.tone
							if c == channel && b.band == tt.band && fmt.Sprint(b.k) == fmt.Sprint(tt.k) {
								p.a *= 1.5
							}
							predTones[c] = append(predTones[c], p)
						}
					}
					got := BandErrors(tc.g, tones(tc.g, predTones), tones(tc.g, truthTones))
					d := tone{tt.k, 0.5 * tt.a}
					for b := range got {
						want := 0.0
						if b == tt.band {
							want = d.meanSquare(tc.g) / den[b]
						}
						if math.Abs(got[b]-want) > 1e-5*want+1e-10 {
							t.Errorf("E_%d = %.3g, want %.6g (all bands %v)", b, got[b], want, got)
						}
					}
				})
			}
		}
	}
}

// naiveBandErrors computes E_b with a direct full-spectrum DFT and the
// documented band rule, for small grids of any size.
func naiveBandErrors(g Grid, pred, truth []float32) [3]float64 {
	P := g.points()
	K := g.Shape[0] / 2
	for _, n := range g.Shape {
		K = min(K, n/2)
	}
	coords := func(p int) []int {
		i := make([]int, len(g.Shape))
		for d := len(g.Shape) - 1; d >= 0; d-- {
			i[d] = p % g.Shape[d]
			p /= g.Shape[d]
		}
		return i
	}
	var num, den [3]float64
	for c := 0; c < g.Channels; c++ {
		for q := 0; q < P; q++ {
			m := coords(q)
			var D, U complex128
			for p := 0; p < P; p++ {
				th := 0.0
				for d, i := range coords(p) {
					th -= 2 * math.Pi * float64(m[d]*i) / float64(g.Shape[d])
				}
				w := cmplx.Exp(complex(0, th))
				D += complex(float64(pred[c*P+p])-float64(truth[c*P+p]), 0) * w
				U += complex(float64(truth[c*P+p]), 0) * w
			}
			r2 := 0
			for d, mm := range m {
				k := mm
				if mm > g.Shape[d]/2 {
					k = mm - g.Shape[d]
				}
				r2 += k * k
			}
			b := BandHigh
			if 9*r2 < K*K {
				b = BandLow
			} else if 9*r2 < 4*K*K {
				b = BandMid
			}
			num[b] += real(D)*real(D) + imag(D)*imag(D)
			den[b] += real(U)*real(U) + imag(U)*imag(U)
		}
	}
	return [3]float64{num[0] / den[0], num[1] / den[1], num[2] / den[2]}
}

// TestBandErrorsNaiveDFT compares the FFT path (half spectrum, weights,
// strided axes) with a direct DFT on random fields, odd and even sizes.
func TestBandErrorsNaiveDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, g := range []Grid{
		unitGrid(1, true, 15), unitGrid(2, true, 16),
		unitGrid(2, true, 9, 12), unitGrid(1, false, 12, 7),
		unitGrid(1, true, 6, 5, 8), unitGrid(2, true, 7, 6, 9),
	} {
		t.Run(fmt.Sprintf("%dx%v", g.Channels, g.Shape), func(t *testing.T) {
			truth, pred := make([]float32, g.Len()), make([]float32, g.Len())
			for i := range truth {
				truth[i] = float32(rng.NormFloat64())
				pred[i] = truth[i] + float32(0.3*rng.NormFloat64())
			}
			got, want := BandErrors(g, pred, truth), naiveBandErrors(g, pred, truth)
			for b := range got {
				if !near(got[b], want[b], 1e-10) {
					t.Errorf("E_%d = %.15g, direct DFT %.15g", b, got[b], want[b])
				}
			}
		})
	}
}

// TestBandErrorsZeroTruth checks the zero-energy rule: 0 when the error has
// no energy in the band either, NaN otherwise.
func TestBandErrorsZeroTruth(t *testing.T) {
	g := unitGrid(1, true, 32, 32)
	zero := make([]float32, g.Len())
	if got := BandErrors(g, zero, zero); got != [3]float64{} {
		t.Errorf("zero fields: %v, want all 0", got)
	}
	mid := tones(g, [][]tone{{{[]int{0, 8}, 1}}})
	if got := BandErrors(g, mid, zero); !math.IsNaN(got[BandMid]) {
		t.Errorf("tone against a zero truth: E_mid = %v, want NaN", got[BandMid])
	}
}

// ramp is u = scale * i_axis.
func ramp(g Grid, axis int, scale func(c int) float64) []float32 {
	return field(g, func(c int, x []float64) float64 { return scale(c) * float64(index(g, x)[axis]) })
}

// TestStructureFunction checks S_r on ramps: r^2 per in-domain pair,
// r(N-r) on a periodic axis (N-r pairs differ by r, r by r-N), averaged
// over axes (a ramp along one axis is flat along the others) and channels.
func TestStructureFunction(t *testing.T) {
	one := func(int) float64 { return 1 }
	for _, tc := range []struct {
		name string
		g    Grid
		axis int
		sc   func(int) float64
		want func(r, n float64) float64
	}{
		{"1D", unitGrid(1, false, 40), 0, one, func(r, _ float64) float64 { return r * r }},
		{"1D periodic", unitGrid(1, true, 40), 0, one, func(r, n float64) float64 { return r * (n - r) }},
		{"2D axis 0", unitGrid(1, false, 40, 36), 0, one, func(r, _ float64) float64 { return r * r / 2 }},
		{"2D two channels", unitGrid(2, false, 40, 36), 0, func(c int) float64 { return float64(c + 1) },
			func(r, _ float64) float64 { return (r*r + 4*r*r) / 4 }},
		{"2D periodic axis 1", unitGrid(1, true, 36, 40), 1, one, func(r, n float64) float64 { return r * (n - r) / 2 }},
		{"3D last axis", unitGrid(1, false, 34, 34, 40), 2, one, func(r, _ float64) float64 { return r * r / 3 }},
		{"3D periodic middle axis", unitGrid(1, true, 34, 40, 34), 1, one, func(r, n float64) float64 { return r * (n - r) / 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := ramp(tc.g, tc.axis, tc.sc)
			n := float64(tc.g.Shape[tc.axis])
			for _, r := range []int{1, 2, 4, 8, 16, 32, 33} {
				if got, want := StructureFunction(tc.g, u, r), tc.want(float64(r), n); !near(got, want, 1e-12) {
					t.Errorf("S_%d = %v, want %v", r, got, want)
				}
			}
		})
	}
	g := unitGrid(1, true, 16, 20)
	u := make([]float32, g.Len())
	mustPanic(t, "lag 16 outside 1..15", func() { StructureFunction(g, u, 16) })
	mustPanic(t, "lag 0", func() { StructureFunction(g, u, 0) })
}

// roll shifts u periodically by s_d points along each axis.
func roll(g Grid, u []float32, s []int) []float32 {
	v := make([]float32, len(u))
	P := g.points()
	for c := 0; c < g.Channels; c++ {
		for p := 0; p < P; p++ {
			q, r, stride := 0, p, 1
			for d := len(g.Shape) - 1; d >= 0; d-- {
				i := r % g.Shape[d]
				r /= g.Shape[d]
				q += ((i + s[d]) % g.Shape[d]) * stride
				stride *= g.Shape[d]
			}
			v[c*P+q] = u[c*P+p]
		}
	}
	return v
}

// TestSFError checks Eq. sf: a periodic shift leaves every S_r unchanged
// (error 0), a scaled field û = a u gives |a^2 - 1|, and lags that do not
// fit the grid are skipped.
func TestSFError(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, g := range []Grid{unitGrid(1, true, 128), unitGrid(2, true, 64, 48), unitGrid(3, true, 40, 36, 34)} {
		t.Run(fmt.Sprint(g.Shape), func(t *testing.T) {
			u := randomField(g, rng)
			shift := []int{5, 11, 3}[:len(g.Shape)]
			if got := SFError(g, roll(g, u, shift), u, nil); got > 1e-12 {
				t.Errorf("shifted field: SF = %g, want 0", got)
			}
			for _, a := range []float32{0.5, 2, 1.5} {
				want := math.Abs(float64(a)*float64(a) - 1)
				if got := SFError(g, scaled(u, a), u, DefaultLags); !near(got, want, 1e-6) {
					t.Errorf("scaled by %g: SF = %v, want %v", a, got, want)
				}
			}
			// A noisy prediction: nil lags mean DefaultLags.
			p := make([]float32, len(u))
			for i := range p {
				p[i] = u[i] + float32(0.1*rng.NormFloat64())
			}
			if a, b := SFError(g, p, u, nil), SFError(g, p, u, DefaultLags); a != b || a == 0 {
				t.Errorf("nil lags %v, DefaultLags %v", a, b)
			}
		})
	}
	// On a 16 x 64 grid the lags 16 and 32 do not fit the first axis.
	g := unitGrid(1, false, 16, 64)
	u := randomField(g, rng)
	p := randomField(g, rng)
	if a, b := SFError(g, p, u, DefaultLags), SFError(g, p, u, []int{1, 2, 4, 8}); a != b {
		t.Errorf("lags >= 16 not skipped: %v vs %v", a, b)
	}
	if got := SFError(g, p, u, []int{16, 32}); !math.IsNaN(got) {
		t.Errorf("no usable lag: SF = %v, want NaN", got)
	}
	mustPanic(t, "lag 0", func() { SFError(g, p, u, []int{0, 1}) })
}

// crashCase builds a trajectory: truth_t = grow(t) u and the prediction of
// step t from pred(t, truth_t).
type crashCase struct {
	name       string
	rule       CrashRule
	noU0       bool
	grow       func(t int) float32
	pred       func(t int, truth []float32) []float32
	crashStep  int
	reason     string
	meanRelL2  float64 // when not crashed
	checkCurve func(t *testing.T, m *TrajectoryMetrics)
}

// TestCrash plants each crash criterion of the paper (non-finite values,
// norm ratio > 1e3, relL2 > 10) in 1D, 2D and 3D trajectories and checks
// the outcome, the full-length curves after a crash and the means.
func TestCrash(t *testing.T) {
	const steps = 6
	same := func(int) float32 { return 1 }
	scaleAt := func(step int, a float32) func(int, []float32) []float32 {
		return func(t int, u []float32) []float32 {
			if t == step {
				return scaled(u, a)
			}
			return scaled(u, 1+0.01*float32(t))
		}
	}
	plant := func(step int, v float32) func(int, []float32) []float32 {
		return func(t int, u []float32) []float32 {
			p := scaled(u, 1+0.01*float32(t))
			if t == step {
				p[len(p)/3] = v
			}
			return p
		}
	}
	cases := []crashCase{
		{name: "clean", rule: DefaultCrashRule, grow: same, pred: scaleAt(0, 1), meanRelL2: 0.035},
		{name: "NaN at step 3", rule: DefaultCrashRule, grow: same, pred: plant(3, float32(math.NaN())),
			crashStep: 3, reason: "non-finite",
			checkCurve: func(t *testing.T, m *TrajectoryMetrics) {
				if !math.IsNaN(m.RelL2[2]) || math.IsNaN(m.RelL2[3]) {
					t.Errorf("relL2 curve %v: want NaN at step 3 only", m.RelL2)
				}
			}},
		{name: "Inf at step 2", rule: DefaultCrashRule, grow: same, pred: plant(2, float32(math.Inf(-1))),
			crashStep: 2, reason: "non-finite",
			checkCurve: func(t *testing.T, m *TrajectoryMetrics) {
				if !math.IsInf(m.MSE[1], 1) {
					t.Errorf("MSE at step 2 = %v, want +Inf kept", m.MSE[1])
				}
			}},
		// The truth grows tenfold a step and the prediction follows it within
		// 1% (relL2 0.01): only the norm ratio can fire, first at step 3,
		// where ||û_3||/||u_0|| = 1010 > 1e3.
		{name: "norm blow-up", rule: DefaultCrashRule,
			grow: func(t int) float32 { return float32(math.Pow(10, float64(t))) },
			pred: func(_ int, u []float32) []float32 { return scaled(u, 1.01) }, crashStep: 3, reason: "norm ratio"},
		{name: "norm blow-up without u0", rule: DefaultCrashRule, noU0: true,
			grow: func(t int) float32 { return float32(math.Pow(10, float64(t))) },
			pred: func(_ int, u []float32) []float32 { return scaled(u, 1.01) }, meanRelL2: 0.01},
		{name: "relL2 11 at step 5", rule: DefaultCrashRule, grow: same, pred: scaleAt(5, 12),
			crashStep: 5, reason: "relL2"},
		{name: "relL2 9.5 is no crash", rule: DefaultCrashRule, grow: same, pred: scaleAt(5, 10.5),
			meanRelL2: (0.01 + 0.02 + 0.03 + 0.04 + 9.5 + 0.06) / 6},
		{name: "relL2 test off", rule: CrashRule{}, grow: same, pred: scaleAt(5, 12),
			meanRelL2: (0.01 + 0.02 + 0.03 + 0.04 + 11 + 0.06) / 6},
		{name: "first crash kept", rule: DefaultCrashRule, grow: same,
			pred: func(t int, u []float32) []float32 {
				if t >= 2 {
					return scaled(u, 20)
				}
				return u
			}, crashStep: 2, reason: "relL2"},
	}
	for _, g := range []Grid{unitGrid(1, true, 64), unitGrid(2, true, 16, 16), unitGrid(5, true, 8, 8, 8)} {
		u := randomField(g, rand.New(rand.NewPCG(11, 11)))
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%dD/%s", len(g.Shape), tc.name), func(t *testing.T) {
				u0 := u
				if tc.noU0 {
					u0 = nil
				}
				m := NewTrajectoryMetrics(g, u0, steps, tc.rule, nil)
				for s := 1; s <= steps; s++ {
					truth := scaled(u, tc.grow(s))
					m.Add(s, tc.pred(s, truth), truth)
				}
				if m.Crashed != (tc.crashStep > 0) || m.CrashStep != tc.crashStep {
					t.Fatalf("Crashed %v at step %d (%s), want step %d", m.Crashed, m.CrashStep, m.CrashReason, tc.crashStep)
				}
				if !strings.Contains(m.CrashReason, tc.reason) {
					t.Errorf("reason %q, want one mentioning %q", m.CrashReason, tc.reason)
				}
				for _, name := range MetricNames() {
					if n := len(m.Curve(name)); n != steps {
						t.Errorf("%s curve has %d values after %d steps", name, n, steps)
					}
					mean := m.Mean(name)
					if m.Crashed && !math.IsNaN(mean) {
						t.Errorf("crashed trajectory: Mean(%s) = %v, want NaN", name, mean)
					}
				}
				if !m.Crashed {
					if got := m.Mean(MetricRelL2); !near(got, tc.meanRelL2, 1e-5) {
						t.Errorf("Mean(relL2) = %v, want %v", got, tc.meanRelL2)
					}
				}
				if tc.checkCurve != nil {
					tc.checkCurve(t, m)
				}
			})
		}
	}
	if DefaultCrashRule != (CrashRule{NormRatio: 1e3, RelL2: 10}) {
		t.Errorf("DefaultCrashRule = %+v, want the paper's {1e3, 10}", DefaultCrashRule)
	}
}

// TestTrajectoryMetrics checks that the accumulator's curves are the
// per-frame functions, the means and the energy drift at the horizon, and
// the misuse panics; with a Darcy-like single prediction on a non-periodic
// grid as well.
func TestTrajectoryMetrics(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	lags := []int{1, 3, 9}
	for _, tc := range []struct {
		name  string
		g     Grid
		steps int
		noU0  bool
	}{
		{"1D", unitGrid(1, true, 96), 4, false},
		{"2D", Grid{Channels: 2, Shape: []int{24, 20}, Spacing: []float64{0.5, 0.25}, Periodic: true}, 3, false},
		{"3D", unitGrid(5, true, 12, 10, 16), 3, false},
		{"Darcy", unitGrid(1, false, 32, 32), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u0 := randomField(tc.g, rng)
			var first []float32
			if !tc.noU0 {
				first = u0
			}
			m := NewTrajectoryMetrics(tc.g, first, tc.steps, DefaultCrashRule, lags)
			var sum float64
			var pred, truth []float32
			for s := 1; s <= tc.steps; s++ {
				truth = randomField(tc.g, rng)
				pred = make([]float32, len(truth))
				for i := range pred {
					pred[i] = truth[i] + float32(0.05*float64(s)*rng.NormFloat64())
				}
				m.Add(s, pred, truth)
				want := []float64{RelL2(pred, truth), RelH1(tc.g, pred, truth), MSE(pred, truth),
					SFError(tc.g, pred, truth, lags), EnergyDrift(pred, truth)}
				got := []float64{m.RelL2[s-1], m.RelH1[s-1], m.MSE[s-1], m.SF[s-1], m.Drift[s-1]}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("step %d: curve value %d = %v, function %v", s, i, got[i], want[i])
					}
				}
				if b := BandErrors(tc.g, pred, truth); m.Band[s-1] != b {
					t.Errorf("step %d: bands %v, BandErrors %v", s, m.Band[s-1], b)
				}
				if tc.noU0 != math.IsNaN(m.NormRatio[s-1]) {
					t.Errorf("step %d: norm ratio %v with u0 given: %v", s, m.NormRatio[s-1], !tc.noU0)
				}
				sum += m.RelL2[s-1]
			}
			if m.Crashed {
				t.Fatalf("crashed: %s", m.CrashReason)
			}
			if got := m.Mean(MetricRelL2); !near(got, sum/float64(tc.steps), 1e-14) {
				t.Errorf("Mean(relL2) = %v, want %v", got, sum/float64(tc.steps))
			}
			if ed := EnergyDrift(pred, truth); m.EnergyDrift != ed || m.Mean(MetricEnergyDrift) != ed {
				t.Errorf("energy drift %v, Mean %v, want Eq. ed at the last step %v", m.EnergyDrift, m.Mean(MetricEnergyDrift), ed)
			}
			if got := m.Curve(MetricBandHigh)[0]; got != m.Band[0][BandHigh] {
				t.Errorf("Curve(band_high)[0] = %v, want %v", got, m.Band[0][BandHigh])
			}
			mustPanic(t, "after", func() { m.Add(tc.steps+1, pred, truth) })
			mustPanic(t, "unknown metric", func() { m.Mean("relL3") })
		})
	}
	g := unitGrid(1, true, 16)
	m := NewTrajectoryMetrics(g, nil, 3, DefaultCrashRule, nil)
	u := make([]float32, 16)
	mustPanic(t, "want step 1", func() { m.Add(2, u, u) })
	mustPanic(t, "Channels", func() { NewTrajectoryMetrics(Grid{}, nil, 1, DefaultCrashRule, nil) })
	mustPanic(t, "steps", func() { NewTrajectoryMetrics(g, nil, 0, DefaultCrashRule, nil) })
}

// TestMeanSkipsUndefined checks that a step with an undefined relative
// error (a zero truth against a nonzero prediction) is not a crash and is
// left out of the mean.
func TestMeanSkipsUndefined(t *testing.T) {
	g := unitGrid(1, true, 32)
	u := randomField(g, rand.New(rand.NewPCG(2, 2)))
	m := NewTrajectoryMetrics(g, u, 3, DefaultCrashRule, nil)
	m.Add(1, scaled(u, 1.1), u)
	m.Add(2, u, make([]float32, len(u)))
	m.Add(3, scaled(u, 1.3), u)
	if m.Crashed {
		t.Fatalf("crashed: %s", m.CrashReason)
	}
	if !math.IsNaN(m.RelL2[1]) {
		t.Fatalf("relL2 against a zero truth = %v, want NaN", m.RelL2[1])
	}
	if got := m.Mean(MetricRelL2); !near(got, 0.2, 1e-6) {
		t.Errorf("Mean(relL2) = %v, want 0.2 (steps 1 and 3)", got)
	}
}

// Benchmarks at the largest size, one 128^3 channel of 3D-CFD.
func benchFrames(b *testing.B) (Grid, []float32, []float32) {
	g := unitGrid(1, true, 128, 128, 128)
	rng := rand.New(rand.NewPCG(1, 2))
	u, p := make([]float32, g.Len()), make([]float32, g.Len())
	for i := range u {
		u[i] = float32(rng.NormFloat64())
		p[i] = u[i] + 0.1*float32(rng.NormFloat64())
	}
	return g, p, u
}

func BenchmarkBandErrors128Cubed(b *testing.B) {
	g, p, u := benchFrames(b)
	s := newSpectrum(g)
	for b.Loop() {
		s.errors(g.Channels, p, u)
	}
}

func BenchmarkRelH1128Cubed(b *testing.B) {
	g, p, u := benchFrames(b)
	for b.Loop() {
		RelH1(g, p, u)
	}
}

func BenchmarkSFError128Cubed(b *testing.B) {
	g, p, u := benchFrames(b)
	for b.Loop() {
		SFError(g, p, u, nil)
	}
}
