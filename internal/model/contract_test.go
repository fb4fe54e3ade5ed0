package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// The contract test: every check that is the same for every registered
// model is written once here and run over the registry, from one table
// (contractCases) that holds each model's small specs. What is particular
// to one model (its count formula and parameter names, which the table
// names; identities such as TestFFNOIsFNOAtIdentityU; boundary and
// wavelet behaviour) stays in that model's test file.

// contractCase is one registered model in the contract test.
type contractCase struct {
	// spec and grid are the case of the build, determinism and record
	// checks (spec nil: the one the registry plans from contractPlan).
	spec any
	grid []int
	// name is what the model calls itself (Model.Name) when that is not
	// its registered name.
	name string
	// forward gives, per dimension 1-3, the specs (2 channels in, 3 out)
	// of the forward checks; routed is set for U-HNO, whose Aux carries
	// its routing and whose hard routing may send every point of a small
	// grid's stage to one branch, leaving the other's parameters without
	// a gradient (its gradients: grad_test.go).
	forward func(dim int) []forwardCase
	routed  bool
	// grad gives, per dimension, the finite-difference gradient checks
	// (nil or empty: none in that dimension).
	grad func(dim int) []gradCase
	// count checks the parameter count against its formula; budget the
	// sizing to a parameter budget. Nil where another test covers them
	// (U-HNO: TestCountsMatchAllocation, TestBudget).
	count  *countCase
	budget *budgetCase
	// refused holds a valid spec and specs Build must refuse; unsized,
	// when set, is the width of the spec a run starts from before the
	// budget sizes it, which must be 0 (chosen by the budget).
	refused *refusalCase
	unsized func(Spec) int
	// covered says which test covers a check left nil above.
	covered string
}

// forwardCase is one model of the forward checks.
type forwardCase struct {
	label string // subtest name beside the dimension, "" for none
	spec  any
	// grids are the grids the model runs on (the first is its own).
	grids [][]int
	// names is the parameter layout (nil: not checked here) and shapes
	// the shapes of some parameters.
	names  []string
	shapes map[string][]int
	// divisible, when set, is what the first axis of a grid must be a
	// multiple of: the grid with that axis 6 is refused saying so.
	divisible int
}

// gradCase is one finite-difference check of the whole model, every
// parameter and the input [2, 2, grid...], at the rescaled point.
type gradCase struct {
	label                           string
	spec                            any
	grid                            []int
	seed, rescale, xSeed, checkSeed uint64
	// fixedReLU holds the ReLU patterns at the base point's.
	fixedReLU bool
}

// countCase checks a model's count function and its allocation against
// the count formula written out in its test file.
type countCase struct {
	specs          []any
	count, formula func(any) int
}

func countCheck[S any](count, formula func(S) int, specs ...S) *countCase {
	c := &countCase{count: func(s any) int { return count(s.(S)) }, formula: func(s any) int { return formula(s.(S)) }}
	for _, s := range specs {
		c.specs = append(c.specs, s)
	}
	return c
}

// refusalCase is a valid spec and invalid ones.
type refusalCase struct {
	good any
	bad  []any
}

// refusing is good and each of the specs that bad makes of it.
func refusing[S any](good S, bad ...func(*S)) *refusalCase {
	r := &refusalCase{good: good}
	for _, f := range bad {
		s := good
		f(&s)
		r.bad = append(r.bad, s)
	}
	return r
}

// budgetCase sizes a model to a parameter budget for a task: fit from the
// task's U-HNO spec and grid, the count, the width fit chooses, and
// whether the fitted spec carries the task's shape (channels in, the
// rest of the architecture).
type budgetCase struct {
	fit      func(s Spec, grid []int, target int) (any, error)
	count    func(any) int
	width    func(any) int
	setWidth func(any, int) any
	carries  func(f any, s Spec, in, target int) bool
}

func budgetCheck[S any](fit func(Spec, []int, int) (S, error), count func(S) int, width func(*S) *int, carries func(S, Spec, int, int) bool) *budgetCase {
	return &budgetCase{
		fit:      func(s Spec, grid []int, target int) (any, error) { return fit(s, grid, target) },
		count:    func(f any) int { return count(f.(S)) },
		width:    func(f any) int { v := f.(S); return *width(&v) },
		setWidth: func(f any, w int) any { v := f.(S); *width(&v) = w; return v },
		carries:  func(f any, s Spec, in, target int) bool { return carries(f.(S), s, in, target) },
	}
}

