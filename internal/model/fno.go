package model

import (
	"strconv"

	"uhno/internal/tensor"
)

// FNO is the Fourier Neural Operator baseline (paper App. C "Baseline
// Configurations", li2020fourier):
//
//	h = P(x)                                    lifting, 1x1 In -> Width
//	h = sigma(K_i(h) + W_i h),  i = 1..Blocks   K_i spectral conv, W_i 1x1
//	y = Q(h)                                    projection 1x1 -> GELU -> 1x1
//
// with sigma = GELU after every block but the last (as in li2020fourier's
// code and the yardstick). K_i keeps K_eff = min(K0, floor(N/2)) modes per
// axis, the same nominal budget as U-HNO: on the last (rfft) axis the
// frequencies 0..K_eff-1, or with Frequencies = FrequenciesLog the list
// tensor.LogModes, which makes it LogLo-FNO (NewLogLoFNO).
//
// FNO. Lifting, then four blocks h = GELU(K(h) + W h) with no GELU after
// the last, then a projection 1×1 → GELU → 1×1 (hidden width 128). K0 is
// the same as U-HNO's.
type FNO struct {
	spec    FNOSpec
	params  *Params
	lift    pointwise
	kernels []*fourierBranch
	w       []pointwise
	proj    projection
}

var _ Model = (*FNO)(nil)

func buildFNO(pb *builder, s FNOSpec) *FNO {
	m := &FNO{spec: s}
	m.lift = newPointwise(pb, "lift", s.InChannels, s.Width)
	for i := range s.Blocks {
		name := "block." + strconv.Itoa(i)
		k := newFourier(pb, name+".spectral", s.Dim, s.Width, s.Width, s.K0)
		if s.Frequencies == FrequenciesLog {
			k.modes = tensor.LogModes
		}
		m.kernels = append(m.kernels, k)
		m.w = append(m.w, newPointwise(pb, name+".w", s.Width, s.Width))
	}
	m.proj = newProjection(pb, "proj", s.Width, s.ProjHidden, s.OutChannels)
	return m
}

// NewFNO builds an FNO on backend b with parameters initialised from seed.
func NewFNO(b tensor.Backend, s FNOSpec, seed uint64) (*FNO, error) {
	m, params, err := construct(b, s, seed, buildFNO)
	if err != nil {
		return nil, err
	}
	m.params = params
	return m, nil
}

// CountFNO is the number of parameters NewFNO would hold, computed without
// allocating them. It panics on an invalid spec.
func CountFNO(s FNOSpec) int {
	return countOf(s, buildFNO)
}

// Spec returns the architecture.
func (m *FNO) Spec() FNOSpec { return m.spec }

// Params implements Model.
func (m *FNO) Params() *Params { return m.params }

// Name implements Model: "fno", or "loglofno" with the log frequencies.
func (m *FNO) Name() string {
	if m.spec.Frequencies == FrequenciesLog {
		return "loglofno"
	}
	return "fno"
}

// Mode implements Model: FNO has no ablation modes.
func (m *FNO) Mode() string { return "" }

// CheckGrid implements Model: any grid with at least two points per axis.
func (m *FNO) CheckGrid(grid []int) error {
	return checkFlatGrid(m.Name(), m.spec.Dim, grid)
}

// Forward implements Model; Aux is empty (nothing is routed).
func (m *FNO) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux) {
	checkFlatInput(m.Name(), m.spec.Dim, m.spec.InChannels, x)
	h := m.lift.forward(tp, x)
	for i, k := range m.kernels {
		h = tp.Add(k.forward(tp, h), m.w[i].forward(tp, h))
		if i < len(m.kernels)-1 {
			h = tp.GELU(h)
		}
	}
	return m.proj.forward(tp, h), Aux{}
}

// FNOWider is the paper's FNO-wider channel scaling (App. "Compute and
// Routing Overhead", Tab. fno-wider): FNO's width 24 -> 56 at the tables'
// ~0.6M budget, about 5x the parameters, sized to match U-HNO's inference
// latency.
const (
	FNOWiderFrom = 24
	FNOWiderTo   = 56
)

// FNOWiderSpec returns the FNO-wider preset for the same task as a U-HNO
// spec: FNOSpecFor(u) at the width of the FNO matched to the Full U-HNO's
// count (FNOForBudget's width, the paper's 24) scaled by 56/24 and
// rounded, so that it has about (56/24)^2 = 5.4x the matched FNO's
// parameters (the paper: 0.59M -> 3.18M). With --params the U-HNO spec is
// the budget-scaled one, so FNO-wider follows it: at 0.62M it has about
// 3.2M parameters. It is not itself matched to a target. When no FNO width
// comes within the 10% tolerance, the closest one is scaled. It panics on
// an invalid spec.
//
// FNO-wider (`model.FNOWiderSpec(u Spec) FNOSpec`, `fno.go`). The paper
// widens its parameter-matched FNO from 24 to 56 channels (5× the
// parameters, 0.59M → 3.18M) to match U-HNO's inference latency. Latency
// depends on the machine, but the recipe does not: `FNOWiderSpec` takes the
// FNO width matched to the Full U-HNO's count (`FNOForBudget`'s; the
// paper's 24) and multiplies it by 56/24, rounded. This gives about
// (56/24)² ≈ 5.4× the parameters. With `--params` the U-HNO spec is the
// scaled one, so the preset follows the budget. At 0.62M:
//
//	| task | matched FNO | FNO-wider |
//	|---|---|---|
//	| burgers | 58 (667,373) | 135 (3,590,447, 5.38×) |
//	| ks | 50 (656,957) | 117 (3,575,075, 5.44×) |
//	| ns2d (in = 10) | 16 (593,393) | 37 (3,165,200, 5.33×) |
//	| darcy | 16 (593,249) | 37 (3,164,867, 5.33×) |
//
// The NS-2D row reproduces the paper's 3.18M. The preset is not itself
// budget-matched, so it is a function rather than a `*ForBudget`.
func FNOWiderSpec(u Spec) FNOSpec {
	full := u
	full.Mode = ModeFull
	full.FlatWidth = 0
	base := FNOSpecFor(u, 1)
	w, _ := widthForBudget(func(w int) int {
		t := base
		t.Width = w
		return CountFNO(t)
	}, CountUHNO(full), 1)
	base.Width = max(1, (max(w, 1)*FNOWiderTo+FNOWiderFrom/2)/FNOWiderFrom)
	return base
}
