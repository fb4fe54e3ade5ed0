package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// depthwiseRef is DepthwiseConv written from its definition in float64:
// y[b,c,j] = sum_t w[c,t] x[b,c,(j+t-1) mod N] + bias[c] on every axis. It
// also returns sum |w x| + |bias| per output, the scale of the float32
// rounding error.
func depthwiseRef(x []float32, xs []int, w, bias []float32) (y, mag []float64) {
	nb, ch, sp := xs[0], xs[1], xs[2:]
	d := len(sp)
	s, taps := tensor.Numel(sp), tensor.Numel(threes(d))
	y = make([]float64, len(x))
	mag = make([]float64, len(x))
	for bi := 0; bi < nb; bi++ {
		for c := 0; c < ch; c++ {
			for p := 0; p < s; p++ {
				j := unflat(p, sp)
				var v, m float64
				if bias != nil {
					v, m = float64(bias[c]), math.Abs(float64(bias[c]))
				}
				for t := 0; t < taps; t++ {
					tt := unflat(t, threes(d))
					q := 0
					for a := 0; a < d; a++ {
						q = q*sp[a] + ((j[a]+tt[a]-1)%sp[a]+sp[a])%sp[a]
					}
					u := float64(w[c*taps+t]) * float64(x[(bi*ch+c)*s+q])
					v += u
					m += math.Abs(u)
				}
				y[(bi*ch+c)*s+p], mag[(bi*ch+c)*s+p] = v, m
			}
		}
	}
	return y, mag
}

// depthwiseCases cover 1D-3D, odd and even sizes, and the small-axis
// edges N = 1 (all three taps read the same point) and N = 2 (the two
// outer taps read the same neighbour).
var depthwiseCases = []struct {
	name  string
	shape []int
}{
	{"1D", []int{2, 3, 9}},
	{"1D_N1", []int{1, 2, 1}},
	{"1D_N2", []int{2, 2, 2}},
	{"2D", []int{2, 3, 6, 5}},
	{"2D_N2", []int{1, 2, 2, 3}},
	{"3D", []int{2, 2, 4, 3, 5}},
	{"3D_N2", []int{1, 3, 2, 2, 2}},
}

