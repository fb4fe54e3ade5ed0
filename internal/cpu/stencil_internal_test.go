package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStencilIm2col: the panel-wise gather writes the patch matrix the
// value-by-value loop it replaced wrote (P[k, pl] at panel pl/convNR,
// row k, column pl%convNR; 0 for a dropped edge, offset -1), for tiles of
// whole panels, a partial last panel and fewer points than one panel.
func TestStencilIm2col(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{convNR, 3 * convNR, 3*convNR + 5, 7} {
		g := stGeom{s: 3, sp: 50, cin: 4}
		g.k = g.s * g.cin
		xb := make([]float32, g.cin*g.sp)
		for i := range xb {
			xb[i] = float32(r.NormFloat64())
		}
		offs := make([]int32, g.s*n)
		for i := range offs {
			offs[i] = int32(r.IntN(g.sp+5) - 5) // some -5..-1: dropped
			if offs[i] < 0 {
				offs[i] = -1
			}
		}
		size := convPackedLen(n, g.k, convNR)
		got, want := make([]float32, size), make([]float32, size)
		for i := range got {
			got[i], want[i] = float32(math.NaN()), float32(math.NaN())
		}
		g.im2col(got, xb, offs, n)
		panel := g.k * convNR
		for s := 0; s < g.s; s++ {
			for i := 0; i < g.cin; i++ {
				k := s*g.cin + i
				for pl, off := range offs[s*n:][:n] {
					v := float32(0)
					if off >= 0 {
						v = xb[i*g.sp+int(off)]
					}
					want[(pl/convNR)*panel+k*convNR+pl%convNR] = v
				}
			}
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d: patch[%d] = %g, want %g", n, i, got[i], want[i])
			}
		}
	}
}
