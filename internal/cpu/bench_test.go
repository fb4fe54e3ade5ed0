package cpu_test

import (
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// benchShapes are the paper's sizes (Sec. 4.1): 1D N=128 batch 32, 2D
// 64x64 batch 16, plus the coarser U-levels where channels double.
var benchShapes = []struct {
	name  string
	shape []int
}{
	{"1D_B32_C32_N128", []int{32, 32, 128}},
	{"2D_B16_C32_64x64", []int{16, 32, 64, 64}},
	{"2D_B16_C64_32x32", []int{16, 64, 32, 32}},
	{"2D_B16_C128_16x16", []int{16, 128, 16, 16}},
	{"3D_B2_C24_16^3", []int{2, 24, 16, 16, 16}},
}

// benchOp times fwd (no tape) and fwd+bwd (tape, seeded backward) of f.
func benchOp(b *testing.B, f func(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor, shape []int) {
	be := cpu.New(0)
	x := tensor.NewLeaf(be, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
	x.SetRequiresGrad(true)
	b.Run("fwd", func(b *testing.B) {
		tp := tensor.NewTape(be)
		tp.SetGrad(false)
		for i := 0; i < b.N; i++ {
			f(tp, x)
			tp.Reset()
		}
	})
	b.Run("fwd+bwd", func(b *testing.B) {
		tp := tensor.NewTape(be)
		var seed *tensor.Tensor
		for i := 0; i < b.N; i++ {
			y := f(tp, x)
			if seed == nil {
				seed = tensor.NewLeaf(be, "seed", gradcheck.Random(2, y.Numel()), y.Shape...)
			}
			tp.BackwardWith(y, seed)
			tp.Reset()
		}
	})
}

func BenchmarkPointwise(b *testing.B) {
	be := cpu.New(0)
	for _, s := range benchShapes {
		c := s.shape[1]
		w := tensor.NewLeaf(be, "w", gradcheck.Random(3, c*c), c, c)
		bias := tensor.NewLeaf(be, "bias", gradcheck.Random(4, c), c)
		w.SetRequiresGrad(true)
		bias.SetRequiresGrad(true)
		b.Run(s.name, func(b *testing.B) {
			benchOp(b, func(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor { return tp.Pointwise(x, w, bias) }, s.shape)
		})
	}
}

func BenchmarkGELU(b *testing.B) {
	for _, s := range benchShapes[:2] {
		b.Run(s.name, func(b *testing.B) {
			benchOp(b, func(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor { return tp.GELU(x) }, s.shape)
		})
	}
}

// BenchmarkSPARGate times the whole SPAR gate of one level as the model
// uses it: score MLP W2 GELU(W1 [zF; zG]), keep-ratio and top-k, STE MUX.
func BenchmarkSPARGate(b *testing.B) {
	be := cpu.New(0)
	for _, s := range benchShapes {
		c := s.shape[1]
		w1 := tensor.NewLeaf(be, "w1", gradcheck.Random(5, 2*c*c), c, 2*c)
		w2 := tensor.NewLeaf(be, "w2", gradcheck.Random(6, c), 1, c)
		w1.SetRequiresGrad(true)
		w2.SetRequiresGrad(true)
		shape := append([]int(nil), s.shape...)
		shape[1] = 2 * c
		b.Run(s.name, func(b *testing.B) {
			benchOp(b, func(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor {
				zF, zG := tp.Slice(x, 0, c), tp.Slice(x, c, c)
				score := tp.Pointwise(tp.GELU(tp.Pointwise(tp.Concat(zF, zG), w1, nil)), w2, nil)
				hard, _ := tp.SPARKeep(score, tensor.DefaultSPAR)
				return tp.SPARRoute(zF, zG, hard, score, float32(tensor.DefaultSPAR.Temperature), tensor.CentreZero)
			}, shape)
		})
	}
}
