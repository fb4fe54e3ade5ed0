package model

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

func TestAngleDegrees(t *testing.T) {
	s3 := float32(math.Sqrt(3))
	for _, c := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 2, 3}, []float32{1, 2, 3}, 0},
		{[]float32{1, 2, 3}, []float32{0.5, 1, 1.5}, 0},
		{[]float32{1, 2, 3}, []float32{-2, -4, -6}, 180},
		{[]float32{1, 0}, []float32{0, 5}, 90},
		{[]float32{1, 0}, []float32{1, s3}, 60},
		{[]float32{1, 0}, []float32{-1, s3}, 120},
	} {
		if got := angleDegrees(c.a, c.b); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("angle(%v, %v) = %g, want %g", c.a, c.b, got, c.want)
		}
	}
	if got := angleDegrees([]float32{0, 0}, []float32{1, 2}); !math.IsNaN(got) {
		t.Errorf("angle with a zero vector = %g, want NaN", got)
	}
}

// setParam fills the named parameter of m with v.
func setParam(t *testing.T, b tensor.Backend, m *Additive, name string, v ...float32) {
	t.Helper()
	p := m.Params().Lookup(name)
	if p == nil {
		t.Fatalf("no parameter %s", name)
	}
	vals := make([]float32, p.Numel())
	for i := range vals {
		vals[i] = v[i%len(v)]
	}
	b.Upload(p.Data, vals)
}

// TestBranchAnglesKnownAnswer builds a case whose angles are known in
// closed form. With one channel and a spatially constant input every field
// in the network is constant (the lifting, the 1x1 mixers, GELU, a
// spectral convolution, which keeps only the DC mode of a constant field,
// and a depthwise convolution all map constants to constants), and so is
// the upstream gradient of each layer up to the shared prediction error:
// delta_l(x) = kappa_l e(x). The weight gradients then move only the DC
// weight of the spectral convolution and the sum of the depthwise taps,
// and both output changes are constant fields,
//
//	dz_F^(l) = c_F a_F^2 kappa_F,l sum_x e(x),   dz_G^(l) = 3 a_G^2 kappa_G,l sum_x e(x),
//
// (c_F > 0, a the layer's constant input), parallel when kappa_F,l and
// kappa_G,l have the same sign and anti-parallel otherwise. At the last
// layer the stacks are summed, kappa_F = kappa_G, and the angle is 0. One
// layer earlier kappa carries the factor (DC weight + W) GELU'(.) of the
// next Fourier block and (sum of taps + V) GELU'(.) of the next local
// block; the weights below make the first positive (0.1 + 1) and the
// second negative (0.6 - 1) with every GELU input positive, so the angle
// is 180.
func TestBranchAnglesKnownAnswer(t *testing.T) {
	b := cpu.New(2)
	s := AdditiveSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 1, K0: 2, Blocks: 2, ProjHidden: 1}
	m, err := NewAdditive(b, s, 1)
	if err != nil {
		t.Fatal(err)
	}
	setParam(t, b, m, "lift.w", 1)
	setParam(t, b, m, "lift.b", 0.5)
	for _, l := range []string{"0", "1"} {
		setParam(t, b, m, "fourier."+l+".spectral.w", 0.1)
		setParam(t, b, m, "fourier."+l+".w.w", 1)
		setParam(t, b, m, "fourier."+l+".w.b", 0.1)
		setParam(t, b, m, "local."+l+".depthwise.w", 0.2)
		setParam(t, b, m, "local."+l+".depthwise.b", 0)
	}
	setParam(t, b, m, "local.0.w.w", 1)
	setParam(t, b, m, "local.0.w.b", 0.1)
	setParam(t, b, m, "local.1.w.w", -1)
	setParam(t, b, m, "local.1.w.b", 0)
	setParam(t, b, m, "proj.0.w", 1)
	setParam(t, b, m, "proj.0.b", 0)
	setParam(t, b, m, "proj.1.w", 1)
	setParam(t, b, m, "proj.1.b", 0)

	shape := []int{2, 1, 8}
	in := make([]float32, 16)
	for i := range in {
		in[i] = 1
	}
	// Targets below and above the prediction (about 1): the error's sum
	// changes sign, which flips both output changes and no angle.
	for _, target := range []float32{0, 10} {
		tgt := make([]float32, 16)
		for i := range tgt {
			tgt[i] = target
		}
		for _, c := range []struct {
			v1   float32 // the second local mixer V_1
			want []float64
		}{{-1, []float64{180, 0}}, {1, []float64{0, 0}}} {
			setParam(t, b, m, "local.1.w.w", c.v1)
			got, err := BranchAngles(m, b, in, tgt, shape, shape)
			if err != nil {
				t.Fatal(err)
			}
			for l := range c.want {
				if math.Abs(got[l]-c.want[l]) > 0.01 {
					t.Errorf("target %g, V_1 = %g: layer %d angle %g, want %g", target, c.v1, l, got[l], c.want[l])
				}
			}
		}
	}
}

