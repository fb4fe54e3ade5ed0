package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/bench"
	"uhno/internal/config/configtest"
	"uhno/internal/eval"
	"uhno/internal/train"
)

// iv is an interval around mean: [0.95 mean, 1.05 mean].
func iv(mean float64) eval.Interval {
	return eval.Interval{Mean: mean, Low: 0.95 * mean, High: 1.05 * mean, N: 10}
}

// summary is an evaluation with relL2 and relH1 as given and every other
// metric derived from them; rollout metrics unless static.
func summary(relL2, relH1 float64) eval.Summary {
	s := eval.Summary{Steps: 25, Trajectories: 10, Metrics: map[string]eval.Interval{
		eval.MetricRelL2: iv(relL2), eval.MetricRelH1: iv(relH1), eval.MetricMSE: iv(relL2 * relL2),
		eval.MetricBandLow: iv(relL2 / 2), eval.MetricBandMid: iv(relL2), eval.MetricBandHigh: iv(2 * relL2),
		eval.MetricBandLowPooled: iv(relL2 / 2), eval.MetricBandMidPooled: iv(relL2), eval.MetricBandHighPooled: iv(2 * relL2),
		eval.MetricSF: iv(relL2 / 4), eval.MetricEnergyDrift: iv(relL2 / 10)},
		Bootstrap: eval.BootstrapSpec{Resamples: 1000, Level: 0.95, Seed: 3}}
	w := eval.Wilson(0, 10, 0.95)
	s.CrashRate = &w
	return s
}

// fixtureModel is one model of a results.json fixture.
type fixtureModel struct {
	model        string // uhno, uhno-E, fno
	params       int
	relL2, relH1 float64
}

// writeEval writes a results.json of task into a new directory under
// root, with the mirror types of the report (the command's own type
// lives in package main; cmd/uhno/report_test.go writes that one).
func writeEval(t *testing.T, root, name, task string, mult int, models ...fixtureModel) string {
	t.Helper()
	return writeEvalCrashes(t, root, name, task, mult, nil, models...)
}

// writeEvalCrashes is writeEval with crashed[model] of the 10 test
// trajectories crashed (all 10: no rollout metric).
func writeEvalCrashes(t *testing.T, root, name, task string, mult int, crashed map[string]int, models ...fixtureModel) string {
	t.Helper()
	dir := filepath.Join(root, name)
	cfg := configtest.Builtin(t, task, nil)
	res := eval.Results{Format: evalFormat, Version: "test", Task: task, Steps: cfg.Data.Rollout * mult, HorizonMult: mult,
		Data: "/data/" + task + ".h5", Trajs: 10}
	for _, m := range models {
		c := cfg
		c.Model.Ablation = "full"
		if mode, ok := strings.CutPrefix(m.model, "uhno-"); ok {
			c.Model.Ablation = mode
		}
		label := m.model + " (" + paperNum(float64(m.params)/1e6) + "M)"
		res.Models = append(res.Models, eval.ResultsModel{Label: label, Model: m.model, Params: m.params,
			Checkpoint: filepath.Join("runs", task+"-"+m.model, "step-00000100"), Step: 100, Config: c, Eval: summary(m.relL2, m.relH1)})
		if n := crashed[m.model]; n > 0 {
			s := &res.Models[len(res.Models)-1].Eval
			w := eval.Wilson(n, 10, 0.95)
			s.CrashRate = &w
			for k, v := range s.Metrics {
				v.N = 10 - n
				if n == 10 {
					v = eval.Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}
				}
				s.Metrics[k] = v
			}
		}
		if task == "darcy" {
			s := &res.Models[len(res.Models)-1].Eval
			s.Static, s.Steps, s.CrashRate = true, 1, nil
			delete(s.Metrics, eval.MetricEnergyDrift)
		}
	}
	writeJSON(t, filepath.Join(dir, ResultsFile), res)
	return dir
}

// writeJSON writes v as indented JSON to path, creating its directory.
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeAblation writes an ablation.json of modes (mode -> relL2, relH1)
// with the real type.
func writeAblation(t *testing.T, root, name, task string, modes []string, vals map[string][2]float64) string {
	t.Helper()
	dir := filepath.Join(root, name)
	ab := eval.Ablation{Format: eval.AblationFormat, Version: "test", Task: task, Kind: "modes",
		Schedule: eval.AblationSchedule{Steps: 200, Warmup: 10, Batch: 8, LR: 1e-3, Params: "0.62M", Seed: 0},
		Steps:    25, Trajs: 10, Data: "/data/" + task + ".h5", Command: "uhno ablate --task " + task + " --modes A-I --steps 200"}
	labels := map[string]string{"full": "Full U-HNO", "A": "A: NoLocal", "B": "B: NoGlobal", "E": "E: MSE only", "F": "F: NoSPAR"}
	for _, m := range modes {
		v := vals[m]
		ab.Entries = append(ab.Entries, eval.AblationEntry{Mode: m, Label: labels[m], Run: filepath.Join(dir, m), Params: 620000, Step: 200,
			Eval: summary(v[0], v[1])})
	}
	eval.DegradationFactors(ab.Entries, "full")
	writeJSON(t, filepath.Join(dir, AblationFile), ab)
	return dir
}

