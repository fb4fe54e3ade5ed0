package cpu_test

import (
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// TestChainGrad checks the gradient of a small U-HNO-shaped graph that
// strings every differentiable operation together, in 1D, 2D and 3D:
// lifting, a spectral branch, a Gaussian branch (pre-mixer, all scales,
// fusion), the SPAR MUX, the residual W_R and GELU, a stride-2 down-sampling
// and an up-sampling back, a skip concatenation, projection, and the loss
// MSE + lambda_H1 * 1/2 sum_d MSE(d_d yhat, d_d y) (Eq. loss). The routing
// mask and scores are fixed inputs here (the top-k has no finite-difference
// derivative; TestSPARRouteBackwardFormulas covers the score path), so
// every parameter's gradient is an exact derivative of the loss.
func TestChainGrad(t *testing.T) {
	b := cpu.New(2)
	const c, k0 = 4, 3
	for _, sp := range [][]int{{16}, {8, 8}, {4, 4, 4}} {
		d := len(sp)
		field := func(ch int) []int { return append([]int{2, ch}, sp...) }
		down := []int{2, 2 * c}
		for _, n := range sp {
			down = append(down, n/2)
		}
		conv := []int{2 * c, c}
		for i := 0; i < d; i++ {
			conv = append(conv, 3)
		}
		mask := make([]float32, tensor.Numel(field(1)))
		for i := range mask {
			if i%4 < 2 {
				mask[i] = 1
			}
		}
		inputs := []gradcheck.Input{
			in("x", 1, field(1)...),
			in("target", 2, field(1)...),
			in("lift", 3, c, 1),
			in("spectral", 4, tensor.SpectralWeightShape(d, c, c, k0)...),
			in("pre", 5, 3*c, c),
			{Name: "logSigma", Shape: []int{3, 2}, Data: []float32{
				float32(math.Log(0.5)), float32(math.Log(0.6)), float32(math.Log(1.15)), float32(math.Log(1.1)), float32(math.Log(0.4)), float32(math.Log(0.55))}},
			in("fuse", 6, c, 3*c),
			in("wr", 7, c, c),
			in("down", 8, conv...),
			in("up", 9, c, 2*c),
			in("proj", 10, 1, 2*c),
			{Name: "mask", Shape: field(1), Data: mask, NoGrad: true},
			in("scores", 11, field(1)...),
		}
		inputs[1].NoGrad = true
		inputs[12].NoGrad = true
		t.Run(tensor.ShapeString(sp), func(t *testing.T) {
			gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				x, target := v[0], v[1]
				h := tp.Pointwise(x, v[2], nil)
				zF := tp.SpectralConv(h, v[3], k0, first(h, k0))
				zG := tp.GELU(tp.Pointwise(tp.GaussianConv(tp.Pointwise(h, v[4], nil), v[5], tensor.GaussOpts{Normalize: true, MaxRadius: 16}), v[6], nil))
				r := tp.SPARRoute(zF, zG, v[11], v[12], 0.8, tensor.CentreZero)
				h1 := tp.GELU(tp.Add(tp.Pointwise(h, v[7], nil), r))
				coarse := tp.ConvDown(h1, v[8], nil)
				up := tp.Pointwise(tp.Upsample2x(coarse, false), v[9], nil)
				y := tp.Pointwise(tp.Concat(up, h1), v[10], nil)
				loss := tp.MSE(y, target)
				for ax := 0; ax < d; ax++ {
					dh := float32(1.0 / float64(sp[ax]))
					h1 := tp.MSE(tp.Diff(y, ax, dh, true), tp.Diff(target, ax, dh, true))
					loss = tp.Add(loss, tp.Scale(h1, 0.5*1e-3))
				}
				return loss
			}, inputs, gradcheck.Options{MaxProbe: 12})
		})
	}
}
