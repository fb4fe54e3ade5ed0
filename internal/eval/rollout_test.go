package eval

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/data"
	"uhno/internal/data/h5/h5test"
	"uhno/internal/model"
	"uhno/internal/tensor"
)

// travellingWave writes a PDEBench-layout 1D file whose trajectory i is
// u(x_j, t_f) = sin(2 pi (j - f)/nx + phi_i): a wave moving exactly one
// cell per frame, so the exact solution operator of one step is a shift
// by one cell.
func travellingWave(t *testing.T, n, nt, nx int) string {
	t.Helper()
	u := make([]float32, n*nt*nx)
	for i := range n {
		phi := 0.7 * float64(i)
		for f := range nt {
			for j := range nx {
				u[(i*nt+f)*nx+j] = float32(math.Sin(2*math.Pi*float64(j-f)/float64(nx) + phi))
			}
		}
	}
	path := filepath.Join(t.TempDir(), "wave.h5")
	t1 := make([]float32, nt)
	for f := range t1 {
		t1[f] = float32(f)
	}
	if err := h5test.Write(path, []h5test.Dataset{
		{Name: "tensor", Dims: []int{n, nt, nx}, Data: u},
		{Name: "x-coordinate", Dims: []int{nx}, Data: h5test.Coordinate(nx)},
		{Name: "t-coordinate", Dims: []int{nt}, Data: t1},
	}, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// hostModel is a test model.Model whose forward pass is a host function
// of the input (no parameters, no gradient).
type hostModel struct {
	b    tensor.Backend
	fn   func(x []float32, shape []int) []float32
	name string
}

func (m hostModel) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, model.Aux) {
	y := m.fn(tensor.ToHost(m.b, x), x.Shape)
	shape := append([]int(nil), x.Shape...)
	shape[1] = len(y) / (shape[0] * x.SpatialSize()) // the channels fn returned
	return tp.FromHost(y, shape...), model.Aux{}
}
func (m hostModel) Params() *model.Params      { return nil }
func (m hostModel) Name() string               { return m.name }
func (m hostModel) Mode() string               { return "" }
func (m hostModel) CheckGrid(grid []int) error { return nil }

// shiftBy rolls every row of a [B, C, nx] batch right by s cells.
func shiftBy(s int) func(x []float32, shape []int) []float32 {
	return func(x []float32, shape []int) []float32 {
		nx := shape[len(shape)-1]
		out := make([]float32, len(x))
		for r := 0; r < len(x); r += nx {
			for j := range nx {
				out[r+(j+s)%nx] = x[r+j]
			}
		}
		return out
	}
}

func openWave(t *testing.T, n, nt, nx int) *data.Plan {
	t.Helper()
	ds, err := data.Open(travellingWave(t, n, nt, nx), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	p, err := ds.Plan(data.Sampling{History: 1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRolloutExactShift: the exact solution operator (a one-cell shift)
// rolls out with zero error at every step; the identity model's relL2 at
// step t is that of a pure tone against its shift by t cells,
// |e^{-2 pi i t/nx} - 1| = 2 |sin(pi t / nx)|, the same for every
// trajectory; a shift of 3 cells per step is 2 |sin(2 pi t / nx)|.
func TestRolloutExactShift(t *testing.T) {
	const n, nt, nx, steps = 7, 12, 32, 10
	p := openWave(t, n, nt, nx)
	b := cpu.New(1)
	g := Grid{Channels: 1, Shape: []int{nx}, Spacing: []float64{1.0 / nx}, Periodic: true}
	trajs := []int{0, 2, 3, 5, 6}
	cases := []struct {
		name string
		fn   func([]float32, []int) []float32
		want func(step int) float64
	}{
		{"exact", shiftBy(1), func(int) float64 { return 0 }},
		{"identity", shiftBy(0), func(s int) float64 { return 2 * math.Abs(math.Sin(math.Pi*float64(s)/nx)) }},
		{"shift3", shiftBy(3), func(s int) float64 { return 2 * math.Abs(math.Sin(2*math.Pi*float64(s)/nx)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, batch := range []int{1, 2, 5} {
				calls := 0
				o, err := Rollout(context.Background(), hostModel{b: b, fn: c.fn, name: c.name}, b,
					Source{Plan: p, Trajs: trajs, Grid: g},
					RolloutOptions{Steps: steps, Batch: batch, Progress: func(done, total int) {
						calls++
						if total != len(trajs) || done > total {
							t.Errorf("progress %d/%d", done, total)
						}
					}})
				if err != nil {
					t.Fatal(err)
				}
				if len(o.Metrics) != len(trajs) || calls != (len(trajs)+batch-1)/batch {
					t.Fatalf("batch %d: %d trajectories, %d progress calls", batch, len(o.Metrics), calls)
				}
				for k, m := range o.Metrics {
					if m.Crashed {
						t.Fatalf("trajectory %d crashed: %s", trajs[k], m.CrashReason)
					}
					for s, v := range m.RelL2 {
						if math.Abs(v-c.want(s+1)) > 2e-6 {
							t.Fatalf("batch %d, trajectory %d, step %d: relL2 %.7f, want %.7f", batch, trajs[k], s+1, v, c.want(s+1))
						}
					}
				}
				if o.Sample == nil || o.Sample.Traj != trajs[0] || len(o.Sample.Pred) != steps || len(o.Sample.Truth) != steps {
					t.Fatalf("batch %d: sample %+v", batch, o.Sample)
				}
			}
		})
	}
}

// TestRolloutNormalisation: the model sees normalised inputs and its
// outputs are de-normalised before scoring, so an exact shift stays exact
// under any statistics.
func TestRolloutNormalisation(t *testing.T) {
	const nx = 16
	p := openWave(t, 3, 8, nx)
	b := cpu.New(1)
	stats := &data.Stats{Fields: []string{"tensor"}, Mean: []float64{0.3}, Std: []float64{2.5}}
	var seen float64
	fn := func(x []float32, shape []int) []float32 {
		for _, v := range x {
			seen = math.Max(seen, math.Abs(float64(v)))
		}
		return shiftBy(1)(x, shape)
	}
	// Shifting commutes with the per-field affine normalisation.
	o, err := Rollout(context.Background(), hostModel{b: b, fn: fn, name: "exact"}, b,
		Source{Plan: p, Trajs: []int{0, 1, 2}, Stats: stats, Grid: Grid{Channels: 1, Shape: []int{nx}, Spacing: []float64{1}, Periodic: true}},
		RolloutOptions{Steps: 5, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := (1 + 0.3) / 2.5; seen > want+1e-6 || seen < 0.45 {
		t.Fatalf("largest input the model saw %.4f, want normalised values up to %.4f", seen, want)
	}
	for _, m := range o.Metrics {
		for s, v := range m.RelL2 {
			if v > 1e-6 {
				t.Fatalf("step %d: relL2 %g after de-normalisation, want 0", s+1, v)
			}
		}
	}
}

// TestRolloutCrash: a model that doubles its input blows up; the norm
// ratio rule marks the step where 2^t first exceeds 1e3 (t = 10).
func TestRolloutCrash(t *testing.T) {
	const nx = 16
	p := openWave(t, 2, 14, nx)
	b := cpu.New(1)
	double := func(x []float32, shape []int) []float32 {
		out := shiftBy(1)(x, shape)
		for i := range out {
			out[i] *= 2
		}
		return out
	}
	o, err := Rollout(context.Background(), hostModel{b: b, fn: double, name: "double"}, b,
		Source{Plan: p, Trajs: []int{0, 1}, Grid: Grid{Channels: 1, Shape: []int{nx}, Spacing: []float64{1}, Periodic: true}},
		RolloutOptions{Steps: 13, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range o.Metrics {
		// relL2 at step t is 2^t - 1 > 10 from t = 4 on, before the norm ratio.
		if !m.Crashed || m.CrashStep != 4 || !strings.Contains(m.CrashReason, "relL2") {
			t.Fatalf("crash %v at step %d (%s), want relL2 crash at step 4", m.Crashed, m.CrashStep, m.CrashReason)
		}
	}
	s := Summarize(o, BootstrapSpec{Resamples: 200, Level: 0.95, Seed: 1})
	if s.CrashRate == nil || s.CrashRate.Mean != 1 || len(s.Crashes) != 2 || !math.IsNaN(s.Metrics[MetricRelL2].Mean) {
		t.Fatalf("summary crash rate %+v, crashes %v, relL2 %v", s.CrashRate, s.Crashes, s.Metrics[MetricRelL2])
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("a summary with undefined metrics must still encode: %v", err)
	}
	if !strings.Contains(string(raw), `"relL2":{"mean":null`) {
		t.Fatalf("undefined mean not encoded as null: %.200s", raw)
	}
}

// TestRolloutTooLong: a rollout longer than the data names both sides.
func TestRolloutTooLong(t *testing.T) {
	p := openWave(t, 2, 6, 8)
	err := CheckRollout(p, 6)
	if err == nil || !strings.Contains(err.Error(), "needs 7 frames") || !strings.Contains(err.Error(), "has 6") {
		t.Fatalf("error %v", err)
	}
	if err := CheckRollout(p, 5); err != nil {
		t.Fatal(err)
	}
}

// TestSummarizeMeans: trajectory-level means and per-step curves over
// non-crashed trajectories, deterministic by seed.
func TestSummarizeMeans(t *testing.T) {
	const nx = 32
	p := openWave(t, 6, 8, nx)
	b := cpu.New(1)
	o, err := Rollout(context.Background(), hostModel{b: b, fn: shiftBy(0), name: "identity"}, b,
		Source{Plan: p, Trajs: []int{0, 1, 2, 3, 4, 5}, Grid: Grid{Channels: 1, Shape: []int{nx}, Spacing: []float64{1.0 / nx}, Periodic: true}},
		RolloutOptions{Steps: 4, Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	spec := BootstrapSpec{Resamples: 500, Level: 0.95, Seed: 3}
	s := Summarize(o, spec)
	var want float64
	for st := 1; st <= 4; st++ {
		want += 2 * math.Abs(math.Sin(math.Pi*float64(st)/nx)) / 4
	}
	iv := s.Metrics[MetricRelL2]
	// Every trajectory has the same relL2 curve: the interval collapses.
	if math.Abs(iv.Mean-want) > 1e-6 || math.Abs(iv.High-iv.Low) > 1e-6 || iv.N != 6 {
		t.Fatalf("relL2 %+v, want mean %.7f with zero width over 6", iv, want)
	}
	c := s.Curves[MetricRelL2]
	if len(c.Mean) != 4 || len(c.Low) != 4 || math.Abs(c.Mean[1]-2*math.Sin(2*math.Pi/nx)) > 1e-6 {
		t.Fatalf("relL2 curve %+v", c)
	}
	if s.CrashRate == nil || s.CrashRate.Mean != 0 || s.CrashRate.High <= 0 {
		t.Fatalf("crash rate %+v, want 0 with a positive Wilson upper bound", s.CrashRate)
	}
	a, _ := json.Marshal(s)
	bb, _ := json.Marshal(Summarize(o, spec))
	if string(a) != string(bb) {
		t.Fatal("Summarize is not deterministic for a fixed seed")
	}
}

// wave2D writes a 2D PDEBench-layout file (tensor [n, nt, nx, ny]) of a
// wave moving one cell along x per frame.
func wave2D(t *testing.T, n, nt, nx, ny int) string {
	t.Helper()
	u := make([]float32, n*nt*nx*ny)
	for i := range n {
		for f := range nt {
			for x := range nx {
				for y := range ny {
					u[((i*nt+f)*nx+x)*ny+y] = float32(math.Sin(2*math.Pi*float64(x-f)/float64(nx)+0.5*float64(i)) * math.Cos(2*math.Pi*float64(y)/float64(ny)))
				}
			}
		}
	}
	path := filepath.Join(t.TempDir(), "wave2d.h5")
	if err := h5test.Write(path, []h5test.Dataset{
		{Name: "tensor", Dims: []int{n, nt, nx, ny}, Data: u},
		{Name: "x-coordinate", Dims: []int{nx}, Data: h5test.Coordinate(nx)},
		{Name: "y-coordinate", Dims: []int{ny}, Data: h5test.Coordinate(ny)},
	}, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRolloutHistoryWindow: with H = 3 input frames the exact model must
// shift the newest frame (the last channel); the window is refilled with
// predictions oldest-out, so the rollout stays exact only when the window
// is kept in order. A model that shifts the oldest frame instead is off by
// the H-1 = 2 cells it lags.
func TestRolloutHistoryWindow(t *testing.T) {
	const n, nt, nx, ny, h, steps = 3, 12, 16, 8, 3, 9
	ds, err := data.Open(wave2D(t, n, nt, nx, ny), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	p, err := ds.Plan(data.Sampling{History: h})
	if err != nil {
		t.Fatal(err)
	}
	b := cpu.New(1)
	pts := nx * ny
	shiftFrame := func(frame int) func([]float32, []int) []float32 {
		return func(x []float32, shape []int) []float32 {
			B, C := shape[0], shape[1]
			out := make([]float32, B*pts)
			for k := range B {
				src := x[(k*C+frame)*pts:][:pts]
				for i := range nx {
					copy(out[k*pts+((i+1)%nx)*ny:][:ny], src[i*ny:][:ny])
				}
			}
			return out
		}
	}
	g := Grid{Channels: 1, Shape: []int{nx, ny}, Spacing: []float64{1.0 / nx, 1.0 / ny}, Periodic: true}
	for _, c := range []struct {
		name  string
		frame int
		want  float64
	}{{"newest", h - 1, 0}, {"oldest", 0, 2 * math.Sin(math.Pi*2/nx)}} {
		o, err := Rollout(context.Background(), hostModel{b: b, fn: shiftFrame(c.frame), name: c.name}, b,
			Source{Plan: p, Trajs: []int{0, 1, 2}, Grid: g}, RolloutOptions{Steps: steps, Batch: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range o.Metrics {
			// The oldest frame lags the newest by H-1 cells at every step.
			if v := m.RelL2[0]; math.Abs(v-c.want) > 2e-6 {
				t.Fatalf("%s: step 1 relL2 %.7f, want %.7f", c.name, v, c.want)
			}
			if c.frame == h-1 {
				for s, v := range m.RelL2 {
					if v > 2e-6 {
						t.Fatalf("%s: step %d relL2 %g, want 0", c.name, s+1, v)
					}
				}
			}
		}
	}
	if err := CheckRollout(p, nt-h+1); err == nil {
		t.Fatal("a rollout past the last frame was accepted")
	}
}

// TestRolloutStatic: Darcy-like data give one prediction a -> u, scored
// against u, with no rollout metrics (energy drift, crash rate).
func TestRolloutStatic(t *testing.T) {
	const n, gsz = 4, 8
	path := filepath.Join(t.TempDir(), "2D_DarcyFlow_beta1.0_Train.hdf5")
	if err := h5test.Darcy(path, n, gsz, gsz, 1.0); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Open(path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	p, err := ds.Plan(data.Sampling{})
	if err != nil {
		t.Fatal(err)
	}
	b := cpu.New(1)
	identity := func(x []float32, _ []int) []float32 { return append([]float32(nil), x...) }
	g := Grid{Channels: 1, Shape: []int{gsz, gsz}, Spacing: []float64{1.0 / gsz, 1.0 / gsz}, Periodic: false}
	o, err := Rollout(context.Background(), hostModel{b: b, fn: identity, name: "id"}, b,
		Source{Plan: p, Trajs: []int{1, 3}, Grid: g}, RolloutOptions{Steps: 25, Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Static || o.Steps != 1 {
		t.Fatalf("static %v, steps %d", o.Static, o.Steps)
	}
	for k, tr := range []int{1, 3} {
		a := make([]float32, pts(g))
		u := make([]float32, pts(g))
		if err := ds.ReadFrames(a, tr, 0, 1, []string{"nu"}); err != nil {
			t.Fatal(err)
		}
		if err := ds.ReadFrames(u, tr, 0, 1, []string{"tensor"}); err != nil {
			t.Fatal(err)
		}
		if got, want := o.Metrics[k].RelL2[0], RelL2(a, u); len(o.Metrics[k].RelL2) != 1 || got != want {
			t.Fatalf("trajectory %d: relL2 %v, want the single value %v", tr, o.Metrics[k].RelL2, want)
		}
	}
	s := Summarize(o, BootstrapSpec{Resamples: 100, Level: 0.95})
	if _, ok := s.Metrics[MetricEnergyDrift]; ok || s.CrashRate != nil || !s.Static {
		t.Fatalf("static summary has rollout metrics: %+v", s)
	}
}

func pts(g Grid) int { return g.Len() / g.Channels }
