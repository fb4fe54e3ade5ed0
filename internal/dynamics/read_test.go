package dynamics

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/train"
)

// syntheticRecord is a dynamics Record of n trajectories, steps rollout
// steps and the given routing stages, with values that fall with the
// training step s.
func syntheticRecord(s, n, steps int, stages []string) Record {
	f := 1 / math.Sqrt(float64(s))
	rec := Record{Trajectories: n, RolloutSteps: steps, Static: steps == 1,
		Band: [3]Float{Float(0.1 * f), Float(0.5 * f), Float(2 * f)}, RelL2: Float(0.2 * f), RelL2Horizon: Float(0.4 * f)}
	for t := range steps {
		g := Float(1 + float64(t)/float64(steps))
		rec.BandSteps = append(rec.BandSteps, [3]Float{rec.Band[0] * g, rec.Band[1] * g, rec.Band[2] * g})
	}
	rec.BandHorizon = rec.BandSteps[steps-1]
	if len(stages) > 0 {
		rec.Stages = stages
		rr := [2]float64{0.1, 0.9}
		rec.RhoRange = &rr
		for i := range stages {
			c, rho := make(Floats32, n), make(Floats32, n)
			for k := range n {
				c[k] = float32(0.5 + float64(s)/2000 + 0.1*math.Sin(float64(k+i)))
				rho[k] = float32(0.3 * (1 + 0.25*math.Tanh(float64(c[k])-1)))
			}
			rec.Contrast, rec.Rho = append(rec.Contrast, c), append(rec.Rho, rho)
		}
	}
	return rec
}

// syntheticLog returns the lines of a run's log: training records every
// 10 steps, validation every 100, dynamics every 200 and angles every
// 1000 (when angles), up to steps.
func syntheticLog(t *testing.T, steps int, stages []string, angles bool) []string {
	t.Helper()
	var lines []string
	add := func(v any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(raw))
	}
	for s := 10; s <= steps; s += 10 {
		f := 1 / math.Sqrt(float64(s))
		add(map[string]any{"kind": "train", "step": s, "loss": 0.1*f + 0.01, "mse": 0.1 * f, "h1": 5 * f, "cbc": 0.4 * f,
			"lr": 1e-3, "rho": []float64{0.3}, "contrast": []float64{1.2}, "elapsed_s": float64(s) / 10})
		if s%100 == 0 {
			add(map[string]any{"kind": "val", "step": s, "loss": 0.12 * f, "mse": 0.1 * f, "h1": 6 * f, "lr": 1e-3})
		}
		if s%200 == 0 {
			raw, err := json.Marshal(syntheticRecord(s, 16, 5, stages))
			if err != nil {
				t.Fatal(err)
			}
			add(train.ProbeRecord{Kind: train.ProbeKind, Step: s, Probe: ProbeName, Value: raw, Seconds: 1.5})
		}
		if angles && s%1000 == 0 {
			var deg []float64
			for k := range 64 {
				deg = append(deg, 90+float64(s)/100*math.Sin(float64(k)))
			}
			raw, _ := json.Marshal(NewAngleRecord(deg))
			add(train.ProbeRecord{Kind: train.ProbeKind, Step: s, Probe: AngleProbeName, Value: raw})
		}
	}
	return lines
}

