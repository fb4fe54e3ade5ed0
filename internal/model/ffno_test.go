package model

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// ffnoCountFormula is F-FNO's parameter count written out by hand (FFNO's
// doc comment), with W the width, r the rank, P the projection width:
//
//	lift            In W + W
//	per block       2^(d-1) K0^d 2 (W r + r W) (u and v) + W W + W (1x1)
//	projection      W P + P + P Out + Out
func ffnoCountFormula(s FFNOSpec) int {
	w, d, r := s.Width, s.Dim, s.Rank
	kvol := 1
	for range d {
		kvol *= s.K0
	}
	block := (1<<(d-1))*kvol*2*(w*r+r*w) + w*w + w
	return s.InChannels*w + w + s.Blocks*block + w*s.ProjHidden + s.ProjHidden + s.ProjHidden*s.OutChannels + s.OutChannels
}

func TestFFNOCount(t *testing.T) {
	b := newBackend()
	for _, s := range []FFNOSpec{
		{Dim: 1, InChannels: 2, OutChannels: 1, Width: 5, K0: 4, Rank: 3, Blocks: 4, ProjHidden: 8},
		{Dim: 2, InChannels: 10, OutChannels: 1, Width: 6, K0: 3, Rank: 8, Blocks: 2, ProjHidden: 7},
		{Dim: 3, InChannels: 5, OutChannels: 5, Width: 3, K0: 2, Rank: 2, Blocks: 3, ProjHidden: 4},
	} {
		want := ffnoCountFormula(s)
		m, err := NewFFNO(b, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, alloc := CountFFNO(s), m.Params().Count(); got != want || alloc != want {
			t.Errorf("%+v: CountFFNO %d, allocated %d, formula %d", s, got, alloc, want)
		}
	}
}

// budgetTasks are the tasks the budget tests cover at 0.62M: one of each
// kind (1D K0 = 16 and 32, 2D with a 10-frame history, 2D single map).
var budgetTasks = []struct {
	task string
	in   int
}{{"burgers", 1}, {"ks", 1}, {"ns2d", 10}, {"darcy", 1}}

func TestFFNOBudget(t *testing.T) {
	target := 620000
	for _, c := range budgetTasks {
		s, err := SpecFromConfig(taskConfig(t, c.task), c.in, 1)
		if err != nil {
			t.Fatal(err)
		}
		f, err := FFNOForBudget(FFNOSpecFor(s), target)
		if err != nil {
			t.Fatalf("%s: %v", c.task, err)
		}
		n := CountFFNO(f)
		if !withinBudget(n, target) {
			t.Errorf("%s: width %d gives %d parameters, more than 10%% from %d", c.task, f.Width, n, target)
		}
		if f.Dim != s.Dim || f.InChannels != c.in || f.K0 != s.K0 || f.Rank != 8 || f.Blocks != 4 || f.ProjHidden != s.ProjHidden {
			t.Errorf("%s: spec %+v does not carry the task's shape", c.task, f)
		}
		for _, w := range []int{f.Width - 1, f.Width + 1} {
			v := f
			v.Width = w
			if abs(CountFFNO(v)-target) < abs(n-target) {
				t.Errorf("%s: width %d is closer to the target than %d", c.task, w, f.Width)
			}
		}
		t.Logf("%s: width %d, %d parameters (%+.1f%%)", c.task, f.Width, n, 100*float64(n-target)/float64(target))
	}
	if _, err := FFNOForBudget(FFNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, K0: 16, Rank: 8, Blocks: 4, ProjHidden: 128}, 100); err == nil {
		t.Error("a 100-parameter budget should fail")
	}
	if _, err := NewFFNO(newBackend(), FFNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 4, K0: 4, Blocks: 4, ProjHidden: 4}, 1); err == nil {
		t.Error("rank 0 accepted")
	}
	if w := FFNOSpecFor(tiny(2, ModeFull)).Width; w != 0 {
		t.Errorf("FFNOSpecFor sets width %d, want 0", w)
	}
}

// TestFFNOForward checks shapes, the parameter layout and that every
// parameter receives a gradient, in 1D, 2D and 3D.
func TestFFNOForward(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			b := newBackend()
			s := FFNOSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, K0: 3, Rank: 2, Blocks: 3, ProjHidden: 5}
			m, err := NewFFNO(b, s, 7)
			if err != nil {
				t.Fatal(err)
			}
			if m.Name() != "ffno" || m.Mode() != "" {
				t.Errorf("name %q mode %q", m.Name(), m.Mode())
			}
			want := []string{"lift.w", "lift.b"}
			for i := range s.Blocks {
				p := "block." + strconv.Itoa(i)
				want = append(want, p+".spectral.u", p+".spectral.v", p+".w.w", p+".w.b")
			}
			want = append(want, "proj.0.w", "proj.0.b", "proj.1.w", "proj.1.b")
			if got := names(m); !slices.Equal(got, want) {
				t.Fatalf("parameters %v, want %v", got, want)
			}
			if sh := m.Params().Lookup("block.0.spectral.u").Shape; !slices.Equal(sh, tensor.SpectralWeightShape(dim, 4, 2, 3)) {
				t.Errorf("u %v", sh)
			}
			if sh := m.Params().Lookup("block.0.spectral.v").Shape; !slices.Equal(sh, tensor.SpectralWeightShape(dim, 2, 4, 3)) {
				t.Errorf("v %v", sh)
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

// TestFFNOIsFNOAtIdentityU: with rank = width and every U_k the identity,
// W_k = V_k, so F-FNO is FNO with spectral weights v (other parameters
// shared): the low-rank product is taken per mode and corner, in
// SpectralConv's layout.
func TestFFNOIsFNOAtIdentityU(t *testing.T) {
	for dim := 1; dim <= 2; dim++ {
		b := newBackend()
		w, k0 := 3, 3
		s := FFNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: w, K0: k0, Rank: w, Blocks: 2, ProjHidden: 4}
		m, err := NewFFNO(b, s, 3)
		if err != nil {
			t.Fatal(err)
		}
		f, err := NewFNO(b, FNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: w, K0: k0, Blocks: 2, ProjHidden: 4}, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Params().List() {
			src := p.Name
			if slices.Contains([]string{"block.0.spectral.w", "block.1.spectral.w"}, src) {
				src = src[:len(src)-1] + "v"
			}
			b.Upload(p.Data, host(b, m.Params().Lookup(src)))
		}
		for i := range s.Blocks {
			u := m.Params().Lookup("block." + strconv.Itoa(i) + ".spectral.u")
			ws := u.Shape
			kvol := tensor.Numel(ws[3 : len(ws)-1])
			id := make([]float32, u.Numel())
			for c := range ws[0] {
				for j := range w {
					for k := range kvol {
						id[2*(((c*w+j)*w+j)*kvol+k)] = 1
					}
				}
			}
			b.Upload(u.Data, id)
		}
		tp := tensor.NewTape(b)
		tp.SetGrad(false)
		x := input(tp, 5, 2, 2, []int{16, 12}[:dim])
		y1, _ := m.Forward(tp, x)
		y2, _ := f.Forward(tp, x)
		if !sameBits(host(b, y1), host(b, y2)) {
			t.Errorf("%dD: F-FNO with identity U differs from FNO with W = V", dim)
		}
	}
}

func TestGradFFNO(t *testing.T) {
	for dim := 1; dim <= 2; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			b := newBackend()
			s := FFNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, K0: 3, Rank: 2, Blocks: 3, ProjHidden: 8}
			m, err := NewFFNO(b, s, 5)
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
