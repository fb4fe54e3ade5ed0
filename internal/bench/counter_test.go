package bench

import (
	"math"
	"slices"
	"testing"

	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/testutil"
)

// TestCounterForwardsUnchanged runs the same training steps and inference
// forwards of twin models (same spec, same seed) on the plain CPU backend
// and through a Counter, and requires bit-identical losses, predictions and
// parameters after each AdamW step: counting must not change any result.
func TestCounterForwardsUnchanged(t *testing.T) {
	type build func(tensor.Backend) (model.Model, int, int, []int)
	uhno := func(dim int, mode string) build {
		return func(b tensor.Backend) (model.Model, int, int, []int) {
			return mustUHNO(t, b, testutil.TinyUHNO(dim, 2, mode)), 2, 1, tinyGrid(dim)
		}
	}
	fno := func(b tensor.Backend) (model.Model, int, int, []int) {
		return mustFNO(t, b, model.FNOSpec{Dim: 1, InChannels: 2, OutChannels: 1, Width: 6, K0: 5, Blocks: 4, ProjHidden: 8}), 2, 1, []int{16}
	}
	tests := []struct {
		name  string
		build build
	}{
		{"uhno 1D", uhno(1, model.ModeFull)},
		{"uhno 2D", uhno(2, model.ModeFull)},
		{"uhno 1D mode F", uhno(1, model.ModeNoSPAR)},
		{"fno 1D", fno},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain := newCPU()
			mA, in, out, grid := tt.build(plain)
			mB, _, _, _ := tt.build(plain)
			opt := Options{Warmup: 0, Repeats: 1, Optim: paperAdamW, Seed: 7}
			sA := newStepper(tinyCase("plain", mA, plain, in, out, grid), opt)
			sB := newStepper(tinyCase("counted", mB, plain, in, out, grid), opt)
			ctr := NewCounter(plain)
			tpA, tpB := tensor.NewTape(plain), tensor.NewTape(ctr)
			nop := func(string) {}
			for step := 1; step <= 3; step++ {
				if err := sA.train(tpA, plain, nop); err != nil {
					t.Fatal(err)
				}
				if err := sB.train(tpB, ctr, ctr.SetPhase); err != nil {
					t.Fatal(err)
				}
				sA.infer(tpA, plain, nop)
				sB.infer(tpB, ctr, ctr.SetPhase)
				pA, _, n := mA.Params().Flat()
				pB, _, _ := mB.Params().Flat()
				wA, wB := make([]float32, n), make([]float32, n)
				plain.Download(wA, pA)
				plain.Download(wB, pB)
				for _, c := range []struct {
					what string
					a, b []float32
				}{{"loss", sA.loss, sB.loss}, {"prediction", sA.pred, sB.pred}, {"parameters", wA, wB}} {
					if !testutil.SameBits(c.a, c.b) {
						t.Fatalf("step %d: the %s differs through the Counter", step, c.what)
					}
				}
			}
			counts := ctr.Counts()
			if Total(counts, PhaseForward) == 0 || Total(counts, PhaseBackward) == 0 || Total(counts, PhaseOptimizer) == 0 {
				t.Fatalf("a training phase counted nothing: %+v", counts)
			}
		})
	}
}

// TestFNOForwardFLOPs checks a whole model against a count by hand: the
// FNO is lift, four blocks (spectral conv + 1x1 + add, GELU after all but
// the last) and the projection 1x1 -> GELU -> 1x1.
func TestFNOForwardFLOPs(t *testing.T) {
	const (
		B, In, Out, W, P, N, K = 2, 2, 1, 6, 8, 16, 5
	)
	be := newCPU()
	m := mustFNO(t, be, model.FNOSpec{Dim: 1, InChannels: In, OutChannels: Out, Width: W, K0: K, Blocks: 4, ProjHidden: P})
	c := tinyCase("fno", m, be, In, Out, []int{N})
	s := newStepper(c, Options{Repeats: 1, Optim: paperAdamW})
	ctr := NewCounter(be)
	s.infer(tensor.NewTape(ctr), ctr, ctr.SetPhase)

	fft := 5.0 * N * math.Log2(N) // per field
	lift := 2*B*W*In*N + B*W*N
	spectral := fft*B*W*2 + 8*B*W*W*K // M = K = 5 modes on N = 16
	block := spectral + float64(2*B*W*W*N+B*W*N) + B*W*N
	proj := 2*B*P*W*N + B*P*N + 5*B*P*N + 2*B*Out*P*N + B*Out*N
	want := float64(lift) + 4*block + 3*5*B*W*N + float64(proj)
	if got := Total(ctr.Counts(), PhaseInference); got != int64(math.Round(want)) {
		t.Fatalf("FNO forward: %d FLOPs, want %.0f by hand", got, want)
	}
	calls := map[string]int64{}
	for _, oc := range ctr.Counts() {
		calls[oc.Op] = oc.Calls
	}
	// The CPU fuses the projection (tensor.Projector): one Projection in
	// place of two Pointwise and a GELU, counted with their FLOPs.
	if calls["SpectralConv"] != 4 || calls["Pointwise"] != 5 || calls["GELU"] != 3 || calls["Projection"] != 1 || calls["Add"] != 4 {
		t.Fatalf("FNO forward calls %v; want 4 SpectralConv, 5 Pointwise, 3 GELU, 1 Projection, 4 Add", calls)
	}
}

