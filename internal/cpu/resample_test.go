package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// convDownRef is ConvDown written from its definition in float64:
// y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,(2j+t-1) mod N] + bias[o] on every
// axis. It also returns sum |w x| + |bias| per output, the scale of the
// float32 rounding error.
func convDownRef(x []float32, xs []int, w []float32, cout int, bias []float32) (y, mag []float64) {
	nb, cin, sp := xs[0], xs[1], xs[2:]
	d := len(sp)
	out := make([]int, d)
	for a, n := range sp {
		out[a] = n / 2
	}
	sin, sout, taps := tensor.Numel(sp), tensor.Numel(out), 1
	for range d {
		taps *= 3
	}
	y = make([]float64, nb*cout*sout)
	mag = make([]float64, len(y))
	for bi := 0; bi < nb; bi++ {
		for o := 0; o < cout; o++ {
			for p := 0; p < sout; p++ {
				j := unflat(p, out)
				var s, m float64
				if bias != nil {
					s, m = float64(bias[o]), math.Abs(float64(bias[o]))
				}
				for i := 0; i < cin; i++ {
					for t := 0; t < taps; t++ {
						tt := unflat(t, threes(d))
						q := 0
						for a := 0; a < d; a++ {
							q = q*sp[a] + ((2*j[a]+tt[a]-1)%sp[a]+sp[a])%sp[a]
						}
						v := float64(w[(o*cin+i)*taps+t]) * float64(x[(bi*cin+i)*sin+q])
						s += v
						m += math.Abs(v)
					}
				}
				y[(bi*cout+o)*sout+p], mag[(bi*cout+o)*sout+p] = s, m
			}
		}
	}
	return y, mag
}

// unflat splits a row-major flat index into the indices of shape.
func unflat(p int, shape []int) []int {
	idx := make([]int, len(shape))
	for a := len(shape) - 1; a >= 0; a-- {
		idx[a] = p % shape[a]
		p /= shape[a]
	}
	return idx
}

func threes(d int) []int {
	s := make([]int, d)
	for a := range s {
		s[a] = 3
	}
	return s
}

// convWeightShape is [cout, cin, 3 (d times)].
func convWeightShape(cout, cin, d int) []int {
	return append([]int{cout, cin}, threes(d)...)
}

// convCases cover 1D-3D, Cin != Cout, odd/even sizes per axis, the N = 2
// edge (every tap but the centre wraps around) and shapes with several
// tiles per sample.
var convCases = []struct {
	name  string
	shape []int // input [B, Cin, spatial...]
	cout  int
}{
	{"1D", []int{2, 3, 8}, 5},
	{"1D_N2", []int{2, 2, 2}, 3},
	{"1D_tiles", []int{1, 64, 800}, 7},
	{"2D", []int{2, 3, 6, 4}, 4},
	{"2D_N2", []int{1, 2, 2, 2}, 3},
	{"2D_tiles", []int{2, 32, 32, 32}, 6},
	{"3D", []int{1, 2, 4, 2, 6}, 3},
	{"3D_N2", []int{2, 3, 2, 2, 2}, 2},
}

