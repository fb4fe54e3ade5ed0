//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// float32's unit roundoff, 2^-24.
const denseU = 1.0 / (1 << 24)

// denseSumTol is the absolute tolerance for comparing two float32
// evaluations of a sum of k terms, each at most m in magnitude, made in
// different orders (the CPU's packed GEMM or loop order against the
// GPU's tiled, split-K or tree order, with or without FMA). An
// evaluation's error is at most u sum_i |S_i| over its partial sums S_i
// (u = 2^-24). The tests' terms are independent, zero-mean products of
// uniform values (standard deviation at most m/3), so the partial sums
// grow like a random walk, |S_i| ~ sqrt(i) m/3, and sum_i |S_i| stays
// near (2/9) k^1.5 m even if every rounding went the same way. 2 u k^1.5 m
// covers both sides' errors with a margin of more than four. (The
// rigorous worst case, k^2 u m, assumes partial sums of k m, which
// random-sign data never reach.) A wrong index, a dropped tap or a lost
// chunk changes a result by a term's size (about m/4) or, for a chunk,
// by sqrt(chunk) m/3, well above this for every K tested (at most 9,001:
// tolerance 0.1).
func denseSumTol(k int, m float64) float64 {
	return 2 * denseU * math.Pow(float64(k), 1.5) * m
}

// denseHost downloads a GPU tensor.
func denseHost(t *tensor.Tensor) []float32 { return tensor.ToHost(gpu, t) }

// denseSame fails unless two GPU results are bit for bit equal (the
// reductions are deterministic: fixed partitions and orders, no atomics).
func denseSame(t *testing.T, what string, a, b []float32) {
	t.Helper()
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s: not deterministic: element %d is %g, then %g", what, i, a[i], b[i])
		}
	}
}

// denseGrads is one set of backward gradients (any may be nil: skipped).
type denseGrads struct{ dx, dw, dbias *pair }

// denseGradMasks are the gradient subsets a backward is called with
// (bit 1 dx, 2 dw, 4 dbias): all, each alone, and none, so nil gradients
// are checked to be skipped without disturbing the others.
var denseGradMasks = []int{7, 1, 2, 4, 0}

// denseC and denseG are the CPU and GPU tensors of an optional pair.
func denseC(p *pair) *tensor.Tensor {
	if p == nil {
		return nil
	}
	return p.c
}

func denseG(p *pair) *tensor.Tensor {
	if p == nil {
		return nil
	}
	return p.g
}

// pointwiseCases: 1D, 2D, 3D; channel counts below, at and above the
// 64-wide tile (70, 130 straddle tile edges); spatial sizes that are not
// multiples of 64; cases whose weight-gradient K = B S is split
// (SplitK(64, 64, 2178) = 4 chunks, SplitK(3, 2, 9000) = 17) and whose
// bias gradient is split (BiasParts(3, 9000) = 2 parts); with and
// without bias. The weight gradient runs on the small-channel kernel
// (SmallChannels) wherever Cout, Cin <= 64 and on the tiled product
// otherwise (70 or 130 channels): U-HNO-like shapes 10 -> 20 on 1024
// points (K = 2048, SplitKSmall: 16 chunks of 128, two lanes per
// block) and 40 -> 40 on 600 points (K = 1200: 8 chunks of 160, the last
// ending inside a stage; 7 rows per thread), 32 -> 64 at the most rows
// per thread (8) in one unsplit chunk, and 2 -> 3 on 9000 values (57
// chunks of 160, 42 lanes per block).
var pointwiseCases = []struct {
	b, cin, cout int
	sp           []int
	bias         bool
}{
	{3, 5, 70, []int{37}, true},
	{2, 4, 3, []int{10, 13}, false},
	{2, 3, 5, []int{6, 5, 7}, true},
	{1, 70, 130, []int{10, 10}, true},
	{2, 64, 64, []int{33, 33}, true},
	{2, 32, 64, []int{4, 6, 5}, false},
	{2, 2, 3, []int{4500}, true},
	{2, 10, 20, []int{1024}, true},
	{2, 40, 40, []int{600}, false},
}

