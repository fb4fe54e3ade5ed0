package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// diffOf runs Diff on a host field and returns the result.
func diffOf(be *cpu.Backend, x []float32, shape []int, axis int, h float32, periodic bool) []float32 {
	tp := tensor.NewTape(be)
	tp.SetGrad(false)
	return tensor.ToHost(be, tp.Diff(tp.FromHost(x, shape...), axis, h, periodic))
}

// fill sets x[b,c,i...] = f(c, index along axis) for every point of shape.
func fill(shape []int, axis int, f func(c, i int) float64) []float32 {
	sp := shape[2:]
	sin := tensor.Numel(sp)
	x := make([]float32, tensor.Numel(shape))
	for k := range x {
		x[k] = float32(f(k/sin%shape[1], unflat(k%sin, sp)[axis]))
	}
	return x
}

// diffShapes have at least 3 points per axis (Diff's minimum).
var diffShapes = []struct {
	name  string
	shape []int
}{
	{"1D", []int{2, 2, 16}},
	{"2D", []int{2, 2, 8, 12}},
	{"3D", []int{1, 2, 6, 4, 10}},
	{"2D_N3", []int{1, 2, 3, 5}}, // both ends touch the same interior row
}

// TestDiffExact checks values the differences reproduce exactly (up to
// float32 rounding): the periodic central difference of sin(2 pi k i/N) is
// sin(2 pi k/N)/h cos(2 pi k i/N); the non-periodic one is exact for lines
// everywhere and for parabolas inside. Every axis of every dimension, with
// the field varying along that axis and different per channel.
func TestDiffExact(t *testing.T) {
	be := cpu.New(2)
	const h = 0.3
	for _, fs := range diffShapes {
		for axis := range fs.shape[2:] {
			t.Run(fmt.Sprintf("%s/axis%d", fs.name, axis), func(t *testing.T) {
				n := fs.shape[2+axis]
				check := func(what string, got []float32, want func(c, i int) float64, skipEnds bool) {
					ref := fill(fs.shape, axis, want)
					pos := fill(fs.shape, axis, func(_, i int) float64 { return float64(i) })
					for k := range got {
						if i := int(pos[k]); skipEnds && (i == 0 || i == n-1) {
							continue
						}
						if math.Abs(float64(got[k]-ref[k])) > 2e-5*(1+math.Abs(float64(ref[k]))) {
							t.Fatalf("%s: y[%d] = %g, want %g", what, k, got[k], ref[k])
						}
					}
				}
				w := func(c int) float64 { return 2 * math.Pi * float64(c+1) / float64(n) }
				sine := fill(fs.shape, axis, func(c, i int) float64 { return math.Sin(w(c) * float64(i)) })
				check("periodic sine", diffOf(be, sine, fs.shape, axis, h, true),
					func(c, i int) float64 { return math.Sin(w(c)) / h * math.Cos(w(c)*float64(i)) }, false)
				line := fill(fs.shape, axis, func(c, i int) float64 { return float64(c+2) * h * float64(i) })
				check("line", diffOf(be, line, fs.shape, axis, h, false),
					func(c, _ int) float64 { return float64(c + 2) }, false)
				par := fill(fs.shape, axis, func(c, i int) float64 { x := h * float64(i); return x * x / float64(c+1) })
				check("parabola", diffOf(be, par, fs.shape, axis, h, false),
					func(c, i int) float64 { return 2 * h * float64(i) / float64(c+1) }, true)
			})
		}
	}
}

// TestDiffConvergence checks the order of accuracy on smooth functions as
// the grid is refined: the periodic central difference of exp(sin(2 pi x))
// on [0, 1) is second order (error ratio ~4 when h halves); for exp(2x) on
// [0, 1] without periodicity the interior stays second order and the
// one-sided boundary values are first order (ratio ~2). (At these sizes
// the float32 rounding of the differences stays below 2% of the errors.)
func TestDiffConvergence(t *testing.T) {
	be := cpu.New(2)
	for _, d := range []int{1, 2, 3} {
		for axis := 0; axis < d; axis++ {
			t.Run(fmt.Sprintf("%dD/axis%d", d, axis), func(t *testing.T) {
				var errP, errI, errB []float64
				for _, m := range []int{32, 64, 128} {
					h := 1 / float64(m)
					shape := []int{1, 1}
					for a := 0; a < d; a++ {
						shape = append(shape, 3)
					}
					// Periodic grid x_i = i h, i = 0..m-1.
					shape[2+axis] = m
					f := fill(shape, axis, func(_, i int) float64 { return math.Exp(math.Sin(2 * math.Pi * h * float64(i))) })
					df := fill(shape, axis, func(_, i int) float64 {
						x := 2 * math.Pi * h * float64(i)
						return 2 * math.Pi * math.Cos(x) * math.Exp(math.Sin(x))
					})
					errP = append(errP, maxErr(diffOf(be, f, shape, axis, float32(h), true), df, nil))
					// Closed grid x_i = i h, i = 0..m.
					shape[2+axis] = m + 1
					e := fill(shape, axis, func(_, i int) float64 { return math.Exp(2 * h * float64(i)) })
					de := fill(shape, axis, func(_, i int) float64 { return 2 * math.Exp(2*h*float64(i)) })
					got := diffOf(be, e, shape, axis, float32(h), false)
					pos := fill(shape, axis, func(_, i int) float64 { return float64(i) })
					inner := func(k int) bool { return pos[k] != 0 && int(pos[k]) != m }
					errI = append(errI, maxErr(got, de, inner))
					errB = append(errB, maxErr(got, de, func(k int) bool { return !inner(k) }))
				}
				for _, c := range []struct {
					what   string
					err    []float64
					lo, hi float64
				}{
					{"periodic", errP, 3.6, 4.4},
					{"interior", errI, 3.6, 4.4},
					{"boundary", errB, 1.8, 2.2},
				} {
					for k := 0; k+1 < len(c.err); k++ {
						if r := c.err[k] / c.err[k+1]; r < c.lo || r > c.hi {
							t.Errorf("%s: error ratio %.3f (errors %.3g)", c.what, r, c.err)
						}
					}
				}
			})
		}
	}
}

