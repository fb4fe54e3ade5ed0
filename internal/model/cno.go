package model

import (
	"fmt"
	"strconv"

	"uhno/internal/tensor"
)

// CNOSpec is the architecture of the CNO baseline (Convolutional Neural
// Operator, raonic2023convolutional; paper App. "Baseline
// Configurations"); see CNO.
type CNOSpec struct {
	// Dim is the number of spatial axes (1, 2 or 3).
	Dim int
	// InChannels and OutChannels are the input and output fields' channels.
	InChannels, OutChannels int
	// Width is the bottleneck's channel width C_L; level l has
	// C_l = ceil(Width 2^l / 2^L) channels (CNO's doubling per level,
	// counted down from the bottleneck so that every integer Width is a
	// valid size; CNOForBudget picks it).
	Width int
	// Levels is the number of encoding (down-sampling) and decoding
	// (up-sampling) layers, L = 4.
	Levels int
	// NeckBlocks is the number of residual blocks at the bottleneck (4).
	NeckBlocks int
}

// Validate reports the first inconsistency in s.
func (s CNOSpec) Validate() error {
	switch {
	case s.Dim < 1 || s.Dim > 3:
		return fmt.Errorf("model: cno dim %d, want 1, 2 or 3", s.Dim)
	case s.InChannels < 1 || s.OutChannels < 1:
		return fmt.Errorf("model: cno %d input and %d output channels, want >= 1", s.InChannels, s.OutChannels)
	case s.Width < 1 || s.Levels < 1 || s.Levels > 8 || s.NeckBlocks < 0:
		return fmt.Errorf("model: cno width %d, %d levels, %d neck blocks, want width >= 1, 1..8 levels, blocks >= 0", s.Width, s.Levels, s.NeckBlocks)
	}
	return nil
}

// CNOSpecFor returns the CNO of the paper's appendix (4 encoding, 4
// residual-neck and 4 decoding layers) for the same task as a U-HNO spec.
// Width is left 0: choose it with CNOForBudget or set it.
func CNOSpecFor(u Spec) CNOSpec {
	return CNOSpec{Dim: u.Dim, InChannels: u.InChannels, OutChannels: u.OutChannels, Levels: 4, NeckBlocks: 4}
}

// width is C_l.
func (s CNOSpec) width(l int) int {
	f := 1 << (s.Levels - l)
	return (s.Width + f - 1) / f
}

