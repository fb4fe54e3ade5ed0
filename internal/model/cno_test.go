package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// cnoCountFormula is the parameter count written out from CNO's comment.
func cnoCountFormula(s CNOSpec) int {
	d, L := s.Dim, s.Levels
	c := func(l int) int { f := ipow(2, L-l); return (s.Width + f - 1) / f }
	n := conv3Count(d, s.InChannels, c(0))
	for l := 0; l < L; l++ {
		n += conv3Count(d, c(l), c(l+1))
	}
	n += 2 * s.NeckBlocks * conv3Count(d, c(L), c(L))
	n += conv3Count(d, c(L), c(L-1))
	for l := 0; l < L-1; l++ {
		n += conv3Count(d, 2*c(l+1), c(l))
	}
	return n + conv3Count(d, 2*c(0), s.OutChannels)
}

func TestCNOCount(t *testing.T) {
	b := newBackend()
	for _, s := range []CNOSpec{
		{Dim: 1, InChannels: 2, OutChannels: 1, Width: 37, Levels: 4, NeckBlocks: 4},
		{Dim: 2, InChannels: 10, OutChannels: 1, Width: 16, Levels: 4, NeckBlocks: 4},
		{Dim: 3, InChannels: 5, OutChannels: 5, Width: 5, Levels: 2, NeckBlocks: 1},
		{Dim: 1, InChannels: 1, OutChannels: 2, Width: 3, Levels: 1, NeckBlocks: 0},
	} {
		want := cnoCountFormula(s)
		m, err := NewCNO(b, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, alloc := CountCNO(s), m.Params().Count(); got != want || alloc != want {
			t.Errorf("%+v: CountCNO %d, allocated %d, formula %d", s, got, alloc, want)
		}
	}
}

func TestCNOBudget(t *testing.T) {
	target := 620000
	for _, c := range []struct {
		task string
		in   int
	}{{"burgers", 1}, {"ks", 1}, {"ns2d", 10}, {"darcy", 1}} {
		s, err := SpecFromConfig(taskConfig(t, c.task), c.in, 1)
		if err != nil {
			t.Fatal(err)
		}
		a, err := CNOForBudget(CNOSpecFor(s), target)
		if err != nil {
			t.Fatalf("%s: %v", c.task, err)
		}
		if a.Levels != 4 || a.NeckBlocks != 4 || a.Dim != s.Dim || a.InChannels != c.in {
			t.Errorf("%s: spec %+v", c.task, a)
		}
		n := CountCNO(a)
		if !withinBudget(n, target) {
			t.Errorf("%s: width %d gives %d parameters, more than 10%% from %d", c.task, a.Width, n, target)
		}
		for _, w := range []int{a.Width - 1, a.Width + 1} {
			v := a
			v.Width = w
			if abs(CountCNO(v)-target) < abs(n-target) {
				t.Errorf("%s: width %d is closer to the target than %d", c.task, w, a.Width)
			}
		}
		var ws []int
		for l := 0; l <= a.Levels; l++ {
			ws = append(ws, a.width(l))
		}
		t.Logf("%s: widths %v, %d parameters (%+.1f%%)", c.task, ws, n, 100*float64(n-target)/float64(target))
	}
	if _, err := CNOForBudget(CNOSpec{Dim: 2, InChannels: 1, OutChannels: 1, Levels: 4, NeckBlocks: 4}, 100); err == nil {
		t.Error("a 100-parameter budget should fail")
	}
}

func TestCNOForwardAndGrid(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			b := newBackend()
			s := CNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 16, Levels: 2, NeckBlocks: 2} // C_0 = 4: with 2 channels the last ReLU happens to be dead at seed 7
			m, err := NewCNO(b, s, 7)
			if err != nil {
				t.Fatal(err)
			}
			if m.Name() != "cno" || m.Mode() != "" {
				t.Errorf("name %q mode %q", m.Name(), m.Mode())
			}
			want := []string{"lift.w", "lift.b", "enc.0.w", "enc.0.b", "enc.1.w", "enc.1.b",
				"neck.0.0.w", "neck.0.0.b", "neck.0.1.w", "neck.0.1.b", "neck.1.0.w", "neck.1.0.b", "neck.1.1.w", "neck.1.1.b",
				"dec.1.w", "dec.1.b", "dec.0.w", "dec.0.b", "proj.w", "proj.b"}
			if got := names(m); !slices.Equal(got, want) {
				t.Fatalf("parameters %v, want %v", got, want)
			}
			grid := []int{8, 8, 8}[:dim]
			bad := slices.Clone(grid)
			bad[0] = 6
			if err := m.CheckGrid(bad); err == nil || !strings.Contains(err.Error(), "divisible by 4") {
				t.Errorf("grid %v: err %v", bad, err)
			}
			tp := tensor.NewTape(b)
			y, _ := m.Forward(tp, input(tp, 3, 2, 2, grid))
			if !slices.Equal(y.Shape, append([]int{2, 3}, grid...)) {
				t.Fatalf("output %v", y.Shape)
			}
			m.Params().ZeroGrad()
			tp.Backward(tp.MSE(y, tp.New(y.Shape...)))
			for _, p := range m.Params().List() {
				if slices.IndexFunc(host(b, p.Grad), func(v float32) bool { return v != 0 }) < 0 {
					t.Errorf("%s gets no gradient", p.Name)
				}
			}
		})
	}
}

// TestCNOActivationIsBandLimited: the anti-aliased ReLU's output is
// band-limited on its grid: up-sampling it and resampling back gives it
// unchanged (a plain ReLU's would not be).
func TestCNOActivationIsBandLimited(t *testing.T) {
	b := newBackend()
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	z := input(tp, 4, 2, 3, []int{16, 8})
	out := cnoAct(tp, z, []int{8, 4})
	again := tp.BandResample(tp.BandResample(out, 32, 16), 8, 4)
	a, g := host(b, out), host(b, again)
	for i := range a {
		if d := a[i] - g[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("activation output is not band-limited: %g vs %g", a[i], g[i])
		}
	}
}

// TestGradCNO checks the whole CNO against finite differences for every
// parameter and the input, in 1D and 2D, with ReLU patterns held fixed
// (fixedReLU).
func TestGradCNO(t *testing.T) {
	for dim := 1; dim <= 2; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			b := newBackend()
			s := CNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, Levels: 2, NeckBlocks: 1}
			m, err := NewCNO(b, s, 5)
			if err != nil {
				t.Fatal(err)
			}
			rescale(b, m, 50)
			xShape := append([]int{2, 2}, []int{8, 8}[:dim]...)
			x0 := gradcheck.Random(12, tensor.Numel(xShape))
			defer fixedReLU(b, func(tp *tensor.Tape) { m.Forward(tp, tp.FromHost(x0, xShape...)) })()
			names := names(m)
			gradcheck.Check(t, b, func(tp *tensor.Tape, in []*tensor.Tensor) *tensor.Tensor {
				bind(b, tp, m, names, in[1:])
				y, _ := m.Forward(tp, in[0])
				return y
			}, checkInputs(b, m, x0, xShape, names), gradcheck.Options{MaxProbe: 4, Seed: 13, RelTol: checkTol})
		})
	}
}