// maxErr is the largest |got - want| over the points where keep is true
// (all points for a nil keep).
func maxErr(got, want []float32, keep func(k int) bool) float64 {
	var m float64
	for k := range got {
		if keep == nil || keep(k) {
			m = math.Max(m, math.Abs(float64(got[k])-float64(want[k])))
		}
	}
	return m
}

func TestDiffAdjoint(t *testing.T) {
	be := cpu.New(2)
	for _, fs := range diffShapes {
		for axis := range fs.shape[2:] {
			for _, periodic := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/axis%d/periodic=%v", fs.name, axis, periodic), func(t *testing.T) {
					n := tensor.Numel(fs.shape)
					x := gradcheck.Random(uint64(axis+1), n)
					y := gradcheck.Random(uint64(axis+7), n)
					ax := diffOf(be, x, fs.shape, axis, 0.25, periodic)
					dx := tensor.NewLeaf(be, "dx", make([]float32, n), fs.shape...)
					be.DiffBackward(dx, tensor.NewLeaf(be, "dy", y, fs.shape...), axis, 0.25, periodic)
					aty := tensor.ToHost(be, dx)
					var lhs, rhs float64
					for i := range x {
						lhs += float64(ax[i]) * float64(y[i])
						rhs += float64(x[i]) * float64(aty[i])
					}
					if math.Abs(lhs-rhs) > 1e-5*float64(n) {
						t.Errorf("<Ax, y> = %.9g, <x, A^T y> = %.9g", lhs, rhs)
					}
				})
			}
		}
	}
}

func TestDiffGrad(t *testing.T) {
	be := cpu.New(2)
	for _, fs := range fieldShapes {
		for axis := range fs.shape[2:] {
			for _, periodic := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/axis%d/periodic=%v", fs.name, axis, periodic), func(t *testing.T) {
					gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
						return tp.Diff(v[0], axis, 0.5, periodic)
					}, []gradcheck.Input{in("x", 11, fs.shape...)}, gradcheck.Options{})
				})
			}
		}
	}
}

func TestDiffThreadDeterminism(t *testing.T) {
	shape := []int{3, 5, 16, 12, 10}
	run := func(threads int) [][]float32 {
		be := cpu.New(threads)
		var res [][]float32
		for axis := 0; axis < 3; axis++ {
			for _, periodic := range []bool{true, false} {
				x := tensor.NewLeaf(be, "x", gradcheck.Random(5, tensor.Numel(shape)), shape...)
				x.SetRequiresGrad(true)
				tp := tensor.NewTape(be)
				y := tp.Diff(x, axis, 0.1, periodic)
				tp.BackwardWith(y, tp.FromHost(gradcheck.Random(6, y.Numel()), y.Shape...))
				res = append(res, tensor.ToHost(be, y), tensor.ToHost(be, x.Grad))
			}
		}
		return res
	}
	one, four := run(1), run(4)
	for k := range one {
		for i := range one[k] {
			if math.Float32bits(one[k][i]) != math.Float32bits(four[k][i]) {
				t.Fatalf("result %d differs at %d: %g vs %g", k, i, one[k][i], four[k][i])
			}
		}
	}
}

// BenchmarkDiff times the H1 loss term's derivatives (one channel).
func BenchmarkDiff(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape []int
		axis  int
	}{
		{"1D_B32_C1_N128", []int{32, 1, 128}, 0},
		{"2D_B16_C1_64x64_axis0", []int{16, 1, 64, 64}, 0},
		{"2D_B16_C1_64x64_axis1", []int{16, 1, 64, 64}, 1},
		{"3D_B2_C1_16^3_axis2", []int{2, 1, 16, 16, 16}, 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchResample(b, c.shape, nil, func(tp *tensor.Tape, x *tensor.Tensor, _ []*tensor.Tensor) *tensor.Tensor {
				return tp.Diff(x, c.axis, 1/64.0, true)
			})
		})
	}
}
