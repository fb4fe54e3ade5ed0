package dynamics

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/data"
	"uhno/internal/data/h5/h5test"
	"uhno/internal/eval"
	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/testutil"
)

// wavePlan opens a PDEBench-layout 1D file of n trajectories of nt
// frames of a wave moving one cell per frame.
func wavePlan(t *testing.T, n, nt, nx int) *data.Plan {
	t.Helper()
	u := make([]float32, n*nt*nx)
	for i := range n {
		for f := range nt {
			for j := range nx {
				x := 2 * math.Pi * float64(j-f) / float64(nx)
				u[(i*nt+f)*nx+j] = float32(math.Sin(x+0.7*float64(i)) + 0.3*math.Sin(3*x))
			}
		}
	}
	times := make([]float32, nt)
	for f := range times {
		times[f] = float32(f)
	}
	path := filepath.Join(t.TempDir(), "wave.h5")
	if err := h5test.Write(path, []h5test.Dataset{
		{Name: "tensor", Dims: []int{n, nt, nx}, Data: u},
		{Name: "x-coordinate", Dims: []int{nx}, Data: h5test.Coordinate(nx)},
		{Name: "t-coordinate", Dims: []int{nt}, Data: times},
	}, nil); err != nil {
		t.Fatal(err)
	}
	return openPlan(t, path, data.Sampling{History: 1})
}

