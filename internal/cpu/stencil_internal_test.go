package cpu

import (
	"fmt"
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

// TestStencilMovesBits checks the C im2col, im2colT and col2im against the
// Go loops bit for bit: on the offsets of real stencil geometries (1D, 2D,
// 3D, periodic or not, whole and partial panels, tiles shorter than a
// panel), where most panels read consecutive points, and on random
// offsets with dropped edges, where none do. (The backend's forceGo would
// also swap the GEMM for its Go kernel, whose bits differ; the wiring is
// checked by stencil_test.go's references.)
func TestStencilMovesBits(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	fill := func(n int, nan bool) []float32 { return randFloats(r, n, nan) }
	check := func(name string, got, want []float32) { t.Helper(); requireBits(t, name, got, want) }
	type geomCase struct {
		name string
		g    stGeom
		offs []int32
		n    int
	}
	var cases []geomCase
	stencil := func(d int) [][3]int {
		var out [][3]int
		for a := -1; a <= 1; a++ {
			for b := -1; b <= 1; b++ {
				for c := -1; c <= 1; c++ {
					o := [3]int{a, b, c}
					if d < 3 && a != 0 || d < 2 && b != 0 || o == [3]int{} {
						continue
					}
					out = append(out, o)
				}
			}
		}
		return out
	}
	for _, sh := range []struct {
		n   [3]int
		d   int
		cin int
	}{{[3]int{1, 1, 64}, 1, 5}, {[3]int{1, 16, 16}, 2, 3}, {[3]int{1, 12, 20}, 2, 17}, {[3]int{6, 8, 10}, 3, 2}} {
		for _, periodic := range []bool{true, false} {
			g := stGeom{n: sh.n, off: stencil(sh.d), periodic: periodic, cin: sh.cin}
			g.s, g.sp, g.k = len(g.off), sh.n[0]*sh.n[1]*sh.n[2], len(g.off)*sh.cin
			for _, tc := range [][2]int{{0, 7}, {0, convNR}, {5, 3*convNR + 5}, {g.sp - 40, 40}} {
				p0, n := tc[0], tc[1]
				offs := make([]int32, g.s*n)
				g.fill(offs, make([]float32, n), p0, n)
				cases = append(cases, geomCase{fmt.Sprintf("%v periodic %v tile %d+%d", sh.n, periodic, p0, n), g, offs, n})
			}
		}
	}
	for _, n := range []int{convNR, 3*convNR + 5, 7} {
		g := stGeom{s: 3, sp: 50, cin: 4}
		g.k = g.s * g.cin
		offs := make([]int32, g.s*n)
		for i := range offs {
			offs[i] = max(int32(r.IntN(g.sp+5)-5), -1)
		}
		cases = append(cases, geomCase{fmt.Sprintf("random offsets, n %d", n), g, offs, n})
	}
	if !havePatchC {
		t.Skip("no C moves in this build")
	}
	for _, c := range cases {
		g, n := c.g, c.n
		xb := fill(g.cin*g.sp, false)
		size := convPackedLen(n, g.k, convNR)
		got, want := fill(size, true), fill(size, true)
		g.moves().im2col(got, xb, c.offs, n)
		g.im2col(want, xb, c.offs, n)
		check(c.name+": im2col", got, want)
		size = convPackedLen(g.k, n, convNR)
		got, want = fill(size, true), fill(size, true)
		g.moves().im2colT(got, xb, c.offs, n)
		g.im2colT(want, xb, c.offs, n)
		check(c.name+": im2colT", got, want)
		dP := fill(g.k*n, false)
		want = fill(g.cin*g.sp, false)
		got = append([]float32(nil), want...)
		g.moves().col2im(got, dP, c.offs, n)
		g.col2im(want, dP, c.offs, n)
		check(c.name+": col2im", got, want)
	}

}

// BenchmarkStencilMoves times the three data moves of one tile of GNO's
// 2D message at the grid's shape (width 46, 64x64, periodic 3x3 stencil,
// the tile the backend picks), the Go loops against the C ones.
func BenchmarkStencilMoves(bm *testing.B) {
	var off [][3]int
	for a := -1; a <= 1; a++ {
		for c := -1; c <= 1; c++ {
			if a != 0 || c != 0 {
				off = append(off, [3]int{0, a, c})
			}
		}
	}
	g := stGeom{n: [3]int{1, 64, 64}, off: off, periodic: true, s: len(off), sp: 64 * 64, cin: 46}
	g.k = g.s * g.cin
	maxTile := max(convNR, convTileFloats/g.k/convNR*convNR)
	n := maxTile
	offs := make([]int32, g.s*n)
	g.fill(offs, make([]float32, n), 64*10+3, n)
	xb := make([]float32, g.cin*g.sp)
	for i := range xb {
		xb[i] = float32(i % 7)
	}
	patch := make([]float32, convPackedLen(n, g.k, convNR))
	dP := make([]float32, g.k*n)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"im2col/go", func() { g.im2col(patch, xb, offs, n) }},
		{"im2col/c", func() { g.moves().im2col(patch, xb, offs, n) }},
		{"im2colT/go", func() { g.im2colT(patch, xb, offs, n) }},
		{"im2colT/c", func() { g.moves().im2colT(patch, xb, offs, n) }},
		{"col2im/go", func() { g.col2im(xb, dP, offs, n) }},
		{"col2im/c", func() { g.moves().col2im(xb, dP, offs, n) }},
	} {
		bm.Run(c.name, func(bm *testing.B) {
			bm.SetBytes(int64(4 * g.k * n))
			for bm.Loop() {
				c.f()
			}
		})
	}
}
