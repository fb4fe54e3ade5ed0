package model

import (
	"fmt"
	"math"
	"strconv"

	"uhno/internal/tensor"
)

// AdditiveSpec is the architecture of the flat additive hybrid, the
// baseline of the paper's branch-parameter gradient-angle diagnostic (App.
// "Branch-Parameter Gradient-Angle Diagnostic", App. "Training Dynamics
// Details"); see Additive.
type AdditiveSpec struct {
	// Dim is the number of spatial axes (1, 2 or 3).
	Dim int
	// InChannels and OutChannels are the input and output fields' channels.
	InChannels, OutChannels int
	// Width is the channel width of both stacks (AdditiveForBudget picks
	// it for a parameter target).
	Width int
	// K0 is the nominal number of Fourier modes per axis of the spectral
	// convolutions (the same as U-HNO's), capped at min(K0, floor(N/2)).
	K0 int
	// Blocks is the number of blocks of each stack, and so of matched
	// layer pairs (4 in the paper).
	Blocks int
	// ProjHidden is the hidden width of the projection 1x1 -> GELU -> 1x1.
	ProjHidden int
}

// Validate reports the first inconsistency in s.
func (s AdditiveSpec) Validate() error {
	switch {
	case s.Dim < 1 || s.Dim > 3:
		return fmt.Errorf("model: additive dim %d, want 1, 2 or 3", s.Dim)
	case s.InChannels < 1 || s.OutChannels < 1:
		return fmt.Errorf("model: additive %d input and %d output channels, want >= 1", s.InChannels, s.OutChannels)
	case s.Width < 1 || s.K0 < 1 || s.Blocks < 1 || s.ProjHidden < 1:
		return fmt.Errorf("model: additive width %d, k0 %d, blocks %d, projection %d, want all >= 1", s.Width, s.K0, s.Blocks, s.ProjHidden)
	}
	return nil
}

// AdditiveSpecFor returns the flat additive hybrid for the same task as a
// U-HNO spec: same dimension, channels, K0 and projection width, and four
// blocks per stack (the paper's four matched layer pairs, App. "Training
// Dynamics Details"). Width is left 0: choose it with AdditiveForBudget
// (matched to a parameter target, as the paper's baselines are) or set it.
func AdditiveSpecFor(s Spec) AdditiveSpec {
	return AdditiveSpec{Dim: s.Dim, InChannels: s.InChannels, OutChannels: s.OutChannels,
		K0: s.K0, Blocks: 4, ProjHidden: s.ProjHidden}
}