func TestConvDownForward(t *testing.T) {
	be := cpu.New(2)
	for ci, c := range convCases {
		for _, withBias := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bias=%v", c.name, withBias), func(t *testing.T) {
				d := len(c.shape) - 2
				xd := gradcheck.Random(uint64(10+ci), tensor.Numel(c.shape))
				ws := convWeightShape(c.cout, c.shape[1], d)
				wd := gradcheck.Random(uint64(20+ci), tensor.Numel(ws))
				var bd []float32
				tp := tensor.NewTape(be)
				tp.SetGrad(false)
				var bias *tensor.Tensor
				if withBias {
					bd = gradcheck.Random(uint64(30+ci), c.cout)
					bias = tp.FromHost(bd, c.cout)
				}
				y := tp.ConvDown(tp.FromHost(xd, c.shape...), tp.FromHost(wd, ws...), bias)
				got := tensor.ToHost(be, y)
				want, mag := convDownRef(xd, c.shape, wd, c.cout, bd)
				if len(got) != len(want) {
					t.Fatalf("output has %d values, want %d", len(got), len(want))
				}
				for i := range want {
					if math.Abs(float64(got[i])-want[i]) > 1e-5*mag[i]+1e-7 {
						t.Fatalf("y[%d] = %g, want %g", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// TestConvDownKnownAnswers checks two kernels whose result is known: the
// centre tap alone samples every second point, x[2j]; the first tap of the
// last axis alone reads x[2j-1], which at j = 0 wraps to x[N-1].
func TestConvDownKnownAnswers(t *testing.T) {
	be := cpu.New(2)
	for _, fs := range fieldShapes {
		t.Run(fs.name, func(t *testing.T) {
			shape := fs.shape
			d, c := len(shape)-2, shape[1]
			sp := shape[2:]
			out := make([]int, d)
			for a := range out {
				out[a] = sp[a] / 2
			}
			taps := tensor.Numel(threes(d))
			xd := gradcheck.Random(3, tensor.Numel(shape))
			for _, k := range []struct {
				name  string
				tap   int                 // the one non-zero tap
				shift func(j []int) []int // input index read by output j
			}{
				{"centre", taps / 2, func(j []int) []int {
					q := make([]int, d)
					for a := range q {
						q[a] = 2 * j[a]
					}
					return q
				}},
				{"left_last_axis", taps/2 - 1, func(j []int) []int {
					q := make([]int, d)
					for a := range q {
						q[a] = 2 * j[a]
					}
					q[d-1] = (2*j[d-1] - 1 + sp[d-1]) % sp[d-1]
					return q
				}},
			} {
				wd := make([]float32, c*c*taps)
				for o := 0; o < c; o++ {
					wd[(o*c+o)*taps+k.tap] = 1
				}
				tp := tensor.NewTape(be)
				tp.SetGrad(false)
				got := tensor.ToHost(be, tp.ConvDown(tp.FromHost(xd, shape...), tp.FromHost(wd, convWeightShape(c, c, d)...), nil))
				sin, sout := tensor.Numel(sp), tensor.Numel(out)
				for bc := 0; bc < shape[0]*c; bc++ {
					for p := 0; p < sout; p++ {
						q := k.shift(unflat(p, out))
						flat := 0
						for a := range q {
							flat = flat*sp[a] + q[a]
						}
						if g, w := got[bc*sout+p], xd[bc*sin+flat]; g != w {
							t.Fatalf("%s: y[%d,%v] = %g, want x%v = %g", k.name, bc, unflat(p, out), g, q, w)
						}
					}
				}
			}
		})
	}
}

func TestConvDownGrad(t *testing.T) {
	be := cpu.New(2)
	for _, c := range []struct {
		name  string
		shape []int
		cout  int
	}{
		{"1D", []int{2, 3, 8}, 4},
		{"1D_N2", []int{2, 2, 2}, 3},
		{"2D", []int{2, 3, 6, 4}, 2},
		{"2D_N2", []int{1, 2, 2, 2}, 3},
		{"3D", []int{1, 2, 4, 4, 2}, 3},
	} {
		d := len(c.shape) - 2
		x := in("x", 1, c.shape...)
		w := in("w", 2, convWeightShape(c.cout, c.shape[1], d)...)
		bias := in("bias", 3, c.cout)
		t.Run(c.name+"/bias", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.ConvDown(v[0], v[1], v[2])
			}, []gradcheck.Input{x, w, bias}, gradcheck.Options{})
		})
		t.Run(c.name+"/nobias", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.ConvDown(v[0], v[1], nil)
			}, []gradcheck.Input{x, w}, gradcheck.Options{})
		})
	}
}