// blockNames is the parameters of n blocks prefix.0, prefix.1, ..., each
// with the given suffixes.
func blockNames(prefix string, n int, suffixes ...string) []string {
	var out []string
	for i := range n {
		for _, x := range suffixes {
			out = append(out, prefix+"."+strconv.Itoa(i)+"."+x)
		}
	}
	return out
}

// flatNames is the parameter layout of a flat model: the lifting, the
// blocks, and the two-layer projection.
func flatNames(blocks ...[]string) []string {
	return append(append([]string{"lift.w", "lift.b"}, slices.Concat(blocks...)...), "proj.0.w", "proj.0.b", "proj.1.w", "proj.1.b")
}

// fnoNames is the parameter layout of FNO with n blocks (LogLo-FNO's too).
func fnoNames(n int) []string { return flatNames(blockNames("block", n, "spectral.w", "w.w", "w.b")) }

// fnoCountFormula is FNO's parameter count written out by hand:
//
//	lift            In W + W
//	per block       2^(d-1) W W K0^d 2 (spectral) + W W + W (1x1)
//	projection      W P + P + P Out + Out
func fnoCountFormula(s FNOSpec) int {
	w, d := s.Width, s.Dim
	return s.InChannels*w + w + s.Blocks*(ipow(2, d-1)*w*w*ipow(s.K0, d)*2+w*w+w) + w*s.ProjHidden + s.ProjHidden + s.ProjHidden*s.OutChannels + s.OutChannels
}

func fnoForward(dim int) []forwardCase {
	return []forwardCase{{spec: FNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, K0: 3, Blocks: 3, ProjHidden: 5}, grids: [][]int{tinyGrid(dim)}, names: fnoNames(3),
		shapes: map[string][]int{"block.0.spectral.w": tensor.SpectralWeightShape(dim, 4, 4, 3)}}}
}

// contractPlan is the U-HNO a planned case derives its spec from.
var contractPlan = Plan{UHNO: tiny(2, ModeFull), Grid: []int{24, 20}, Periodic: true}