// Additive is the flat additive hybrid of the paper's gradient-angle
// diagnostic: "a stack of FNO spectral-conv blocks with parameters theta_F
// and a parallel stack of 3x3 depthwise conv blocks with parameters
// theta_G, summed pointwise before a single 1x1 projection head" (App.
// "Branch-Parameter Gradient-Angle Diagnostic"):
//
//	h = P(x)                                         lifting, 1x1 In -> Width
//	hF_0 = hG_0 = h                                  both stacks start from it
//	hF_{i+1} = sigma(K_i(hF_i) + W_i hF_i)           i = 0..Blocks-1, Fourier stack
//	hG_{i+1} = sigma(D_i(hG_i) + V_i hG_i)           i = 0..Blocks-1, local stack
//	y = Q(hF_Blocks + hG_Blocks)                     projection 1x1 -> GELU -> 1x1
//
// The paper is terse; these are uhno's readings, each a choice:
//
//   - K_i is FNO's spectral convolution (K_eff = min(K0, floor(N/2)) modes
//     per axis, one complex weight per kept corner, no bias) and W_i a 1x1
//     convolution with bias: the Fourier stack is exactly FNO's blocks
//     (FNO), including sigma = GELU after every block but the last.
//   - D_i is a depthwise convolution with a 3-tap kernel on every axis
//     (3, 3x3 or 3x3x3 per channel; "3x3" in the paper's 2D wording),
//     circular padding, stride 1, with bias (PyTorch's Conv default;
//     tensor.Tape.DepthwiseConv). A depthwise kernel never mixes channels,
//     so every local block also has a 1x1 convolution V_i with bias, the
//     counterpart of FNO's W_i, and the same activations: the local stack
//     is the Fourier stack with K_i replaced by D_i.
//   - Both stacks start from the same lifted field, run in parallel
//     without exchanging features, and are summed once, after their last
//     blocks, before the projection. The lifting and the projection (hidden
//     width ProjHidden) are shared and are FNO's.
//   - There is no routing and no auxiliary output: Forward's Aux is empty,
//     so the loss has no CBC term (the paper trains the baseline against
//     MSE for the diagnostic).
//   - The l-th matched layer pair of the diagnostic is (K_l, D_l): the
//     spectral weight fourier.l.spectral.w and the depthwise kernel
//     local.l.depthwise.w (SpectralWeights, DepthwiseWeights). Lifting,
//     projection and biases are left out of the pairs, as the paper says,
//     and so are the 1x1 mixers W_l and V_l (the paper pairs "the four
//     spectral convs" with "the four depthwise convs").
//
// Parameters, in this order (forward order of each stack; the Fourier stack
// is declared first):
//
//	lift.{w,b}                           [W, In], [W]
//	fourier.i.spectral.w                 [2^(d-1), W, W, K0 (d times), 2]   i = 0..Blocks-1
//	fourier.i.w.{w,b}                    [W, W], [W]
//	local.i.depthwise.{w,b}              [W, 3 (d times)], [W]              i = 0..Blocks-1
//	local.i.w.{w,b}                      [W, W], [W]
//	proj.0.{w,b}, proj.1.{w,b}           [P, W], [P], [Out, P], [Out]
//
// Initialisation is PyTorch's default as for the other models: U(+-1/sqrt
// (fan_in)) with fan_in = 3^d for the depthwise kernels and their biases
// (one input channel per group), (1/W^2) U(0, 1) for the spectral weights.
//
// The paper's App. "Branch-Parameter Gradient-Angle Diagnostic" measures, on
// "a flat additive-hybrid baseline", the angle between the MSE gradients of
// the l-th spectral convolution and the l-th depthwise convolution (four
// matched pairs, App. "Training Dynamics Details"). `model.Additive` is that
// baseline and `BranchAngles` the diagnostic.
//
// The model (`internal/model/additive.go`; the parameters are listed
// above). The paper gives one sentence: a stack of FNO spectral-conv
// blocks and a parallel stack of 3x3 depthwise conv blocks, summed pointwise
// before a single 1x1 projection head. uhno's readings, each a choice:
//
//   - Lifting (1x1, In → W), then two stacks of `Blocks` = 4 blocks from the
//     same lifted field. Fourier block: h ← GELU(K(h) + W h), FNO's block
//     (`FNO`) with the same spectral weights and K_eff. Local block:
//     h ← GELU(D(h) + V h), where D is a depthwise convolution with 3 taps on
//     every axis (3, 3x3, 3x3x3 per channel), circular padding, with bias
//     (PyTorch's default), and V a 1x1 convolution with bias. A depthwise
//     kernel never mixes channels; V is FNO's W in the local stack, so the two
//     stacks differ only in K versus D. As in FNO, the last block of each stack
//     has no GELU.
//   - The stacks exchange nothing and are summed once, after their last
//     blocks; the projection is FNO's (1x1 → GELU → 1x1, hidden width
//     `model.proj_hidden`). Forward's `Aux` is empty: no routing and no CBC
//     pair (the paper trains the baseline against MSE for the diagnostic).
//   - Matched pairs: `fourier.l.spectral.w` with `local.l.depthwise.w`
//     (`SpectralWeights`, `DepthwiseWeights`). Lifting, projection, biases and
//     the 1x1 mixers are not paired.
//   - Sizes: `AdditiveSpecFor(spec)` takes a task's dimension, channels, K0 and
//     projection width; `AdditiveForBudget` picks the width for a parameter
//     target within 10% (as `FNOForBudget`). At `--params 0.62M`: Burgers
//     width 55 (613,727), KS 48 (615,905), NS-2D (in = 10) 16 (595,121), Darcy
//     16 (594,977).
type Additive struct {
	spec      AdditiveSpec
	params    *Params
	lift      pointwise
	spectral  []*fourierBranch
	wF        []pointwise
	depthwise []depthwiseConv
	wG        []pointwise
	proj      projection
}

var _ Model = (*Additive)(nil)

// depthwiseConv is the local stack's 3-tap depthwise circular convolution,
// w [C, 3, ..., 3], with bias [C].
type depthwiseConv struct{ w, b *tensor.Tensor }

func newDepthwise(pb *builder, name string, dim, c int) depthwiseConv {
	shape := tensor.DepthwiseWeightShape(dim, c)
	bound := 1 / math.Sqrt(float64(tensor.Numel(shape[1:])))
	return depthwiseConv{
		w: pb.param(name+".w", shape, initUniform, bound, nil),
		b: pb.param(name+".b", []int{c}, initUniform, bound, nil),
	}
}

