package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// Tests of the switches of issue 20 (Spec.DecoderResidual,
// SurrogateCentre, Upsample, SPARStages). TestDefaultBitIdentical
// (golden_test.go) checks that their defaults are the code as it was.

// with returns s with one switch set: "decoder_residual=outside" etc.
func with(s Spec, kv ...string) Spec {
	for _, e := range kv {
		k, v, _ := strings.Cut(e, "=")
		switch k {
		case "decoder_residual":
			s.DecoderResidual = v
		case "surrogate_centre":
			s.SurrogateCentre = v
		case "upsample":
			s.Upsample = v
		case "spar_stages":
			s.SPARStages = v
		default:
			panic("with: unknown switch " + k)
		}
	}
	return s
}

// TestGradSwitches checks the whole model's gradient against finite
// differences, with the routing held fixed (checkRoutedGrad), in 1D, 2D
// and 3D for each non-default switch value: the decoder residual outside
// the fusion, the threshold-centred surrogate, periodic up-sampling, and
// SPAR at the encoder or decoder stages only (mode F's W_o elsewhere).
func TestGradSwitches(t *testing.T) {
	for _, sw := range []string{"decoder_residual=outside", "surrogate_centre=threshold", "upsample=periodic",
		"spar_stages=encoder", "spar_stages=decoder"} {
		for dim := 1; dim <= 3; dim++ {
			t.Run(fmt.Sprintf("%s/%dD", sw, dim), func(t *testing.T) {
				checkRoutedGrad(t, with(tiny(dim, ModeFull), sw), 2, 20, 4, 5)
			})
		}
	}
}

// TestGradNoSPAROutside checks mode F with the decoder residual outside
// the fusion (smooth: no top-k) against finite differences.
func TestGradNoSPAROutside(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			b := newBackend()
			s := with(tiny(dim, ModeNoSPAR), "decoder_residual=outside")
			m := mustUHNO(t, b, s, 3)
			rescale(b, m, 30)
			xShape := append([]int{2, s.InChannels}, checkGrid(dim)...)
			names := names(m)
			gradcheck.Check(t, b, func(tp *tensor.Tape, in []*tensor.Tensor) *tensor.Tensor {
				bind(b, tp, m, names, in[1:])
				y, _ := m.Forward(tp, in[0])
				return y
			}, checkInputs(b, m, gradcheck.Random(6, tensor.Numel(xShape)), xShape, names), gradcheck.Options{MaxProbe: 2, Seed: 7, RelTol: checkTol})
		})
	}
}

