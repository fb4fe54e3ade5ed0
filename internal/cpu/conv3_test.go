package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// conv3Ref is Conv3 from its definition in float64:
// y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,(j+t-1) mod N] + bias[o].
func conv3Ref(x []float32, xs []int, w []float32, cout int, bias []float32) []float64 {
	nb, cin, sp := xs[0], xs[1], xs[2:]
	d := len(sp)
	s, taps := tensor.Numel(sp), tensor.Numel(threes(d))
	y := make([]float64, nb*cout*s)
	for bi := 0; bi < nb; bi++ {
		for o := 0; o < cout; o++ {
			for p := 0; p < s; p++ {
				j := unflat(p, sp)
				var v float64
				if bias != nil {
					v = float64(bias[o])
				}
				for i := 0; i < cin; i++ {
					for t := 0; t < taps; t++ {
						tt := unflat(t, threes(d))
						q := 0
						for a := 0; a < d; a++ {
							q = q*sp[a] + ((j[a]+tt[a]-1)%sp[a]+sp[a])%sp[a]
						}
						v += float64(w[(o*cin+i)*taps+t]) * float64(x[(bi*cin+i)*s+q])
					}
				}
				y[(bi*cout+o)*s+p] = v
			}
		}
	}
	return y
}

// conv3Cases: 1D-3D, odd and even axes, N = 1 and 2 (wrapped taps read the
// same points again), Cin != Cout, and a 2D case large enough for several
// im2col tiles.
var conv3Cases = []struct {
	name  string
	shape []int
	cout  int
}{
	{"1D", []int{2, 3, 9}, 4},
	{"1D_N1", []int{1, 2, 1}, 3},
	{"1D_N2", []int{2, 2, 2}, 1},
	{"2D", []int{2, 3, 6, 5}, 2},
	{"2D_N2", []int{1, 2, 2, 3}, 3},
	{"2D_tiles", []int{1, 5, 40, 36}, 3},
	{"3D", []int{2, 2, 4, 3, 5}, 3},
	{"3D_N2", []int{1, 3, 2, 2, 2}, 2},
}

func TestConv3Forward(t *testing.T) {
	be := cpu.New(2)
	for ci, c := range conv3Cases {
		for _, withBias := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bias=%v", c.name, withBias), func(t *testing.T) {
				d, cin := len(c.shape)-2, c.shape[1]
				xd := gradcheck.Random(uint64(10+ci), tensor.Numel(c.shape))
				ws := tensor.Conv3WeightShape(d, cin, c.cout)
				wd := gradcheck.Random(uint64(20+ci), tensor.Numel(ws))
				tp := tensor.NewTape(be)
				tp.SetGrad(false)
				var bd []float32
				var bias *tensor.Tensor
				if withBias {
					bd = gradcheck.Random(uint64(30+ci), c.cout)
					bias = tp.FromHost(bd, c.cout)
				}
				got := tensor.ToHost(be, tp.Conv3(tp.FromHost(xd, c.shape...), tp.FromHost(wd, ws...), bias))
				want := conv3Ref(xd, c.shape, wd, c.cout, bd)
				tol := 1e-5 * float64(cin*len(wd)/c.cout+1)
				for i := range want {
					if math.Abs(float64(got[i])-want[i]) > tol {
						t.Fatalf("y[%d] = %g, want %g", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// TestConv3KnownAnswers: a kernel with one tap set shifts the field; the
// first tap of the last axis reads x[j-1] (wrapped), the last x[j+1].
func TestConv3KnownAnswers(t *testing.T) {
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
		got := tensor.ToHost(be, tp.Conv3(tp.FromHost(x, 1, 1, 5), tp.FromHost(w, 1, 1, 3), nil))
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("tap %d: got %v, want %v", c.tap, got, c.want)
			}
		}
	}
}

func TestConv3Grad(t *testing.T) {
	be := cpu.New(2)
	for _, c := range conv3Cases {
		if c.name == "2D_tiles" {
			continue
		}
		d, cin := len(c.shape)-2, c.shape[1]
		x := in("x", 1, c.shape...)
		w := in("w", 2, tensor.Conv3WeightShape(d, cin, c.cout)...)
		bias := in("bias", 3, c.cout)
		t.Run(c.name+"/bias", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.Conv3(v[0], v[1], v[2])
			}, []gradcheck.Input{x, w, bias}, gradcheck.Options{})
		})
		t.Run(c.name+"/nobias", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.Conv3(v[0], v[1], nil)
			}, []gradcheck.Input{x, w}, gradcheck.Options{})
		})
		// A chain through a second layer with a C_out -> C_in weight.
		w2 := in("w2", 4, tensor.Conv3WeightShape(d, c.cout, cin)...)
		t.Run(c.name+"/chain", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.Conv3(tp.GELU(tp.Conv3(v[0], v[1], v[2])), v[3], nil)
			}, []gradcheck.Input{x, w, bias, w2}, gradcheck.Options{})
		})
	}
}

// awayFromZero maps r in [-1, 1] to sign(r) (0.1 + |r|), so that the
// finite differences of ReLU (step 1e-2) never straddle the kink.
func awayFromZero(v []float32) []float32 {
	for i, r := range v {
		if r < 0 {
			v[i] = r - 0.1
		} else {
			v[i] = r + 0.1
		}
	}
	return v
}

func TestReLU(t *testing.T) {
	be := cpu.New(2)
	tp := tensor.NewTape(be)
	tp.SetGrad(false)
	got := tensor.ToHost(be, tp.ReLU(tp.FromHost([]float32{-2, -0, 0, 0.5, 3}, 1, 1, 5)))
	want := []float32{0, 0, 0, 0.5, 3}
	if !equalBits(got, want) {
		t.Fatalf("ReLU = %v, want %v", got, want)
	}
	for _, fs := range fieldShapes {
		t.Run(fs.name, func(t *testing.T) {
			x := in("x", 1, fs.shape...)
			awayFromZero(x.Data)
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.ReLU(v[0])
			}, []gradcheck.Input{x}, gradcheck.Options{})
		})
	}
}

// TestConv3ThreadDeterminism requires bit-identical outputs and gradients
// with 1 and 4 threads on shapes split into many chunks.
func TestConv3ThreadDeterminism(t *testing.T) {
	for _, shape := range [][]int{{4, 6, 3000}, {3, 5, 40, 48}, {2, 4, 12, 10, 14}} {
		run := func(threads int) [][]float32 {
			b := cpu.New(threads)
			tp := tensor.NewTape(b)
			d, cin := len(shape)-2, shape[1]
			ws := tensor.Conv3WeightShape(d, cin, cin)
			x := tensor.NewLeaf(b, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
			w := tensor.NewLeaf(b, "w", gradcheck.Random(2, tensor.Numel(ws)), ws...)
			bias := tensor.NewLeaf(b, "b", gradcheck.Random(3, cin), cin)
			for _, l := range []*tensor.Tensor{x, w, bias} {
				l.SetRequiresGrad(true)
			}
			y := tp.ReLU(tp.Conv3(x, w, bias))
			tp.Backward(tp.MSE(y, tp.GELU(x)))
			return [][]float32{tensor.ToHost(b, y), tensor.ToHost(b, x.Grad), tensor.ToHost(b, w.Grad), tensor.ToHost(b, bias.Grad)}
		}
		one, four := run(1), run(4)
		for i := range one {
			sameBits(t, fmt.Sprintf("%v output %d", shape, i), one[i], four[i])
		}
	}
}
