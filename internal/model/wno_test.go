package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// wnoCountFormula is WNO's parameter count written out by hand from its
// architecture (WNO's doc comment), with W the width, P the projection
// width and M_a = 2 N_a / 2^J the side of the level-J subbands' corner:
//
//	lift            In W + W
//	per block       W W prod(M_a) (wavelet weights) + W W + W (1x1)
//	projection      W P + P + P Out + Out
func wnoCountFormula(s WNOSpec) int {
	w, corner := s.Width, 1
	for _, n := range s.Grid {
		corner *= 2 * n / (1 << s.Levels)
	}
	return s.InChannels*w + w + s.Blocks*(w*w*corner+w*w+w) + w*s.ProjHidden + s.ProjHidden + s.ProjHidden*s.OutChannels + s.OutChannels
}

func TestWNOCount(t *testing.T) {
	b := newBackend()
	for _, s := range []WNOSpec{
		{Dim: 1, InChannels: 2, OutChannels: 1, Width: 5, Levels: 3, Grid: []int{32}, Blocks: 4, ProjHidden: 8},
		{Dim: 2, InChannels: 10, OutChannels: 1, Width: 6, Levels: 3, Grid: []int{16, 32}, Blocks: 2, ProjHidden: 7},
		{Dim: 3, InChannels: 5, OutChannels: 5, Width: 3, Levels: 2, Grid: []int{8, 4, 8}, Blocks: 3, ProjHidden: 4},
	} {
		want := wnoCountFormula(s)
		m, err := NewWNO(b, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, alloc := CountWNO(s), m.Params().Count(); got != want || alloc != want {
			t.Errorf("%+v: CountWNO %d, allocated %d, formula %d", s, got, alloc, want)
		}
	}
}

// TestWNOBudget checks WNOForBudget at the paper's stated ~0.62M for one
// task of each kind, at the task's grid: the count lands within 10% and
// the neighbouring widths are farther from the target.
func TestWNOBudget(t *testing.T) {
	target := 620000
	for _, c := range []struct {
		task string
		in   int
	}{{"burgers", 1}, {"ks", 1}, {"ns2d", 10}, {"darcy", 1}} {
		cfg := taskConfig(t, c.task)
		s, err := SpecFromConfig(cfg, c.in, 1)
		if err != nil {
			t.Fatal(err)
		}
		ws := WNOSpecFor(s)
		ws.Grid = cfg.PDE.Grid
		a, err := WNOForBudget(ws, target)
		if err != nil {
			t.Fatalf("%s: %v", c.task, err)
		}
		n := CountWNO(a)
		if !withinBudget(n, target) {
			t.Errorf("%s: width %d gives %d parameters, more than 10%% from %d", c.task, a.Width, n, target)
		}
		if a.Dim != s.Dim || a.InChannels != c.in || a.OutChannels != 1 || a.Levels != 3 || a.Blocks != 4 || a.ProjHidden != s.ProjHidden {
			t.Errorf("%s: spec %+v does not carry the task's shape (U-HNO spec %+v)", c.task, a, s)
		}
		for _, w := range []int{a.Width - 1, a.Width + 1} {
			v := a
			v.Width = w
			if abs(CountWNO(v)-target) < abs(n-target) {
				t.Errorf("%s: width %d gives %d parameters, closer to %d than width %d (%d)", c.task, w, CountWNO(v), target, a.Width, n)
			}
		}
		t.Logf("%s (grid %v): width %d, %d parameters (%+.1f%%)", c.task, a.Grid, a.Width, n, 100*float64(n-target)/float64(target))
	}
	ws := WNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Levels: 3, Grid: []int{128}, Blocks: 4, ProjHidden: 128}
	if _, err := WNOForBudget(ws, 100); err == nil || !strings.Contains(err.Error(), "WNO width") {
		t.Errorf("a 100-parameter budget: error %v, want one naming the WNO width", err)
	}
	ws.Grid = nil
	if _, err := WNOForBudget(ws, 620000); err == nil || !strings.Contains(err.Error(), "grid") {
		t.Errorf("no grid: error %v, want one about the grid", err)
	}
}

