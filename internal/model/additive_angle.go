package model

import (
	"fmt"
	"math"

	"uhno/internal/tensor"
)

// The branch-parameter gradient-angle diagnostic of the paper (App.
// "Branch-Parameter Gradient-Angle Diagnostic", App. "Training Dynamics
// Details") on the flat additive hybrid (Additive).
//
// The paper's reading and why it needs one. The paper takes, for each
// matched layer pair l (the l-th spectral convolution and the l-th
// depthwise convolution), the MSE gradients g_F^(l) and g_G^(l) of the two
// layers' weights and reports
//
//	theta_l = arccos(<g_F^(l), g_G^(l)> / (|g_F^(l)| |g_G^(l)|)),
//
// "flattening each parameter tensor to a vector before the inner
// product". The two vectors live in different spaces: g_F^(l) has
// 2^(d-1) W W K0^d 2 real entries (complex mode weights), g_G^(l) has
// W 3^d (one 3^d-tap kernel per channel), so the inner product is not
// defined as written, and no pairing of their entries has a meaning of its
// own.
//
// uhno's reading. Both layers write into the same space, their output
// [B, W, grid] on the batch, and both are linear in their weights. So each
// gradient is mapped to the change it makes to its layer's output,
//
//	dz_F^(l) = SpectralConv(hF_l; g_F^(l)),   dz_G^(l) = DepthwiseConv(hG_l; g_G^(l)),
//
// the first-order output change of a gradient step along g (a step
// -eta g changes z by -eta dz, the same factor for both branches), with
// hF_l and hG_l the layers' inputs on the same batch and no bias; and
// theta_l is the angle between dz_F^(l) and dz_G^(l), flattened over the
// batch, channels and grid, in degrees in [0, 180]. It is an angle
// between the two branches' parameter updates, measured where they act;
// it depends only on the gradients' directions, so it does not change
// when the loss is scaled. At the last layer both branches receive the same
// upstream gradient delta (the stacks are summed), and
// <dz_F, dz_G> = <J_F J_F^T delta, J_G J_G^T delta> with J the layers'
// Jacobians with respect to their weights: the "different Jacobian
// structure" the paper's argument turns on. The paper's caveat stands: in
// high dimension 90 degrees is the null, and the diagnostic is
// descriptive.
//
// The gradients are those of the plain MSE (no H1, no CBC), raw (not
// AdamW's preconditioned step), on whatever batch the caller passes (the
// paper: a 64-sample sub-batch every 1,000 steps).

// BranchAngles returns theta_l, in degrees, for the matched layer pairs
// l = 0..Blocks-1 of m (see the comment above for the definition) on the
// batch in [B, In, grid...] with targets tgt [B, Out, grid...]. It runs
// the forward pass, the MSE and the backward pass on a tape of its own
// and then one SpectralConv and one DepthwiseConv per pair with the
// gradients as weights.
//
// It is meant to run between training steps, when the model's gradient
// buffer holds nothing the caller needs: it clears the buffer before its
// backward pass and again before it returns, so the buffer is left zeroed.
// It does not touch the weights or anything else of the training state
// (the optimizer's moments live outside the model), so a run that calls
// it trains to the same bits as one that does not. An angle is NaN when
// either output change is exactly zero (the angle is then undefined).
// Errors report inputs that do not fit the model.
//
// The angle. The paper's formula takes the cosine of the two flattened
// gradients, but they have different lengths (2^(d−1)·W²·K0^d·2 real
// spectral weights against W·3^d depthwise taps), so the inner product is
// not defined, and no pairing of their entries means anything. uhno compares
// the two gradients where both act: each layer is linear in its weights, so
// a gradient g changes the layer's output, to first order, by the same layer
// applied with g as its weights, δz_F = SpectralConv(h_F; g_F) and
// δz_G = DepthwiseConv(h_G; g_G) (no bias), on the batch the gradients come
// from, with h the layers' inputs. θ_l is the angle between δz_F and δz_G,
// flattened over batch, channels and grid, in degrees in [0, 180]. It
// does not depend on the loss's scale. At the last layer both branches get the
// same upstream gradient δ (the paper's reason for not measuring activation
// gradients), and ⟨δz_F, δz_G⟩ = ⟨J_F J_Fᵀ δ, J_G J_Gᵀ δ⟩: the "different
// Jacobian structure" of the paper's argument. Gradients are the plain MSE's,
// raw (not AdamW's step).
//
// `BranchAngles(m, backend, in, tgt, inShape, tgtShape)` runs forward, MSE
// and backward on its own tape, then one SpectralConv and one DepthwiseConv
// per pair. It clears the model's gradient buffer before and after and
// touches nothing else, so a run that calls it between steps trains to the
// same bits as one that does not (tested over three AdamW steps). Its tests
// also cover: a hand-built one-channel network on a constant field whose
// angles are known in closed form (0 and 180, with the sign of one mixer and
// of the prediction error flipped); a reference that rebuilds the layers'
// inputs from the named parameters; invariance to scaling the loss; and
// range. The CPU op has finite-difference checks in 1D–3D and a naive
// reference; the CUDA kernels (`kernels/depthwise.cu`) are tested against it
// under the emulator, in every thread order too.
func BranchAngles(m *Additive, b tensor.Backend, in, tgt []float32, inShape, tgtShape []int) ([]float64, error) {
	return branchAngles(m, b, in, tgt, inShape, tgtShape, 1)
}

