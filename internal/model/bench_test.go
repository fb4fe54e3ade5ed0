package model

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// BenchmarkStep times one forward and backward pass (no optimizer) of the
// paper's configurations at their training batch, for comparison with the
// yardstick's bench_torch.py (docs/PERFORMANCE.md). Run with
// go test ./internal/model -run - -bench Step -benchtime 5x.
func BenchmarkStep(b *testing.B) {
	cases := []struct {
		task         string
		grid         []int
		batch, in    int
		fno          bool
		budgetParams int
	}{
		{"burgers", []int{128}, 32, 1, false, 0},
		{"burgers", []int{128}, 32, 1, true, 0},
		{"burgers", []int{128}, 32, 1, false, 620000},
		{"ns2d", []int{64, 64}, 16, 10, false, 620000},
	}
	for _, c := range cases {
		s, err := SpecFromConfig(taskConfig(b, c.task), c.in, 1)
		if err != nil {
			b.Fatal(err)
		}
		if c.budgetParams > 0 {
			if s, err = UHNOForBudget(s, c.budgetParams); err != nil {
				b.Fatal(err)
			}
		}
		be := cpu.New(0)
		var m Model
		name := fmt.Sprintf("%s/uhno-C0=%d", c.task, s.C0)
		if c.fno {
			f, err := FNOForBudget(FNOSpecFor(s, 0), CountUHNO(s))
			if err != nil {
				b.Fatal(err)
			}
			m, err = NewFNO(be, f, 1)
			if err != nil {
				b.Fatal(err)
			}
			name = fmt.Sprintf("%s/fno-width=%d", c.task, f.Width)
		} else {
			m = mustUHNO(b, be, s, 1)
		}
		b.Run(name, func(b *testing.B) {
			stepLoop(b, be, m, c.batch, c.in, c.grid)
			b.ReportMetric(float64(m.Params().Count()), "params")
		})
	}
}

// composedHead is the CPU backend with its fused projection head hidden:
// Tape.Projection composes Pointwise, GELU and Pointwise on it.
type composedHead struct{ *cpu.Backend }

func (composedHead) CanProject() bool { return false }

// BenchmarkProjectionHead times one forward and backward pass of U-HNO
// and FNO at --params 0.62M on NS-2D's shape (batch 16, 10 input frames,
// 64x64), with the fused projection head (tensor.Projector) and with the
// head composed of Pointwise, GELU and Pointwise, alternating so that both
// see the same machine: go test ./internal/model -run - -bench
// ProjectionHead -benchtime 10x -count 3.
func BenchmarkProjectionHead(b *testing.B) {
	s, err := SpecFromConfig(taskConfig(b, "ns2d"), 10, 1)
	if err != nil {
		b.Fatal(err)
	}
	if s, err = UHNOForBudget(s, 620000); err != nil {
		b.Fatal(err)
	}
	f, err := FNOForBudget(FNOSpecFor(s, 0), CountUHNO(s))
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"uhno", "fno"} {
		for _, head := range []string{"fused", "composed"} {
			cb := cpu.New(0)
			var be tensor.Backend = cb
			if head == "composed" {
				be = composedHead{cb}
			}
			var m Model
			if name == "fno" {
				if m, err = NewFNO(be, f, 1); err != nil {
					b.Fatal(err)
				}
			} else {
				m = mustUHNO(b, be, s, 1)
			}
			b.Run(name+"/"+head, func(b *testing.B) { stepLoop(b, be, m, 16, 10, []int{64, 64}) })
		}
	}
}

// stepLoop times forward and backward passes of m (no optimizer) on one
// fixed input of the given batch, channels and grid.
func stepLoop(b *testing.B, be tensor.Backend, m Model, batch, in int, grid []int) {
	tp := tensor.NewTape(be)
	x := input(tp, 1, batch, in, grid)
	xs := host(be, x)
	for b.Loop() {
		tp.Reset()
		x := tp.FromHost(xs, x.Shape...)
		y, aux := m.Forward(tp, x)
		tp.Backward(lossOf(tp, y, aux))
		m.Params().ZeroGrad()
	}
}
