package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// fieldShapes are small [batch, channels, spatial...] shapes, one per
// dimensionality, used by the table-driven operator tests.
var fieldShapes = []struct {
	name  string
	shape []int
}{
	{"1D", []int{2, 3, 16}},
	{"2D", []int{2, 3, 8, 6}},
	{"3D", []int{2, 3, 4, 6, 4}},
}

func withChannels(shape []int, c int) []int {
	s := append([]int(nil), shape...)
	s[1] = c
	return s
}

func in(name string, seed uint64, shape ...int) gradcheck.Input {
	return gradcheck.Input{Name: name, Shape: shape, Data: gradcheck.Random(seed, tensor.Numel(shape))}
}

func TestPointwiseGrad(t *testing.T) {
	b := cpu.New(2)
	for _, fs := range fieldShapes {
		t.Run(fs.name, func(t *testing.T) {
			x := in("x", 1, fs.shape...)
			w := in("w", 2, 5, fs.shape[1])
			bias := in("bias", 3, 5)
			gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.Pointwise(v[0], v[1], v[2])
			}, []gradcheck.Input{x, w, bias}, gradcheck.Options{})
		})
	}
}

func TestElementwiseGrad(t *testing.T) {
	b := cpu.New(2)
	ops := map[string]func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor{
		"Add":     func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor { return tp.Add(v[0], v[1]) },
		"Sub":     func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor { return tp.Sub(v[0], v[1]) },
		"Mul":     func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor { return tp.Mul(v[0], v[1]) },
		"Scale":   func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor { return tp.Add(tp.Scale(v[0], -1.5), v[1]) },
		"GELU":    func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor { return tp.Mul(tp.GELU(v[0]), v[1]) },
		"Sigmoid": func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor { return tp.Mul(tp.Sigmoid(v[0]), v[1]) },
		"Reuse":   func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor { return tp.Mul(v[0], tp.Add(v[0], v[1])) },
	}
	for name, f := range ops {
		for _, fs := range fieldShapes {
			t.Run(fmt.Sprintf("%s/%s", name, fs.name), func(t *testing.T) {
				x := in("a", 4, fs.shape...)
				for i := range x.Data {
					x.Data[i] *= 3 // exercise GELU and sigmoid beyond their linear part
				}
				gradcheck.Check(t, b, f, []gradcheck.Input{x, in("b", 5, fs.shape...)}, gradcheck.Options{})
			})
		}
	}
}

func TestChannelOpsGrad(t *testing.T) {
	b := cpu.New(2)
	for _, fs := range fieldShapes {
		t.Run(fs.name, func(t *testing.T) {
			a := in("a", 1, fs.shape...)
			c := in("c", 2, withChannels(fs.shape, 2)...)
			gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				cat := tp.Concat(v[0], v[1], v[0]) // a used twice: gradients add
				return tp.Mul(tp.Slice(cat, 1, 4), tp.Slice(cat, 3, 4))
			}, []gradcheck.Input{a, c}, gradcheck.Options{})
		})
	}
}

func TestConcatSliceValues(t *testing.T) {
	b := cpu.New(1)
	tp := tensor.NewTape(b)
	a := tp.FromHost([]float32{1, 2, 3, 4}, 2, 1, 2) // samples [1 2], [3 4]
	c := tp.FromHost([]float32{5, 6, 7, 8, 9, 10, 11, 12}, 2, 2, 2)
	got := tensor.ToHost(b, tp.Concat(a, c))
	want := []float32{1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("concat %v, want %v", got, want)
		}
	}
	got = tensor.ToHost(b, tp.Slice(c, 1, 1))
	want = []float32{7, 8, 11, 12}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("slice %v, want %v", got, want)
		}
	}
}

func TestMeanStd(t *testing.T) {
	b := cpu.New(2)
	tp := tensor.NewTape(b)
	x := tp.FromHost([]float32{1, 2, 3, 4, -1, -1, -1, -1}, 1, 2, 4)
	mean, std := tp.MeanStd(x)
	m, s := tensor.ToHost(b, mean), tensor.ToHost(b, std)
	// Channel 0: mean 2.5, unbiased variance (2.25+0.25+0.25+2.25)/3 = 5/3.
	if m[0] != 2.5 || math.Abs(float64(s[0])-math.Sqrt(5.0/3)) > 1e-6 || m[1] != -1 || s[1] != 0 {
		t.Fatalf("mean %v std %v", m, s)
	}
	for _, fs := range fieldShapes {
		t.Run(fs.name, func(t *testing.T) {
			gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				mean, std := tp.MeanStd(v[0])
				return tp.Add(tp.Scale(mean, 2), std)
			}, []gradcheck.Input{in("x", 7, fs.shape...)}, gradcheck.Options{})
		})
	}
}

func TestMSE(t *testing.T) {
	b := cpu.New(2)
	tp := tensor.NewTape(b)
	a := tp.FromHost([]float32{1, 2, 3, 4}, 1, 1, 4)
	c := tp.FromHost([]float32{1, 0, 3, 0}, 1, 1, 4)
	if got := tensor.ToHost(b, tp.MSE(a, c))[0]; got != 5 { // (0+4+0+16)/4
		t.Fatalf("MSE = %g, want 5", got)
	}
	for _, fs := range fieldShapes {
		t.Run(fs.name, func(t *testing.T) {
			gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.MSE(v[0], v[1])
			}, []gradcheck.Input{in("a", 8, fs.shape...), in("b", 9, fs.shape...)}, gradcheck.Options{})
		})
	}
}

// TestThreadDeterminism runs the ops of this file with 1 and 4 threads on a
// size large enough to be split into many chunks and requires identical
// bits, forward and backward.
func TestThreadDeterminism(t *testing.T) {
	run := func(threads int) [][]float32 {
		b := cpu.New(threads)
		tp := tensor.NewTape(b)
		x := tensor.NewLeaf(b, "x", gradcheck.Random(1, 4*8*64*64), 4, 8, 64, 64)
		w := tensor.NewLeaf(b, "w", gradcheck.Random(2, 16*8), 16, 8)
		bias := tensor.NewLeaf(b, "b", gradcheck.Random(3, 16), 16)
		for _, l := range []*tensor.Tensor{x, w, bias} {
			l.SetRequiresGrad(true)
		}
		h := tp.GELU(tp.Pointwise(x, w, bias))
		mean, std := tp.MeanStd(h)
		loss := tp.Add(tp.MSE(tp.Slice(h, 0, 8), tp.Sigmoid(x)), tp.MSE(mean, std))
		tp.Backward(loss)
		return [][]float32{tensor.ToHost(b, h), tensor.ToHost(b, loss), tensor.ToHost(b, x.Grad), tensor.ToHost(b, w.Grad), tensor.ToHost(b, bias.Grad)}
	}
	one, four := run(1), run(4)
	for i := range one {
		for j := range one[i] {
			if one[i][j] != four[i][j] {
				t.Fatalf("output %d differs at %d: %g (1 thread) vs %g (4 threads)", i, j, one[i][j], four[i][j])
			}
		}
	}
}