// contractCases holds every registered model; TestRegistryContract fails
// for a model registered without a case here. The small specs, seeds and
// grids are those the per-model tests used before this one replaced them.
var contractCases = map[string]contractCase{
	"uhno": {spec: tiny(2, ModeFull), grid: []int{24, 20}, routed: true,
		forward: func(dim int) []forwardCase {
			s := tiny(dim, ModeFull)
			s.OutChannels = 3
			return []forwardCase{{spec: s, grids: [][]int{tinyGrid(dim)}}}
		},
		covered: "U-HNO's layout, counts, budget and gradients: TestParamsLayout, TestCountsMatchAllocation, TestBudget, TestGradFullSTE and the other grad_test.go checks"},
	"fno": {spec: FNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, K0: 4, Blocks: 2, ProjHidden: 8}, grid: []int{24, 20},
		forward: fnoForward,
		grad: func(dim int) []gradCase {
			return []gradCase{{spec: FNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, K0: 3, Blocks: 4, ProjHidden: 8}, grid: tinyGrid(dim), seed: 1, rescale: 40, xSeed: 8, checkSeed: 9}}
		},
		count: countCheck(CountFNO, fnoCountFormula,
			FNOSpec{Dim: 1, InChannels: 3, OutChannels: 2, Width: 5, K0: 3, Blocks: 4, ProjHidden: 7},
			FNOSpec{Dim: 2, InChannels: 3, OutChannels: 2, Width: 5, K0: 3, Blocks: 4, ProjHidden: 7},
			FNOSpec{Dim: 3, InChannels: 3, OutChannels: 2, Width: 5, K0: 3, Blocks: 4, ProjHidden: 7}),
		budget: budgetCheck(func(s Spec, _ []int, target int) (FNOSpec, error) { return FNOForBudget(FNOSpecFor(s, 0), target) },
			CountFNO, func(f *FNOSpec) *int { return &f.Width },
			func(f FNOSpec, s Spec, in, _ int) bool {
				return f.Dim == s.Dim && f.InChannels == in && f.K0 == s.K0 && f.Blocks == 4 && f.ProjHidden == s.ProjHidden
			})},
	"fno-wider": {grid: []int{24, 20}, name: "fno", forward: fnoForward,
		covered: "fno-wider is FNO built by NewFNO (fno's case); its preset: TestFNOWiderSpec"},
	"additive": {spec: AdditiveSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, K0: 4, Blocks: 4, ProjHidden: 8}, grid: []int{24, 20},
		forward: func(dim int) []forwardCase {
			return []forwardCase{{spec: AdditiveSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, K0: 3, Blocks: 3, ProjHidden: 5}, grids: [][]int{tinyGrid(dim)},
				names: flatNames(blockNames("fourier", 3, "spectral.w", "w.w", "w.b"), blockNames("local", 3, "depthwise.w", "depthwise.b", "w.w", "w.b")), shapes: map[string][]int{"local.0.depthwise.w": tensor.DepthwiseWeightShape(dim, 4)}}}
		},
		grad: func(dim int) []gradCase {
			if dim > 2 {
				return nil
			}
			return []gradCase{{spec: AdditiveSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, K0: 3, Blocks: 3, ProjHidden: 8}, grid: tinyGrid(dim), seed: 5, rescale: 50, xSeed: 12, checkSeed: 13}}
		},
		refused: refusing(AdditiveSpec{Dim: 2, InChannels: 1, OutChannels: 1, Width: 4, K0: 3, Blocks: 4, ProjHidden: 8},
			func(s *AdditiveSpec) { s.Dim = 4 }, func(s *AdditiveSpec) { s.InChannels = 0 },
			func(s *AdditiveSpec) { s.Width = 0 }, func(s *AdditiveSpec) { s.Blocks = 0 }),
		unsized: func(s Spec) int { return AdditiveSpecFor(s).Width },
		count: countCheck(CountAdditive, additiveCountFormula,
			AdditiveSpec{Dim: 1, InChannels: 2, OutChannels: 1, Width: 5, K0: 4, Blocks: 4, ProjHidden: 8},
			AdditiveSpec{Dim: 2, InChannels: 10, OutChannels: 1, Width: 6, K0: 3, Blocks: 2, ProjHidden: 7},
			AdditiveSpec{Dim: 3, InChannels: 5, OutChannels: 5, Width: 3, K0: 2, Blocks: 3, ProjHidden: 4}),
		budget: budgetCheck(func(s Spec, _ []int, target int) (AdditiveSpec, error) {
			return AdditiveForBudget(AdditiveSpecFor(s), target)
		},
			CountAdditive, func(f *AdditiveSpec) *int { return &f.Width },
			func(a AdditiveSpec, s Spec, in, _ int) bool {
				return a.Dim == s.Dim && a.InChannels == in && a.OutChannels == 1 && a.K0 == s.K0 && a.Blocks == 4 && a.ProjHidden == s.ProjHidden
			})},
	"wno": {spec: WNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, Levels: 3, Grid: []int{32, 24}, Blocks: 4, ProjHidden: 8}, grid: []int{32, 24},
		forward: func(dim int) []forwardCase {
			grid := map[int][]int{1: {16}, 2: {8, 16}, 3: {8, 8, 8}}[dim]
			s := WNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, Levels: 3, Grid: grid, Blocks: 3, ProjHidden: 5}
			// At a finer grid the model runs with one more level.
			return []forwardCase{{spec: s, grids: [][]int{grid, twice(grid)}, names: flatNames(blockNames("block", 3, "wavelet.w", "w.w", "w.b")),
				shapes: map[string][]int{"block.0.wavelet.w": tensor.WaveletMixShape(4, 4, s.Corner())}}}
		},
		grad: func(dim int) []gradCase {
			if dim > 2 {
				return nil
			}
			grid := map[int][]int{1: {16}, 2: {8, 16}}[dim]
			return []gradCase{{spec: WNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, Levels: 3, Grid: grid, Blocks: 3, ProjHidden: 8}, grid: grid, seed: 5, rescale: 60, xSeed: 14, checkSeed: 15}}
		},
		refused: refusing(WNOSpec{Dim: 2, InChannels: 1, OutChannels: 1, Width: 4, Levels: 3, Grid: []int{16, 16}, Blocks: 4, ProjHidden: 8},
			func(s *WNOSpec) { s.Dim = 4 }, func(s *WNOSpec) { s.InChannels = 0 },
			func(s *WNOSpec) { s.Width = 0 }, func(s *WNOSpec) { s.Blocks = 0 },
			func(s *WNOSpec) { s.Levels = 0 }, func(s *WNOSpec) { s.Grid = []int{16} },
			func(s *WNOSpec) { s.Grid = []int{16, 12} }),
		count: countCheck(CountWNO, wnoCountFormula,
			WNOSpec{Dim: 1, InChannels: 2, OutChannels: 1, Width: 5, Levels: 3, Grid: []int{32}, Blocks: 4, ProjHidden: 8},
			WNOSpec{Dim: 2, InChannels: 10, OutChannels: 1, Width: 6, Levels: 3, Grid: []int{16, 32}, Blocks: 2, ProjHidden: 7},
			WNOSpec{Dim: 3, InChannels: 5, OutChannels: 5, Width: 3, Levels: 2, Grid: []int{8, 4, 8}, Blocks: 3, ProjHidden: 4}),
		budget: budgetCheck(func(s Spec, grid []int, target int) (WNOSpec, error) {
			ws := WNOSpecFor(s)
			ws.Grid = grid
			return WNOForBudget(ws, target)
		}, CountWNO, func(f *WNOSpec) *int { return &f.Width },
			func(a WNOSpec, s Spec, in, _ int) bool {
				return a.Dim == s.Dim && a.InChannels == in && a.OutChannels == 1 && a.Levels == 3 && a.Blocks == 4 && a.ProjHidden == s.ProjHidden
			})},
	"ffno": {spec: FFNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, K0: 4, Rank: 3, Blocks: 4, ProjHidden: 8}, grid: []int{24, 20},
		forward: func(dim int) []forwardCase {
			return []forwardCase{{spec: FFNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, K0: 3, Rank: 2, Blocks: 3, ProjHidden: 5}, grids: [][]int{tinyGrid(dim)},
				names: flatNames(blockNames("block", 3, "spectral.u", "spectral.v", "w.w", "w.b")), shapes: map[string][]int{
					"block.0.spectral.u": tensor.SpectralWeightShape(dim, 4, 2, 3),
					"block.0.spectral.v": tensor.SpectralWeightShape(dim, 2, 4, 3)}}}
		},
		grad: func(dim int) []gradCase {
			if dim > 2 {
				return nil
			}
			return []gradCase{{spec: FFNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, K0: 3, Rank: 2, Blocks: 3, ProjHidden: 8}, grid: tinyGrid(dim), seed: 5, rescale: 60, xSeed: 14, checkSeed: 15}}
		},
		refused: refusing(FFNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 4, K0: 4, Rank: 2, Blocks: 4, ProjHidden: 4},
			func(s *FFNOSpec) { s.Rank = 0 }),
		unsized: func(s Spec) int { return FFNOSpecFor(s).Width },
		count: countCheck(CountFFNO, ffnoCountFormula,
			FFNOSpec{Dim: 1, InChannels: 2, OutChannels: 1, Width: 5, K0: 4, Rank: 3, Blocks: 4, ProjHidden: 8},
			FFNOSpec{Dim: 2, InChannels: 10, OutChannels: 1, Width: 6, K0: 3, Rank: 8, Blocks: 2, ProjHidden: 7},
			FFNOSpec{Dim: 3, InChannels: 5, OutChannels: 5, Width: 3, K0: 2, Rank: 2, Blocks: 3, ProjHidden: 4}),
		budget: budgetCheck(func(s Spec, _ []int, target int) (FFNOSpec, error) { return FFNOForBudget(FFNOSpecFor(s), target) },
			CountFFNO, func(f *FFNOSpec) *int { return &f.Width },
			func(f FFNOSpec, s Spec, in, _ int) bool {
				return f.Dim == s.Dim && f.InChannels == in && f.K0 == s.K0 && f.Rank == 8 && f.Blocks == 4 && f.ProjHidden == s.ProjHidden
			})},
	"loglofno": {grid: []int{24, 20},
		forward: func(dim int) []forwardCase {
			return []forwardCase{{spec: LogLoFNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, K0: 2, Blocks: 3, ProjHidden: 5}, grids: [][]int{tinyGrid(dim)}, names: fnoNames(3)}}
		},
		grad: func(dim int) []gradCase {
			if dim > 2 {
				return nil
			}
			// 16 points on the last axis: LogModes(3, 16) = [0 1 5], not FNO's.
			return []gradCase{{spec: LogLoFNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, K0: 3, Blocks: 3, ProjHidden: 8}, grid: []int{12, 16}[2-dim:], seed: 5, rescale: 70, xSeed: 16, checkSeed: 17}}
		},
		// LogLo-FNO's parameters are FNO's: its formula is CountFNO, which
		// TestPaperCounts checks against the yardstick.
		refused: refusing(LogLoFNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 4, K0: 4, Blocks: 4, ProjHidden: 4},
			func(s *LogLoFNOSpec) { s.Dim = 4 }),
		count: countCheck(CountLogLoFNO, func(s LogLoFNOSpec) int { return CountFNO(fnoOf(s)) },
			LogLoFNOSpec{Dim: 1, InChannels: 2, OutChannels: 1, Width: 5, K0: 4, Blocks: 4, ProjHidden: 8},
			LogLoFNOSpec{Dim: 2, InChannels: 10, OutChannels: 1, Width: 6, K0: 3, Blocks: 2, ProjHidden: 7},
			LogLoFNOSpec{Dim: 3, InChannels: 5, OutChannels: 5, Width: 3, K0: 2, Blocks: 3, ProjHidden: 4}),
		// Depth and width match FNO's.
		budget: budgetCheck(func(s Spec, _ []int, target int) (LogLoFNOSpec, error) {
			return LogLoFNOForBudget(LogLoFNOSpecFor(s), target)
		},
			CountLogLoFNO, func(f *LogLoFNOSpec) *int { return &f.Width },
			func(l LogLoFNOSpec, s Spec, in, target int) bool {
				f, err := FNOForBudget(FNOSpecFor(s, 0), target)
				return err == nil && fnoOf(l) == f && l.InChannels == in
			})},
	"convfno": {spec: ConvFNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, UNetWidth: 4, UNetLevels: 3, Width: 6, K0: 4, Blocks: 2, ProjHidden: 8}, grid: []int{24, 20},
		forward: func(dim int) []forwardCase {
			return []forwardCase{{spec: ConvFNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, UNetWidth: 2, UNetLevels: 3, Width: 4, K0: 3, Blocks: 2, ProjHidden: 5},
				grids: [][]int{tinyGrid(dim)}, names: convFNONames, divisible: 4}} // 2^(3-1)
		},
		grad: func(dim int) []gradCase {
			if dim > 2 {
				return nil
			}
			return []gradCase{{spec: ConvFNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, UNetWidth: 2, UNetLevels: 2, Width: 3, K0: 3, Blocks: 2, ProjHidden: 6}, grid: tinyGrid(dim), seed: 5, rescale: 50, xSeed: 12, checkSeed: 13, fixedReLU: true}}
		},
		count: countCheck(CountConvFNO, convFNOCountFormula,
			ConvFNOSpec{Dim: 1, InChannels: 2, OutChannels: 1, UNetWidth: 3, UNetLevels: 4, Width: 5, K0: 4, Blocks: 4, ProjHidden: 8},
			ConvFNOSpec{Dim: 2, InChannels: 10, OutChannels: 1, UNetWidth: 2, UNetLevels: 3, Width: 6, K0: 3, Blocks: 2, ProjHidden: 7},
			ConvFNOSpec{Dim: 3, InChannels: 5, OutChannels: 5, UNetWidth: 2, UNetLevels: 2, Width: 3, K0: 2, Blocks: 3, ProjHidden: 4},
			ConvFNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, UNetWidth: 4, UNetLevels: 1, Width: 3, K0: 2, Blocks: 1, ProjHidden: 4}),
		budget: budgetCheck(func(s Spec, _ []int, target int) (ConvFNOSpec, error) {
			return ConvFNOForBudget(ConvFNOSpecFor(s), target)
		},
			CountConvFNO, func(f *ConvFNOSpec) *int { return &f.Width },
			func(a ConvFNOSpec, s Spec, in, _ int) bool {
				return a.Dim == s.Dim && a.InChannels == in && a.UNetWidth == 16 && a.UNetLevels == 4 && a.Blocks == 4 && a.K0 == s.K0
			})},
	"cno": {spec: CNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 12, Levels: 2, NeckBlocks: 2}, grid: []int{24, 20},
		forward: func(dim int) []forwardCase {
			// C_0 = 4: with 2 channels the last ReLU happens to be dead at seed 7.
			return []forwardCase{{spec: CNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 16, Levels: 2, NeckBlocks: 2}, grids: [][]int{[]int{8, 8, 8}[:dim]}, names: cnoNames, divisible: 4}}
		},
		grad: func(dim int) []gradCase {
			if dim > 2 {
				return nil
			}
			return []gradCase{{spec: CNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, Levels: 2, NeckBlocks: 1}, grid: []int{8, 8}[:dim], seed: 5, rescale: 50, xSeed: 12, checkSeed: 13, fixedReLU: true}}
		},
		count: countCheck(CountCNO, cnoCountFormula,
			CNOSpec{Dim: 1, InChannels: 2, OutChannels: 1, Width: 37, Levels: 4, NeckBlocks: 4},
			CNOSpec{Dim: 2, InChannels: 10, OutChannels: 1, Width: 16, Levels: 4, NeckBlocks: 4},
			CNOSpec{Dim: 3, InChannels: 5, OutChannels: 5, Width: 5, Levels: 2, NeckBlocks: 1},
			CNOSpec{Dim: 1, InChannels: 1, OutChannels: 2, Width: 3, Levels: 1, NeckBlocks: 0}),
		budget: budgetCheck(func(s Spec, _ []int, target int) (CNOSpec, error) { return CNOForBudget(CNOSpecFor(s), target) },
			CountCNO, func(f *CNOSpec) *int { return &f.Width },
			func(a CNOSpec, s Spec, in, _ int) bool {
				return a.Levels == 4 && a.NeckBlocks == 4 && a.Dim == s.Dim && a.InChannels == in
			})},
	"gno": {spec: GNOSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, KernelHidden: 8, Rounds: 4, ProjHidden: 8, Periodic: true}, grid: []int{24, 20},
		forward: func(dim int) []forwardCase {
			var out []forwardCase
			for _, periodic := range []bool{true, false} {
				out = append(out, forwardCase{label: fmt.Sprintf("periodic=%v", periodic),
					spec:  GNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, KernelHidden: 5, Rounds: 3, ProjHidden: 5, Periodic: periodic},
					grids: [][]int{tinyGrid(dim)}, names: flatNames(blockNames("round", 3, "kernel.0.w", "kernel.0.b", "kernel.1.w", "kernel.1.b", "w.w", "w.b")), shapes: map[string][]int{"round.0.kernel.1.w": {16, 5}}})
			}
			return out
		},
		grad: func(dim int) []gradCase {
			if dim > 2 {
				return nil
			}
			var out []gradCase
			for _, periodic := range []bool{true, false} {
				out = append(out, gradCase{label: fmt.Sprintf("periodic=%v", periodic),
					spec: GNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 3, KernelHidden: 4, Rounds: 3, ProjHidden: 8, Periodic: periodic},
					grid: tinyGrid(dim), seed: 5, rescale: 60, xSeed: 14, checkSeed: 15})
			}
			return out
		},
		refused: refusing(GNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 4, KernelHidden: 4, Rounds: 4, ProjHidden: 4},
			func(s *GNOSpec) { s.KernelHidden = 0 }),
		unsized: func(s Spec) int { return GNOSpecFor(s).Width },
		count: countCheck(CountGNO, gnoCountFormula,
			GNOSpec{Dim: 1, InChannels: 2, OutChannels: 1, Width: 5, KernelHidden: 4, Rounds: 4, ProjHidden: 8, Periodic: true},
			GNOSpec{Dim: 2, InChannels: 10, OutChannels: 1, Width: 6, KernelHidden: 3, Rounds: 2, ProjHidden: 7},
			GNOSpec{Dim: 3, InChannels: 5, OutChannels: 5, Width: 3, KernelHidden: 2, Rounds: 3, ProjHidden: 4, Periodic: true}),
		budget: budgetCheck(func(s Spec, _ []int, target int) (GNOSpec, error) { return GNOForBudget(GNOSpecFor(s), target) },
			CountGNO, func(f *GNOSpec) *int { return &f.Width },
			func(g GNOSpec, s Spec, in, _ int) bool {
				return g.Dim == s.Dim && g.InChannels == in && g.KernelHidden == GNOKernelHidden && g.Rounds == 4 && g.ProjHidden == s.ProjHidden && g.Periodic
			})},
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
	return specRecord(t, name, c.spec)
}

