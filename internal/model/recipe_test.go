package model

import (
	"fmt"
	"slices"
	"testing"

	"uhno/internal/tensor"
)

// The recipe of docs/DESIGN.md, "Adding a model", tried on a throw-away
// model: a pointwise network (a 1x1 lift, GELU, the projection head).
// Its file would be internal/model/pointmlp.go (the spec, the layers, the
// constructor, the count, the budget: below), its registration one line
// in models.go (done here in the test, and undone), and its contract case
// one entry in contractCases (recipeCase). Nothing else changes: the
// commands plan, build, count and size it through the registry.

// pointMLPSpec is the throw-away model's spec.
type pointMLPSpec struct {
	Dim, InChannels, OutChannels, Width, ProjHidden int
}

// Validate implements the spec contract: every size positive.
func (s pointMLPSpec) Validate() error {
	if s.Dim < 1 || s.Dim > 3 || s.InChannels < 1 || s.OutChannels < 1 || s.Width < 1 || s.ProjHidden < 1 {
		return fmt.Errorf("model: pointmlp spec %+v: want dim 1-3 and positive sizes", s)
	}
	return nil
}

func (s pointMLPSpec) withWidth(w int) pointMLPSpec { s.Width = w; return s }

// pointMLP is the throw-away model.
type pointMLP struct {
	spec   pointMLPSpec
	params *Params
	lift   pointwise
	proj   projection
}

func buildPointMLP(pb *builder, s pointMLPSpec) *pointMLP {
	return &pointMLP{spec: s, lift: newPointwise(pb, "lift", s.InChannels, s.Width),
		proj: newProjection(pb, "proj", s.Width, s.ProjHidden, s.OutChannels)}
}

func newPointMLP(b tensor.Backend, s pointMLPSpec, seed uint64) (*pointMLP, error) {
	m, params, err := construct(b, s, seed, buildPointMLP)
	if err != nil {
		return nil, err
	}
	m.params = params
	return m, nil
}

func countPointMLP(s pointMLPSpec) int { return countOf(s, buildPointMLP) }

func (m *pointMLP) Params() *Params            { return m.params }
func (m *pointMLP) Name() string               { return "pointmlp" }
func (m *pointMLP) Mode() string               { return "" }
func (m *pointMLP) CheckGrid(grid []int) error { return checkFlatGrid("pointmlp", m.spec.Dim, grid) }
func (m *pointMLP) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux) {
	checkFlatInput("pointmlp", m.spec.Dim, m.spec.InChannels, x)
	return m.proj.forward(tp, tp.GELU(m.lift.forward(tp, x))), Aux{}
}

// recipeCase is the throw-away model's contract case.
var recipeCase = contractCase{
	spec: pointMLPSpec{Dim: 2, InChannels: 2, OutChannels: 1, Width: 6, ProjHidden: 8}, grid: []int{24, 20},
	forward: func(dim int) []forwardCase {
		return []forwardCase{{spec: pointMLPSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, ProjHidden: 5}, grids: [][]int{tinyGrid(dim)},
			names: []string{"lift.w", "lift.b", "proj.0.w", "proj.0.b", "proj.1.w", "proj.1.b"}}}
	},
	grad: func(dim int) []gradCase {
		return []gradCase{{spec: pointMLPSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 3, ProjHidden: 4}, grid: tinyGrid(dim), seed: 1, rescale: 40, xSeed: 8, checkSeed: 9}}
	},
	count: countCheck(countPointMLP, func(s pointMLPSpec) int {
		return s.InChannels*s.Width + s.Width + s.Width*s.ProjHidden + s.ProjHidden + s.ProjHidden*s.OutChannels + s.OutChannels
	}, pointMLPSpec{Dim: 1, InChannels: 3, OutChannels: 2, Width: 5, ProjHidden: 7}),
	covered: "TestAddModelRecipe: the budget is fitWidth's, as every flat model's",
}

// TestAddModelRecipe registers the throw-away model as DESIGN's recipe
// says, runs the registry contract every model passes on it, plans and
// sizes it through the registry as a run would (matched to Full U-HNO's
// count), and removes it again.
func TestAddModelRecipe(t *testing.T) {
	const name = "pointmlp"
	Register(name, Builder[pointMLPSpec, *pointMLP]{
		Plan: func(p Plan) (pointMLPSpec, error) {
			s := pointMLPSpec{Dim: p.UHNO.Dim, InChannels: p.UHNO.InChannels, OutChannels: p.UHNO.OutChannels, ProjHidden: p.UHNO.ProjHidden}
			return fitWidth(s, p.fullCount(), name, countPointMLP)
		},
		New:      newPointMLP,
		Describe: func(s pointMLPSpec, _ *pointMLP) string { return fmt.Sprintf("%s, width %d", name, s.Width) },
	})
	defer func() { registry = slices.DeleteFunc(registry, func(r registered) bool { return r.name == name }) }()
	if !slices.Contains(Names(), name) || PaperName(name) != "" {
		t.Fatalf("registered: %v; paper name %q", Names(), PaperName(name))
	}
	runContract(t, name, recipeCase)
	rec, err := PlanRecord(name, contractPlan)
	if err != nil {
		t.Fatal(err)
	}
	m, desc, err := Build(newBackend(), rec, 1)
	if err != nil {
		t.Fatal(err)
	}
	full := contractPlan.fullCount()
	if n := m.Params().Count(); float64(n) < 0.9*float64(full) || float64(n) > 1.1*float64(full) {
		t.Errorf("%s: %d parameters, Full U-HNO %d: not matched within 10%%", desc, n, full)
	}
}
