package model

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"uhno/internal/tensor"
)

// levelGrid is the grid of a named stage: enc.l and dec.l run at level l,
// mid at level L, flat blocks at the input grid.
func levelGrid(grid []int, s Spec, stage string) []int {
	var l int
	switch {
	case stage == "mid":
		l = s.Levels
	case s.Mode == ModeNoUShape:
		l = 0
	default:
		fmt.Sscanf(stage[4:], "%d", &l)
	}
	g := make([]int, len(grid))
	for i, n := range grid {
		g[i] = n >> l
	}
	return g
}

func wantStages(s Spec) []string {
	switch s.Mode {
	case ModeNoLocal, ModeNoGlobal, ModeNoSPAR:
		return nil
	case ModeNoUShape:
		return []string{"flat.0", "flat.1", "flat.2", "flat.3", "flat.4"}
	}
	return []string{"enc.0", "enc.1", "mid", "dec.1", "dec.0"}
}

// TestShapes runs every mode in 1D, 2D and 3D and checks the output, the
// routing masks and statistics of every stage, and the CBC features.
func TestShapes(t *testing.T) {
	const batch = 2
	for dim := 1; dim <= 3; dim++ {
		for _, mode := range Modes() {
			t.Run(fmt.Sprintf("%dD/%s", dim, mode), func(t *testing.T) {
				b := newBackend()
				s := tiny(dim, mode)
				m := mustUHNO(t, b, s, 1)
				grid := tinyGrid(dim)
				tp := tensor.NewTape(b)
				y, aux := m.Forward(tp, input(tp, 3, batch, s.InChannels, grid))
				if want := append([]int{batch, s.OutChannels}, grid...); !slices.Equal(y.Shape, want) {
					t.Fatalf("output %v, want %v", y.Shape, want)
				}
				if !slices.Equal(aux.Stages, wantStages(s)) {
					t.Fatalf("stages %v, want %v", aux.Stages, wantStages(s))
				}
				if len(aux.Masks) != len(aux.Stages) || len(aux.Stats) != len(aux.Stages) {
					t.Fatalf("%d masks and %d stats for %d stages", len(aux.Masks), len(aux.Stats), len(aux.Stages))
				}
				for i, name := range aux.Stages {
					want := append([]int{batch, 1}, levelGrid(grid, s, name)...)
					if !slices.Equal(aux.Masks[i].Shape, want) {
						t.Errorf("%s: mask %v, want %v", name, aux.Masks[i].Shape, want)
					}
					if !slices.Equal(aux.Stats[i].Shape, []int{batch, 3}) {
						t.Errorf("%s: stats %v, want [%d 3]", name, aux.Stats[i].Shape, batch)
					}
				}
				hasBoth := mode != ModeNoLocal && mode != ModeNoGlobal
				if (aux.ZF != nil) != hasBoth || (aux.ZG != nil) != hasBoth {
					t.Fatalf("CBC features present = (%v, %v), want %v", aux.ZF != nil, aux.ZG != nil, hasBoth)
				}
				if hasBoth {
					c := s.C0
					if mode == ModeNoUShape {
						c = s.FlatWidth
					}
					want := append([]int{batch, c}, grid...)
					if !slices.Equal(aux.ZF.Shape, want) || !slices.Equal(aux.ZG.Shape, want) {
						t.Errorf("z_F %v, z_G %v, want %v", aux.ZF.Shape, aux.ZG.Shape, want)
					}
				}
				for _, v := range host(b, y) {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						t.Fatal("non-finite output")
					}
				}
			})
		}
	}
}

// TestLevels checks the channels, grids and mode caps K_eff = min(K0,
// floor(N_l/2)) of every stage (Eq. mode-cap).
func TestLevels(t *testing.T) {
	type lv struct {
		c, n, k int
	}
	cases := []struct {
		dim  int
		want []lv // enc.0, enc.1, mid, dec.1, dec.0; n and k on every axis
	}{
		{1, []lv{{4, 16, 5}, {8, 8, 4}, {16, 4, 2}, {8, 8, 4}, {4, 16, 5}}}, // K0 = 5
		{2, []lv{{4, 8, 3}, {8, 4, 2}, {16, 2, 1}, {8, 4, 2}, {4, 8, 3}}},   // K0 = 3
		{3, []lv{{4, 8, 3}, {8, 4, 2}, {16, 2, 1}, {8, 4, 2}, {4, 8, 3}}},
	}
	for _, c := range cases {
		m := mustUHNO(t, newBackend(), tiny(c.dim, ModeFull), 1)
		levels, err := m.Levels(tinyGrid(c.dim))
		if err != nil {
			t.Fatal(err)
		}
		if len(levels) != len(c.want) {
			t.Fatalf("%dD: %d levels, want %d", c.dim, len(levels), len(c.want))
		}
		for i, l := range levels {
			w := c.want[i]
			if l.Channels != w.c || !slices.Equal(l.Grid, slices.Repeat([]int{w.n}, c.dim)) || !slices.Equal(l.KEff, slices.Repeat([]int{w.k}, c.dim)) {
				t.Errorf("%dD %s: channels %d grid %v K_eff %v, want %d, %d, %d per axis", c.dim, l.Name, l.Channels, l.Grid, l.KEff, w.c, w.n, w.k)
			}
		}
	}
}