// specRecord is the record of model name with spec s.
func specRecord(t *testing.T, name string, s any) Record {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return Record{Model: name, Spec: raw}
}

// buildSpec builds model name from spec s through the registry, as
// New<Model>(b, s, seed) would.
func buildSpec(t *testing.T, b tensor.Backend, name string, s any, seed uint64) Model {
	t.Helper()
	m, _, err := Build(b, specRecord(t, name, s), seed)
	if err != nil {
		t.Fatalf("%s %+v: %v", name, s, err)
	}
	return m
}

// TestRegistryContract checks what every registered model owes the
// commands, the same way for each: it builds from its record (and from
// the record written to JSON and read back, as a checkpoint holds it),
// describes itself with its parameter count, takes its grid, maps
// [B, in, grid] to [B, out, grid], and gives the same parameters, output
// and gradient bits on 1 and 2 threads. Then, in 1D, 2D and 3D: the
// forward checks (forwardContract), the finite-difference gradients
// (gradContract); then the count against its formula (countContract),
// the sizing to 0.62M (budgetContract), the width left to the budget
// (unsized) and the refusal of invalid specs (refusedContract).
func TestRegistryContract(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			c, ok := contractCases[name]
			if !ok {
				t.Fatalf("model %s is registered without a contract case", name)
			}
			runContract(t, name, c)
		})
	}
}

