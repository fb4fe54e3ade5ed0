//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// convDownCases: 1D, 2D, 3D with even axes; N = 2 axes (the circular
// wrap reads the same point twice); Cout 67 straddling the 64-row tile;
// Cin 3^d = 180 columns of the weight gradient (three column tiles);
// output grids that are not multiples of 64; a weight gradient whose
// K = B P = 2048 is split (SplitK(3, 6, 2048) = 4 chunks); with and
// without bias.
var convDownCases = []struct {
	b, cin, cout int
	sp           []int
	bias         bool
}{
	{3, 5, 67, []int{38}, true},
	{2, 4, 6, []int{10, 14}, false},
	{2, 3, 5, []int{6, 4, 8}, true},
	{1, 3, 4, []int{2, 2, 2}, true},
	{2, 2, 3, []int{2048}, true},
	{1, 20, 9, []int{12, 2}, true},
	{2, 8, 16, []int{18, 20}, false},
	{1, 6, 7, []int{10, 6, 12}, true},
}

// TestConvDown compares ConvDown and ConvDownBackward with the CPU.
// Tolerances (denseSumTol; |x|, |w|, |dy|, |bias| <= 1, so every term is
// at most 1): forward, Cin 3^d products plus the bias; dx, an input point
// is read by at most 2^d taps of each output channel, so at most Cout 2^d
// products plus the pre-filled gradient; dw and dbias, B P terms (P the
// output points) plus the pre-filled value.
func TestConvDown(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range convDownCases {
		d := len(c.sp)
		taps := 1
		out := make([]int, d)
		for a, n := range c.sp {
			taps *= 3
			out[a] = n / 2
		}
		xs := append([]int{c.b, c.cin}, c.sp...)
		ys := append([]int{c.b, c.cout}, out...)
		ws := append([]int{c.cout, c.cin}, make([]int, d)...)
		for a := 2; a < len(ws); a++ {
			ws[a] = 3
		}
		p := tensor.Numel(out)
		t.Run(fmt.Sprint(xs, "->", c.cout), func(t *testing.T) {
			seed := uint64(100 * ci)
			x, w := rnd(ref, seed+1, xs...), rnd(ref, seed+2, ws...)
			var bias *pair
			if c.bias {
				b := rnd(ref, seed+3, c.cout)
				bias = &b
			}
			y := both(ref, random(seed+4, tensor.Numel(ys), 5), ys...) // garbage: forward overwrites
			ref.ConvDown(y.c, x.c, w.c, denseC(bias))
			gpu.ConvDown(y.g, x.g, w.g, denseG(bias))
			agree(t, "ConvDown", y, denseSumTol(c.cin*taps+1, 1), 1e-6)

			dy := rnd(ref, seed+5, ys...)
			for _, mask := range denseGradMasks {
				g := denseGrads{}
				if mask&1 != 0 {
					q := gradPair(ref, seed+6, xs...)
					g.dx = &q
				}
				if mask&2 != 0 {
					q := gradPair(ref, seed+7, ws...)
					g.dw = &q
				}
				if mask&4 != 0 {
					q := gradPair(ref, seed+8, c.cout)
					g.dbias = &q
				}
				ref.ConvDownBackward(denseC(g.dx), denseC(g.dw), denseC(g.dbias), dy.c, x.c, w.c)
				gpu.ConvDownBackward(denseG(g.dx), denseG(g.dw), denseG(g.dbias), dy.g, x.g, w.g)
				if g.dx != nil {
					agree(t, fmt.Sprintf("ConvDownBackward dx (mask %d)", mask), *g.dx, denseSumTol(c.cout<<d+1, 1), 1e-6)
				}
				if g.dw != nil {
					agree(t, fmt.Sprintf("ConvDownBackward dw (mask %d)", mask), *g.dw, denseSumTol(c.b*p+1, 1), 1e-6)
				}
				if g.dbias != nil {
					agree(t, fmt.Sprintf("ConvDownBackward dbias (mask %d)", mask), *g.dbias, denseSumTol(c.b*p+1, 1), 1e-6)
				}
			}
		})
	}
}

// TestConvDownDeterministic runs the split weight gradient, the gathered
// input gradient and the bias gradient twice: identical bits.
func TestConvDownDeterministic(t *testing.T) {
	ref := cpu.New(1)
	xs, ys, ws := []int{2, 2, 2048}, []int{2, 3, 1024}, []int{3, 2, 3}
	if s, _ := SplitK(3, 6, 2*1024); s < 2 {
		t.Fatalf("the case is meant to split K, SplitK gives %d", s)
	}
	x, w, dy := rnd(ref, 1, xs...), rnd(ref, 2, ws...), rnd(ref, 3, ys...)
	var runs [2][3][]float32
	for r := range runs {
		dx, dw, db := both(ref, nil, xs...), both(ref, nil, ws...), both(ref, nil, 3)
		gpu.ConvDownBackward(dx.g, dw.g, db.g, dy.g, x.g, w.g)
		runs[r] = [3][]float32{denseHost(dx.g), denseHost(dw.g), denseHost(db.g)}
	}
	denseSame(t, "ConvDownBackward dx", runs[0][0], runs[1][0])
	denseSame(t, "ConvDownBackward dw", runs[0][1], runs[1][1])
	denseSame(t, "ConvDownBackward dbias", runs[0][2], runs[1][2])
}