func (l depthwiseConv) forward(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor {
	return tp.DepthwiseConv(x, l.w, l.b)
}

func buildAdditive(pb *builder, s AdditiveSpec) *Additive {
	m := &Additive{spec: s}
	m.lift = newPointwise(pb, "lift", s.InChannels, s.Width)
	for i := range s.Blocks {
		name := "fourier." + strconv.Itoa(i)
		m.spectral = append(m.spectral, newFourier(pb, name+".spectral", s.Dim, s.Width, s.Width, s.K0))
		m.wF = append(m.wF, newPointwise(pb, name+".w", s.Width, s.Width))
	}
	for i := range s.Blocks {
		name := "local." + strconv.Itoa(i)
		m.depthwise = append(m.depthwise, newDepthwise(pb, name+".depthwise", s.Dim, s.Width))
		m.wG = append(m.wG, newPointwise(pb, name+".w", s.Width, s.Width))
	}
	m.proj = newProjection(pb, "proj", s.Width, s.ProjHidden, s.OutChannels)
	return m
}

// NewAdditive builds the flat additive hybrid on backend b with parameters
// initialised from seed.
func NewAdditive(b tensor.Backend, s AdditiveSpec, seed uint64) (*Additive, error) {
	m, params, err := construct(b, s, seed, buildAdditive)
	if err != nil {
		return nil, err
	}
	m.params = params
	return m, nil
}

// CountAdditive is the number of parameters NewAdditive would hold,
// computed without allocating them. It panics on an invalid spec.
func CountAdditive(s AdditiveSpec) int {
	return countOf(s, buildAdditive)
}

// AdditiveForBudget sets the width whose parameter count is closest to
// target, within BudgetTolerance (as FNOForBudget: the paper's baselines
// are matched to U-HNO's count).
func AdditiveForBudget(s AdditiveSpec, target int) (AdditiveSpec, error) {
	return fitWidth(s, target, "additive", CountAdditive)
}

// withWidth returns s with width w (the width fitWidth searches).
func (s AdditiveSpec) withWidth(w int) AdditiveSpec {
	s.Width = w
	return s
}

// Spec returns the architecture.
func (m *Additive) Spec() AdditiveSpec { return m.spec }

// Params implements Model.
func (m *Additive) Params() *Params { return m.params }

// Name implements Model.
func (m *Additive) Name() string { return "additive" }

// Mode implements Model: the additive hybrid has no ablation modes.
func (m *Additive) Mode() string { return "" }

// CheckGrid implements Model: any grid with at least two points per axis.
func (m *Additive) CheckGrid(grid []int) error {
	if len(grid) != m.spec.Dim {
		return fmt.Errorf("model: additive is %dD, grid %v has %d axes", m.spec.Dim, grid, len(grid))
	}
	for _, n := range grid {
		if n < 2 {
			return fmt.Errorf("model: additive needs at least 2 points per axis, got %v", grid)
		}
	}
	return nil
}

// Forward implements Model; Aux is empty (nothing is routed, and there is
// no branch pair for the CBC term).
func (m *Additive) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux) {
	y, _ := m.ForwardTrace(tp, x)
	return y, Aux{}
}

// AdditiveTrace holds the inputs of the matched layer pairs in one
// forward pass: InF[l] is the input hF_l of the l-th spectral convolution
// and InG[l] the input hG_l of the l-th depthwise convolution, both
// [B, Width, spatial...] and owned by the tape of the pass (valid until
// its Reset). BranchAngles reads them.
type AdditiveTrace struct {
	InF, InG []*tensor.Tensor
}

// ForwardTrace is Forward that also returns the inputs of the matched
// layer pairs. It records the same operations as Forward.
func (m *Additive) ForwardTrace(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, AdditiveTrace) {
	if x.Dims() != m.spec.Dim || x.Channels() != m.spec.InChannels {
		panic(fmt.Sprintf("model: additive takes [batch, %d, %d spatial axes], got %v", m.spec.InChannels, m.spec.Dim, x.Shape))
	}
	if err := m.CheckGrid(x.Spatial()); err != nil {
		panic(err.Error())
	}
	var tr AdditiveTrace
	h := m.lift.forward(tp, x)
	last := m.spec.Blocks - 1
	hF := h
	for i, k := range m.spectral {
		tr.InF = append(tr.InF, hF)
		hF = tp.Add(k.forward(tp, hF), m.wF[i].forward(tp, hF))
		if i < last {
			hF = tp.GELU(hF)
		}
	}
	hG := h
	for i, d := range m.depthwise {
		tr.InG = append(tr.InG, hG)
		hG = tp.Add(d.forward(tp, hG), m.wG[i].forward(tp, hG))
		if i < last {
			hG = tp.GELU(hG)
		}
	}
	return m.proj.forward(tp, tp.Add(hF, hG)), tr
}

// SpectralWeights returns the weights of the Fourier stack's spectral
// convolutions, theta_F^(l) for l = 0..Blocks-1: the parameters
// fourier.l.spectral.w, whose Grad views hold their gradients after a
// backward pass. The slice is new; the tensors are the model's.
func (m *Additive) SpectralWeights() []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(m.spectral))
	for i, k := range m.spectral {
		out[i] = k.w
	}
	return out
}

// DepthwiseWeights returns the kernels of the local stack's depthwise
// convolutions, theta_G^(l) for l = 0..Blocks-1 (local.l.depthwise.w,
// without their biases), like SpectralWeights.
func (m *Additive) DepthwiseWeights() []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(m.depthwise))
	for i, d := range m.depthwise {
		out[i] = d.w
	}
	return out
}