// CNO is the Convolutional Neural Operator baseline: a U-Net of
// convolutions whose activations are anti-aliased (Raonic et al. 2023):
// every nonlinearity is applied on a grid twice as fine as the signal's
// and the result is low-pass filtered back, so the network maps
// band-limited functions to band-limited functions. With F_N the
// band-limited resampling to N points per axis (tensor.Tape.BandResample:
// zero-padding or truncating the spectrum, the ideal filter) the
// activation of a layer whose input has N_in and output N_out points is
//
//	act(z, N_out) = F_{N_out}(relu(F_{2 max(N_in, N_out)}(z)))
//
// and the network is
//
//	h_0 = act(A x, N)                                lifting, Conv3 In -> C_0
//	h_{l+1} = act(E_l h_l, N_l / 2)                  l = 0..L-1, Conv3 C_l -> C_{l+1}, down-sampling
//	r = h_L;  r = r + R2_k act(R1_k r, N_L)          k = 1..NeckBlocks, Conv3 C_L -> C_L (residual neck)
//	d_{L-1} = act(U_{L-1} r, N_{L-1})                up-sampling, Conv3 C_L -> C_{L-1}
//	d_l = act(U_l [d_{l+1}; h_{l+1}], N_l)           l = L-2..0, Conv3 2 C_{l+1} -> C_l
//	y = Q [d_0; h_0]                                 projection, Conv3 2 C_0 -> Out
//
// with N_l = N / 2^l and every convolution kernel 3 with circular padding
// and bias. uhno's readings (the paper gives one line, "4 encoding / 4
// residual neck / 4 decoding layers, channel width matched"): CNO's
// windowed-sinc (Kaiser) filters are replaced by the ideal Fourier
// filter, exact on the periodic domains of every task; ReLU instead of
// CNO's leaky ReLU (the brief's "ReLU"); no batch normalisation; the skip
// of each level is the encoder's output itself (CNO's optional residual
// blocks on the skips are left out, 0 per level); the widths double per
// level as in CNO, counted from the bottleneck width.
//
// Parameters, in this order:
//
//	lift.{w,b}                           [C_0, In, 3...], [C_0]
//	enc.l.{w,b}                          [C_{l+1}, C_l, 3...]             l = 0..L-1
//	neck.k.{0,1}.{w,b}                   [C_L, C_L, 3...]                 k = 0..NeckBlocks-1
//	dec.l.{w,b}                          [C_l, C_L or 2 C_{l+1}, 3...]    l = L-1..0
//	proj.{w,b}                           [Out, 2 C_0, 3...], [Out]
//
// CNO (Raonic et al. 2023) has L = 4 encoding layers, 4 residual-neck
// blocks and 4 decoding layers:
//
//   - Every convolution is a `Conv3` with bias.
//   - Every nonlinearity is CNO's anti-aliased activation,
//     act(z, N_out) = F_{N_out}(ReLU(F_{2·max(N_in, N_out)}(z))), where F is
//     `BandResample`. The ReLU acts on a grid twice as fine and is low-passed
//     back, so the layers map band-limited fields to band-limited fields
//     (`TestCNOActivationIsBandLimited`).
//   - The encoder down-samples through act(·, N/2).
//   - Each neck block computes r + Conv3(act(Conv3 r)).
//   - Each decoder layer concatenates the encoder output of its level (from
//     the second layer on) and up-samples through act(·, 2N).
//   - The last step concatenates the lifted field and projects with `Conv3`
//     2C_0 → Out.
//
// The readings:
//
//   - The ideal Fourier filter replaces CNO's Kaiser-windowed sinc filters.
//     It is exact on our periodic domains.
//   - ReLU replaces leaky ReLU.
//   - There is no batch normalisation and there are no residual blocks on the
//     skips.
//   - Widths double per level as in CNO, but they are counted down from the
//     bottleneck width C_L = `Width`, with C_l = ⌈C_L·2^(l−L)⌉. Counted up
//     from C_0, the count grows by (1 + 1/C_0)² per step, so no integer C_0
//     lands within ±10% (2D: C_0 = 5 gives −12%, C_0 = 6 gives +27%). `Width`
//     steps are about 2%.
//
// `CheckGrid` wants every axis divisible by 16. At 0.62M:
//
//	| task | widths C_0..C_4 | count |
//	|---|---|---|
//	| burgers and ks | 10, 19, 37, 74, 147 | 618,257 (−0.3%) |
//	| ns2d (10/1) | 6, 11, 22, 43, 85 | 621,426 (+0.2%) |
//	| darcy | 6, 11, 22, 43, 85 | 620,940 (+0.2%) |
//
// The paper reports no CNO for AC-2D or 3D-CFD. uhno does not refuse them:
// every operation works in 3D and the model is tested in 3D, and AC-2D is an
// ordinary 2D task. What remains for 3D is cost. At 128³ each activation
// resamples to 256³ with dense 256-point matrices, about 2·(128+256)
// multiply-adds per fine point per axis. A 3D run's report should say the
// paper has no reference value.
type CNO struct {
	spec   CNOSpec
	params *Params
	lift   conv3
	enc    []conv3
	neck   [][2]conv3
	dec    []conv3 // dec[l], l = 0..L-1
	proj   conv3
}

var _ Model = (*CNO)(nil)

func buildCNO(pb *builder, s CNOSpec) *CNO {
	m := &CNO{spec: s}
	m.lift = newConv3(pb, "lift", s.Dim, s.InChannels, s.width(0))
	for l := 0; l < s.Levels; l++ {
		m.enc = append(m.enc, newConv3(pb, "enc."+strconv.Itoa(l), s.Dim, s.width(l), s.width(l+1)))
	}
	cl := s.width(s.Levels)
	for k := 0; k < s.NeckBlocks; k++ {
		name := "neck." + strconv.Itoa(k)
		m.neck = append(m.neck, [2]conv3{newConv3(pb, name+".0", s.Dim, cl, cl), newConv3(pb, name+".1", s.Dim, cl, cl)})
	}
	m.dec = make([]conv3, s.Levels)
	for l := s.Levels - 1; l >= 0; l-- {
		cin := 2 * s.width(l+1)
		if l == s.Levels-1 {
			cin = cl
		}
		m.dec[l] = newConv3(pb, "dec."+strconv.Itoa(l), s.Dim, cin, s.width(l))
	}
	m.proj = newConv3(pb, "proj", s.Dim, 2*s.width(0), s.OutChannels)
	return m
}