// randomAdditive is a small flat additive hybrid with PyTorch's
// initialisation and a random batch for it.
func randomAdditive(t *testing.T, b tensor.Backend, dim int, seed uint64) (*Additive, []float32, []float32, []int, []int) {
	t.Helper()
	s := AdditiveSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 6, K0: 4, Blocks: 4, ProjHidden: 8}
	m, err := NewAdditive(b, s, seed)
	if err != nil {
		t.Fatal(err)
	}
	grid := map[int][]int{1: {32}, 2: {12, 10}, 3: {6, 4, 6}}[dim]
	inShape := append([]int{3, 2}, grid...)
	tgtShape := append([]int{3, 1}, grid...)
	return m, gradcheck.Random(seed+1, tensor.Numel(inShape)), gradcheck.Random(seed+2, tensor.Numel(tgtShape)), inShape, tgtShape
}

// TestBranchAnglesMatchesReference recomputes the angles of a random
// model from the definition, with the layers' inputs rebuilt from the
// named parameters (not from ForwardTrace) and the angle summed here, in
// 1D, 2D and 3D.
func TestBranchAnglesMatchesReference(t *testing.T) {
	b := cpu.New(2)
	for dim := 1; dim <= 3; dim++ {
		m, in, tgt, is, ts := randomAdditive(t, b, dim, 40)
		s := m.Spec()
		P := func(name string, l int) *tensor.Tensor {
			return m.Params().Lookup(strings.ReplaceAll(name, "L", strconv.Itoa(l)))
		}
		tp := tensor.NewTape(b)
		x, y := tp.FromHost(in, is...), tp.FromHost(tgt, ts...)
		m.Params().ZeroGrad()
		pred, _ := m.Forward(tp, x)
		tp.Backward(tp.MSE(pred, y))
		tp.SetGrad(false)
		h := tp.Pointwise(x, P("lift.w", 0), P("lift.b", 0))
		hF, hG := h, h
		want := make([]float64, s.Blocks)
		for l := range s.Blocks {
			dzF := tensor.ToHost(b, tp.SpectralConv(hF, P("fourier.L.spectral.w", l).Grad, s.K0, tensor.FirstModes(s.K0, hF.Shape[len(hF.Shape)-1])))
			dzG := tensor.ToHost(b, tp.DepthwiseConv(hG, P("local.L.depthwise.w", l).Grad, nil))
			var fg, ff, gg float64
			for i := range dzF {
				fg += float64(dzF[i]) * float64(dzG[i])
				ff += float64(dzF[i]) * float64(dzF[i])
				gg += float64(dzG[i]) * float64(dzG[i])
			}
			want[l] = math.Acos(fg/math.Sqrt(ff*gg)) * 180 / math.Pi
			hF = tp.Add(tp.SpectralConv(hF, P("fourier.L.spectral.w", l), s.K0, tensor.FirstModes(s.K0, hF.Shape[len(hF.Shape)-1])), tp.Pointwise(hF, P("fourier.L.w.w", l), P("fourier.L.w.b", l)))
			hG = tp.Add(tp.DepthwiseConv(hG, P("local.L.depthwise.w", l), P("local.L.depthwise.b", l)), tp.Pointwise(hG, P("local.L.w.w", l), P("local.L.w.b", l)))
			if l < s.Blocks-1 {
				hF, hG = tp.GELU(hF), tp.GELU(hG)
			}
		}
		tp.Release()
		got, err := BranchAngles(m, b, in, tgt, is, ts)
		if err != nil {
			t.Fatal(err)
		}
		for l := range want {
			if math.Abs(got[l]-want[l]) > 1e-6 {
				t.Errorf("%dD layer %d: angle %g, reference %g", dim, l, got[l], want[l])
			}
		}
	}
}

