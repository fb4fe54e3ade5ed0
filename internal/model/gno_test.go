package model

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// gnoCountFormula is GNO's parameter count written out by hand (GNO's doc
// comment), with W the width, H the kernel MLP's hidden width, P the
// projection width:
//
//	lift            In W + W
//	per round       d H + H + H W^2 + W^2 (kernel MLP) + W W + W (1x1)
//	projection      W P + P + P Out + Out
func gnoCountFormula(s GNOSpec) int {
	w, h := s.Width, s.KernelHidden
	round := s.Dim*h + h + h*w*w + w*w + w*w + w
	return s.InChannels*w + w + s.Rounds*round + w*s.ProjHidden + s.ProjHidden + s.ProjHidden*s.OutChannels + s.OutChannels
}

func TestGNOCount(t *testing.T) {
	b := newBackend()
	for _, s := range []GNOSpec{
		{Dim: 1, InChannels: 2, OutChannels: 1, Width: 5, KernelHidden: 4, Rounds: 4, ProjHidden: 8, Periodic: true},
		{Dim: 2, InChannels: 10, OutChannels: 1, Width: 6, KernelHidden: 3, Rounds: 2, ProjHidden: 7},
		{Dim: 3, InChannels: 5, OutChannels: 5, Width: 3, KernelHidden: 2, Rounds: 3, ProjHidden: 4, Periodic: true},
	} {
		want := gnoCountFormula(s)
		m, err := NewGNO(b, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, alloc := CountGNO(s), m.Params().Count(); got != want || alloc != want {
			t.Errorf("%+v: CountGNO %d, allocated %d, formula %d", s, got, alloc, want)
		}
	}
}

func TestGNOBudget(t *testing.T) {
	target := 620000
	for _, c := range budgetTasks {
		s, err := SpecFromConfig(taskConfig(t, c.task), c.in, 1)
		if err != nil {
			t.Fatal(err)
		}
		g, err := GNOForBudget(GNOSpecFor(s), target)
		if err != nil {
			t.Fatalf("%s: %v", c.task, err)
		}
		n := CountGNO(g)
		if !withinBudget(n, target) {
			t.Errorf("%s: width %d gives %d parameters, more than 10%% from %d", c.task, g.Width, n, target)
		}
		if g.Dim != s.Dim || g.InChannels != c.in || g.KernelHidden != GNOKernelHidden || g.Rounds != 4 || g.ProjHidden != s.ProjHidden || !g.Periodic {
			t.Errorf("%s: spec %+v does not carry the task's shape", c.task, g)
		}
		for _, w := range []int{g.Width - 1, g.Width + 1} {
			v := g
			v.Width = w
			if abs(CountGNO(v)-target) < abs(n-target) {
				t.Errorf("%s: width %d is closer to the target than %d", c.task, w, g.Width)
			}
		}
		t.Logf("%s: width %d, %d parameters (%+.1f%%)", c.task, g.Width, n, 100*float64(n-target)/float64(target))
	}
	if _, err := GNOForBudget(GNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, KernelHidden: 64, Rounds: 4, ProjHidden: 128}, 100); err == nil {
		t.Error("a 100-parameter budget should fail")
	}
	if _, err := NewGNO(newBackend(), GNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 4, Rounds: 4, ProjHidden: 4}, 1); err == nil {
		t.Error("kernel hidden 0 accepted")
	}
	if w := GNOSpecFor(tiny(2, ModeFull)).Width; w != 0 {
		t.Errorf("GNOSpecFor sets width %d, want 0", w)
	}
}

// TestGNOForward checks shapes, the parameter layout and that every
// parameter receives a gradient, in 1D, 2D and 3D, periodic or not.
func TestGNOForward(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		for _, periodic := range []bool{true, false} {
			t.Run(fmt.Sprintf("%dD/periodic=%v", dim, periodic), func(t *testing.T) {
				b := newBackend()
				s := GNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, KernelHidden: 5, Rounds: 3, ProjHidden: 5, Periodic: periodic}
				m, err := NewGNO(b, s, 7)
				if err != nil {
					t.Fatal(err)
				}
				if m.Name() != "gno" || m.Mode() != "" {
					t.Errorf("name %q mode %q", m.Name(), m.Mode())
				}
				want := []string{"lift.w", "lift.b"}
				for i := range s.Rounds {
					p := "round." + strconv.Itoa(i)
					want = append(want, p+".kernel.0.w", p+".kernel.0.b", p+".kernel.1.w", p+".kernel.1.b", p+".w.w", p+".w.b")
				}
				want = append(want, "proj.0.w", "proj.0.b", "proj.1.w", "proj.1.b")
				if got := names(m); !slices.Equal(got, want) {
					t.Fatalf("parameters %v, want %v", got, want)
				}
				if sh := m.Params().Lookup("round.0.kernel.1.w").Shape; !slices.Equal(sh, []int{16, 5}) {
					t.Errorf("kernel.1.w %v", sh)
				}
				tp := tensor.NewTape(b)
				grid := tinyGrid(dim)
				y, aux := m.Forward(tp, input(tp, 3, 2, 2, grid))
				if !slices.Equal(y.Shape, append([]int{2, 3}, grid...)) {
					t.Fatalf("output %v", y.Shape)
				}
				if aux.ZF != nil || len(aux.Masks) != 0 {
					t.Error("Aux is not empty")
				}
				if m.CheckGrid(grid) != nil || m.CheckGrid(append(grid, 4)) == nil {
					t.Error("CheckGrid")
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
}

// TestGNOPeriodicMatters: a Dirichlet GNO differs from the periodic one
// with the same parameters at the boundary only.
func TestGNOPeriodicMatters(t *testing.T) {
	b := newBackend()
	s := GNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 3, KernelHidden: 4, Rounds: 1, ProjHidden: 4, Periodic: true}
	mp, _ := NewGNO(b, s, 2)
	s.Periodic = false
	md, _ := NewGNO(b, s, 2)
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	x := input(tp, 1, 1, 1, []int{8})
	yp, _ := mp.Forward(tp, x)
	yd, _ := md.Forward(tp, x)
	p, d := host(b, yp), host(b, yd)
	for i := range p {
		if same := p[i] == d[i]; same != (i > 0 && i < 7) {
			t.Errorf("point %d: periodic %g, Dirichlet %g", i, p[i], d[i])
		}
	}
}

func TestGradGNO(t *testing.T) {
	for dim := 1; dim <= 2; dim++ {
		for _, periodic := range []bool{true, false} {
			t.Run(fmt.Sprintf("%dD/periodic=%v", dim, periodic), func(t *testing.T) {
				b := newBackend()
				s := GNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 3, KernelHidden: 4, Rounds: 3, ProjHidden: 8, Periodic: periodic}
				m, err := NewGNO(b, s, 5)
				if err != nil {
					t.Fatal(err)
				}
				rescale(b, m, 60)
				xShape := append([]int{2, 2}, tinyGrid(dim)...)
				names := names(m)
				gradcheck.Check(t, b, func(tp *tensor.Tape, in []*tensor.Tensor) *tensor.Tensor {
					bind(b, tp, m, names, in[1:])
					y, _ := m.Forward(tp, in[0])
					return y
				}, checkInputs(b, m, gradcheck.Random(14, tensor.Numel(xShape)), xShape, names), gradcheck.Options{MaxProbe: 4, Seed: 15, RelTol: checkTol})
			})
		}
	}
}
