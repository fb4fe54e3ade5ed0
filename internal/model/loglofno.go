package model

import (
	"fmt"

	"uhno/internal/tensor"
)

// LogLoFNOSpec is the architecture of the LogLo-FNO baseline in the
// paper's reading (App. "Baseline Configurations"); see LogLoFNO. Its
// fields are FNOSpec's: "Depth and width match FNO".
type LogLoFNOSpec struct {
	// Dim is the number of spatial axes (1, 2 or 3).
	Dim int
	// InChannels and OutChannels are the input and output fields' channels.
	InChannels, OutChannels int
	// Width is the channel width of every spectral block.
	Width int
	// K0 is the mode budget per axis (U-HNO's): K = min(K0, floor(N/2))
	// frequencies kept on every axis, chosen on the last (rfft) axis by
	// tensor.LogModes.
	K0 int
	// Blocks is the number of spectral blocks (4, as FNO).
	Blocks int
	// ProjHidden is the hidden width of the projection 1x1 -> GELU -> 1x1.
	ProjHidden int
}

// Validate reports the first inconsistency in s.
func (s LogLoFNOSpec) Validate() error {
	switch {
	case s.Dim < 1 || s.Dim > 3:
		return fmt.Errorf("model: loglofno dim %d, want 1, 2 or 3", s.Dim)
	case s.InChannels < 1 || s.OutChannels < 1:
		return fmt.Errorf("model: loglofno %d input and %d output channels, want >= 1", s.InChannels, s.OutChannels)
	case s.Width < 1 || s.K0 < 1 || s.Blocks < 1 || s.ProjHidden < 1:
		return fmt.Errorf("model: loglofno width %d, k0 %d, blocks %d, projection %d, want all >= 1", s.Width, s.K0, s.Blocks, s.ProjHidden)
	}
	return nil
}

// LogLoFNOSpecFor returns the LogLo-FNO baseline for the same task as a
// U-HNO spec: FNO's dimension, channels, K0, four blocks and projection.
// Width is left 0: choose it with LogLoFNOForBudget (the same width as
// FNOForBudget's, since the counts are equal) or set it.
func LogLoFNOSpecFor(s Spec) LogLoFNOSpec {
	return LogLoFNOSpec{Dim: s.Dim, InChannels: s.InChannels, OutChannels: s.OutChannels,
		K0: s.K0, Blocks: 4, ProjHidden: s.ProjHidden}
}

// LogLoFNO is the LogLo-FNO baseline as the paper specifies it (App.
// "Baseline Configurations": "mode budget is allocated proportionally to
// log(1+k)^-1 across the rfft axis, replacing the uniform top-K0
// truncation of FNO. Depth and width match FNO"). It is FNO (same blocks,
// lifting, projection, parameter names, shapes and initialisation, hence
// the same count) whose spectral convolutions keep, on the last (rfft)
// axis, the K = min(K0, floor(N/2)) frequencies tensor.LogModes(K0, N)
// instead of 0..K-1: DC, then the midpoint quantiles of the density
// 1/log(1+k) over the whole axis below the Nyquist bin
// (tensor.Tape.LogSpectralConv). Slot j of the weight's last mode axis
// multiplies frequency LogModes(K0, N)[j]. The other axes keep FNO's
// corners [0:K] and [N-K:N] ("across the rfft axis"). The kept
// frequencies depend on the grid (they span its whole rfft axis), so
// unlike FNO the model is tied to the grid it was trained on; uhno
// evaluates on the training grid. This is the paper's reading, not
// kalimuthu2025loglo's architecture; docs/DECISIONS.md
// D-loglo-fno.
//
// Parameters, in this order (FNO's):
//
//	lift.{w,b}                        [W, In], [W]
//	block.i.spectral.w                [2^(d-1), W, W, K0 (d times), 2]   i = 0..Blocks-1
//	block.i.w.{w,b}                   [W, W], [W]
//	proj.0.{w,b}, proj.1.{w,b}        [P, W], [P], [Out, P], [Out]
type LogLoFNO struct {
	spec    LogLoFNOSpec
	params  *Params
	lift    pointwise
	kernels []*fourierBranch
	w       []pointwise
	proj    projection
}

var _ Model = (*LogLoFNO)(nil)

func (s LogLoFNOSpec) fno() FNOSpec {
	return FNOSpec{Dim: s.Dim, InChannels: s.InChannels, OutChannels: s.OutChannels,
		Width: s.Width, K0: s.K0, Blocks: s.Blocks, ProjHidden: s.ProjHidden}
}

func buildLogLoFNO(pb *builder, s LogLoFNOSpec) *LogLoFNO {
	f := buildFNO(pb, s.fno())
	return &LogLoFNO{spec: s, lift: f.lift, kernels: f.kernels, w: f.w, proj: f.proj}
}

// NewLogLoFNO builds a LogLo-FNO on backend b with parameters initialised
// from seed (the same values as NewFNO's at the same width and seed).
func NewLogLoFNO(b tensor.Backend, s LogLoFNOSpec, seed uint64) (*LogLoFNO, error) {
	m, params, err := construct(b, s, seed, buildLogLoFNO)
	if err != nil {
		return nil, err
	}
	m.params = params
	return m, nil
}

// CountLogLoFNO is the number of parameters NewLogLoFNO would hold (FNO's
// at the same width). It panics on an invalid spec.
func CountLogLoFNO(s LogLoFNOSpec) int {
	return countOf(s, buildLogLoFNO)
}

// LogLoFNOForBudget sets the width whose parameter count is closest to
// target, within BudgetTolerance (as FNOForBudget).
func LogLoFNOForBudget(s LogLoFNOSpec, target int) (LogLoFNOSpec, error) {
	return fitWidth(s, target, "loglofno", CountLogLoFNO)
}

// withWidth returns s with width w (the width fitWidth searches).
func (s LogLoFNOSpec) withWidth(w int) LogLoFNOSpec {
	s.Width = w
	return s
}

// Spec returns the architecture.
func (m *LogLoFNO) Spec() LogLoFNOSpec { return m.spec }

// Params implements Model.
func (m *LogLoFNO) Params() *Params { return m.params }

// Name implements Model.
func (m *LogLoFNO) Name() string { return "loglofno" }

// Mode implements Model: LogLo-FNO has no ablation modes.
func (m *LogLoFNO) Mode() string { return "" }

// CheckGrid implements Model: any grid with at least two points per axis.
func (m *LogLoFNO) CheckGrid(grid []int) error { return checkFlatGrid("loglofno", m.spec.Dim, grid) }

// Forward implements Model; Aux is empty (nothing is routed).
func (m *LogLoFNO) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux) {
	checkFlatInput("loglofno", m.spec.Dim, m.spec.InChannels, x)
	h := m.lift.forward(tp, x)
	for i, k := range m.kernels {
		h = tp.Add(tp.LogSpectralConv(h, k.w, k.k0), m.w[i].forward(tp, h))
		if i < len(m.kernels)-1 {
			h = tp.GELU(h)
		}
	}
	return m.proj.forward(tp, h), Aux{}
}