// TestDecoderResidual checks the two readings of the decoder stage
// against their definitions, stage by stage: inside, z_F = B_F(h~) +
// W_R h~ and h' = GELU(SPAR(z_F, z_G)); outside, z_F = B_F(h~) and h' =
// GELU(W_R h~ + SPAR(z_F, z_G)), so the residual is counted once. Without
// a gate (modes A and B) both readings give the same bits; with one they
// differ.
func TestDecoderResidual(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		b := newBackend()
		in := mustUHNO(t, b, tiny(dim, ModeFull), 1)
		out := mustUHNO(t, b, with(tiny(dim, ModeFull), "decoder_residual=outside"), 1)
		levels, err := in.Levels(tinyGrid(dim))
		if err != nil {
			t.Fatal(err)
		}
		for i := range in.dec {
			coarse, fine := levels[len(levels)-len(in.dec)-1+i], levels[len(levels)-len(in.dec)+i]
			tp := tensor.NewTape(b)
			tp.SetGrad(false)
			h := input(tp, 1, 2, coarse.Channels, coarse.Grid)
			skip := input(tp, 2, 2, fine.Channels, fine.Grid)
			d := out.dec[i]
			ht := tp.Upsample2x(d.wUp.forward(tp, h), false)
			bF, wR := d.fourier.forward(tp, ht), d.wR.forward(tp, ht)
			o := d.forward(tp, h, skip, nil)
			if !sameBits(host(b, o.zF), host(b, bF)) {
				t.Errorf("%dD %s outside: z_F is not B_F(h~)", dim, fine.Name)
			}
			r, _, _ := d.fuse(tp, o.zF, o.zG, nil)
			if !sameBits(host(b, o.h), host(b, tp.GELU(tp.Add(wR, r)))) {
				t.Errorf("%dD %s outside: h' is not GELU(W_R h~ + SPAR(z_F, z_G))", dim, fine.Name)
			}
			oi := in.dec[i].forward(tp, h, skip, nil)
			if !sameBits(host(b, oi.zF), host(b, tp.Add(bF, wR))) {
				t.Errorf("%dD %s inside: z_F is not B_F(h~) + W_R h~", dim, fine.Name)
			}
			ri, _, _ := in.dec[i].fuse(tp, oi.zF, oi.zG, nil)
			if !sameBits(host(b, oi.h), host(b, tp.GELU(ri))) {
				t.Errorf("%dD %s inside: h' is not GELU(SPAR(z_F, z_G))", dim, fine.Name)
			}
			if sameBits(host(b, o.h), host(b, oi.h)) {
				t.Errorf("%dD %s: the two readings give the same output", dim, fine.Name)
			}
		}
	}
	b := newBackend()
	for _, mode := range []string{ModeNoLocal, ModeNoGlobal, ModeNoSPAR} {
		s := tiny(1, mode)
		in, out := mustUHNO(t, b, s, 1), mustUHNO(t, b, with(s, "decoder_residual=outside"), 1)
		tp := tensor.NewTape(b)
		tp.SetGrad(false)
		x := input(tp, 3, 2, 2, tinyGrid(1))
		yi, _ := in.Forward(tp, x)
		yo, aux := out.Forward(tp, x)
		if same := sameBits(host(b, yi), host(b, yo)); same != (mode != ModeNoSPAR) {
			t.Errorf("mode %s: inside and outside agree: %t, want %t", mode, same, mode != ModeNoSPAR)
		}
		if (aux.ZF != nil) != (mode == ModeNoSPAR) {
			t.Errorf("mode %s outside: CBC features %v", mode, aux.ZF != nil)
		}
	}
}

// TestSPARStages checks where SPAR routes: every stage by default, the
// encoder blocks and bottleneck, or the decoder stages, the others
// fusing with W_o; the masks name the routed stages, and the parameter
// count follows (CountUHNO agrees with the allocation).
func TestSPARStages(t *testing.T) {
	b := newBackend()
	for _, c := range []struct {
		stages string
		masks  []string
	}{
		{"", []string{"enc.0", "enc.1", "mid", "dec.1", "dec.0"}},
		{SPARAll, []string{"enc.0", "enc.1", "mid", "dec.1", "dec.0"}},
		{SPAREncoder, []string{"enc.0", "enc.1", "mid"}},
		{SPARDecoder, []string{"dec.1", "dec.0"}},
	} {
		for dim := 1; dim <= 3; dim++ {
			for _, mode := range []string{ModeFull, ModeSymDec, ModeNoNorm} {
				s := with(tiny(dim, mode), "spar_stages="+c.stages)
				m := mustUHNO(t, b, s, 1)
				if got, want := m.Params().Count(), CountUHNO(s); got != want {
					t.Errorf("%s %dD mode %s: %d parameters allocated, CountUHNO %d", c.stages, dim, mode, got, want)
				}
				tp := tensor.NewTape(b)
				tp.SetGrad(false)
				_, aux := m.Forward(tp, input(tp, 3, 2, 2, tinyGrid(dim)))
				if fmt.Sprint(aux.Stages) != fmt.Sprint(c.masks) || len(aux.Masks) != len(c.masks) {
					t.Errorf("%q %dD mode %s: routed stages %v, want %v", c.stages, dim, mode, aux.Stages, c.masks)
				}
				if aux.ZF == nil || aux.ZG == nil {
					t.Errorf("%q %dD mode %s: no CBC features", c.stages, dim, mode)
				}
			}
		}
	}
}

