package model

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// contractCase is one registered model in the contract test: a small
// spec (nil: the one the registry plans from contractPlan) and the grid
// it runs on.
type contractCase struct {
	spec any
	grid []int
}

// contractPlan is the U-HNO a planned case derives its spec from.
var contractPlan = Plan{UHNO: tiny(2, ModeFull), Grid: []int{24, 20}, Periodic: true}

// contractCases holds every registered model; TestRegistryContract fails
// for a model registered without a case here. The specs are those the
// per-model determinism tests used before this one replaced them.
var contractCases = map[string]contractCase{
	"uhno":      {tiny(2, ModeFull), []int{24, 20}},
	"fno":       {FNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, K0: 4, Blocks: 2, ProjHidden: 8}, []int{24, 20}},
	"fno-wider": {nil, []int{24, 20}},
	"additive":  {AdditiveSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, K0: 4, Blocks: 4, ProjHidden: 8}, []int{24, 20}},
	"wno":       {WNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, Levels: 3, Grid: []int{32, 24}, Blocks: 4, ProjHidden: 8}, []int{32, 24}},
	"ffno":      {FFNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, K0: 4, Rank: 3, Blocks: 4, ProjHidden: 8}, []int{24, 20}},
	"loglofno":  {nil, []int{24, 20}},
	"convfno":   {ConvFNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, UNetWidth: 4, UNetLevels: 3, Width: 6, K0: 4, Blocks: 2, ProjHidden: 8}, []int{24, 20}},
	"cno":       {CNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 12, Levels: 2, NeckBlocks: 2}, []int{24, 20}},
	"gno":       {GNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, KernelHidden: 8, Rounds: 4, ProjHidden: 8, Periodic: true}, []int{24, 20}},
}

// contractRecord is the record of c for model name.
func contractRecord(t *testing.T, name string, c contractCase) Record {
	t.Helper()
	if c.spec == nil {
		r, err := PlanRecord(name, contractPlan)
		if err != nil {
			t.Fatalf("%s: plan: %v", name, err)
		}
		return r
	}
	raw, err := json.Marshal(c.spec)
	if err != nil {
		t.Fatal(err)
	}
	return Record{Model: name, Spec: raw}
}

// TestRegistryContract checks what every registered model owes the
// commands, the same way for each: it builds from its record (and from
// the record written to JSON and read back, as a checkpoint holds it),
// describes itself with its parameter count, takes its grid, maps
// [B, in, grid] to [B, out, grid], and gives the same parameters, output
// and gradient bits on 1 and 2 threads.
func TestRegistryContract(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			c, ok := contractCases[name]
			if !ok {
				t.Fatalf("model %s is registered without a contract case", name)
			}
			rec := contractRecord(t, name, c)
			run := func(threads int, rec Record) [][]float32 {
				b := cpu.New(threads)
				m, desc, err := Build(b, rec, 11)
				if err != nil {
					t.Fatal(err)
				}
				if n := m.Params().Count(); n == 0 || !strings.HasSuffix(desc, ": "+FormatCount(n)+" parameters") {
					t.Errorf("description %q, %d parameters", desc, n)
				}
				if err := m.CheckGrid(c.grid); err != nil {
					t.Fatal(err)
				}
				tp := tensor.NewTape(b)
				defer tp.Release()
				y, _ := m.Forward(tp, input(tp, 1, 3, 2, c.grid))
				if want := append([]int{3, 1}, c.grid...); !slices.Equal(y.Shape, want) {
					t.Fatalf("output shape %v, want %v", y.Shape, want)
				}
				data, grad, n := m.Params().Flat()
				m.Params().ZeroGrad()
				tp.Backward(tp.MSE(y, tp.New(y.Shape...)))
				return [][]float32{tensor.ToHost(b, tensor.NewTensor(data, n)), host(b, y), tensor.ToHost(b, tensor.NewTensor(grad, n))}
			}
			one, two := run(1, rec), run(2, rec)
			for i := range one {
				if !sameBits(one[i], two[i]) {
					t.Errorf("1 and 2 threads differ (parameters, output, gradients: %d)", i)
				}
			}
			var back Record
			raw, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			back.Upgrade()
			again := run(1, back)
			for i := range one {
				if !sameBits(one[i], again[i]) {
					t.Errorf("the record read back builds another model (%d)", i)
				}
			}
		})
	}
}

// TestRegistryRecords checks the record's upgrade from older checkpoints
// and Build's refusals.
func TestRegistryRecords(t *testing.T) {
	for _, legacy := range []string{"uhno", "fno", "additive", "baseline"} {
		var r Record
		if err := json.Unmarshal([]byte(`{"model":"x","`+legacy+`":{"a":1}}`), &r); err != nil {
			t.Fatal(err)
		}
		r.Upgrade()
		if string(r.Spec) != `{"a":1}` {
			t.Errorf("%s: upgraded spec %s", legacy, r.Spec)
		}
		raw, _ := json.Marshal(r)
		if string(raw) != `{"model":"x","spec":{"a":1}}` {
			t.Errorf("%s: written as %s", legacy, raw)
		}
	}
	if _, _, err := Build(cpu.New(1), Record{Model: "nosuch", Spec: []byte(`{}`)}, 1); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("unknown model: %v", err)
	}
	if _, _, err := Build(cpu.New(1), Record{Model: "fno", Spec: []byte(`[1]`)}, 1); err == nil || !strings.Contains(err.Error(), "the recorded fno spec cannot be read") {
		t.Errorf("bad spec: %v", err)
	}
	for _, tt := range []struct {
		model string
		mode  Mode
		want  bool
	}{{"uhno", ModeNoUShape, true}, {"fno", ModeFull, true}, {"fno", ModeMSE, true}, {"gno", ModeNoSPAR, false}, {"nosuch", ModeFull, false}} {
		if got := TakesMode(tt.model, tt.mode); got != tt.want {
			t.Errorf("TakesMode(%s, %s) = %v", tt.model, tt.mode, got)
		}
	}
}

// TestModeType checks the ablation mode type: labels, loss-only modes
// and the spelling of --mode.
func TestModeType(t *testing.T) {
	var lossOnly []string
	for _, m := range Modes() {
		if Mode(m).LossOnly() {
			lossOnly = append(lossOnly, m)
		}
		if Mode(m).Label() == m {
			t.Errorf("mode %s has no label", m)
		}
	}
	if !slices.Equal(lossOnly, []string{"full", "C", "D", "E"}) {
		t.Errorf("loss-only modes %v", lossOnly)
	}
	if Mode("FULL").Canonical() != ModeFull || Mode("f").Canonical() != ModeNoSPAR || Mode("x").Canonical().Valid() {
		t.Error("Canonical or Valid")
	}
	if Mode("G").Label() != "G: NoUShape" || Mode("Z").Label() != "Z" {
		t.Error("Label")
	}
}
