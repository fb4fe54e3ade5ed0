package bench

import (
	"fmt"
	"slices"
	"strings"

	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

// Memory planning: what one training step holds at its peak, computed
// without computing anything. A Planner is a tensor.Backend whose storage
// is only a length: it allocates no memory and every operation is a no-op,
// so a model of any size (U-HNO at 128^3 has 845M parameters) can be built
// on it and a whole training step (forward, Eq. loss, backward) recorded
// in milliseconds, while it adds up the bytes the step asks for.
//
// What the step holds at its peak is exact for uhno's own buffers: the
// tape frees nothing before Reset, so the peak of a step is the
// parameters and their gradients (allocated with the model), the AdamW
// moments, the batch, and every tensor the tape creates in the forward
// pass (the activations it keeps for the backward) and the backward pass
// (their gradients). Not counted: a backend's workspace (FFT plans and
// scratch, packed GEMM operands on the CPU, cuFFT work areas on the GPU),
// the CUDA context, and the allocator's rounding: on a GPU add a few
// hundred MiB. The Planner is no tensor.Projector, so it plans the
// projection head composed, as the GPU runs it; the CPU fuses the head
// and holds less: two [B, hidden, S...] tensors (2 x 33.5 MB at NS-2D's
// batch 16, 64x64, hidden 128), so on the CPU the plan is that much high.

// Planner is a tensor.Backend that only counts bytes (see above). The zero
// value is ready to use; not safe for concurrent use.
type Planner struct {
	live, peak, total int64
}

var _ tensor.Backend = (*Planner)(nil)

// planStorage is a Planner's storage: a length and nothing else.
type planStorage struct{ n int }

func (s planStorage) Len() int { return s.n }

// Name implements tensor.Backend.
func (*Planner) Name() string { return "plan" }

// Alloc implements tensor.Backend: it counts 4 n bytes.
func (p *Planner) Alloc(n int) tensor.Storage {
	p.live += 4 * int64(n)
	p.total += 4 * int64(n)
	p.peak = max(p.peak, p.live)
	return planStorage{n}
}

// Free implements tensor.Backend.
func (p *Planner) Free(s tensor.Storage) { p.live -= 4 * int64(s.Len()) }

// View implements tensor.Backend: a view holds no memory of its own.
func (*Planner) View(_ tensor.Storage, _, n int) tensor.Storage { return planStorage{n} }

// Upload implements tensor.Backend (nothing to copy).
func (*Planner) Upload(tensor.Storage, []float32) {}

// Download implements tensor.Backend: it leaves dst as it is (a planned
// tensor has no values).
func (*Planner) Download([]float32, tensor.Storage) {}

// Zero implements tensor.Backend.
func (*Planner) Zero(tensor.Storage) {}

// Copy implements tensor.Backend.
func (*Planner) Copy(_, _ tensor.Storage) {}

// AdamW implements tensor.Backend.
func (*Planner) AdamW(_, _, _, _ tensor.Storage, _ int, _ tensor.AdamWHyper) {}

// ShapeOnly implements tensor.ShapeOnly: a model built on a Planner
// draws no initial values.
func (*Planner) ShapeOnly() {}

// Live, Peak and Total report the bytes allocated and not freed, the most
// of those at once, and all bytes ever allocated.
func (p *Planner) Live() int64  { return p.live }
func (p *Planner) Peak() int64  { return p.peak }
func (p *Planner) Total() int64 { return p.total }

// GridBytes is what a step's tape creates on one spatial grid: the
// forward pass's tensors (kept for the backward) and the backward pass's
// (their gradients), in float32 bytes.
type GridBytes struct {
	Grid     []int `json:"grid"`
	Forward  int64 `json:"forward_bytes"`
	Backward int64 `json:"backward_bytes"`
}

// GroupBytes is the float32 bytes of the parameters whose names share a
// prefix ("enc.0", "dec.1", "lift": the name up to its level number).
type GroupBytes struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// MemoryPlan is one training step's memory, by part (PlanMemory).
type MemoryPlan struct {
	Grid   []int `json:"grid"`
	Batch  int   `json:"batch"`
	Params int   `json:"params"`
	// Weights, Grads and Moments are the parameters, their gradients and
	// AdamW's two moments, float32 (master weights under bf16 as well).
	Weights, Grads, Moments int64
	// WeightGroups splits Weights by parameter-name prefix.
	WeightGroups []GroupBytes `json:"weight_groups"`
	// Batch input and target.
	Data int64 `json:"data_bytes"`
	// Grids lists the tape's tensors by spatial grid, finest first; Other
	// is what has no grid of the input's rank (per-sample statistics,
	// loss scalars, spectral coefficients of another shape).
	Grids []GridBytes `json:"grids"`
	Other GridBytes   `json:"other"`
	// Peak is the step's high-water mark in float32 (what the Planner
	// counted); PeakBF16 the same with every tape tensor stored in bf16
	// (2 bytes) and the rest kept in float32, the layout of autocast with
	// float32 master weights.
	Peak     int64 `json:"peak_bytes"`
	PeakBF16 int64 `json:"peak_bf16_bytes"`
}

// Activations is the tape's total, forward and backward, in float32.
func (p MemoryPlan) Activations() int64 {
	s := p.Other.Forward + p.Other.Backward
	for _, g := range p.Grids {
		s += g.Forward + g.Backward
	}
	return s
}

// PlanStep records one training step of m, built on pl, (forward on a
// batch of shape [batch, in, grid...], the objective lc, backward, AdamW)
// and returns its memory plan. It frees what the step allocated, so one
// model can be planned at several grids and batches.
func PlanStep(pl *Planner, m model.Model, lc train.LossConfig, batch, in, out int, grid []int) (MemoryPlan, error) {
	if err := m.CheckGrid(grid); err != nil {
		return MemoryPlan{}, err
	}
	pl.peak = pl.live
	ps := m.Params()
	n := ps.Count()
	plan := MemoryPlan{Grid: slices.Clone(grid), Batch: batch, Params: n,
		Weights: 4 * int64(n), Grads: 4 * int64(n), Moments: 8 * int64(n)}
	groups := map[string]int64{}
	var order []string
	for _, t := range ps.List() {
		g := paramGroup(t.Name)
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] += 4 * int64(t.Numel())
	}
	for _, g := range order {
		plan.WeightGroups = append(plan.WeightGroups, GroupBytes{g, groups[g]})
	}
	mom, vel := pl.Alloc(n), pl.Alloc(n)
	defer pl.Free(mom)
	defer pl.Free(vel)

	xs := append([]int{batch, in}, grid...)
	ys := append([]int{batch, out}, grid...)
	plan.Data = 4 * int64(tensor.Numel(xs)+tensor.Numel(ys))
	tp := tensor.NewTape(pl)
	defer tp.Release()
	backward := false
	byGrid := map[string]*GridBytes{}
	tp.SetAllocObserver(func(shape []int) {
		b := 4 * int64(tensor.Numel(shape))
		g := &plan.Other
		if len(shape) == 2+len(grid) {
			key := fmt.Sprint(shape[2:])
			if g = byGrid[key]; g == nil {
				g = &GridBytes{Grid: slices.Clone(shape[2:])}
				byGrid[key] = g
			}
		}
		if backward {
			g.Backward += b
		} else {
			g.Forward += b
		}
	})
	x := tp.New(xs...)
	y := tp.New(ys...)
	// The batch is not an activation: take it back out of the tally.
	for _, s := range [][]int{xs, ys} {
		byGrid[fmt.Sprint(s[2:])].Forward -= 4 * int64(tensor.Numel(s))
	}
	pred, aux := m.Forward(tp, x)
	terms := lc.Loss(tp, pred, y, train.Aux{ZF: aux.ZF, ZG: aux.ZG, Stats: aux.Stats})
	backward = true
	tp.Backward(terms.Total)
	pdata, pgrad, _ := ps.Flat()
	pl.AdamW(pdata, pgrad, mom, vel, n, tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Step: 1})
	for _, g := range byGrid {
		if g.Forward != 0 || g.Backward != 0 {
			plan.Grids = append(plan.Grids, *g)
		}
	}
	slices.SortFunc(plan.Grids, func(a, b GridBytes) int { return tensor.Numel(b.Grid) - tensor.Numel(a.Grid) })
	plan.Peak = pl.Peak()
	plan.PeakBF16 = plan.Peak - plan.Activations()/2
	return plan, nil
}

