package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"uhno/internal/tensor"
)

func names(m Model) []string {
	var out []string
	for _, p := range m.Params().List() {
		out = append(out, p.Name)
	}
	return out
}

func without(list []string, parts ...string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(n string) bool {
		for _, p := range parts {
			if strings.Contains(n, p) {
				return true
			}
		}
		return false
	})
}

func forward(t *testing.T, b tensor.Backend, m Model, dim int) []float32 {
	t.Helper()
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	y, _ := m.Forward(tp, input(tp, 3, 2, 2, tinyGrid(dim)))
	return host(b, y)
}

// TestAblationParameters checks that each mode adds or removes exactly the
// parameters its row of Tab. ablation-setup names, relative to Full.
func TestAblationParameters(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		b := newBackend()
		full := mustUHNO(t, b, tiny(dim, ModeFull), 1)
		fullNames := names(full)
		var withFuse []string
		for _, n := range without(fullNames, ".spar.") {
			withFuse = append(withFuse, n)
			if strings.HasSuffix(n, ".gauss.fuse.b") {
				stage := strings.TrimSuffix(n, ".gauss.fuse.b")
				withFuse = append(withFuse, stage+".fuse.w_o.w", stage+".fuse.w_o.b")
			}
		}
		want := map[string][]string{
			ModeNoLocal:  without(fullNames, ".gauss.", ".spar."),
			ModeNoGlobal: without(fullNames, ".fourier.", ".spar."),
			ModeNoSPAR:   withFuse,
		}
		for _, mode := range Modes()[1:] {
			t.Run(fmt.Sprintf("%dD/%s", dim, mode), func(t *testing.T) {
				m := mustUHNO(t, b, tiny(dim, mode), 1)
				got := names(m)
				switch mode {
				case ModeNoLocal, ModeNoGlobal, ModeNoSPAR:
					if !slices.Equal(got, want[mode]) {
						t.Errorf("parameters\n%v\nwant\n%v", got, want[mode])
					}
				case ModeNoUShape:
					for _, n := range got {
						if !strings.HasPrefix(n, "flat.") && !strings.HasPrefix(n, "lift.") && !strings.HasPrefix(n, "proj.") {
							t.Errorf("mode G has parameter %s outside lift, flat blocks and projection (no ConvDown, no decoder)", n)
						}
					}
					if m.Spec().FlatBlocks != 2*m.Spec().Levels+1 {
						t.Errorf("mode G has %d blocks, want 2L+1 = %d", m.Spec().FlatBlocks, 2*m.Spec().Levels+1)
					}
				default: // C, D, E (loss only), H (routing of a skip), I (kernel normalisation): same parameters
					if !slices.Equal(got, fullNames) {
						t.Errorf("mode %s changed the parameters", mode)
					}
					if !sameBits(host(b, paramsTensor(b, m)), host(b, paramsTensor(b, full))) {
						t.Errorf("mode %s: initial values differ from Full with the same seed", mode)
					}
				}
			})
		}
	}
}

// paramsTensor wraps the flat data buffer as a tensor.
func paramsTensor(b tensor.Backend, m Model) *tensor.Tensor {
	data, _, n := m.Params().Flat()
	return tensor.NewTensor(data, n)
}

// TestLossOnlyModes: C, D and E build the Full network (same output bits)
// and say which mode they are, for the loss.
func TestLossOnlyModes(t *testing.T) {
	b := newBackend()
	full := forward(t, b, mustUHNO(t, b, tiny(1, ModeFull), 1), 1)
	for _, mode := range []string{ModeNoCBC, ModeNoH1, ModeMSE} {
		m := mustUHNO(t, b, tiny(1, mode), 1)
		if m.Mode() != mode || m.Name() != "uhno-"+mode {
			t.Errorf("mode %s: Mode() %q, Name() %q", mode, m.Mode(), m.Name())
		}
		if !sameBits(forward(t, b, m, 1), full) {
			t.Errorf("mode %s: output differs from Full", mode)
		}
	}
}