// TestSwitchCounts checks the parameter counts on the paper's Burgers
// configuration: a stage without SPAR holds W_o (2C -> C) instead of W_1
// (2C -> C) and W_2 (C -> 1), C + 1 parameters fewer; the other switches
// change no count.
func TestSwitchCounts(t *testing.T) {
	c := taskConfig(t, "burgers")
	s, err := SpecFromConfig(c, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	full := CountUHNO(s) // 6,696,892 (TestPaperCounts)
	enc := (32 + 1) + (64 + 1) + (128 + 1) + (256 + 1)
	dec := (128 + 1) + (64 + 1) + (32 + 1)
	for sw, want := range map[string]int{
		"decoder_residual=outside":   full,
		"surrogate_centre=threshold": full,
		"upsample=periodic":          full,
		"spar_stages=encoder":        full - dec,
		"spar_stages=decoder":        full - enc,
	} {
		if got := CountUHNO(with(s, sw)); got != want {
			t.Errorf("%s: %d parameters, want %d", sw, got, want)
		}
	}
}

// TestSwitchSpec checks Spec validation of the switches and the build
// record's form: a default spec marshals without the switch fields (so a
// record is the bytes it was before them), SpecFromConfig stores each
// default as "", and a non-default value survives a JSON round trip.
func TestSwitchSpec(t *testing.T) {
	base := tiny(1, ModeFull)
	for _, c := range []struct {
		sw, mode string
		ok       bool
	}{
		{"decoder_residual=inside", ModeFull, true},
		{"decoder_residual=outside", ModeNoSPAR, true},
		{"decoder_residual=out", ModeFull, false},
		{"surrogate_centre=threshold", ModeFull, true},
		{"surrogate_centre=tau", ModeFull, false},
		{"upsample=periodic", ModeNoUShape, true},
		{"upsample=wrap", ModeFull, false},
		{"spar_stages=all", ModeNoSPAR, true},
		{"spar_stages=encoder", ModeSymDec, true},
		{"spar_stages=decoder", ModeNoNorm, true},
		{"spar_stages=encoder", ModeNoSPAR, false},
		{"spar_stages=decoder", ModeNoLocal, false},
		{"spar_stages=decoder", ModeNoGlobal, false},
		{"spar_stages=encoder", ModeNoUShape, false},
		{"spar_stages=middle", ModeFull, false},
	} {
		s := with(base, c.sw)
		s.Mode = c.mode
		if s.Mode == ModeNoUShape {
			s.FlatWidth = 8
		}
		if err := s.Validate(); (err == nil) != c.ok {
			t.Errorf("%s mode %s: Validate = %v, want ok %t", c.sw, c.mode, err, c.ok)
		}
	}
	raw, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"DecoderResidual", "SurrogateCentre", "Upsample", "SPARStages"} {
		if strings.Contains(string(raw), f) {
			t.Errorf("a default spec's JSON holds %s: %s", f, raw)
		}
	}
	cfg := taskConfig(t, "burgers")
	cfg.Model.DecoderResidual = "inside" // the code's default (an empty value, as in older state.json files)
	d, err := SpecFromConfig(cfg, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.DecoderResidual != "" || d.SurrogateCentre != "" || d.Upsample != "" || d.SPARStages != "" {
		t.Errorf("SpecFromConfig of the defaults: %q %q %q %q, want all empty", d.DecoderResidual, d.SurrogateCentre, d.Upsample, d.SPARStages)
	}
	// The built-in configurations choose "outside" explicitly (issue 20's
	// decision), so a new run records it and an old record (empty) stays
	// "inside".
	b, err := SpecFromConfig(taskConfig(t, "burgers"), 1, 1)
	if err != nil || b.DecoderResidual != DecoderOutside {
		t.Errorf("built-in burgers: decoder residual %q (%v), want %q", b.DecoderResidual, err, DecoderOutside)
	}
	cfg.Model.DecoderResidual, cfg.SPAR.SurrogateCentre, cfg.Model.Upsample, cfg.Model.SPARStages = "outside", "threshold", "periodic", "decoder"
	set, err := SpecFromConfig(cfg, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = json.Marshal(set)
	var back Spec
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.DecoderResidual != "outside" || back.SurrogateCentre != "threshold" || back.Upsample != "periodic" || back.SPARStages != "decoder" {
		t.Errorf("round trip of %s gave %+v", raw, back)
	}
	var old Spec // a record from before the switches
	if err := json.Unmarshal([]byte(`{"Dim":1,"Mode":"full"}`), &old); err != nil || old.DecoderResidual != "" || old.SPARStages != "" {
		t.Errorf("an old record decodes to %+v, %v", old, err)
	}
}
