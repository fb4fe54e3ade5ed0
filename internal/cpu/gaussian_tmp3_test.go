package cpu

import (
	"testing"
)

func TestTmpChain3D(t *testing.T) {
	for _, isa := range []int{0, 1, 2} {
		dims := []int{7, 6, 8}
		sp := 7 * 6 * 8
		r := 2
		k, dk := make([]float32, r+1), make([]float32, r+1)
		gaussKernel1D(k, dk, 1.15, true)
		mk := func(seed int) []float32 {
			s := make([]float32, sp)
			for i := range s {
				s[i] = float32((i*seed)%17) / 17
			}
			return s
		}
		dy, x := mk(3), mk(5)
		type passFn func(z, z2, s, s2, e, k, dk []float32, outer, n, inner int, add bool, scratch []float32) float64
		cfn := func(z, z2, s, s2, e, k, dk []float32, outer, n, inner int, add bool, scratch []float32) float64 {
			return gaussAxisISA(isa, z, z2, s, s2, e, k, dk, outer, n, inner, add, scratch)
		}
		run := func(f passFn) (float64, [][]float32) {
			g := &gaussGeom{dims: dims, sp: sp, count: 1}
			work := make([]float32, 10000)
			u, w := dy, []float32(nil)
			var outs [][]float32
			for a := 2; a >= 1; a-- {
				outer, n, inner := g.axis(a)
				nu, nw := make([]float32, sp), make([]float32, sp)
				f(nu, nw, u, w, nil, k, dk, outer, n, inner, false, work)
				u, w = nu, nw
				outs = append(outs, nu, nw)
			}
			outer, n, inner := g.axis(0)
			dx := make([]float32, sp)
			s := f(dx, nil, u, w, x, k, dk, outer, n, inner, true, work)
			outs = append(outs, dx)
			return s, outs
		}
		sc, oc := run(cfn)
		sg, og := run(gaussAxisGo)
		t.Logf("isa %d: C %v Go %v", isa, sc, sg)
		for i := range oc {
			for j := range oc[i] {
				if d := oc[i][j] - og[i][j]; d > 1e-5 || d < -1e-5 {
					t.Errorf("isa %d out %d [%d]: %v vs %v", isa, i, j, oc[i][j], og[i][j])
					break
				}
			}
		}
	}
}
