package model

import (
	"fmt"
	"math"

	"uhno/internal/tensor"
)

// The layers and helpers that several models share. Each model's own
// layers live in its file (fourierBranch, the global branch B_F shared by
// U-HNO, FNO and the additive hybrid, in fourier.go).

// pointwise is a 1x1 convolution with bias, y = W x + b, W [Cout, Cin]
// (PyTorch's Conv weight [Cout, Cin, 1...] without the unit axes).
type pointwise struct{ w, b *tensor.Tensor }

func newPointwise(pb *builder, name string, cin, cout int) pointwise {
	bound := 1 / math.Sqrt(float64(cin))
	return pointwise{
		w: pb.param(name+".w", []int{cout, cin}, initUniform, bound, nil),
		b: pb.param(name+".b", []int{cout}, initUniform, bound, nil),
	}
}

func (l pointwise) forward(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor {
	return tp.Pointwise(x, l.w, l.b)
}

// convDown is the encoder's kernel-3 stride-2 circular convolution C_l ->
// C_{l+1} (Sec. 3.2), w [Cout, Cin, 3, ..., 3], with bias.
type convDown struct{ w, b *tensor.Tensor }

func newConvDown(pb *builder, name string, dim, cin, cout int) convDown {
	shape := []int{cout, cin}
	fan := cin
	for range dim {
		shape = append(shape, 3)
		fan *= 3
	}
	bound := 1 / math.Sqrt(float64(fan))
	return convDown{
		w: pb.param(name+".w", shape, initUniform, bound, nil),
		b: pb.param(name+".b", []int{cout}, initUniform, bound, nil),
	}
}

func (l convDown) forward(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor {
	return tp.ConvDown(x, l.w, l.b)
}

// projection is the output head 1x1 -> GELU -> 1x1 (Sec. 3, Fig. 1
// "Projection"; hidden width Spec.ProjHidden), one tensor.Tape.Projection
// (fused on the CPU: the hidden activations are not kept).
type projection struct{ p0, p1 pointwise }

func newProjection(pb *builder, name string, cin, hidden, cout int) projection {
	return projection{p0: newPointwise(pb, name+".0", cin, hidden), p1: newPointwise(pb, name+".1", hidden, cout)}
}

func (l projection) forward(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor {
	return tp.Projection(x, l.p0.w, l.p0.b, l.p1.w, l.p1.b)
}

// conv3 is a kernel-3, stride-1 circular convolution with bias,
// w [Cout, Cin, 3, ..., 3].
type conv3 struct{ w, b *tensor.Tensor }

func newConv3(pb *builder, name string, dim, cin, cout int) conv3 {
	shape := tensor.Conv3WeightShape(dim, cin, cout)
	bound := 1 / math.Sqrt(float64(tensor.Numel(shape[1:])))
	return conv3{
		w: pb.param(name+".w", shape, initUniform, bound, nil),
		b: pb.param(name+".b", []int{cout}, initUniform, bound, nil),
	}
}

func (l conv3) forward(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor {
	return tp.Conv3(x, l.w, l.b)
}

// relu is the ReLU of Conv-FNO and CNO. A variable so that the whole-model
// gradient checks can hold the activation pattern fixed (the kink makes
// finite differences unreliable); nothing else changes it.
var relu = func(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor { return tp.ReLU(x) }

func scaled(grid []int, num, den int) []int {
	s := make([]int, len(grid))
	for i, n := range grid {
		s[i] = n * num / den
	}
	return s
}

// checkFlatGrid is CheckGrid of the flat baselines: dim axes of at least
// two points each.
func checkFlatGrid(name string, dim int, grid []int) error {
	if len(grid) != dim {
		return fmt.Errorf("model: %s is %dD, grid %v has %d axes", name, dim, grid, len(grid))
	}
	for _, n := range grid {
		if n < 2 {
			return fmt.Errorf("model: %s needs at least 2 points per axis, got %v", name, grid)
		}
	}
	return nil
}

// checkFlatInput panics unless x is [batch, in, dim spatial axes] on a
// grid checkFlatGrid accepts.
func checkFlatInput(name string, dim, in int, x *tensor.Tensor) {
	if x.Dims() != dim || x.Channels() != in {
		panic(fmt.Sprintf("model: %s takes [batch, %d, %d spatial axes], got %v", name, in, dim, x.Shape))
	}
	if err := checkFlatGrid(name, dim, x.Spatial()); err != nil {
		panic(err.Error())
	}
}