// TestConvDownBackwardTiles checks the backward pass on shapes with several
// tiles per sample against the adjoint identity of the forward map:
// <dy, ConvDown(x, w)> is linear in x and in w, so its gradients must
// satisfy <dx, x> = <dy, y> (no bias) and <dw, w> = <dy, y>.
func TestConvDownBackwardTiles(t *testing.T) {
	be := cpu.New(2)
	for ci, c := range convCases {
		t.Run(c.name, func(t *testing.T) {
			d := len(c.shape) - 2
			ws := convWeightShape(c.cout, c.shape[1], d)
			x := tensor.NewLeaf(be, "x", gradcheck.Random(uint64(40+ci), tensor.Numel(c.shape)), c.shape...)
			w := tensor.NewLeaf(be, "w", gradcheck.Random(uint64(50+ci), tensor.Numel(ws)), ws...)
			bias := tensor.NewLeaf(be, "bias", gradcheck.Random(uint64(60+ci), c.cout), c.cout)
			for _, l := range []*tensor.Tensor{x, w, bias} {
				l.SetRequiresGrad(true)
			}
			tp := tensor.NewTape(be)
			y := tp.ConvDown(x, w, bias)
			dyd := gradcheck.Random(uint64(70+ci), y.Numel())
			tp.BackwardWith(y, tp.FromHost(dyd, y.Shape...))
			yd := tensor.ToHost(be, y)
			bd := tensor.ToHost(be, bias)
			// <dy, y - bias> = <dx, x> = <dw, w>; <dbias, 1> = sum dy.
			var dyY, sumDy float64
			sout := tensor.Numel(y.Shape[2:])
			for i, g := range dyd {
				o := i / sout % c.cout
				dyY += float64(g) * (float64(yd[i]) - float64(bd[o]))
				sumDy += float64(g)
			}
			dot := func(a, b []float32) (s, m float64) {
				for i := range a {
					s += float64(a[i]) * float64(b[i])
					m += math.Abs(float64(a[i]) * float64(b[i]))
				}
				return s, m
			}
			dxX, mx := dot(tensor.ToHost(be, x.Grad), tensor.ToHost(be, x))
			dwW, mw := dot(tensor.ToHost(be, w.Grad), tensor.ToHost(be, w))
			var dbSum float64
			for _, v := range tensor.ToHost(be, bias.Grad) {
				dbSum += float64(v)
			}
			if math.Abs(dxX-dyY) > 1e-5*mx {
				t.Errorf("<dx, x> = %g, <dy, y> = %g", dxX, dyY)
			}
			if math.Abs(dwW-dyY) > 1e-5*mw {
				t.Errorf("<dw, w> = %g, <dy, y> = %g", dwW, dyY)
			}
			if math.Abs(dbSum-sumDy) > 1e-5*float64(len(dyd)) {
				t.Errorf("sum dbias = %g, sum dy = %g", dbSum, sumDy)
			}
		})
	}
}

// upsampleRef is Upsample2x from its definition in float64: the tensor
// product over axes of (1-lambda) x[i0] + lambda x[i1] with PyTorch's
// align_corners=false source coordinate, clamped at the edges or, with
// periodic, unclamped and with the indices wrapped mod n.
func upsampleRef(x []float32, xs []int, periodic bool) []float64 {
	sp := xs[2:]
	d := len(sp)
	out := make([]int, d)
	for a, n := range sp {
		out[a] = 2 * n
	}
	sin, sout := tensor.Numel(sp), tensor.Numel(out)
	y := make([]float64, xs[0]*xs[1]*sout)
	for bc := 0; bc < xs[0]*xs[1]; bc++ {
		for p := 0; p < sout; p++ {
			j := unflat(p, out)
			var s float64
			for corner := 0; corner < 1<<d; corner++ {
				wgt, q := 1.0, 0
				for a := 0; a < d; a++ {
					src := (float64(j[a])+0.5)/2 - 0.5
					if !periodic {
						src = math.Max(src, 0)
					}
					i0 := int(math.Floor(src))
					i1 := min(i0+1, sp[a]-1)
					lam := src - float64(i0)
					if periodic {
						i1 = (i0 + 1) % sp[a]
						i0 = (i0 + sp[a]) % sp[a]
					}
					if corner>>a&1 == 1 {
						wgt *= lam
						q = q*sp[a] + i1
					} else {
						wgt *= 1 - lam
						q = q*sp[a] + i0
					}
				}
				s += wgt * float64(x[bc*sin+q])
			}
			y[bc*sout+p] = s
		}
	}
	return y
}

var upCases = []struct {
	name  string
	shape []int
}{
	{"1D", []int{2, 3, 5}},
	{"1D_N1", []int{1, 2, 1}},
	{"2D", []int{2, 3, 4, 3}},
	{"2D_N1", []int{1, 2, 1, 4}},
	{"3D", []int{1, 2, 3, 2, 4}},
}

func upsample(be *cpu.Backend, x []float32, shape ...int) []float32 {
	return upsampleEdges(be, x, false, shape...)
}