// branchAngles is BranchAngles with the loss multiplied by lossScale (the
// tests check that the angles do not depend on it).
func branchAngles(m *Additive, b tensor.Backend, in, tgt []float32, inShape, tgtShape []int, lossScale float32) ([]float64, error) {
	s := m.Spec()
	switch {
	case len(inShape) != s.Dim+2 || inShape[1] != s.InChannels:
		return nil, fmt.Errorf("model: branch angles: input shape %v, want [batch, %d, %d grid axes]", inShape, s.InChannels, s.Dim)
	case len(tgtShape) != len(inShape) || tgtShape[0] != inShape[0] || tgtShape[1] != s.OutChannels ||
		!tensor.SameShape(tgtShape[2:], inShape[2:]):
		return nil, fmt.Errorf("model: branch angles: target shape %v does not fit input %v with %d output channels", tgtShape, inShape, s.OutChannels)
	case inShape[0] < 1:
		return nil, fmt.Errorf("model: branch angles: empty batch %v", inShape)
	case len(in) != tensor.Numel(inShape) || len(tgt) != tensor.Numel(tgtShape):
		return nil, fmt.Errorf("model: branch angles: %d input and %d target values for shapes %v and %v", len(in), len(tgt), inShape, tgtShape)
	}
	if err := m.CheckGrid(inShape[2:]); err != nil {
		return nil, fmt.Errorf("model: branch angles: %w", err)
	}
	p := m.Params()
	p.ZeroGrad()
	defer p.ZeroGrad()
	tp := tensor.NewTape(b)
	defer tp.Release()

	x := tp.FromHost(in, inShape...)
	y := tp.FromHost(tgt, tgtShape...)
	pred, tr := m.ForwardTrace(tp, x)
	loss := tp.MSE(pred, y)
	if lossScale != 1 {
		loss = tp.Scale(loss, lossScale)
	}
	tp.Backward(loss)

	tp.SetGrad(false)
	spectral, depthwise := m.SpectralWeights(), m.DepthwiseWeights()
	angles := make([]float64, len(spectral))
	for l := range spectral {
		in := tr.InF[l]
		dzF := tp.SpectralConv(in, spectral[l].Grad, s.K0, tensor.FirstModes(s.K0, in.Shape[len(in.Shape)-1]))
		dzG := tp.DepthwiseConv(tr.InG[l], depthwise[l].Grad, nil)
		angles[l] = angleDegrees(tensor.ToHost(b, dzF), tensor.ToHost(b, dzG))
	}
	return angles, nil
}

// angleDegrees is arccos(<a, b> / (|a| |b|)) in degrees, in [0, 180],
// summed in float64; NaN when either vector is zero.
func angleDegrees(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return math.NaN()
	}
	c := ab / (math.Sqrt(aa) * math.Sqrt(bb))
	return math.Acos(max(-1, min(1, c))) * 180 / math.Pi
}
