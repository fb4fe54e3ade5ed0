package bench

import (
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

// tinyGrid is the grid of testutil.TinyUHNO per dimension.
func tinyGrid(dim int) []int { return map[int][]int{1: {16}, 2: {8, 8}}[dim] }

// tinyCase is a Case for m on b with batch 2 on grid (the loss of a
// periodic unit box with the paper's Burgers weights).
func tinyCase(name string, m model.Model, b tensor.Backend, in, out int, grid []int) Case {
	lc := train.LossConfig{LambdaH1: 1e-3, LambdaCBC: 5e-3, Periodic: true}
	for _, n := range grid {
		lc.Spacing = append(lc.Spacing, 1/float64(n))
	}
	return Case{Name: name, Task: "tiny", Model: m, Backend: b,
		Input: append([]int{2, in}, grid...), Target: append([]int{2, out}, grid...), Loss: lc}
}

// paperAdamW is the paper's optimizer step (Sec. 4.1).
var paperAdamW = tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4}

func mustUHNO(t testing.TB, b tensor.Backend, s model.Spec) *model.UHNO {
	t.Helper()
	m, err := model.NewUHNO(b, s, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustFNO(t testing.TB, b tensor.Backend, s model.FNOSpec) *model.FNO {
	t.Helper()
	m, err := model.NewFNO(b, s, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newCPU() *cpu.Backend { return cpu.New(2) }