// runContract runs every check of the registry contract on the model
// registered as name, with its case c.
func runContract(t *testing.T, name string, c contractCase) {
	if c.forward == nil {
		t.Fatalf("model %s has no forward case", name)
	}
	if (c.grad == nil || c.count == nil || c.budget == nil) && c.covered == "" {
		t.Fatalf("model %s leaves a check out without saying which test covers it", name)
	}
	t.Run("build", func(t *testing.T) { buildContract(t, name, c) })
	for dim := 1; dim <= 3; dim++ {
		for _, f := range c.forward(dim) {
			t.Run(subtest("forward", dim, f.label), func(t *testing.T) { forwardContract(t, name, c, f) })
		}
		if c.grad != nil {
			for _, g := range c.grad(dim) {
				t.Run(subtest("grad", dim, g.label), func(t *testing.T) { gradContract(t, name, g) })
			}
		}
	}
	if c.count != nil {
		t.Run("count", func(t *testing.T) { countContract(t, name, c.count) })
	}
	if c.budget != nil {
		t.Run("budget", func(t *testing.T) { budgetContract(t, c.budget) })
	}
	if c.unsized != nil {
		if w := c.unsized(tiny(2, ModeFull)); w != 0 {
			t.Errorf("the spec for a run sets width %d, want 0 (chosen by the budget)", w)
		}
	}
	if c.refused != nil {
		t.Run("refused", func(t *testing.T) { refusedContract(t, name, c.refused) })
	}
}

