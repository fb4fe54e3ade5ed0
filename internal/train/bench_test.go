package train

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"uhno/internal/config"
	"uhno/internal/config/configtest"
	"uhno/internal/cpu"
	"uhno/internal/model"
	"uhno/internal/tensor"
)

// BenchmarkTrainStep times one whole training step as Run performs it:
// upload a batch, forward, the loss of Eq. loss (MSE + H1 + CBC), backward,
// the AdamW update and clearing the gradients. It is the Go side of
// scripts/compare_train_step.sh, which times the PyTorch yardstick's
// bench_torch.py step at the same configurations in the same run:
//
//   - burgers/uhno-C0=32: the paper's text (6.70M parameters)
//   - burgers/uhno-C0=10: the paper's stated budget (--params 0.62M)
//   - burgers/fno-width=58: FNO matched to that budget
//   - ns2d/uhno-C0=3, ns2d/fno-width=16: the same budget on NS-2D at 64x64
//     (10 frames in, batch 16), the shape that dominates the paper's grid
func BenchmarkTrainStep(b *testing.B) {
	be := cpu.New(0)
	for _, task := range []string{"burgers", "ns2d"} {
		c := benchConfig(b, task)
		in := c.Data.History * len(c.Data.Inputs)
		out := len(c.Data.Outputs)
		full, err := model.SpecFromConfig(c, in, out)
		if err != nil {
			b.Fatal(err)
		}
		budget, err := model.UHNOForBudget(full, 620000)
		if err != nil {
			b.Fatal(err)
		}
		fno, err := model.FNOForBudget(model.FNOSpecFor(budget, 0), model.CountUHNO(budget))
		if err != nil {
			b.Fatal(err)
		}
		type benchCase struct {
			name  string
			build func() (model.Model, error)
		}
		var cases []benchCase
		if task == "burgers" { // the main job's model; at 64x64 it would take minutes a step
			cases = append(cases, benchCase{fmt.Sprintf("%s/uhno-C0=%d", task, full.C0), func() (model.Model, error) { return model.NewUHNO(be, full, 1) }})
		}
		cases = append(cases,
			benchCase{fmt.Sprintf("%s/uhno-C0=%d", task, budget.C0), func() (model.Model, error) { return model.NewUHNO(be, budget, 1) }},
			benchCase{fmt.Sprintf("%s/fno-width=%d", task, fno.Width), func() (model.Model, error) { return model.NewFNO(be, fno, 1) }})
		lc := LossConfigFor(c)
		inShape := append([]int{c.Optim.Batch, in}, c.PDE.Grid...)
		tgtShape := append([]int{c.Optim.Batch, out}, c.PDE.Grid...)
		r := rand.New(rand.NewPCG(1, 2))
		x0, y0 := make([]float32, tensor.Numel(inShape)), make([]float32, tensor.Numel(tgtShape))
		for i := range x0 {
			x0[i] = float32(r.NormFloat64())
		}
		for i := range y0 {
			y0[i] = float32(r.NormFloat64())
		}
		for _, cs := range cases {
			m, err := cs.build()
			if err != nil {
				b.Fatal(err)
			}
			ps := m.Params()
			pdata, pgrad, n := ps.Flat()
			mom, vel := be.Alloc(n), be.Alloc(n)
			b.Run(cs.name, func(b *testing.B) {
				tp := tensor.NewTape(be)
				step := 0
				one := func() {
					step++
					tp.Reset()
					x := tp.FromHost(x0, inShape...)
					y := tp.FromHost(y0, tgtShape...)
					pred, aux := m.Forward(tp, x)
					terms := lc.Loss(tp, pred, y, Aux{ZF: aux.ZF, ZG: aux.ZG, Stats: aux.Stats})
					tp.Backward(terms.Total)
					be.AdamW(pdata, pgrad, mom, vel, n, tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: step})
					ps.ZeroGrad()
				}
				// Warm-up, not timed (b.Loop times from its first call): the
				// tape's buffers and the spectral plans are made here, as
				// bench_torch.py's warm-up steps do for PyTorch.
				for range benchWarmup {
					one()
				}
				var ms []float64
				for b.Loop() {
					t0 := time.Now()
					one()
					ms = append(ms, float64(time.Since(t0))/1e6)
				}
				// The fastest and the median single step, the statistics
				// bench_torch.py reports (ms_min, ms_med), for a comparison
				// of like with like; ns/op is the mean.
				slices.Sort(ms)
				b.ReportMetric(ms[0], "ms-min")
				b.ReportMetric(ms[len(ms)/2], "ms-med")
				b.ReportMetric(float64(ps.Count()), "params")
			})
		}
	}
}

// benchWarmup is the number of untimed steps before BenchmarkTrainStep's
// timed loop, as many as scripts/torch_train_step.py's default warm-up.
const benchWarmup = 3

// benchConfig is a task's built-in configuration, validated.
func benchConfig(b *testing.B, task string) config.Config { return configtest.Builtin(b, task, nil) }