// upsampleEdges is upsample with the edge rule chosen: clamped or periodic.
func upsampleEdges(be *cpu.Backend, x []float32, periodic bool, shape ...int) []float32 {
	tp := tensor.NewTape(be)
	tp.SetGrad(false)
	return tensor.ToHost(be, tp.Upsample2x(tp.FromHost(x, shape...), periodic))
}

// edgeRules names the two edge rules of Upsample2x for subtests.
var edgeRules = []struct {
	name     string
	periodic bool
}{{"clamp", false}, {"periodic", true}}

func TestUpsample2xForward(t *testing.T) {
	be := cpu.New(2)
	for _, e := range edgeRules {
		for ci, c := range upCases {
			t.Run(e.name+"/"+c.name, func(t *testing.T) {
				xd := gradcheck.Random(uint64(80+ci), tensor.Numel(c.shape))
				got := upsampleEdges(be, xd, e.periodic, c.shape...)
				want := upsampleRef(xd, c.shape, e.periodic)
				for i := range want {
					if math.Abs(float64(got[i])-want[i]) > 1e-6 {
						t.Fatalf("y[%d] = %g, want %g", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// TestUpsample2xPeriodicShift: on a periodic grid, up-sampling commutes
// with the shifts, Up(roll(x, 1)) = roll(Up(x), 2) along every axis, bit
// for bit (the same products in the same order); the clamped rule does
// not (its edges differ), which the test also requires, so that it cannot
// pass by the periodic flag being ignored.
func TestUpsample2xPeriodicShift(t *testing.T) {
	be := cpu.New(2)
	roll := func(v []float32, shape []int, axis, by int) []float32 {
		out := make([]float32, len(v))
		for i := range v {
			idx := unflat(i, shape)
			idx[axis] = (idx[axis] + by) % shape[axis]
			q := 0
			for a, n := range shape {
				q = q*n + idx[a]
			}
			out[q] = v[i]
		}
		return out
	}
	for ci, fs := range fieldShapes {
		t.Run(fs.name, func(t *testing.T) {
			xd := gradcheck.Random(uint64(120+ci), tensor.Numel(fs.shape))
			ys := append([]int(nil), fs.shape...)
			for a := 2; a < len(ys); a++ {
				ys[a] *= 2
			}
			for axis := 2; axis < len(fs.shape); axis++ {
				for _, e := range edgeRules {
					a := upsampleEdges(be, roll(xd, fs.shape, axis, 1), e.periodic, fs.shape...)
					b := roll(upsampleEdges(be, xd, e.periodic, fs.shape...), ys, axis, 2)
					same := true
					for i := range a {
						same = same && math.Float32bits(a[i]) == math.Float32bits(b[i])
					}
					if same != e.periodic {
						t.Errorf("%s, axis %d: Up(roll x) = roll(Up x) is %t, want %t", e.name, axis-2, same, e.periodic)
					}
				}
			}
		})
	}
}

// TestUpsample2xPyTorch compares with values printed by PyTorch's
// F.interpolate(x, scale_factor=2, mode="linear"/"bilinear",
// align_corners=False). All weights are multiples of 1/4, so the results
// are exact in float32.
func TestUpsample2xPyTorch(t *testing.T) {
	be := cpu.New(1)
	for _, c := range []struct {
		name  string
		x     []float32
		shape []int
		want  []float32
	}{
		{"linear", []float32{1, 2, 3, 4}, []int{1, 1, 4},
			[]float32{1.0, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4.0}},
		{"bilinear", []float32{1, 2, 3, 4}, []int{1, 1, 2, 2},
			[]float32{
				1.0, 1.25, 1.75, 2.0,
				1.5, 1.75, 2.25, 2.5,
				2.5, 2.75, 3.25, 3.5,
				3.0, 3.25, 3.75, 4.0}},
	} {
		got := upsample(be, c.x, c.shape...)
		for i := range c.want {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// TestUpsample2xInvariants: a constant stays constant (the weights sum to
// one), and a linear ramp along an axis stays the same ramp at the source
// coordinates (j+0.5)/2-0.5 away from the two clamped end points.
func TestUpsample2xInvariants(t *testing.T) {
	be := cpu.New(2)
	for _, fs := range fieldShapes {
		t.Run(fs.name, func(t *testing.T) {
			sp := fs.shape[2:]
			out := make([]int, len(sp))
			for a, n := range sp {
				out[a] = 2 * n
			}
			n := tensor.Numel(fs.shape)
			konst := make([]float32, n)
			for i := range konst {
				konst[i] = 0.7
			}
			for i, v := range upsample(be, konst, fs.shape...) {
				if v != 0.7 {
					t.Fatalf("constant 0.7 became %g at %d", v, i)
				}
			}
			sin, sout := tensor.Numel(sp), tensor.Numel(out)
			for axis := range sp {
				ramp := make([]float32, n)
				for i := range ramp {
					ramp[i] = float32(3*unflat(i%sin, sp)[axis] - 2)
				}
				got := upsample(be, ramp, fs.shape...)
				for i, v := range got {
					j := unflat(i%sout, out)[axis]
					if j == 0 || j == out[axis]-1 {
						continue
					}
					if want := 3*((float64(j)+0.5)/2-0.5) - 2; float64(v) != want {
						t.Fatalf("axis %d: ramp at output index %d is %g, want %g", axis, j, v, want)
					}
				}
			}
		})
	}
}

func TestUpsample2xAdjoint(t *testing.T) {
	be := cpu.New(2)
	for _, e := range edgeRules {
		for ci, c := range upCases {
			t.Run(e.name+"/"+c.name, func(t *testing.T) {
				testUpsampleAdjoint(t, be, ci, c.shape, e.periodic)
			})
		}
	}
}

// testUpsampleAdjoint checks <Ax, y> = <x, A^T y> for one shape and
// edge rule.
func testUpsampleAdjoint(t *testing.T, be *cpu.Backend, ci int, shape []int, periodic bool) {
	xd := gradcheck.Random(uint64(90+ci), tensor.Numel(shape))
	ax := upsampleEdges(be, xd, periodic, shape...)
	yd := gradcheck.Random(uint64(100+ci), len(ax))
	ys := append([]int(nil), shape...)
	for a := 2; a < len(ys); a++ {
		ys[a] *= 2
	}
	dx := tensor.NewLeaf(be, "dx", make([]float32, len(xd)), shape...)
	be.Upsample2xBackward(dx, tensor.NewLeaf(be, "dy", yd, ys...), periodic)
	aty := tensor.ToHost(be, dx)
	var lhs, rhs float64
	for i := range ax {
		lhs += float64(ax[i]) * float64(yd[i])
	}
	for i := range xd {
		rhs += float64(xd[i]) * float64(aty[i])
	}
	if math.Abs(lhs-rhs) > 1e-5*float64(len(ax)) {
		t.Errorf("<Ax, y> = %.9g, <x, A^T y> = %.9g", lhs, rhs)
	}
}

// TestUpsample2xGrad checks the hand-written backward of both edge rules
// against finite differences in 1D, 2D and 3D.
func TestUpsample2xGrad(t *testing.T) {
	be := cpu.New(2)
	for _, e := range edgeRules {
		for _, fs := range fieldShapes {
			t.Run(e.name+"/"+fs.name, func(t *testing.T) {
				gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
					return tp.Upsample2x(v[0], e.periodic)
				}, []gradcheck.Input{in("x", 7, fs.shape...)}, gradcheck.Options{})
			})
		}
	}
}

// TestResampleThreadDeterminism requires bit-identical outputs and
// gradients from 1 and 4 threads, on shapes with several samples and
// several ConvDown tiles per sample.
func TestResampleThreadDeterminism(t *testing.T) {
	run := func(threads int) [][]float32 {
		be := cpu.New(threads)
		var res [][]float32
		for ci, c := range []struct {
			shape []int
			cout  int
		}{{[]int{5, 64, 800}, 6}, {[]int{3, 32, 32, 32}, 7}, {[]int{3, 4, 6, 4, 8}, 5}} {
			d := len(c.shape) - 2
			ws := convWeightShape(c.cout, c.shape[1], d)
			x := tensor.NewLeaf(be, "x", gradcheck.Random(uint64(ci+1), tensor.Numel(c.shape)), c.shape...)
			w := tensor.NewLeaf(be, "w", gradcheck.Random(uint64(ci+2), tensor.Numel(ws)), ws...)
			bias := tensor.NewLeaf(be, "b", gradcheck.Random(uint64(ci+3), c.cout), c.cout)
			for _, l := range []*tensor.Tensor{x, w, bias} {
				l.SetRequiresGrad(true)
			}
			tp := tensor.NewTape(be)
			y := tp.ConvDown(x, w, bias)
			u := tp.Upsample2x(y, ci == 1) // the 2D case: periodic
			tp.BackwardWith(u, tp.FromHost(gradcheck.Random(uint64(ci+4), u.Numel()), u.Shape...))
			for _, r := range []*tensor.Tensor{y, u, x.Grad, w.Grad, bias.Grad} {
				res = append(res, tensor.ToHost(be, r))
			}
		}
		return res
	}
	one, four := run(1), run(4)
	for k := range one {
		for i := range one[k] {
			if math.Float32bits(one[k][i]) != math.Float32bits(four[k][i]) {
				t.Fatalf("result %d differs at %d: %g (1 thread) vs %g (4 threads)", k, i, one[k][i], four[k][i])
			}
		}
	}
}

// benchResample times f without a tape (fwd) and with a seeded backward
// (fwd+bwd) on 1 and 2 threads; every leaf in params gets a gradient.
func benchResample(b *testing.B, shape []int, params [][]int, f func(tp *tensor.Tape, x *tensor.Tensor, p []*tensor.Tensor) *tensor.Tensor) {
	for _, threads := range []int{1, 2} {
		be := cpu.New(threads)
		x := tensor.NewLeaf(be, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
		x.SetRequiresGrad(true)
		var ps []*tensor.Tensor
		for i, s := range params {
			p := tensor.NewLeaf(be, "p", gradcheck.Random(uint64(i+2), tensor.Numel(s)), s...)
			p.SetRequiresGrad(true)
			ps = append(ps, p)
		}
		b.Run(fmt.Sprintf("t%d/fwd", threads), func(b *testing.B) {
			tp := tensor.NewTape(be)
			tp.SetGrad(false)
			for i := 0; i < b.N; i++ {
				f(tp, x, ps)
				tp.Reset()
			}
		})
		b.Run(fmt.Sprintf("t%d/fwd+bwd", threads), func(b *testing.B) {
			tp := tensor.NewTape(be)
			var seed *tensor.Tensor
			for i := 0; i < b.N; i++ {
				y := f(tp, x, ps)
				if seed == nil {
					seed = tensor.NewLeaf(be, "seed", gradcheck.Random(9, y.Numel()), y.Shape...)
				}
				tp.BackwardWith(y, seed)
				tp.Reset()
			}
		})
	}
}

// BenchmarkConvDown times the encoder's down-sampling convolution at the
// paper's sizes (Sec. 4.1): each level halves the grid and doubles the
// channels.
func BenchmarkConvDown(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape []int
		cout  int
	}{
		{"1D_B32_C32-64_N128", []int{32, 32, 128}, 64},
		{"2D_B16_C32-64_64x64", []int{16, 32, 64, 64}, 64},
		{"2D_B16_C64-128_32x32", []int{16, 64, 32, 32}, 128},
		{"3D_B2_C24-48_16^3", []int{2, 24, 16, 16, 16}, 48},
	} {
		b.Run(c.name, func(b *testing.B) {
			ws := convWeightShape(c.cout, c.shape[1], len(c.shape)-2)
			benchResample(b, c.shape, [][]int{ws, {c.cout}}, func(tp *tensor.Tape, x *tensor.Tensor, p []*tensor.Tensor) *tensor.Tensor {
				return tp.ConvDown(x, p[0], p[1])
			})
		})
	}
}

// BenchmarkUpsample2x times the decoder's up-sampling at the paper's sizes.
func BenchmarkUpsample2x(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape []int
	}{
		{"1D_B32_C64_N64", []int{32, 64, 64}},
		{"2D_B16_C32_32x32", []int{16, 32, 32, 32}},
		{"2D_B16_C64_16x16", []int{16, 64, 16, 16}},
		{"3D_B2_C48_8^3", []int{2, 48, 8, 8, 8}},
	} {
		b.Run(c.name, func(b *testing.B) {
			benchResample(b, c.shape, nil, func(tp *tensor.Tape, x *tensor.Tensor, _ []*tensor.Tensor) *tensor.Tensor {
				return tp.Upsample2x(x, false)
			})
		})
	}
}