// TestNoNorm: mode I turns off the kernel normalisation in every Gaussian
// branch (Full has it on everywhere) and so changes the output.
func TestNoNorm(t *testing.T) {
	b := newBackend()
	for _, mode := range []string{ModeFull, ModeNoNorm} {
		m := mustUHNO(t, b, tiny(2, mode), 1)
		var gs []*gaussianBranch
		for _, e := range append(m.enc, m.mid) {
			gs = append(gs, e.gauss)
		}
		for _, d := range m.dec {
			gs = append(gs, d.gauss)
		}
		for i, g := range gs {
			if g.opt.Normalize != (mode == ModeFull) || g.opt.MaxRadius != 16 {
				t.Errorf("mode %s branch %d: %+v", mode, i, g.opt)
			}
		}
	}
	if sameBits(forward(t, b, mustUHNO(t, b, tiny(2, ModeFull), 1), 2), forward(t, b, mustUHNO(t, b, tiny(2, ModeNoNorm), 1), 2)) {
		t.Error("mode I gives the same output as Full")
	}
}

// TestSymDec checks Eq. dec-asym against mode H on every decoder stage:
// in Full z_G depends on the encoder skip and not on the up-sampled
// features' path to z_G, in H z_G = B_G(h~) ignores the skip, and z_F is
// the same in both.
func TestSymDec(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		b := newBackend()
		full := mustUHNO(t, b, tiny(dim, ModeFull), 1)
		sym := mustUHNO(t, b, tiny(dim, ModeSymDec), 1)
		levels, err := full.Levels(tinyGrid(dim))
		if err != nil {
			t.Fatal(err)
		}
		for i := range full.dec {
			coarse, fine := levels[len(levels)-len(full.dec)-1+i], levels[len(levels)-len(full.dec)+i]
			tp := tensor.NewTape(b)
			tp.SetGrad(false)
			h := input(tp, 1, 2, coarse.Channels, coarse.Grid)
			skip1 := input(tp, 2, 2, fine.Channels, fine.Grid)
			skip2 := input(tp, 3, 2, fine.Channels, fine.Grid)
			f1, f2 := full.dec[i].forward(tp, h, skip1, nil), full.dec[i].forward(tp, h, skip2, nil)
			s1, s2 := sym.dec[i].forward(tp, h, skip1, nil), sym.dec[i].forward(tp, h, skip2, nil)
			if sameBits(host(b, f1.zG), host(b, f2.zG)) {
				t.Errorf("%dD %s Full: z_G does not depend on the skip", dim, fine.Name)
			}
			if !sameBits(host(b, s1.zG), host(b, s2.zG)) {
				t.Errorf("%dD %s SymDec: z_G changed with the skip", dim, fine.Name)
			}
			if !sameBits(host(b, s1.zF), host(b, f1.zF)) || !sameBits(host(b, f1.zF), host(b, f2.zF)) {
				t.Errorf("%dD %s: z_F differs between modes or depends on the skip", dim, fine.Name)
			}
			// H's z_G is Full's Gaussian branch applied to h~ = Up(W_up h).
			ht := tp.Upsample2x(full.dec[i].wUp.forward(tp, h), false)
			if !sameBits(host(b, s1.zG), host(b, full.dec[i].forward(tp, h, ht, nil).zG)) {
				t.Errorf("%dD %s SymDec: z_G is not B_G(h~)", dim, fine.Name)
			}
		}
	}
}

// TestBranchModes: modes A and B report no CBC features and no masks;
// mode F reports the CBC features but no masks (no top-k).
func TestBranchModes(t *testing.T) {
	b := newBackend()
	for _, mode := range []string{ModeNoLocal, ModeNoGlobal, ModeNoSPAR} {
		m := mustUHNO(t, b, tiny(1, mode), 1)
		for _, stage := range append(append([]*block{}, m.enc...), m.mid) {
			if (stage.gauss == nil) != (mode == ModeNoLocal) || (stage.fourier == nil) != (mode == ModeNoGlobal) || stage.gate != nil {
				t.Errorf("mode %s: encoder stage has gauss=%v fourier=%v gate=%v", mode, stage.gauss != nil, stage.fourier != nil, stage.gate != nil)
			}
		}
		tp := tensor.NewTape(b)
		_, aux := m.Forward(tp, input(tp, 3, 2, 2, tinyGrid(1)))
		if len(aux.Masks) != 0 || (aux.ZF != nil) != (mode == ModeNoSPAR) {
			t.Errorf("mode %s: %d masks, CBC features %v", mode, len(aux.Masks), aux.ZF != nil)
		}
	}
}