func subtest(check string, dim int, label string) string {
	s := fmt.Sprintf("%s/%dD", check, dim)
	if label != "" {
		s += "/" + label
	}
	return s
}

// buildContract: description, grid, output shape, determinism over
// threads and the record read back.
func buildContract(t *testing.T, name string, c contractCase) {
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
}

// forwardContract: the model's name and mode, its parameter layout, its
// grids taken and a grid of the wrong rank refused, the output
// [2, 3, grid...], and, for every model but U-HNO (routed), an empty Aux
// and a non-zero gradient for every parameter after an MSE backward.
func forwardContract(t *testing.T, name string, c contractCase, f forwardCase) {
	b := newBackend()
	m := buildSpec(t, b, name, f.spec, 7)
	wantName := name
	if c.name != "" {
		wantName = c.name
	}
	if !c.routed && (m.Name() != wantName || m.Mode() != "") {
		t.Errorf("name %q mode %q, want %q and no mode", m.Name(), m.Mode(), wantName)
	}
	if f.names != nil {
		if got := names(m); !slices.Equal(got, f.names) {
			t.Fatalf("parameters %v, want %v", got, f.names)
		}
	}
	for p, want := range f.shapes {
		if got := m.Params().Lookup(p); got == nil || !slices.Equal(got.Shape, want) {
			t.Errorf("%s: shape %v, want %v", p, got, want)
		}
	}
	if f.divisible > 0 {
		bad := slices.Clone(f.grids[0])
		bad[0] = 6
		if err := m.CheckGrid(bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("divisible by %d", f.divisible)) {
			t.Errorf("grid %v: err %v, want one saying divisible by %d", bad, err, f.divisible)
		}
	}
	for _, grid := range f.grids {
		if err := m.CheckGrid(grid); err != nil {
			t.Errorf("grid %v refused: %v", grid, err)
		}
		if m.CheckGrid(append(slices.Clone(grid), 4)) == nil {
			t.Errorf("grid %v of the wrong rank accepted", append(slices.Clone(grid), 4))
		}
		tp := tensor.NewTape(b)
		y, aux := m.Forward(tp, input(tp, 3, 2, 2, grid))
		if want := append([]int{2, 3}, grid...); !slices.Equal(y.Shape, want) {
			t.Fatalf("grid %v: output %v, want %v", grid, y.Shape, want)
		}
		if !c.routed && (aux.ZF != nil || aux.ZG != nil || len(aux.Masks) != 0 || len(aux.Stages) != 0 || len(aux.Stats) != 0) {
			t.Error("Aux is not empty")
		}
		m.Params().ZeroGrad()
		tp.Backward(tp.MSE(y, tp.New(y.Shape...)))
		for _, p := range m.Params().List() {
			if c.routed {
				break
			}
			if slices.IndexFunc(host(b, p.Grad), func(v float32) bool { return v != 0 }) < 0 {
				t.Errorf("grid %v: %s gets no gradient", grid, p.Name)
			}
		}
		tp.Release()
	}
}

