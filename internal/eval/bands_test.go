package eval

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

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

func BenchmarkBandErrors128Cubed(b *testing.B) {
	g, p, u := benchFrames(b)
	s := newSpectrum(g)
	for b.Loop() {
		s.sums(g.Channels, p, u).Errors()
	}
}
