package eval

import (
	"encoding/json"
	"math"
	"testing"
)

// TestSeedBootstrap: the mean of seed means on known values; two seeds
// that agree within themselves but not with each other give an interval
// as wide as the gap between them (training variance), where one seed
// alone gives none; NaN values are skipped; seeds scored on different
// trajectory counts panic.
func TestSeedBootstrap(t *testing.T) {
	iv := SeedBootstrap([][]float64{{1, 2, 3}, {3, math.NaN(), 4}}, 1000, 0.95, 1)
	// seed means 2 and 3.5 (NaN skipped): 2.75
	if iv.Mean != 2.75 || iv.N != 2 {
		t.Errorf("mean %+v, want 2.75 over 2 seeds", iv)
	}
	apart := SeedBootstrap([][]float64{{0, 0, 0, 0}, {10, 10, 10, 10}}, 4000, 0.95, 2)
	if apart.Mean != 5 || apart.Low != 0 || apart.High != 10 {
		t.Errorf("two seeds 10 apart: %+v, want 5 [0, 10]", apart)
	}
	if one := SeedBootstrap([][]float64{{10, 10, 10, 10}}, 1000, 0.95, 2); one.Mean != 10 || one.Low != 10 || one.High != 10 {
		t.Errorf("one seed without spread: %+v, want 10 [10, 10]", one)
	}
	// Within-seed spread alone: the interval is Bootstrap's kind.
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	one := SeedBootstrap([][]float64{x}, 4000, 0.95, 3)
	ref := Bootstrap(x, 4000, 0.95, 3)
	if one.Mean != ref.Mean || math.Abs((one.High-one.Low)-(ref.High-ref.Low)) > 0.5 {
		t.Errorf("one seed %+v against Bootstrap %+v: want the same mean and about the same width", one, ref)
	}
	if again := SeedBootstrap([][]float64{{0, 1}, {2, 3}}, 500, 0.95, 9); again != SeedBootstrap([][]float64{{0, 1}, {2, 3}}, 500, 0.95, 9) {
		t.Error("the same seed gave other bits")
	}
	if none := SeedBootstrap(nil, 10, 0.95, 1); !math.IsNaN(none.Mean) {
		t.Errorf("no seeds: %+v, want NaN", none)
	}
	mustPanic(t, "same test trajectories", func() { SeedBootstrap([][]float64{{1, 2}, {1}}, 10, 0.95, 1) })
}

// TestFloatsJSON: NaN and Inf are written as null and read back as NaN
// (a []float64 would read null as 0).
func TestFloatsJSON(t *testing.T) {
	raw, err := json.Marshal(Floats{1.5, math.NaN(), math.Inf(1)})
	if err != nil || string(raw) != "[1.5,null,null]" {
		t.Fatalf("marshal: %s, %v", raw, err)
	}
	var back Floats
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || back[0] != 1.5 || !math.IsNaN(back[1]) || !math.IsNaN(back[2]) {
		t.Errorf("read back %v, want [1.5 NaN NaN]", back)
	}
}

// TestMergeSeeds: two seeds' evaluations of the same trajectories merge
// into means over seeds (relL2 0.1 and 0.3 per seed give 0.2), with each
// seed's value and the spread kept, an interval that holds both seeds,
// crash rates pooled over the seeds' trajectories, and refusals for other
// models or summaries without per-trajectory values.
func TestMergeSeeds(t *testing.T) {
	g := unitGrid(1, true, 32)
	truth := tones(g, [][]tone{{{k: []int{2}, a: 1}, {k: []int{8}, a: 0.5}}})
	summary := func(errs ...float64) Summary {
		o := &Outcome{Steps: 2}
		for i, e := range errs {
			m := NewTrajectoryMetrics(g, truth, 2, DefaultCrashRule, nil)
			for s := 1; s <= 2; s++ {
				m.Add(s, scaled(truth, float32(1+e)), truth)
			}
			o.Trajs, o.Metrics = append(o.Trajs, i), append(o.Metrics, m)
		}
		return Summarize(o, BootstrapSpec{Resamples: 500, Level: 0.95, Seed: 1})
	}
	res := func(s Summary) Results {
		return Results{Task: "burgers", Data: "d.h5", Trajs: 3, Steps: 2, HorizonMult: 1,
			Models: []ResultsModel{{Label: "uhno", Model: "uhno", Checkpoint: "ck", Eval: s}}}
	}
	a, b := res(summary(0.1, 0.1, 0.1)), res(summary(0.3, 0.3, 0.3))
	b.Models[0].Checkpoint = "ck1"
	m, err := MergeSeeds([]Results{a, b}, []int64{0, 1}, BootstrapSpec{Resamples: 2000, Level: 0.95, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Models[0].Eval
	iv := s.Metrics[MetricRelL2]
	if math.Abs(iv.Mean-0.2) > 1e-6 || iv.N != 2 || iv.Low > 0.1+1e-6 || iv.High < 0.3-1e-6 {
		t.Errorf("merged relL2 %+v, want 0.2 with an interval from 0.1 to 0.3", iv)
	}
	if s.Seeds == nil || len(s.Seeds.Seeds) != 2 || s.Seeds.Checkpoints[1] != "ck1" || math.Abs(s.Seeds.Spread(MetricRelL2)-0.2) > 1e-6 {
		t.Errorf("seed summary %+v, want seeds 0 and 1, checkpoints, a spread of 0.2", s.Seeds)
	}
	if s.CrashRate == nil || s.CrashRate.N != 6 || s.CrashRate.Mean != 0 {
		t.Errorf("crash rate %+v, want 0 of 6", s.CrashRate)
	}
	if c := s.Curves[MetricRelL2].Mean; len(c) != 2 || math.Abs(c[0]-0.2) > 1e-6 {
		t.Errorf("merged curve %v, want 0.2 per step", c)
	}
	other := res(summary(0.1))
	other.Models[0].Model = "fno"
	if _, err := MergeSeeds([]Results{a, other}, []int64{0, 1}, DefaultBootstrap); err == nil {
		t.Error("merged two evaluations of other trajectories and models")
	}
	old := res(summary(0.1, 0.1, 0.1))
	old.Models[0].Eval.Trajectory = nil
	if _, err := MergeSeeds([]Results{a, old}, []int64{0, 1}, DefaultBootstrap); err == nil {
		t.Error("merged an evaluation without per-trajectory values")
	}
}