// gradContract checks the whole model against finite differences for
// every parameter and the input.
func gradContract(t *testing.T, name string, g gradCase) {
	b := newBackend()
	m := buildSpec(t, b, name, g.spec, g.seed)
	rescale(b, m, g.rescale)
	xShape := append([]int{2, 2}, g.grid...)
	x0 := gradcheck.Random(g.xSeed, tensor.Numel(xShape))
	if g.fixedReLU {
		defer fixedReLU(b, func(tp *tensor.Tape) { m.Forward(tp, tp.FromHost(x0, xShape...)) })()
	}
	names := names(m)
	gradcheck.Check(t, b, func(tp *tensor.Tape, in []*tensor.Tensor) *tensor.Tensor {
		bind(b, tp, m, names, in[1:])
		y, _ := m.Forward(tp, in[0])
		return y
	}, checkInputs(b, m, x0, xShape, names), gradcheck.Options{MaxProbe: 4, Seed: g.checkSeed, RelTol: checkTol})
}

// countContract: the count function, the parameters allocated and the
// formula agree.
func countContract(t *testing.T, name string, c *countCase) {
	b := newBackend()
	for _, s := range c.specs {
		want := c.formula(s)
		if got, alloc := c.count(s), buildSpec(t, b, name, s, 1).Params().Count(); got != want || alloc != want {
			t.Errorf("%+v: count %d, allocated %d, formula %d", s, got, alloc, want)
		}
	}
}

