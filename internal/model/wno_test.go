package model

import (
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

// TestWNOBudgetErrors: a budget too small names the WNO width, and WNO
// cannot be sized without a grid (the fit itself: TestRegistryContract).
func TestWNOBudgetErrors(t *testing.T) {
	ws := WNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Levels: 3, Grid: []int{128}, Blocks: 4, ProjHidden: 128}
	if _, err := WNOForBudget(ws, 100); err == nil || !strings.Contains(err.Error(), "WNO width") {
		t.Errorf("a 100-parameter budget: error %v, want one naming the WNO width", err)
	}
	ws.Grid = nil
	if _, err := WNOForBudget(ws, 620000); err == nil || !strings.Contains(err.Error(), "grid") {
		t.Errorf("no grid: error %v, want one about the grid", err)
	}
}

// TestWNOSpecFor: the spec a run starts from leaves the width to the
// budget and the grid to the caller (the refusals: TestRegistryContract).
func TestWNOSpecFor(t *testing.T) {
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
