package bench

import (
	"fmt"
	"testing"

	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/testutil"
	"uhno/internal/train"
)

// allocCounter is a real backend that also counts the bytes it allocates,
// live and at their peak, as the Planner does: the independent side of
// TestPlanStepMatchesRealStep.
type allocCounter struct {
	tensor.Backend
	live, peak int64
}

func (a *allocCounter) Alloc(n int) tensor.Storage {
	a.live += 4 * int64(n)
	a.peak = max(a.peak, a.live)
	return a.Backend.Alloc(n)
}

func (a *allocCounter) Free(s tensor.Storage) {
	a.live -= 4 * int64(s.Len())
	a.Backend.Free(s)
}

// planLoss is the objective of the tiny cases (tinyCase's).
func planLoss(grid []int) train.LossConfig {
	lc := train.LossConfig{LambdaH1: 1e-3, LambdaCBC: 5e-3, Periodic: true}
	for _, n := range grid {
		lc.Spacing = append(lc.Spacing, 1/float64(n))
	}
	return lc
}

// planModels builds the tiny models of the tests on b.
func planModels(t *testing.T, dim int) []struct {
	name  string
	build func(tensor.Backend) model.Model
} {
	s := testutil.TinyUHNO(dim, 2, model.ModeFull)
	return []struct {
		name  string
		build func(tensor.Backend) model.Model
	}{
		{"uhno", func(b tensor.Backend) model.Model { return mustUHNO(t, b, s) }},
		{"uhno-F", func(b tensor.Backend) model.Model { return mustUHNO(t, b, testutil.TinyUHNO(dim, 2, model.ModeNoSPAR)) }},
		{"fno", func(b tensor.Backend) model.Model { return mustFNO(t, b, model.FNOSpecFor(s, 6)) }},
	}
}

// TestPlanStepMatchesRealStep: the Planner, which computes nothing, sees
// the same allocations as a real training step on the CPU backend (a
// step whose allocations depended on values, or an operation that
// allocated behind the tape's back, would make them differ), and the
// plan's parts add up to its peak.
func TestPlanStepMatchesRealStep(t *testing.T) {
	for _, dim := range []int{1, 2} {
		grid := tinyGrid(dim)
		for _, mc := range planModels(t, dim) {
			t.Run(fmt.Sprintf("%dD/%s", dim, mc.name), func(t *testing.T) {
				pl := &Planner{}
				m := mc.build(pl)
				plan, err := PlanStep(pl, m, planLoss(grid), 2, 2, 1, grid)
				if err != nil {
					t.Fatal(err)
				}
				n := int64(m.Params().Count())
				if plan.Weights != 4*n || plan.Grads != 4*n || plan.Moments != 8*n {
					t.Errorf("weights %d, grads %d, moments %d bytes for %d parameters", plan.Weights, plan.Grads, plan.Moments, n)
				}
				var groups int64
				for _, g := range plan.WeightGroups {
					groups += g.Bytes
				}
				if groups != plan.Weights {
					t.Errorf("weight groups add up to %d bytes, weights are %d", groups, plan.Weights)
				}
				// The tape's seed of Backward (one float) is the only
				// allocation outside the parts.
				if sum := plan.Weights + plan.Grads + plan.Moments + plan.Data + plan.Activations() + 4; sum != plan.Peak {
					t.Errorf("parts add up to %d bytes, peak %d", sum, plan.Peak)
				}
				if plan.PeakBF16 != plan.Peak-plan.Activations()/2 || plan.Activations() <= 0 || len(plan.Grids) == 0 {
					t.Errorf("plan %+v: want activations on some grid and the bf16 peak half their bytes lower", plan)
				}
				if pl.Live() != 8*n {
					t.Errorf("after the step %d bytes live, want the model's %d", pl.Live(), 8*n)
				}

				// The same step for real.
				ac := &allocCounter{Backend: newCPU()}
				rm := mc.build(ac)
				tp := tensor.NewTape(ac)
				x := tp.FromHost(make([]float32, 2*2*tensor.Numel(grid)), append([]int{2, 2}, grid...)...)
				y := tp.FromHost(make([]float32, 2*tensor.Numel(grid)), append([]int{2, 1}, grid...)...)
				pred, aux := rm.Forward(tp, x)
				terms := planLoss(grid).Loss(tp, pred, y, train.Aux{ZF: aux.ZF, ZG: aux.ZG, Stats: aux.Stats})
				tp.Backward(terms.Total)
				mom, vel := ac.Alloc(int(n)), ac.Alloc(int(n))
				pdata, pgrad, _ := rm.Params().Flat()
				h := paperAdamW
				h.Step = 1
				ac.AdamW(pdata, pgrad, mom, vel, int(n), h)
				if ac.peak != plan.Peak {
					t.Errorf("a real step peaks at %d bytes, the plan at %d", ac.peak, plan.Peak)
				}
			})
		}
	}
}

// TestPlanStepScales: every grid's activation bytes grow with its number
// of points: doubling each axis of the input multiplies each level's bytes
// by 2^d and moves them one level up; the weights stay.
func TestPlanStepScales(t *testing.T) {
	for _, dim := range []int{1, 2} {
		grid := tinyGrid(dim)
		fine := make([]int, dim)
		for i, n := range grid {
			fine[i] = 2 * n
		}
		pl := &Planner{}
		m := mustUHNO(t, pl, testutil.TinyUHNO(dim, 2, model.ModeFull))
		a, err := PlanStep(pl, m, planLoss(grid), 2, 2, 1, grid)
		if err != nil {
			t.Fatal(err)
		}
		b, err := PlanStep(pl, m, planLoss(fine), 2, 2, 1, fine)
		if err != nil {
			t.Fatal(err)
		}
		if a.Weights != b.Weights {
			t.Errorf("%dD: weights %d at %v, %d at %v", dim, a.Weights, grid, b.Weights, fine)
		}
		if len(a.Grids) != 3 || len(b.Grids) != 3 { // L = 2: three levels
			t.Fatalf("%dD: grids %+v and %+v, want the three levels of L = 2", dim, a.Grids, b.Grids)
		}
		for i := range a.Grids {
			ga, gb := a.Grids[i], b.Grids[i]
			if f := int64(1) << dim; gb.Forward != f*ga.Forward || gb.Backward != f*ga.Backward {
				t.Errorf("%dD level %d: %+v at %v, %+v at %v: want %d times the bytes", dim, i, ga, grid, gb, fine, f)
			}
		}
	}
}

// TestPlanStepRefusesGrid: a grid the model cannot take is an error, not
// a panic.
func TestPlanStepRefusesGrid(t *testing.T) {
	pl := &Planner{}
	m := mustUHNO(t, pl, testutil.TinyUHNO(1, 2, model.ModeFull))
	if _, err := PlanStep(pl, m, planLoss([]int{6}), 2, 2, 1, []int{6}); err == nil {
		t.Error("grid [6] for L = 2: want an error")
	}
}
