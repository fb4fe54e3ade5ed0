package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestWaveletPlaneBits checks the C wavelet kernel against the Go loops it
// replaces (waveletPlaneGo), bit for bit, forward and inverse, in 1D, 2D
// and 3D, with lines down to length 2 at the coarsest level (where the
// filter wraps around the line more than once). Planes of random signed
// zeros check the sign of zero outputs, which depends on whether a sum
// starts from a zero as some of Go's do; since a later step hides most of
// them, they are also run through single steps (one real axis, the others
// an untransformed batch of lines) many times over. Where cgo is off both
// sides are the Go loops.
func TestWaveletPlaneBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	type testCase struct {
		g      wvGeom
		levels int
		trials int
	}
	var cases []testCase
	for _, c := range []struct {
		sp     []int
		levels int
	}{
		{[]int{8}, 3}, {[]int{16}, 1}, {[]int{64}, 3}, {[]int{1024}, 3}, {[]int{24}, 2},
		{[]int{8, 8}, 3}, {[]int{16, 32}, 3}, {[]int{64, 64}, 3}, {[]int{32, 8}, 2}, {[]int{40, 24}, 3},
		{[]int{8, 16, 8}, 3}, {[]int{16, 16, 16}, 2},
	} {
		cases = append(cases, testCase{newWVGeom(c.sp), c.levels, 1})
	}
	// Single steps: axis a of length L real, the other axes a batch.
	for _, L := range []int{2, 4, 6, 8, 16} {
		for a := range 3 {
			g := wvGeom{n: [3]int{3, 5, 7}, real: [3]bool{}}
			g.n[a], g.real[a] = L, true
			g.s = g.n[0] * g.n[1] * g.n[2]
			cases = append(cases, testCase{g, 1, 200})
		}
	}
	for _, c := range cases {
		g := c.g
		for trial := range c.trials {
			for _, kind := range []string{"normal", "signed zeros", "mixed scales"} {
				if c.trials > 1 && kind != "signed zeros" && trial > 0 {
					continue
				}
				x := make([]float32, g.s)
				for i := range x {
					switch kind {
					case "normal":
						x[i] = float32(r.NormFloat64())
					case "signed zeros":
						x[i] = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
					default:
						x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30)))
					}
				}
				for _, inverse := range []bool{false, true} {
					name := fmt.Sprintf("%+v levels %d trial %d %s inverse %v", g, c.levels, trial, kind, inverse)
					want, got := append([]float32(nil), x...), append([]float32(nil), x...)
					waveletPlaneGo(want, &g, c.levels, inverse, make([]float32, wvScratchLen(&g)))
					// Poisoned scratch: the kernel must not read what it did not write.
					w := make([]float32, wvScratchLen(&g))
					for i := range w {
						w[i] = float32(math.NaN())
					}
					waveletPlaneFast(got, &g, c.levels, inverse, w)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: point %d = %g (%#08x), Go %g (%#08x)", name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
			}
		}
	}
}

// BenchmarkWaveletPlane times one 3-level forward and inverse transform of
// a 64x64 and a 128x128 plane, the Go loops against the C kernel.
func BenchmarkWaveletPlane(bm *testing.B) {
	for _, n := range []int{64, 128} {
		g := newWVGeom([]int{n, n})
		x := make([]float32, g.s)
		for i := range x {
			x[i] = float32(i%17) - 8
		}
		w := make([]float32, wvScratchLen(&g))
		for _, impl := range []struct {
			name string
			f    func([]float32, *wvGeom, int, bool, []float32)
		}{{"go", waveletPlaneGo}, {"c", waveletPlaneFast}} {
			bm.Run(fmt.Sprintf("%dx%d/%s", n, n, impl.name), func(bm *testing.B) {
				p := append([]float32(nil), x...)
				bm.SetBytes(int64(8 * g.s))
				for bm.Loop() {
					impl.f(p, &g, 3, false, w)
					impl.f(p, &g, 3, true, w)
				}
			})
		}
	}
}