// NewCNO builds a CNO on backend b with parameters initialised from seed.
func NewCNO(b tensor.Backend, s CNOSpec, seed uint64) (*CNO, error) {
	m, params, err := construct(b, s, seed, buildCNO)
	if err != nil {
		return nil, err
	}
	m.params = params
	return m, nil
}

// CountCNO is the number of parameters NewCNO would hold. It panics on an
// invalid spec.
func CountCNO(s CNOSpec) int {
	return countOf(s, buildCNO)
}

// CNOForBudget sets the bottleneck width whose parameter count is closest
// to target, within BudgetTolerance.
func CNOForBudget(s CNOSpec, target int) (CNOSpec, error) {
	return fitWidth(s, target, "cno", CountCNO)
}

// withWidth returns s with width w (the width fitWidth searches).
func (s CNOSpec) withWidth(w int) CNOSpec {
	s.Width = w
	return s
}

// Spec returns the architecture.
func (m *CNO) Spec() CNOSpec { return m.spec }

// Params implements Model.
func (m *CNO) Params() *Params { return m.params }

// Name implements Model.
func (m *CNO) Name() string { return "cno" }

// Mode implements Model: no ablation modes.
func (m *CNO) Mode() string { return "" }

// CheckGrid implements Model: every axis must be divisible by 2^Levels
// (the encoder halves it Levels times).
func (m *CNO) CheckGrid(grid []int) error {
	if len(grid) != m.spec.Dim {
		return fmt.Errorf("model: cno is %dD, grid %v has %d axes", m.spec.Dim, grid, len(grid))
	}
	f := 1 << m.spec.Levels
	for _, n := range grid {
		if n%f != 0 || n < f {
			return fmt.Errorf("model: cno's %d down-sampling layers need every axis divisible by %d, got %v", m.spec.Levels, f, grid)
		}
	}
	return nil
}

// act is CNO's anti-aliased activation: up-sample to twice the finer of
// the input and output grids, ReLU, resample to the output grid (sizes
// per axis).
func cnoAct(tp *tensor.Tape, z *tensor.Tensor, out []int) *tensor.Tensor {
	fine := make([]int, len(out))
	for i, n := range z.Spatial() {
		fine[i] = 2 * max(n, out[i])
	}
	return tp.BandResample(relu(tp, tp.BandResample(z, fine...)), out...)
}

// Forward implements Model; Aux is empty.
func (m *CNO) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux) {
	if x.Dims() != m.spec.Dim || x.Channels() != m.spec.InChannels {
		panic(fmt.Sprintf("model: cno takes [batch, %d, %d spatial axes], got %v", m.spec.InChannels, m.spec.Dim, x.Shape))
	}
	if err := m.CheckGrid(x.Spatial()); err != nil {
		panic(err.Error())
	}
	grid := x.Spatial()
	L := m.spec.Levels
	h := []*tensor.Tensor{cnoAct(tp, m.lift.forward(tp, x), grid)}
	for l := 0; l < L; l++ {
		h = append(h, cnoAct(tp, m.enc[l].forward(tp, h[l]), scaled(grid, 1, 2<<l)))
	}
	r := h[L]
	bottom := r.Spatial()
	for _, blk := range m.neck {
		r = tp.Add(r, blk[1].forward(tp, cnoAct(tp, blk[0].forward(tp, r), bottom)))
	}
	d := r
	for l := L - 1; l >= 0; l-- {
		in := d
		if l < L-1 {
			in = tp.Concat(d, h[l+1])
		}
		d = cnoAct(tp, m.dec[l].forward(tp, in), scaled(grid, 1, 1<<l))
	}
	return m.proj.forward(tp, tp.Concat(d, h[0])), Aux{}
}