func TestDepthwiseConvForward(t *testing.T) {
	be := cpu.New(2)
	for ci, c := range depthwiseCases {
		for _, withBias := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bias=%v", c.name, withBias), func(t *testing.T) {
				d, ch := len(c.shape)-2, c.shape[1]
				xd := gradcheck.Random(uint64(10+ci), tensor.Numel(c.shape))
				ws := tensor.DepthwiseWeightShape(d, ch)
				wd := gradcheck.Random(uint64(20+ci), tensor.Numel(ws))
				tp := tensor.NewTape(be)
				tp.SetGrad(false)
				var bd []float32
				var bias *tensor.Tensor
				if withBias {
					bd = gradcheck.Random(uint64(30+ci), ch)
					bias = tp.FromHost(bd, ch)
				}
				// The output starts as garbage: the forward must overwrite it.
				y := tp.FromHost(gradcheck.Random(99, tensor.Numel(c.shape)), c.shape...)
				be.DepthwiseConv(y, tp.FromHost(xd, c.shape...), tp.FromHost(wd, ws...), bias)
				got := tensor.ToHost(be, y)
				if viaTape := tensor.ToHost(be, tp.DepthwiseConv(tp.FromHost(xd, c.shape...), tp.FromHost(wd, ws...), bias)); !equalBits(viaTape, got) {
					t.Fatalf("Tape.DepthwiseConv and the backend call differ")
				}
				want, mag := depthwiseRef(xd, c.shape, wd, bd)
				for i := range want {
					if math.Abs(float64(got[i])-want[i]) > 1e-5*mag[i]+1e-7 {
						t.Fatalf("y[%d] = %g, want %g", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// TestDepthwiseConvKnownAnswers checks kernels whose result is known: the
// first tap of the last axis alone gives y[j] = x[j-1] (at j = 0 wrapped
// to x[N-1]), the last tap y[j] = x[j+1], and the centre tap the identity;
// in 2D the corner tap (0, 0) shifts both axes.
func TestDepthwiseConvKnownAnswers(t *testing.T) {
	be := cpu.New(1)
	tp := tensor.NewTape(be)
	tp.SetGrad(false)
	x := []float32{1, 2, 3, 4, 5}
	for _, c := range []struct {
		tap  int
		want []float32
	}{{0, []float32{5, 1, 2, 3, 4}}, {1, x}, {2, []float32{2, 3, 4, 5, 1}}} {
		w := make([]float32, 3)
		w[c.tap] = 1
		got := tensor.ToHost(be, tp.DepthwiseConv(tp.FromHost(x, 1, 1, 5), tp.FromHost(w, 1, 3), nil))
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("tap %d: got %v, want %v", c.tap, got, c.want)
			}
		}
	}
	// 2D 3x4, x[i, j] = 10 i + j; tap (0, 0) reads x[i-1, j-1].
	x2 := make([]float32, 12)
	for i := range 3 {
		for j := range 4 {
			x2[i*4+j] = float32(10*i + j)
		}
	}
	w := make([]float32, 9)
	w[0] = 1
	got := tensor.ToHost(be, tp.DepthwiseConv(tp.FromHost(x2, 1, 1, 3, 4), tp.FromHost(w, 1, 3, 3), tp.FromHost([]float32{0.5}, 1)))
	for i := range 3 {
		for j := range 4 {
			want := float32(10*((i+2)%3)+(j+3)%4) + 0.5
			if got[i*4+j] != want {
				t.Fatalf("2D corner tap: y[%d,%d] = %g, want %g", i, j, got[i*4+j], want)
			}
		}
	}
}

func TestDepthwiseConvGrad(t *testing.T) {
	be := cpu.New(2)
	for _, c := range depthwiseCases {
		d, ch := len(c.shape)-2, c.shape[1]
		x := in("x", 1, c.shape...)
		w := in("w", 2, tensor.DepthwiseWeightShape(d, ch)...)
		bias := in("bias", 3, ch)
		t.Run(c.name+"/bias", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.DepthwiseConv(v[0], v[1], v[2])
			}, []gradcheck.Input{x, w, bias}, gradcheck.Options{})
		})
		t.Run(c.name+"/nobias", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.DepthwiseConv(v[0], v[1], nil)
			}, []gradcheck.Input{x, w}, gradcheck.Options{})
		})
		// A chain: the input gradient must flow through a second layer.
		t.Run(c.name+"/chain", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.DepthwiseConv(tp.GELU(tp.DepthwiseConv(v[0], v[1], v[2])), v[1], nil)
			}, []gradcheck.Input{x, w, bias}, gradcheck.Options{})
		})
	}
}

// TestDepthwiseConvBackwardAccumulates calls the backward directly with
// pre-filled gradients: each requested gradient must be the pre-filled
// value plus the reference (Backend's "backward methods add"), and a nil
// gradient must be skipped without changing the others. The reference
// gradients come from the adjoint definitions in float64.
func TestDepthwiseConvBackwardAccumulates(t *testing.T) {
	be := cpu.New(2)
	for ci, c := range depthwiseCases {
		t.Run(c.name, func(t *testing.T) {
			nb, ch, sp := c.shape[0], c.shape[1], c.shape[2:]
			d, s := len(sp), tensor.Numel(sp)
			ws := tensor.DepthwiseWeightShape(d, ch)
			taps := tensor.Numel(ws) / ch
			xd := gradcheck.Random(uint64(40+ci), tensor.Numel(c.shape))
			wd := gradcheck.Random(uint64(50+ci), tensor.Numel(ws))
			dyd := gradcheck.Random(uint64(60+ci), tensor.Numel(c.shape))
			pre := func(seed uint64, n int) []float32 { return gradcheck.Random(seed, n) }
			// Reference gradients: dx = sum_t w[c,t] dy[j - o(t)] is the
			// forward applied to dy with the kernel mirrored; dw and dbias
			// are the sums of their definitions.
			mirror := make([]float32, len(wd))
			for cc := 0; cc < ch; cc++ {
				for tt := 0; tt < taps; tt++ {
					mirror[cc*taps+tt] = wd[cc*taps+taps-1-tt]
				}
			}
			wantDX, _ := depthwiseRef(dyd, c.shape, mirror, nil)
			wantDW := make([]float64, len(wd))
			wantDB := make([]float64, ch)
			for cc := 0; cc < ch; cc++ {
				for tt := 0; tt < taps; tt++ {
					unit := make([]float32, len(wd))
					unit[cc*taps+tt] = 1
					yt, _ := depthwiseRef(xd, c.shape, unit, nil)
					for bi := 0; bi < nb; bi++ {
						for p := 0; p < s; p++ {
							e := (bi*ch+cc)*s + p
							wantDW[cc*taps+tt] += float64(dyd[e]) * yt[e]
						}
					}
				}
				for bi := 0; bi < nb; bi++ {
					for p := 0; p < s; p++ {
						wantDB[cc] += float64(dyd[(bi*ch+cc)*s+p])
					}
				}
			}
			for mask := 0; mask < 8; mask++ {
				leaf := func(seed uint64, on bool, shape ...int) *tensor.Tensor {
					if !on {
						return nil
					}
					return tensor.NewLeaf(be, "g", pre(seed, tensor.Numel(shape)), shape...)
				}
				dx, dw, db := leaf(1, mask&1 != 0, c.shape...), leaf(2, mask&2 != 0, ws...), leaf(3, mask&4 != 0, ch)
				x := tensor.NewLeaf(be, "x", xd, c.shape...)
				w := tensor.NewLeaf(be, "w", wd, ws...)
				dy := tensor.NewLeaf(be, "dy", dyd, c.shape...)
				be.DepthwiseConvBackward(dx, dw, db, dy, x, w)
				check := func(name string, got *tensor.Tensor, seed uint64, want []float64) {
					if got == nil {
						return
					}
					g, p := tensor.ToHost(be, got), pre(seed, len(want))
					for i := range want {
						if w := float64(p[i]) + want[i]; math.Abs(float64(g[i])-w) > 1e-5*(1+math.Abs(w)) {
							t.Fatalf("mask %d: %s[%d] = %g, want %g (pre-filled %g + %g)", mask, name, i, g[i], w, p[i], want[i])
						}
					}
				}
				check("dx", dx, 1, wantDX)
				check("dw", dw, 2, wantDW)
				check("dbias", db, 3, wantDB)
			}
		})
	}
}