func writeLog(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), train.LogFile)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRead(t *testing.T) {
	stages := []string{"enc.0", "mid", "dec.0"}
	good := syntheticLog(t, 2000, stages, true)
	joined := strings.Join(good, "\n") + "\n"
	nanRec := syntheticRecord(200, 4, 2, nil)
	nanRec.Band[2], nanRec.RelL2 = Float(math.NaN()), Float(math.Inf(1))
	nanRaw, err := json.Marshal(nanRec)
	if err != nil {
		t.Fatalf("a record with NaN does not encode: %v", err)
	}
	probe := func(name, value string) string {
		return `{"kind":"probe","step":400,"probe":"` + name + `","value":` + value + `,"probe_s":1}`
	}

	tests := []struct {
		name    string
		content string
		check   func(t *testing.T, s *Series)
		wantErr string // with PATH for the file's path
	}{
		{name: "a run", content: joined, check: func(t *testing.T, s *Series) {
			if len(s.Train) != 200 || len(s.Val) != 20 || len(s.Dynamics) != 10 || len(s.Angles) != 2 || s.Torn || len(s.Skipped) != 0 {
				t.Fatalf("%d train, %d val, %d dynamics, %d angle records (torn %v, skipped %v); want 200, 20, 10, 2",
					len(s.Train), len(s.Val), len(s.Dynamics), len(s.Angles), s.Torn, s.Skipped)
			}
			d := s.Dynamics[4]
			if d.Step != 1000 || d.Trajectories != 16 || d.RolloutSteps != 5 || len(d.BandSteps) != 5 || len(d.Contrast) != 3 || len(d.Rho[2]) != 16 ||
				d.RhoRange == nil || *d.RhoRange != [2]float64{0.1, 0.9} || d.Stages[1] != "mid" {
				t.Errorf("dynamics record at 1000: %+v", d)
			}
			if want := syntheticRecord(1000, 16, 5, stages); d.Band != want.Band || d.Contrast[1][3] != want.Contrast[1][3] {
				t.Errorf("values did not survive the round trip: %v %v, want %v %v", d.Band, d.Contrast[1][3], want.Band, want.Contrast[1][3])
			}
			if l := s.Train[9]; l.Step != 100 || math.Abs(l.MSE-0.01) > 1e-12 || l.LR != 1e-3 || len(l.Rho) != 1 || l.CBC == 0 {
				t.Errorf("train record at 100: %+v", l)
			}
			if a := s.Angles[1]; a.Step != 2000 || len(a.Degrees) != 64 {
				t.Errorf("angle record: step %d, %d angles", a.Step, len(a.Degrees))
			}
		}},
		{name: "torn last line", content: joined + `{"kind":"train","step":20`, check: func(t *testing.T, s *Series) {
			if !s.Torn || len(s.Train) != 200 {
				t.Errorf("torn %v with %d train records, want true and 200", s.Torn, len(s.Train))
			}
		}},
		{name: "last line complete without newline", content: strings.TrimSuffix(joined, "\n"), check: func(t *testing.T, s *Series) {
			if s.Torn || len(s.Train) != 200 {
				t.Errorf("torn %v with %d train records, want false and 200", s.Torn, len(s.Train))
			}
		}},
		{name: "NaN as null", content: `{"kind":"probe","step":200,"probe":"dynamics","value":` + string(nanRaw) + "}\n", check: func(t *testing.T, s *Series) {
			d := s.Dynamics[0]
			if !math.IsNaN(float64(d.Band[2])) || !math.IsNaN(float64(d.RelL2)) || d.Band[0] != nanRec.Band[0] || !strings.Contains(string(nanRaw), `"rel_l2":null`) {
				t.Errorf("band %v relL2 %v from %s", d.Band, d.RelL2, nanRaw)
			}
		}},
		{name: "bare angle array, other probes and kinds", content: probe("angle", "[10, 90, 170]") + "\n" + probe("grad-norm", "3") + "\n" +
			`{"kind":"eval","step":5}` + "\n" + probe("grad-norm", "4") + "\n", check: func(t *testing.T, s *Series) {
			if len(s.Angles) != 1 || len(s.Angles[0].Degrees) != 3 || s.Skipped["probe grad-norm"] != 2 || s.Skipped["kind eval"] != 1 {
				t.Errorf("angles %v, skipped %v", s.Angles, s.Skipped)
			}
		}},
		{name: "out of order and a duplicate", content: `{"kind":"train","step":20,"loss":1}` + "\n" + `{"kind":"train","step":10,"loss":2}` + "\n" +
			`{"kind":"train","step":20,"loss":3}` + "\n", check: func(t *testing.T, s *Series) {
			if len(s.Train) != 2 || s.Train[0].Step != 10 || s.Train[1].Step != 20 || s.Train[1].Total != 3 || s.Skipped["duplicate step"] != 1 {
				t.Errorf("train records %+v, skipped %v; want steps 10, 20 (the later one) and one duplicate", s.Train, s.Skipped)
			}
		}},
		{name: "blank lines", content: "\n" + good[0] + "\n\n", check: func(t *testing.T, s *Series) {
			if len(s.Train) != 1 {
				t.Errorf("%d train records, want 1", len(s.Train))
			}
		}},
		{name: "not JSON", content: good[0] + "\n" + good[1] + "\nstep 3 loss 0.1\n" + good[2] + "\n",
			wantErr: "dynamics: PATH:3: not a log record: invalid character 's' looking for beginning of value"},
		{name: "torn line in the middle", content: good[0] + "\n" + `{"kind":"train","st` + "\n" + good[1] + "\n",
			wantErr: "dynamics: PATH:2: not a log record: unexpected end of JSON input"},
		{name: "no step", content: good[0] + "\n" + `{"kind":"train","loss":1}` + "\n", wantErr: `dynamics: PATH:2: a "train" record without a step`},
		{name: "wrong type", content: `{"kind":"train","step":"ten"}` + "\n", wantErr: "dynamics: PATH:1: not a log record: json: cannot unmarshal string"},
		{name: "dynamics value not an object", content: probe("dynamics", `"fast"`) + "\n", wantErr: "dynamics: PATH:1: step 400: dynamics record: json: cannot unmarshal string"},
		{name: "dynamics lists that do not fit", content: probe("dynamics", `{"rollout_steps":2,"band_steps":[[1,2,3]]}`) + "\n",
			wantErr: "dynamics: PATH:1: step 400: dynamics record: 2 rollout steps and 1 band_steps entries, want equal and >= 1"},
		{name: "stages without statistics", content: probe("dynamics", `{"rollout_steps":1,"band_steps":[[1,2,3]],"stages":["mid"]}`) + "\n",
			wantErr: "dynamics: PATH:1: step 400: dynamics record: 1 stages, 0 contrast and 0 rho lists"},
		{name: "bad number in statistics", content: probe("dynamics", `{"rollout_steps":1,"band_steps":[[1,2,3]],"stages":["mid"],"contrast":[["x"]],"rho":[[1]]}`) + "\n",
			wantErr: "want a number or null, got \"x\""},
		{name: "angle value", content: probe("angle", `{"degrees":"many"}`) + "\n", wantErr: "dynamics: PATH:1: step 400: angle record: json: cannot unmarshal string"},
		{name: "probe without a name", content: `{"kind":"probe","step":3,"value":1}` + "\n", wantErr: "dynamics: PATH:1: step 3: a probe record without a probe name"},
		{name: "empty", content: "", wantErr: "dynamics: PATH: no records (is it a uhno training log?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeLog(t, tt.content)
			s, err := Read(path)
			if tt.wantErr != "" {
				want := strings.ReplaceAll(tt.wantErr, "PATH", path)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v, want an error containing %q", err, want)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q spans lines", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Path != path {
				t.Errorf("Path %q, want %q", s.Path, path)
			}
			tt.check(t, s)
		})
	}

	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nothing.jsonl")
		if _, err := Read(path); err == nil || !strings.HasPrefix(err.Error(), "dynamics: open "+path) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestEMA(t *testing.T) {
	nan := math.NaN()
	got := EMA([]float64{nan, 1, 2, math.Inf(1), 4}, 0.9)
	want := []float64{nan, 1, 1.1, nan, 0.9*1.1 + 0.4}
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12) {
			t.Fatalf("EMA %v, want %v", got, want)
		}
	}
}

func TestQuantileRange(t *testing.T) {
	var vs [][]float64
	for k := range 10 {
		v := make([]float64, 100)
		for i := range v {
			v[i] = float64(k*100 + i)
		}
		vs = append(vs, v)
	}
	vs[3][7] = math.NaN()
	if lo, hi := quantileRange(vs, 0.005, 0.995); lo != 5 || hi != 994 {
		t.Errorf("range [%g, %g], want [5, 994]", lo, hi)
	}
	if lo, hi := quantileRange([][]float64{{2, 2, 2}}, 0.005, 0.995); lo != 0 || hi != 0 {
		t.Errorf("constant values: [%g, %g], want the histogram's own range (0, 0)", lo, hi)
	}
}