// paramGroup is a parameter name up to and including its first numeric
// component ("enc.0.spectral.w" -> "enc.0"), or its first component.
func paramGroup(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			return strings.Join(parts[:i+1], ".")
		}
	}
	return parts[0]
}

// The operations: no-ops.
func (*Planner) Add(_, _, _ *tensor.Tensor)                                              {}
func (*Planner) Sub(_, _, _ *tensor.Tensor)                                              {}
func (*Planner) Mul(_, _, _ *tensor.Tensor)                                              {}
func (*Planner) Scale(_, _ *tensor.Tensor, _ float32)                                    {}
func (*Planner) AddScaled(_, _ *tensor.Tensor, _ float32)                                {}
func (*Planner) MulAcc(_, _, _ *tensor.Tensor)                                           {}
func (*Planner) GELU(_, _ *tensor.Tensor)                                                {}
func (*Planner) GELUBackward(_, _, _ *tensor.Tensor)                                     {}
func (*Planner) Sigmoid(_, _ *tensor.Tensor)                                             {}
func (*Planner) SigmoidBackward(_, _, _ *tensor.Tensor)                                  {}
func (*Planner) Pointwise(_, _, _, _ *tensor.Tensor)                                     {}
func (*Planner) PointwiseBackward(_, _, _, _, _, _ *tensor.Tensor)                       {}
func (*Planner) ConvDown(_, _, _, _ *tensor.Tensor)                                      {}
func (*Planner) ConvDownBackward(_, _, _, _, _, _ *tensor.Tensor)                        {}
func (*Planner) DepthwiseConv(_, _, _, _ *tensor.Tensor)                                 {}
func (*Planner) DepthwiseConvBackward(_, _, _, _, _, _ *tensor.Tensor)                   {}
func (*Planner) Wavelet(_, _ *tensor.Tensor, _ int, _ bool)                              {}
func (*Planner) WaveletBackward(_, _ *tensor.Tensor, _ int, _ bool)                      {}
func (*Planner) WaveletMix(_, _, _ *tensor.Tensor)                                       {}
func (*Planner) WaveletMixBackward(_, _, _, _, _ *tensor.Tensor)                         {}
func (*Planner) Conv3(_, _, _, _ *tensor.Tensor)                                         {}
func (*Planner) Conv3Backward(_, _, _, _, _, _ *tensor.Tensor)                           {}
func (*Planner) StencilMessage(_, _, _ *tensor.Tensor, _ []int, _ bool)                  {}
func (*Planner) StencilMessageBackward(_, _, _, _, _ *tensor.Tensor, _ []int, _ bool)    {}
func (*Planner) ReLU(_, _ *tensor.Tensor)                                                {}
func (*Planner) ReLUBackward(_, _, _ *tensor.Tensor)                                     {}
func (*Planner) BandResample(_, _ *tensor.Tensor)                                        {}
func (*Planner) BandResampleBackward(_, _ *tensor.Tensor)                                {}
func (*Planner) Upsample2x(_, _ *tensor.Tensor, _ bool)                                  {}
func (*Planner) Upsample2xBackward(_, _ *tensor.Tensor, _ bool)                          {}
func (*Planner) SpectralConv(_, _, _ *tensor.Tensor, _ int, _ []int)                     {}
func (*Planner) SpectralConvBackward(_, _, _, _, _ *tensor.Tensor, _ int, _ []int)       {}
func (*Planner) LowRankSpectralConv(_, _, _, _ *tensor.Tensor, _ int)                    {}
func (*Planner) LowRankSpectralConvBackward(_, _, _, _, _, _, _ *tensor.Tensor, _ int)   {}
func (*Planner) GaussianConv(_, _, _ *tensor.Tensor, _ tensor.GaussOpts)                 {}
func (*Planner) GaussianConvBackward(_, _, _, _, _ *tensor.Tensor, _ tensor.GaussOpts)   {}
func (*Planner) ChannelCopy(_ *tensor.Tensor, _ int, _ *tensor.Tensor, _, _ int, _ bool) {}
func (*Planner) MeanStd(_, _, _ *tensor.Tensor)                                          {}
func (*Planner) MeanStdBackward(_, _, _, _, _, _ *tensor.Tensor)                         {}
func (*Planner) TopKMask(_, _ *tensor.Tensor, _ []int)                                   {}
func (*Planner) SPARKeep(_, _, _ *tensor.Tensor, _ tensor.SPARParams)                    {}
func (*Planner) SPARRoute(_, _, _, _ *tensor.Tensor)                                     {}
func (*Planner) SPARRouteBackward(_, _, _, _, _, _, _, _ *tensor.Tensor, _ float32, _ tensor.SurrogateCentre) {
}
func (*Planner) MSE(_, _, _ *tensor.Tensor)                                 {}
func (*Planner) MSEBackward(_, _, _, _, _ *tensor.Tensor)                   {}
func (*Planner) Diff(_, _ *tensor.Tensor, _ int, _ float32, _ bool)         {}
func (*Planner) DiffBackward(_, _ *tensor.Tensor, _ int, _ float32, _ bool) {}