// TestPointwise compares Pointwise and PointwiseBackward with the CPU.
// Tolerances (denseSumTol, |x|, |w|, |dy|, |bias| <= 1 so every term is
// at most 1): forward, Cin products plus the bias; dx, Cout products plus
// the pre-filled gradient; dw and dbias, B S terms plus the pre-filled
// value, summed by the GPU in split chunks and a tree, by the CPU per
// sample then over samples.
func TestPointwise(t *testing.T) {
	ref := cpu.New(1)
	for ci, c := range pointwiseCases {
		xs := append([]int{c.b, c.cin}, c.sp...)
		ys := append([]int{c.b, c.cout}, c.sp...)
		s := tensor.Numel(c.sp)
		t.Run(fmt.Sprint(xs, "->", c.cout), func(t *testing.T) {
			seed := uint64(100 * ci)
			x, w := rnd(ref, seed+1, xs...), rnd(ref, seed+2, c.cout, c.cin)
			var bias *pair
			if c.bias {
				b := rnd(ref, seed+3, c.cout)
				bias = &b
			}
			y := both(ref, random(seed+4, tensor.Numel(ys), 5), ys...) // garbage: forward overwrites
			ref.Pointwise(y.c, x.c, w.c, denseC(bias))
			gpu.Pointwise(y.g, x.g, w.g, denseG(bias))
			agree(t, "Pointwise", y, denseSumTol(c.cin+1, 1), 1e-6)

			dy := rnd(ref, seed+5, ys...)
			for _, mask := range denseGradMasks {
				g := denseGrads{}
				if mask&1 != 0 {
					p := gradPair(ref, seed+6, xs...)
					g.dx = &p
				}
				if mask&2 != 0 {
					p := gradPair(ref, seed+7, c.cout, c.cin)
					g.dw = &p
				}
				if mask&4 != 0 {
					p := gradPair(ref, seed+8, c.cout)
					g.dbias = &p
				}
				ref.PointwiseBackward(denseC(g.dx), denseC(g.dw), denseC(g.dbias), dy.c, x.c, w.c)
				gpu.PointwiseBackward(denseG(g.dx), denseG(g.dw), denseG(g.dbias), dy.g, x.g, w.g)
				if g.dx != nil {
					agree(t, fmt.Sprintf("PointwiseBackward dx (mask %d)", mask), *g.dx, denseSumTol(c.cout+1, 1), 1e-6)
				}
				if g.dw != nil {
					agree(t, fmt.Sprintf("PointwiseBackward dw (mask %d)", mask), *g.dw, denseSumTol(c.b*s+1, 1), 1e-6)
				}
				if g.dbias != nil {
					agree(t, fmt.Sprintf("PointwiseBackward dbias (mask %d)", mask), *g.dbias, denseSumTol(c.b*s+1, 1), 1e-6)
				}
			}
		})
	}
}

// TestPointwiseDeterministic runs the split weight and bias gradients
// twice from the same state: the results must be identical bits.
func TestPointwiseDeterministic(t *testing.T) {
	ref := cpu.New(1)
	for _, c := range []struct{ b, cin, cout, s int }{{2, 64, 64, 33 * 33}, {2, 2, 3, 4500}, {2, 10, 20, 1024}} {
		s, _ := SplitK(c.cout, c.cin, c.b*c.s)
		if SmallChannels(c.cout, c.cin) {
			_, s, _ = SplitKSmall(c.b * c.s)
		}
		if s < 2 {
			t.Fatalf("%+v is meant to split K, SplitK gives %d", c, s)
		}
		x, w, dy := rnd(ref, 1, c.b, c.cin, c.s), rnd(ref, 2, c.cout, c.cin), rnd(ref, 3, c.b, c.cout, c.s)
		var runs [2][2][]float32
		for r := range runs {
			dw, db := both(ref, nil, c.cout, c.cin), both(ref, nil, c.cout)
			gpu.PointwiseBackward(nil, dw.g, db.g, dy.g, x.g, w.g)
			runs[r] = [2][]float32{denseHost(dw.g), denseHost(db.g)}
		}
		denseSame(t, fmt.Sprint(c, " PointwiseBackward dw"), runs[0][0], runs[1][0])
		denseSame(t, fmt.Sprint(c, " PointwiseBackward dbias"), runs[0][1], runs[1][1])
	}
}