func openPlan(t *testing.T, path string, s data.Sampling) *data.Plan {
	t.Helper()
	ds, err := data.Open(path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	p, err := ds.Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func runProbe(t *testing.T, m model.Model, b tensor.Backend, src eval.Source, opt ProbeOptions) Record {
	t.Helper()
	p, err := NewProbe(m, b, src, opt)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != ProbeName || p.Every != opt.Every {
		t.Fatalf("probe %q every %d", p.Name, p.Every)
	}
	v, err := p.Run(context.Background(), opt.Every)
	if err != nil {
		t.Fatal(err)
	}
	rec := v.(Record)
	// The record survives the log.
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(raw, &back); err != nil || back.check() != nil {
		t.Fatalf("record does not read back: %v %v", err, back.check())
	}
	return rec
}

// TestProbeUHNO rolls a U-HNO out through the probe: the bands and relL2
// are eval's (Measure of eval.Rollout), the SPAR statistics are those of
// a forward pass on the trajectories' initial frames, in trajectory order
// and whatever the batching, and the weights are untouched.
func TestProbeUHNO(t *testing.T) {
	const n, nt, nx, steps = 7, 8, 32, 4
	p := wavePlan(t, n, nt, nx)
	b := cpu.New(2)
	m, err := model.NewUHNO(b, testutil.TinyUHNO(1, 1, model.ModeFull), 3)
	if err != nil {
		t.Fatal(err)
	}
	before := tensor.ToHost(b, tensor.NewTensor(m.Params().List()[0].Data, m.Params().List()[0].Numel()))
	g := eval.Grid{Channels: 1, Shape: []int{nx}, Spacing: []float64{1.0 / nx}, Periodic: true}
	trajs := []int{6, 0, 2, 3, 5, 1, 4}
	src := eval.Source{Plan: p, Trajs: trajs, Grid: g}
	opt := ProbeOptions{Every: 5, Steps: steps, Batch: 3, RhoRange: [2]float64{0.1, 0.9}}
	rec := runProbe(t, m, b, src, opt)

	o, err := eval.Rollout(context.Background(), m, b, src, eval.RolloutOptions{Steps: steps, Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := Measure(o)
	if rec.Trajectories != n || rec.RolloutSteps != steps || rec.Static || len(rec.BandSteps) != steps ||
		!reflect.DeepEqual(rec.Band, want.Band) || rec.RelL2 != want.RelL2 || rec.BandHorizon != want.BandSteps[steps-1] {
		t.Errorf("record %+v, want the measures of eval.Rollout %+v", rec, want)
	}
	if stages := []string{"enc.0", "enc.1", "mid", "dec.1", "dec.0"}; !slices.Equal(rec.Stages, stages) || len(rec.Contrast) != 5 || len(rec.Rho) != 5 {
		t.Fatalf("stages %v with %d contrast lists, want %v", rec.Stages, len(rec.Contrast), stages)
	}
	if rec.RhoRange == nil || *rec.RhoRange != opt.RhoRange {
		t.Errorf("rho range %v, want %v", rec.RhoRange, opt.RhoRange)
	}

	// One forward pass on the initial frames of the trajectories, in order.
	x := make([]float32, 0, n*nx)
	for _, tr := range trajs {
		block := make([]float32, p.ResidentLen())
		if err := p.ReadResident(block, tr); err != nil {
			t.Fatal(err)
		}
		in, tgt := make([]float32, nx), make([]float32, nx)
		p.PairFrom(block, 0, in, tgt)
		x = append(x, in...)
	}
	tp := tensor.NewTape(b)
	defer tp.Release()
	tp.SetGrad(false)
	_, aux := m.Forward(tp, tp.FromHost(x, n, 1, nx))
	for i, st := range aux.Stats {
		h := tensor.ToHost(b, st)
		for k := range n {
			c, rho := h[3*k], h[3*k+1]
			if math.Abs(float64(rec.Contrast[i][k]-c)) > 1e-5*math.Abs(float64(c)) || math.Abs(float64(rec.Rho[i][k]-rho)) > 1e-6 {
				t.Fatalf("stage %s, trajectory %d: c %g rho %g, want %g %g", rec.Stages[i], trajs[k], rec.Contrast[i][k], rec.Rho[i][k], c, rho)
			}
			if rho < 0.1 || rho > 0.9 {
				t.Errorf("rho %g outside its clip range", rho)
			}
		}
	}
	// All at once (Batch 0): the same statistics.
	opt.Batch = 0
	all := runProbe(t, m, b, src, opt)
	for i := range all.Contrast {
		for k := range n {
			if d := math.Abs(float64(all.Contrast[i][k] - rec.Contrast[i][k])); d > 1e-5 {
				t.Fatalf("stage %d, trajectory %d: c %g in one batch, %g in batches of 3", i, k, all.Contrast[i][k], rec.Contrast[i][k])
			}
		}
	}
	after := tensor.ToHost(b, tensor.NewTensor(m.Params().List()[0].Data, m.Params().List()[0].Numel()))
	if !slices.Equal(before, after) {
		t.Error("the probe changed the weights")
	}
}

// TestProbeWithoutRouting: FNO records the bands only; static data (a
// Darcy-like file) give a single prediction.
func TestProbeWithoutRouting(t *testing.T) {
	b := cpu.New(2)
	t.Run("FNO", func(t *testing.T) {
		const nx = 32
		p := wavePlan(t, 4, 8, nx)
		m, err := model.NewFNO(b, model.FNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 6, K0: 5, Blocks: 2, ProjHidden: 8}, 1)
		if err != nil {
			t.Fatal(err)
		}
		rec := runProbe(t, m, b, eval.Source{Plan: p, Trajs: []int{0, 1, 2, 3},
			Grid: eval.Grid{Channels: 1, Shape: []int{nx}, Spacing: []float64{1.0 / nx}, Periodic: true}}, ProbeOptions{Every: 200, Steps: 7})
		if rec.Stages != nil || rec.Contrast != nil || rec.RhoRange != nil || rec.RolloutSteps != 7 || math.IsNaN(float64(rec.Band[2])) {
			t.Errorf("FNO record %+v, want bands of a 7-step rollout and no routing", rec)
		}
		raw, _ := json.Marshal(rec)
		if strings.Contains(string(raw), "stages") || strings.Contains(string(raw), "rho_range") {
			t.Errorf("FNO record %s names routing fields", raw)
		}
	})
	t.Run("static", func(t *testing.T) {
		const gsz = 8
		path := filepath.Join(t.TempDir(), "2D_DarcyFlow_beta1.0_Train.hdf5")
		if err := h5test.Darcy(path, 5, gsz, gsz, 1.0); err != nil {
			t.Fatal(err)
		}
		p := openPlan(t, path, data.Sampling{})
		spec := testutil.TinyUHNO(2, 1, model.ModeFull)
		m, err := model.NewUHNO(b, spec, 2)
		if err != nil {
			t.Fatal(err)
		}
		rec := runProbe(t, m, b, eval.Source{Plan: p, Trajs: []int{0, 2, 4},
			Grid: eval.Grid{Channels: 1, Shape: []int{gsz, gsz}, Spacing: []float64{1.0 / gsz, 1.0 / gsz}}}, ProbeOptions{Every: 1, Steps: 25, Batch: 2})
		if !rec.Static || rec.RolloutSteps != 1 || len(rec.BandSteps) != 1 || rec.BandHorizon != rec.Band || len(rec.Contrast[0]) != 3 {
			t.Errorf("static record %+v, want one prediction of 3 trajectories", rec)
		}
	})
}

func TestNewProbeErrors(t *testing.T) {
	const nx = 32
	p := wavePlan(t, 3, 6, nx)
	b := cpu.New(1)
	m, err := model.NewFNO(b, model.FNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 4, K0: 4, Blocks: 1, ProjHidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := eval.Grid{Channels: 1, Shape: []int{nx}, Spacing: []float64{1.0 / nx}, Periodic: true}
	tests := []struct {
		name string
		src  eval.Source
		opt  ProbeOptions
		want string
	}{
		{"interval", eval.Source{Plan: p, Trajs: []int{0}, Grid: g}, ProbeOptions{Steps: 2}, "dynamics: probe interval 0 steps, want >= 1"},
		{"no trajectories", eval.Source{Plan: p, Grid: g}, ProbeOptions{Every: 1, Steps: 2}, "dynamics: no trajectories to roll out"},
		{"no plan", eval.Source{Trajs: []int{0}, Grid: g}, ProbeOptions{Every: 1, Steps: 2}, "dynamics: the source has no sampling plan"},
		{"too long", eval.Source{Plan: p, Trajs: []int{0}, Grid: g}, ProbeOptions{Every: 1, Steps: 6},
			"dynamics: eval: a rollout of 6 steps from 1 history frames needs 7 frames per trajectory"},
		{"bad grid", eval.Source{Plan: p, Trajs: []int{0}}, ProbeOptions{Every: 1, Steps: 2}, "dynamics: eval: grid Channels = 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewProbe(m, b, tt.src, tt.opt)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	// A cancelled context stops the rollout with the context's error.
	pr, err := NewProbe(m, b, eval.Source{Plan: p, Trajs: []int{0, 1, 2}, Grid: g}, ProbeOptions{Every: 1, Steps: 2, Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := pr.Run(ctx, 1); err != context.Canceled {
		t.Errorf("cancelled probe: %v", err)
	}
}