// TestModeCapPerLevel checks that each level's Fourier branch really uses
// only its K_eff modes: changing the stored spectral weights at mode
// indices >= K_eff leaves the output bit for bit unchanged, while changing
// one weight inside the cap changes it.
func TestModeCapPerLevel(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		s := tiny(dim, ModeFull)
		grid := tinyGrid(dim)
		b := newBackend()
		m := mustUHNO(t, b, s, 1)
		levels, err := m.Levels(grid)
		if err != nil {
			t.Fatal(err)
		}
		run := func() []float32 {
			tp := tensor.NewTape(b)
			tp.SetGrad(false)
			y, _ := m.Forward(tp, input(tp, 3, 2, s.InChannels, grid))
			return host(b, y)
		}
		base := run()
		for _, l := range levels {
			kEff := l.KEff[0]
			w := m.Params().Lookup(l.Name + ".fourier.w")
			orig := host(b, w)
			// Indices of w = [corners, Cin, Cout, K0 x dim, 2]: the mode
			// indices are the dim axes before the last.
			inner := 2 * int(math.Pow(float64(s.K0), float64(dim)))
			beyond := slices.Clone(orig)
			changed := 0
			for i := range beyond {
				modes := (i % inner) / 2
				for a := 0; a < dim; a++ {
					if modes%s.K0 >= kEff {
						beyond[i] += 1
						changed++
						break
					}
					modes /= s.K0
				}
			}
			b.Upload(w.Data, beyond)
			if got := run(); !sameBits(got, base) {
				t.Errorf("%dD %s: changing %d weights at modes >= K_eff = %d changed the output", dim, l.Name, changed, kEff)
			}
			inside := slices.Clone(orig)
			idx := 0 // corner 0, Cin 0, Cout 0, every mode index K_eff-1, real part
			for a := 0; a < dim; a++ {
				idx = idx*s.K0 + kEff - 1
			}
			inside[2*idx] += 1
			b.Upload(w.Data, inside)
			if got := run(); sameBits(got, base) {
				t.Errorf("%dD %s: changing the weight at mode K_eff-1 = %d left the output unchanged", dim, l.Name, kEff-1)
			}
			b.Upload(w.Data, orig)
		}
	}
}

// TestHardMaskKeepsK checks at every stage and for every sample that the
// hard mask is 0/1 with exactly k ones, that k = ceil(rho N), and that
// rho follows Eq. spar-rho from the reported contrast.
func TestHardMaskKeepsK(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		for _, mode := range []string{ModeFull, ModeNoUShape} {
			b := newBackend()
			s := tiny(dim, mode)
			m := mustUHNO(t, b, s, 5)
			tp := tensor.NewTape(b)
			tp.SetGrad(false)
			_, aux := m.Forward(tp, input(tp, 11, 3, s.InChannels, tinyGrid(dim)))
			if len(aux.Masks) == 0 {
				t.Fatalf("%dD %s: no masks", dim, mode)
			}
			p := s.SPAR
			for i, mask := range aux.Masks {
				g, st := host(b, mask), host(b, aux.Stats[i])
				n := mask.SpatialSize()
				for smp := range mask.Batch() {
					ones := 0
					for _, v := range g[smp*n : (smp+1)*n] {
						switch v {
						case 1:
							ones++
						case 0:
						default:
							t.Fatalf("%s: mask value %g", aux.Stages[i], v)
						}
					}
					c, rho, k := float64(st[3*smp]), float64(st[3*smp+1]), int(st[3*smp+2])
					wantRho := math.Min(math.Max(p.Rho0*(1+p.Beta*math.Tanh(c-1)), p.RhoMin), p.RhoMax)
					// k = ceil(rho N), up to the float32 rounding of the
					// reported rho when rho N is an integer.
					kOK := float64(k) == math.Ceil(rho*float64(n)) || math.Abs(float64(k)-rho*float64(n)) < 1e-4
					if ones != k || !kOK || math.Abs(rho-wantRho) > 1e-6 {
						t.Errorf("%dD %s %s sample %d: %d of %d kept, stats c=%g rho=%g (want %g) k=%d", dim, mode, aux.Stages[i], smp, ones, n, c, rho, wantRho, k)
					}
				}
			}
		}
	}
}

// TestCheckGrid rejects grids the U-shape cannot halve L times.
func TestCheckGrid(t *testing.T) {
	m := mustUHNO(t, newBackend(), tiny(2, ModeFull), 1)
	for _, c := range []struct {
		grid []int
		ok   bool
	}{{[]int{8, 8}, true}, {[]int{16, 8}, true}, {[]int{10, 8}, false}, {[]int{4, 4}, false}, {[]int{8}, false}} {
		if err := m.CheckGrid(c.grid); (err == nil) != c.ok {
			t.Errorf("grid %v: error %v, want ok=%v", c.grid, err, c.ok)
		}
	}
	g := mustUHNO(t, newBackend(), tiny(1, ModeNoUShape), 1)
	if err := g.CheckGrid([]int{6}); err != nil {
		t.Errorf("mode G has no U-shape and should take N = 6: %v", err)
	}
}