// budgetContract: at the paper's ~0.62M, for one task of each kind, the
// fitted spec carries the task's shape, its count lands within the budget
// tolerance and the neighbouring widths are farther from the target, and
// a 100-parameter budget cannot be met.
func budgetContract(t *testing.T, c *budgetCase) {
	target := 620000
	for _, task := range budgetTasks {
		cfg := taskConfig(t, task.task)
		s, err := SpecFromConfig(cfg, task.in, 1)
		if err != nil {
			t.Fatal(err)
		}
		f, err := c.fit(s, cfg.PDE.Grid, target)
		if err != nil {
			t.Fatalf("%s: %v", task.task, err)
		}
		n, w := c.count(f), c.width(f)
		if !withinBudget(n, target) {
			t.Errorf("%s: width %d gives %d parameters, more than %g from %d", task.task, w, n, BudgetTolerance, target)
		}
		if !c.carries(f, s, task.in, target) {
			t.Errorf("%s: spec %+v does not carry the task's shape (U-HNO spec %+v)", task.task, f, s)
		}
		for _, v := range []int{w - 1, w + 1} {
			if nv := c.count(c.setWidth(f, v)); abs(nv-target) < abs(n-target) {
				t.Errorf("%s: width %d gives %d parameters, closer to %d than width %d (%d)", task.task, v, nv, target, w, n)
			}
		}
		t.Logf("%s (grid %v): width %d, %d parameters (%+.1f%%)", task.task, cfg.PDE.Grid, w, n, 100*float64(n-target)/float64(target))
		if _, err := c.fit(s, cfg.PDE.Grid, 100); err == nil {
			t.Errorf("%s: a 100-parameter budget should fail", task.task)
		}
	}
}

// refusedContract: the good spec builds, each bad one is refused.
func refusedContract(t *testing.T, name string, r *refusalCase) {
	b := newBackend()
	buildSpec(t, b, name, r.good, 1)
	for _, s := range r.bad {
		if _, _, err := Build(b, specRecord(t, name, s), 1); err == nil {
			t.Errorf("%+v: accepted", s)
		}
	}
}