func TestWNOSpecValidate(t *testing.T) {
	good := WNOSpec{Dim: 2, InChannels: 1, OutChannels: 1, Width: 4, Levels: 3, Grid: []int{16, 16}, Blocks: 4, ProjHidden: 8}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*WNOSpec){
		func(s *WNOSpec) { s.Dim = 4 },
		func(s *WNOSpec) { s.InChannels = 0 },
		func(s *WNOSpec) { s.Width = 0 },
		func(s *WNOSpec) { s.Blocks = 0 },
		func(s *WNOSpec) { s.Levels = 0 },
		func(s *WNOSpec) { s.Grid = []int{16} },
		func(s *WNOSpec) { s.Grid = []int{16, 12} },
	} {
		s := good
		bad(&s)
		if _, err := NewWNO(newBackend(), s, 1); err == nil {
			t.Errorf("%+v: NewWNO accepted it", s)
		}
	}
	if s := WNOSpecFor(tiny(2, ModeFull)); s.Width != 0 || s.Grid != nil || s.Levels != 3 || s.Blocks != 4 {
		t.Errorf("WNOSpecFor gives %+v, want width 0 and no grid (set by the caller), 3 levels, 4 blocks", s)
	}
}

// TestWNOCheckGrid: the training grid, and that grid scaled by a power of
// two on every axis while at least one level remains; nothing else.
func TestWNOCheckGrid(t *testing.T) {
	m, err := NewWNO(newBackend(), WNOSpec{Dim: 2, InChannels: 1, OutChannels: 1, Width: 2, Levels: 3, Grid: []int{32, 16}, Blocks: 1, ProjHidden: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		grid   []int
		levels int
	}{
		{[]int{32, 16}, 3}, {[]int{64, 32}, 4}, {[]int{16, 8}, 2}, {[]int{8, 4}, 1},
		{[]int{4, 2}, 0}, {[]int{32, 32}, 0}, {[]int{48, 24}, 0}, {[]int{32}, 0}, {[]int{33, 16}, 0},
	} {
		l, err := m.LevelsFor(c.grid)
		if (err == nil) != (c.levels > 0) || l != c.levels {
			t.Errorf("grid %v: levels %d, error %v; want %d levels", c.grid, l, err, c.levels)
		}
		if err := m.CheckGrid(c.grid); (err == nil) != (c.levels > 0) {
			t.Errorf("grid %v: CheckGrid %v", c.grid, err)
		}
	}
}

// TestWNOForward checks names, shapes and that every parameter receives a
// gradient, in 1D, 2D and 3D; at a finer grid the model runs with one more
// level.
func TestWNOForward(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			b := newBackend()
			grid := map[int][]int{1: {16}, 2: {8, 16}, 3: {8, 8, 8}}[dim]
			s := WNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, Levels: 3, Grid: grid, Blocks: 3, ProjHidden: 5}
			m, err := NewWNO(b, s, 7)
			if err != nil {
				t.Fatal(err)
			}
			if m.Name() != "wno" || m.Mode() != "" {
				t.Errorf("name %q mode %q", m.Name(), m.Mode())
			}
			want := []string{"lift.w", "lift.b"}
			for i := range s.Blocks {
				p := "block." + strconv.Itoa(i)
				want = append(want, p+".wavelet.w", p+".w.w", p+".w.b")
			}
			want = append(want, "proj.0.w", "proj.0.b", "proj.1.w", "proj.1.b")
			if got := names(m); !slices.Equal(got, want) {
				t.Fatalf("parameters %v, want %v", got, want)
			}
			if sh := m.Params().Lookup("block.0.wavelet.w").Shape; !slices.Equal(sh, tensor.WaveletMixShape(4, 4, s.Corner())) {
				t.Errorf("wavelet weight %v", sh)
			}
			for _, g := range [][]int{grid, twice(grid)} {
				tp := tensor.NewTape(b)
				x := input(tp, 3, 2, 2, g)
				y, aux := m.Forward(tp, x)
				if !slices.Equal(y.Shape, append([]int{2, 3}, g...)) {
					t.Fatalf("output %v", y.Shape)
				}
				if aux.ZF != nil || aux.ZG != nil || len(aux.Masks) != 0 {
					t.Error("Aux is not empty")
				}
				m.Params().ZeroGrad()
				tp.Backward(tp.MSE(y, tp.New(y.Shape...)))
				for _, p := range m.Params().List() {
					g := host(b, p.Grad)
					if slices.IndexFunc(g, func(v float32) bool { return v != 0 }) < 0 {
						t.Errorf("%s gets no gradient", p.Name)
					}
				}
			}
		})
	}
}