// TestBranchAnglesRange: on random models and batches in 1D, 2D and 3D
// every angle is a number in [0, 180], one per block.
func TestBranchAnglesRange(t *testing.T) {
	b := cpu.New(2)
	for dim := 1; dim <= 3; dim++ {
		for seed := uint64(1); seed <= 3; seed++ {
			m, in, tgt, is, ts := randomAdditive(t, b, dim, 10*seed)
			got, err := BranchAngles(m, b, in, tgt, is, ts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != m.Spec().Blocks {
				t.Fatalf("%d angles for %d blocks", len(got), m.Spec().Blocks)
			}
			for l, a := range got {
				if !(a >= 0 && a <= 180) {
					t.Errorf("%dD seed %d layer %d: angle %g outside [0, 180]", dim, seed, l, a)
				}
			}
			t.Logf("%dD seed %d: %.1f", dim, seed, got)
		}
	}
}

// TestBranchAnglesScaleInvariant: scaling the loss scales both gradients
// and leaves the angles unchanged.
func TestBranchAnglesScaleInvariant(t *testing.T) {
	b := cpu.New(2)
	m, in, tgt, is, ts := randomAdditive(t, b, 2, 5)
	base, err := branchAngles(m, b, in, tgt, is, ts, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []float32{1e-3, 37} {
		got, err := branchAngles(m, b, in, tgt, is, ts, scale)
		if err != nil {
			t.Fatal(err)
		}
		for l := range base {
			if math.Abs(got[l]-base[l]) > 1e-3 {
				t.Errorf("loss x %g: layer %d angle %g, %g unscaled", scale, l, got[l], base[l])
			}
		}
	}
	// The angles are not all the same: the test is not vacuous.
	if slices.Min(base) == slices.Max(base) {
		t.Errorf("all angles equal: %v", base)
	}
}

// TestBranchAnglesLeavesTrainingAlone: the call leaves the weights bit for
// bit as they were and the gradient buffer zeroed, and a training run
// that calls it between its AdamW steps ends with the same bits as one
// that does not.
func TestBranchAnglesLeavesTrainingAlone(t *testing.T) {
	b := cpu.New(2)
	flat := func(m *Additive) (w, g []float32) {
		data, grad, n := m.Params().Flat()
		w, g = make([]float32, n), make([]float32, n)
		b.Download(w, data)
		b.Download(g, grad)
		return w, g
	}
	train := func(angles bool) []float32 {
		m, in, tgt, is, ts := randomAdditive(t, b, 2, 21)
		data, grad, n := m.Params().Flat()
		mom, vel := b.Alloc(n), b.Alloc(n)
		tp := tensor.NewTape(b)
		defer tp.Release()
		for step := 1; step <= 3; step++ {
			if angles {
				before, _ := flat(m)
				if _, err := BranchAngles(m, b, in, tgt, is, ts); err != nil {
					t.Fatal(err)
				}
				after, g := flat(m)
				if !slices.Equal(before, after) {
					t.Fatal("BranchAngles changed the weights")
				}
				if slices.IndexFunc(g, func(v float32) bool { return v != 0 }) >= 0 {
					t.Fatal("BranchAngles left a non-zero gradient")
				}
			}
			// A training step on a batch of its own.
			x := tp.FromHost(gradcheck.Random(uint64(100+step), tensor.Numel(is)), is...)
			y := tp.FromHost(gradcheck.Random(uint64(200+step), tensor.Numel(ts)), ts...)
			pred, _ := m.Forward(tp, x)
			tp.Backward(tp.MSE(pred, y))
			b.AdamW(data, grad, mom, vel, n, tensor.AdamWHyper{LR: 1e-2, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: step})
			m.Params().ZeroGrad()
			tp.Reset()
		}
		w, _ := flat(m)
		return w
	}
	plain, probed := train(false), train(true)
	for i := range plain {
		if math.Float32bits(plain[i]) != math.Float32bits(probed[i]) {
			t.Fatalf("weight %d: %g without the diagnostic, %g with it", i, plain[i], probed[i])
		}
	}
}

func TestBranchAnglesErrors(t *testing.T) {
	b := cpu.New(1)
	m, in, tgt, is, ts := randomAdditive(t, b, 1, 3)
	for name, c := range map[string]struct {
		in, tgt []float32
		is, ts  []int
	}{
		"input channels": {in, tgt, []int{3, 1, 64}, ts},
		"input rank":     {in, tgt, []int{3, 2, 4, 8}, []int{3, 1, 4, 8}},
		"target grid":    {in, tgt, is, []int{3, 1, 16}},
		"target batch":   {in, tgt, is, []int{2, 1, 32}},
		"values":         {in[:10], tgt, is, ts},
		"grid too small": {in[:6], tgt[:3], []int{3, 2, 1}, []int{3, 1, 1}},
	} {
		if _, err := BranchAngles(m, b, c.in, c.tgt, c.is, c.ts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
