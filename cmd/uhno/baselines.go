package main

import (
	"encoding/json"
	"fmt"
	"slices"

	"uhno/internal/model"
	"uhno/internal/tensor"
)

// baseline is one of the paper's baselines besides FNO (App. "Baseline
// Configurations") as uhno train, eval and bench build it: its spec is
// derived from U-HNO's for the task (channels, K0, projection width) and
// its width chosen so that its parameter count lands within 10% of Full
// U-HNO's at the same budget; the spec is recorded in the checkpoint's
// build record (buildRecord.Baseline) and rebuilt from there.
type baseline struct {
	name, about string
	// plan derives the spec for U-HNO spec u on the task's grid (periodic
	// or not: the task's boundary), matched to u's Full parameter count,
	// as JSON for the build record.
	plan func(u model.Spec, grid []int, periodic bool) (json.RawMessage, error)
	// build builds the model from a recorded spec and describes it.
	build func(b tensor.Backend, raw json.RawMessage, seed uint64) (model.Model, string, error)
}

// newBaseline adapts a model's typed functions to baseline.
func newBaseline[S any, M model.Model](name, about string, plan func(u model.Spec, grid []int, periodic bool, target int) (S, error),
	build func(tensor.Backend, S, uint64) (M, error), describe func(S) string) baseline {
	return baseline{name: name, about: about,
		plan: func(u model.Spec, grid []int, periodic bool) (json.RawMessage, error) {
			full := u
			full.Mode = model.ModeFull
			s, err := plan(u, grid, periodic, model.CountUHNO(full))
			if err != nil {
				return nil, err
			}
			return json.Marshal(s)
		},
		build: func(b tensor.Backend, raw json.RawMessage, seed uint64) (model.Model, string, error) {
			var s S
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, "", fmt.Errorf("the recorded %s spec cannot be read: %w", name, err)
			}
			m, err := build(b, s, seed)
			if err != nil {
				return nil, "", err
			}
			return m, fmt.Sprintf("%s (%s), %s: %s parameters", name, about, describe(s), model.FormatCount(m.Params().Count())), nil
		}}
}

// baselines lists the baselines uhno builds besides U-HNO, FNO and the
// flat additive hybrid.
func baselines() []baseline {
	return []baseline{
		newBaseline("wno", "wavelet neural operator, db4", func(u model.Spec, grid []int, _ bool, target int) (model.WNOSpec, error) {
			s := model.WNOSpecFor(u)
			s.Grid = slices.Clone(grid)
			return model.WNOForBudget(s, target)
		}, model.NewWNO, func(s model.WNOSpec) string {
			return fmt.Sprintf("width %d, %d blocks, %d levels", s.Width, s.Blocks, s.Levels)
		}),
		newBaseline("ffno", "F-FNO, the paper's reading: rank-8 spectral weights", func(u model.Spec, _ []int, _ bool, target int) (model.FFNOSpec, error) {
			return model.FFNOForBudget(model.FFNOSpecFor(u), target)
		}, model.NewFFNO, func(s model.FFNOSpec) string {
			return fmt.Sprintf("width %d, rank %d, %d blocks, K0 %d", s.Width, s.Rank, s.Blocks, s.K0)
		}),
		newBaseline("loglofno", "LogLo-FNO: modes allocated by 1/log(1+k)", func(u model.Spec, _ []int, _ bool, target int) (model.LogLoFNOSpec, error) {
			return model.LogLoFNOForBudget(model.LogLoFNOSpecFor(u), target)
		}, model.NewLogLoFNO, func(s model.LogLoFNOSpec) string {
			return fmt.Sprintf("width %d, %d blocks, K0 %d", s.Width, s.Blocks, s.K0)
		}),
		newBaseline("convfno", "Conv-FNO: U-Net pre-processor, then FNO", func(u model.Spec, _ []int, _ bool, target int) (model.ConvFNOSpec, error) {
			return model.ConvFNOForBudget(model.ConvFNOSpecFor(u), target)
		}, model.NewConvFNO, func(s model.ConvFNOSpec) string {
			return fmt.Sprintf("U-Net %d levels from width %d, FNO width %d, %d blocks", s.UNetLevels, s.UNetWidth, s.Width, s.Blocks)
		}),
		newBaseline("cno", "convolutional neural operator, band-limited resampling", func(u model.Spec, _ []int, _ bool, target int) (model.CNOSpec, error) {
			return model.CNOForBudget(model.CNOSpecFor(u), target)
		}, model.NewCNO, func(s model.CNOSpec) string {
			return fmt.Sprintf("bottleneck width %d, %d levels, %d neck blocks", s.Width, s.Levels, s.NeckBlocks)
		}),
		newBaseline("gno", "graph kernel network, 3^d-1 neighbour grid graph", func(u model.Spec, _ []int, periodic bool, target int) (model.GNOSpec, error) {
			s := model.GNOSpecFor(u)
			s.Periodic = periodic
			return model.GNOForBudget(s, target)
		}, model.NewGNO, func(s model.GNOSpec) string {
			edges := "periodic"
			if !s.Periodic {
				edges = "non-periodic"
			}
			return fmt.Sprintf("width %d, %d rounds, kernel MLP hidden %d, %s edges", s.Width, s.Rounds, s.KernelHidden, edges)
		}),
		newBaseline("fno-wider", "FNO at the paper's Tab. fno-wider width ratio 56/24, not matched", func(u model.Spec, _ []int, _ bool, _ int) (model.FNOSpec, error) {
			return model.FNOWiderSpec(u), nil
		}, model.NewFNO, func(s model.FNOSpec) string {
			return fmt.Sprintf("width %d, %d blocks, K0 %d", s.Width, s.Blocks, s.K0)
		}),
	}
}

// findBaseline returns the baseline named name.
func findBaseline(name string) (baseline, bool) {
	for _, b := range baselines() {
		if b.name == name {
			return b, true
		}
	}
	return baseline{}, false
}

// modelNames lists every --model value.
func modelNames() []string {
	names := []string{"uhno", "fno", "additive"}
	for _, b := range baselines() {
		names = append(names, b.name)
	}
	return names
}