// TestDepthwiseConvThreadDeterminism requires bit-identical outputs and
// gradients with 1 and 4 threads on shapes split into many chunks.
func TestDepthwiseConvThreadDeterminism(t *testing.T) {
	for _, shape := range [][]int{{4, 8, 4096}, {3, 6, 40, 48}, {2, 4, 12, 10, 14}} {
		run := func(threads int) [][]float32 {
			b := cpu.New(threads)
			tp := tensor.NewTape(b)
			d, ch := len(shape)-2, shape[1]
			x := tensor.NewLeaf(b, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
			w := tensor.NewLeaf(b, "w", gradcheck.Random(2, ch*tensor.Numel(threes(d))), tensor.DepthwiseWeightShape(d, ch)...)
			bias := tensor.NewLeaf(b, "b", gradcheck.Random(3, ch), ch)
			for _, l := range []*tensor.Tensor{x, w, bias} {
				l.SetRequiresGrad(true)
			}
			y := tp.DepthwiseConv(x, w, bias)
			tp.Backward(tp.MSE(y, tp.GELU(x)))
			return [][]float32{tensor.ToHost(b, y), tensor.ToHost(b, x.Grad), tensor.ToHost(b, w.Grad), tensor.ToHost(b, bias.Grad)}
		}
		one, four := run(1), run(4)
		for i := range one {
			sameBits(t, fmt.Sprintf("%v output %d", shape, i), one[i], four[i])
		}
	}
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// BenchmarkDepthwiseConv times forward and backward (all gradients) at the
// additive hybrid's NS-2D budget shape: batch 32, width 16, 128x128.
func BenchmarkDepthwiseConv(b *testing.B) {
	be := cpu.New(0)
	shape := []int{32, 16, 128, 128}
	x := tensor.NewLeaf(be, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
	w := tensor.NewLeaf(be, "w", gradcheck.Random(2, 16*9), 16, 3, 3)
	bias := tensor.NewLeaf(be, "b", gradcheck.Random(3, 16), 16)
	for _, l := range []*tensor.Tensor{x, w, bias} {
		l.SetRequiresGrad(true)
	}
	seed := tensor.NewLeaf(be, "dy", gradcheck.Random(4, tensor.Numel(shape)), shape...)
	tp := tensor.NewTape(be)
	b.ResetTimer()
	for range b.N {
		y := tp.DepthwiseConv(x, w, bias)
		tp.BackwardWith(y, seed)
		tp.Reset()
	}
}