// writeSweep writes a sweep ablation.json of spar.rho0 (value -> relH1).
func writeSweep(t *testing.T, root, name string, values []string, relH1 []float64) string {
	t.Helper()
	dir := filepath.Join(root, name)
	ab := eval.Ablation{Format: eval.AblationFormat, Version: "test", Task: "burgers", Kind: "sweep", SweepKey: "spar.rho0",
		Schedule: eval.AblationSchedule{Steps: 200, Warmup: 10, Batch: 8, LR: 1e-3}, Steps: 25, Trajs: 10, Data: "/data/burgers.h5"}
	for i, v := range values {
		ab.Entries = append(ab.Entries, eval.AblationEntry{Mode: "full", Label: "spar.rho0 = " + v, Value: v,
			Run: filepath.Join(dir, "spar.rho0="+v), Params: 620000, Step: 200, Eval: summary(relH1[i]*0.9, relH1[i])})
	}
	writeJSON(t, filepath.Join(dir, AblationFile), ab)
	return dir
}

// benchResult is a bench row at NS-2D 128x128, batch 16.
func benchResult(name, modelName string, params int, gflops, trainMS, inferMS float64) bench.Result {
	samples := func(ms float64) []float64 { return []float64{ms * 16, ms * 16 * 1.1, ms * 16 * 0.95} }
	return bench.Result{Name: name, Task: "ns2d", Model: modelName, Backend: "cpu", Input: []int{16, 10, 128, 128}, Batch: 16,
		Params: params, Warmup: 1, Repeats: 3,
		FLOPs:  bench.FLOPs{ForwardPerSample: gflops * 1e9, Inference: int64(gflops * 1e9 * 16)},
		Train:  bench.Timing{MinMS: trainMS * 16 * 0.95, MedianMS: trainMS * 16, MinPerSampleMS: trainMS * 0.95, MedianPerSampleMS: trainMS, SamplesMS: samples(trainMS)},
		Infer:  bench.Timing{MinMS: inferMS * 16 * 0.95, MedianMS: inferMS * 16, MinPerSampleMS: inferMS * 0.95, MedianPerSampleMS: inferMS, SamplesMS: samples(inferMS)},
		Memory: bench.Memory{PeakBytes: 1 << 30, Source: "VmHWM"}}
}

// writeBench writes a bench JSON with U-HNO, FNO and mode F at the
// paper's shape and the cost-spar overhead.
func writeBench(t *testing.T, path string) {
	t.Helper()
	u := benchResult("uhno C0=3", "uhno", 566200, 0.1105, 35.08, 9.925)
	f := benchResult("fno width=16", "fno", 593400, 0.2782, 28.85, 8.229)
	uf := benchResult("uhno-F C0=3", "uhno-F", 566100, 0.1085, 31.2, 7.9)
	rep := bench.Report{Format: benchFormat, Version: "test", Preset: "cost-ns2d",
		Host: bench.Host{OS: "linux", Arch: "amd64", CPU: "Test CPU 9000", CPUs: 2, GOMAXPROCS: 2, Go: "go1.26"}, Threads: 2,
		Results: []bench.Result{u, f, uf}, Overheads: []bench.Overhead{bench.NewOverhead(u, uf)}}
	writeJSON(t, path, rep)
}

// writeTrainRun writes a training run directory: a checkpoint whose
// state.json (the real train.State) passes train.ReadState, and a
// log.jsonl with a few records.
func writeTrainRun(t *testing.T, root, name, task, mode string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	step := filepath.Join(dir, train.StepDirName(100))
	cfg := configtest.Builtin(t, task, map[string]any{"model.ablation": mode})
	st := train.State{Format: "uhno-checkpoint/1", Step: 100, LR: 1e-4, Schedule: train.Schedule{Peak: 1e-3, Warmup: 10, Steps: 100},
		BestVal: 0.02, BestValStep: 100, Model: "uhno", Params: 620000, Task: task, Config: cfg}
	if mode != "full" {
		st.Model = "uhno-" + mode
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(step, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(step, train.StateFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	writeJSON(t, filepath.Join(step, train.ManifestFile), map[string]any{"format": "uhno-checkpoint/1",
		"files": map[string]any{train.StateFile: map[string]any{"size": len(raw), "sha256": hex.EncodeToString(sum[:])}}})
	if err := os.WriteFile(filepath.Join(dir, train.LatestFile), []byte(train.StepDirName(100)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for s := 10; s <= 100; s += 10 {
		loss := 1 / float64(s)
		rec := map[string]any{"kind": "train", "step": s, "loss": loss, "mse": loss / 2, "h1": loss / 3, "cbc": 0.01, "lr": 1e-3,
			"rho": []float64{0.3, 0.31}, "elapsed_s": float64(s)}
		line, _ := json.Marshal(rec)
		log.Write(append(line, '\n'))
		if s%50 == 0 {
			line, _ := json.Marshal(map[string]any{"kind": "val", "step": s, "loss": 2 * loss, "mse": loss, "h1": loss / 2, "elapsed_s": float64(s)})
			log.Write(append(line, '\n'))
		}
	}
	for _, step := range []string{"50", "100"} {
		log.WriteString(`{"kind":"probe","step":` + step + `,"probe":"dynamics","value":{"trajectories":2,"rollout_steps":1,"crashed":0,` +
			`"band":[0.1,0.2,0.3],"band_horizon":[0.1,0.2,0.3],"band_steps":[[0.1,0.2,0.3]],"rel_l2":0.1,"rel_l2_horizon":0.1,` +
			`"stages":["enc.0"],"contrast":[[1.0,1.2]],"rho":[[0.3,0.31]],"rho_range":[0.1,0.9]}}` + "\n")
		log.WriteString(`{"kind":"probe","step":` + step + `,"probe":"angle","value":[80,90,100]}` + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, train.LogFile), []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