func twice(g []int) []int {
	out := make([]int, len(g))
	for i, n := range g {
		out[i] = 2 * n
	}
	return out
}

// TestWNOWaveletOnlyCoarse: the learned transform sees only the level-J
// subbands, so changing the input's finest detail coefficients (level 1)
// leaves K(h) unchanged; with the 1x1 mixers and lifting bias zeroed and
// one block the whole output only moves through them.
func TestWNOWaveletOnlyCoarse(t *testing.T) {
	b := newBackend()
	s := WNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 3, Levels: 3, Grid: []int{32}, Blocks: 1, ProjHidden: 4}
	m, err := NewWNO(b, s, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"block.0.w.w", "block.0.w.b"} {
		p := m.Params().Lookup(name)
		b.Upload(p.Data, make([]float32, p.Numel()))
	}
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	coef := gradcheck.Random(5, 32)
	run := func(c []float32) []float32 {
		x := tp.Wavelet(tp.FromHost(c, 1, 1, 32), 3, true)
		y, _ := m.Forward(tp, x)
		return host(b, y)
	}
	base := run(coef)
	fine := append([]float32(nil), coef...)
	for i := 16; i < 32; i++ { // level-1 details
		fine[i] += 0.5
	}
	if got := run(fine); maxAbsDiff(got, base) > 1e-6 {
		t.Errorf("changing level-1 details moved the output by %g", maxAbsDiff(got, base))
	}
	coarse := append([]float32(nil), coef...)
	coarse[5] += 0.5 // a level-3 detail coefficient
	if got := run(coarse); maxAbsDiff(got, base) < 1e-4 {
		t.Error("changing a level-3 detail coefficient did not move the output")
	}
}

func maxAbsDiff(a, b []float32) float64 {
	var m float64
	for i := range a {
		d := float64(a[i] - b[i])
		if d < 0 {
			d = -d
		}
		m = max(m, d)
	}
	return m
}

// TestGradWNO checks the whole WNO against finite differences for every
// parameter and the input, in 1D and 2D (at the rescaled,
// variance-preserving point of the other models' checks).
func TestGradWNO(t *testing.T) {
	for dim := 1; dim <= 2; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			b := newBackend()
			grid := map[int][]int{1: {16}, 2: {8, 16}}[dim]
			s := WNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, Levels: 3, Grid: grid, Blocks: 3, ProjHidden: 8}
			m, err := NewWNO(b, s, 5)
			if err != nil {
				t.Fatal(err)
			}
			rescale(b, m, 60)
			xShape := append([]int{2, 2}, grid...)
			names := names(m)
			gradcheck.Check(t, b, func(tp *tensor.Tape, in []*tensor.Tensor) *tensor.Tensor {
				bind(b, tp, m, names, in[1:])
				y, _ := m.Forward(tp, in[0])
				return y
			}, checkInputs(b, m, gradcheck.Random(14, tensor.Numel(xShape)), xShape, names), gradcheck.Options{MaxProbe: 4, Seed: 15, RelTol: checkTol})
		})
	}
}