// TestInferenceCountsEqualForward: the forward of a training step and an
// inference forward run the same operations, so the counting pass gives
// the same counts op by op. The sigmas are the paper's (0.5, 1, 2.5):
// sigma = 1 sits on a radius boundary that the first AdamW step crosses,
// so the pass must count both forwards at the same weights. Memory
// operations are left out: the recording tape allocates differently, and
// the training step also uploads the target.
func TestInferenceCountsEqualForward(t *testing.T) {
	be := newCPU()
	for _, mode := range []string{model.ModeFull, model.ModeNoSPAR, model.ModeNoUShape} {
		spec := testutil.TinyUHNO(1, 2, mode)
		spec.Sigmas = []float64{0.5, 1, 2.5}
		if mode == model.ModeNoUShape {
			spec.FlatWidth = 8
		}
		m := mustUHNO(t, be, spec)
		s := newStepper(tinyCase("uhno", m, be, 2, 1, tinyGrid(1)), Options{Repeats: 1, Optim: paperAdamW})
		counts, err := s.count()
		if err != nil {
			t.Fatal(err)
		}
		fwd, inf := map[string]OpCount{}, map[string]OpCount{}
		for _, oc := range counts {
			switch oc.Phase {
			case PhaseForward:
				fwd[oc.Op] = oc
			case PhaseInference:
				inf[oc.Op] = oc
			}
		}
		for op, f := range fwd {
			if slices.Contains([]string{"Alloc", "Free", "View", "Upload", "Download", "Zero", "Copy"}, op) {
				continue
			}
			if i := inf[op]; i.Calls != f.Calls || i.FLOPs != f.FLOPs {
				t.Errorf("mode %s, %s: forward %d calls %d FLOPs, inference %d calls %d FLOPs", mode, op, f.Calls, f.FLOPs, i.Calls, i.FLOPs)
			}
		}
		if f, i := Total(counts, PhaseForward), Total(counts, PhaseInference); f != i || f == 0 {
			t.Errorf("mode %s: forward %d FLOPs, inference %d", mode, f, i)
		}
	}
}

// TestCounterBytes checks the byte counts behind GB/s on known answers:
// 4 bytes per element read or written, 8 per element accumulated into.
func TestCounterBytes(t *testing.T) {
	b := newCPU()
	ctr := NewCounter(b)
	tp := tensor.NewTape(b)
	defer tp.Release()
	const bt, c, n = 2, 3, 8 // batch, channels, points
	x := tp.FromHost(make([]float32, bt*c*n), bt, c, n)
	y := tp.FromHost(make([]float32, bt*c*n), bt, c, n)
	z := tp.FromHost(make([]float32, bt*c*n), bt, c, n)
	w := tp.FromHost(make([]float32, 5*c), 5, c)
	bias := tp.FromHost(make([]float32, 5), 5)
	y5 := tp.FromHost(make([]float32, bt*5*n), bt, 5, n)
	dw := tp.FromHost(make([]float32, 5*c), 5, c)
	dbias := tp.FromHost(make([]float32, 5), 5)
	m := bt * c * n
	p, g, mo, v := b.Alloc(10), b.Alloc(10), b.Alloc(10), b.Alloc(10)
	for _, tc := range []struct {
		op   string
		call func()
		want int64
	}{
		{"Add", func() { ctr.Add(z, x, y) }, 4 * 3 * int64(m)},
		{"AddScaled", func() { ctr.AddScaled(z, x, 2) }, 4 * 3 * int64(m)},
		{"Zero", func() { ctr.Zero(z.Data) }, 4 * int64(m)},
		{"Copy", func() { ctr.Copy(z.Data, x.Data) }, 8 * int64(m)},
		{"Pointwise", func() { ctr.Pointwise(y5, x, w, bias) }, 4 * int64(bt*5*n+m+5*c+5)},
		// dx, dw, dbias accumulated; dy, x, w read
		{"PointwiseBackward", func() { ctr.PointwiseBackward(z, dw, dbias, y5, x, w) }, 8*int64(m+5*c+5) + 4*int64(bt*5*n+m+5*c)},
		{"PointwiseBackward", func() { ctr.PointwiseBackward(nil, dw, nil, y5, x, w) }, 8*int64(5*c) + 4*int64(bt*5*n+m+5*c)},
		// two of the three channels: read and written, dst also read when accumulating
		{"ChannelCopy", func() { ctr.ChannelCopy(z, 0, x, 1, 2, false) }, 2 * 4 * int64(bt*2*n)},
		{"ChannelCopy", func() { ctr.ChannelCopy(z, 0, x, 1, 2, true) }, 3 * 4 * int64(bt*2*n)},
		{"AdamW", func() {
			ctr.AdamW(p, g, mo, v, 10, tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Step: 1})
		}, 28 * 10},
	} {
		ctr.Reset()
		tc.call()
		counts := ctr.Counts()
		if len(counts) != 1 || counts[0].Op != tc.op || counts[0].Bytes != tc.want {
			t.Errorf("%s: counted %+v, want %d bytes", tc.op, counts, tc.want)
		}
	}
}
