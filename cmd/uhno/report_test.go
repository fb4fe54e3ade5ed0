package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/bench"
	"uhno/internal/config/configtest"
	"uhno/internal/eval"
)

// reportSummary is an evaluation with the given relL2 and relH1 and the
// other metrics derived from them.
func reportSummary(relL2, relH1 float64) eval.Summary {
	iv := func(m float64) eval.Interval { return eval.Interval{Mean: m, Low: 0.9 * m, High: 1.1 * m, N: 8} }
	w := eval.Wilson(0, 8, 0.95)
	return eval.Summary{Steps: 25, Trajectories: 8, CrashRate: &w, Bootstrap: eval.DefaultBootstrap, Metrics: map[string]eval.Interval{
		eval.MetricRelL2: iv(relL2), eval.MetricRelH1: iv(relH1), eval.MetricMSE: iv(relL2 * relL2), eval.MetricBandLow: iv(relL2),
		eval.MetricBandMid: iv(relL2), eval.MetricBandHigh: iv(relL2), eval.MetricSF: iv(relL2), eval.MetricEnergyDrift: iv(relL2)}}
}

// writeReportJSON writes v as JSON to path.
func writeReportJSON(t *testing.T, path string, v any) {
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

// reportFixtures writes, with the commands' own types, a Burgers
// results.json of uhno eval, an ablation.json of uhno ablate, a bench
// JSON of uhno bench, and a directory that is none of them.
func reportFixtures(t *testing.T, root string) (evalDir, ablateDir, benchFile, junk string) {
	cfg := configtest.Builtin(t, "burgers", nil)
	evalDir = filepath.Join(root, "eval-burgers")
	res := eval.Results{Format: eval.ResultsFormat, Version: version, Task: "burgers", Steps: 25, HorizonMult: 1, Data: "/data/burgers.h5", Trajs: 8,
		Models: []eval.ResultsModel{
			{Label: "uhno (0.62M)", Model: "uhno", Params: 620000, Checkpoint: "runs/burgers-uhno/step-00020000", Step: 20000, Config: cfg, Eval: reportSummary(0.05, 0.06)},
			{Label: "fno (0.60M)", Model: "fno", Params: 600000, Checkpoint: "runs/burgers-fno/step-00020000", Step: 20000, Config: cfg, Eval: reportSummary(0.001, 0.002)},
		}}
	writeReportJSON(t, filepath.Join(evalDir, "results.json"), res)

	ablateDir = filepath.Join(root, "ablate-burgers")
	ab := eval.Ablation{Format: eval.AblationFormat, Version: version, Task: "burgers", Kind: "modes",
		Schedule: eval.AblationSchedule{Steps: 100, Warmup: 5, Batch: 8, LR: 1e-3, Seed: 0}, Steps: 25, Trajs: 8, Data: "/data/burgers.h5",
		Command: "uhno ablate --modes A,B --steps 100",
		Entries: []eval.AblationEntry{
			{Mode: "full", Label: "Full U-HNO", Run: filepath.Join(ablateDir, "full"), Params: 620000, Step: 100, Eval: reportSummary(0.05, 0.06)},
			{Mode: "A", Label: "A: NoLocal", Run: filepath.Join(ablateDir, "A"), Params: 600000, Step: 100, Eval: reportSummary(0.15, 0.2)},
			{Mode: "B", Label: "B: NoGlobal", Run: filepath.Join(ablateDir, "B"), Params: 610000, Step: 100, Eval: reportSummary(0.1, 0.1)},
		}}
	eval.DegradationFactors(ab.Entries, "full")
	writeReportJSON(t, filepath.Join(ablateDir, "ablation.json"), ab)

	benchFile = filepath.Join(root, "cost.json")
	row := func(name, m string, params int) bench.Result {
		return bench.Result{Name: name, Task: "ns2d", Model: m, Backend: "cpu", Input: []int{16, 10, 128, 128}, Batch: 16, Params: params,
			Repeats: 2, FLOPs: bench.FLOPs{ForwardPerSample: 1e8, Inference: 16e8},
			Train: bench.Timing{MinPerSampleMS: 30, MedianPerSampleMS: 31, SamplesMS: []float64{480, 496}},
			Infer: bench.Timing{MinPerSampleMS: 9, MedianPerSampleMS: 10, SamplesMS: []float64{144, 160}}}
	}
	writeReportJSON(t, benchFile, bench.Report{Format: bench.ReportFormat, Version: version, Preset: "cost-ns2d", Host: bench.HostInfo(), Threads: 2,
		Results: []bench.Result{row("uhno C0=3", "uhno", 566000), row("fno width=16", "fno", 593000)}})

	junk = filepath.Join(root, "notes")
	if err := os.MkdirAll(junk, 0o755); err != nil {
		t.Fatal(err)
	}
	return
}

// TestReportCommand runs uhno report on inputs written with the real
// types of uhno eval, uhno ablate and uhno bench, and on bad ones.
func TestReportCommand(t *testing.T) {
	root := t.TempDir()
	evalDir, ablateDir, benchFile, junk := reportFixtures(t, root)
	bad := filepath.Join(root, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "results.json"), []byte(`{"format": "uhno-eval/1", "models": [}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "report")
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    []string // substrings of stdout
		wantErr    string   // substring of stderr (one line)
		wantReport []string // substrings of report.md
	}{
		{
			name: "every kind, a glob's worth after --runs",
			args: []string{"report", "--runs", evalDir, ablateDir, benchFile, junk, "--out", out},
			wantOut: []string{"used " + filepath.Join(evalDir, "results.json") + ": evaluation (uhno eval)", "used " + benchFile + ": benchmark (uhno bench)",
				"skipped " + junk + ": not recognised", "contradicts the paper: Tab. main-acc, burgers", "report in " + filepath.Join(out, "report.md") + ", 1 figures"},
			wantReport: []string{
				"| uhno (0.62M) | U-HNO | 0.05 [0.045, 0.055] | 0.0416 [0.0402, 0.043] | 1.20x | no |",
				"| fno (0.60M) | FNO | 0.001 [9.000e-04, 0.0011] | 0.1229 [0.12, 0.126] |",
				"Command: `uhno ablate --modes A,B --steps 100`",
				"| A: NoLocal | 9.00x | 13.67x | 3.00x | 3.61x | 3.33x | 4.10x |",
				"| uhno C0=3 | ns2d | [16 10 128 128] | U-HNO | 0.566 | 0.6187 |",
				"`" + junk + "`: not recognised",
				"Written by `uhno report` (uhno " + version + "): `uhno report --runs " + evalDir,
			},
		},
		{
			name:     "malformed results.json",
			args:     []string{"report", "--runs", bad, "--out", out},
			wantCode: 1,
			wantErr:  "uhno: report: " + filepath.Join(bad, "results.json") + ": invalid JSON at line 1, column 38",
		},
		{
			name:     "no inputs",
			args:     []string{"report", "--out", out},
			wantCode: 1,
			wantErr:  "uhno: report: no inputs; give --runs DIR...",
		},
		{
			name:     "missing directory",
			args:     []string{"report", "--runs", filepath.Join(root, "nope"), "--out", out},
			wantCode: 1,
			wantErr:  "nope: no such file or directory",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(out)
			code, stdout, stderr := execute(t, c.args...)
			if code != c.wantCode {
				t.Fatalf("code %d, want %d; stderr %q", code, c.wantCode, stderr)
			}
			for _, w := range c.wantOut {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if c.wantErr != "" && (!strings.Contains(stderr, c.wantErr) || strings.Count(stderr, "\n") != 1) {
				t.Errorf("stderr %q, want one line with %q", stderr, c.wantErr)
			}
			if c.wantCode != 0 {
				if _, err := os.Stat(filepath.Join(out, "report.md")); err == nil {
					t.Errorf("report.md written despite the error")
				}
				return
			}
			raw, err := os.ReadFile(filepath.Join(out, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.wantReport {
				if !strings.Contains(string(raw), w) {
					t.Errorf("report.md lacks %q", w)
				}
			}
			pngs, _ := filepath.Glob(filepath.Join(out, "figures", "*.png"))
			if len(pngs) == 0 {
				t.Errorf("no figures in %s", filepath.Join(out, "figures"))
			}
			for _, p := range pngs {
				f, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := png.Decode(f); err != nil {
					t.Errorf("%s: %v", p, err)
				}
				f.Close()
			}
			if t.Failed() {
				t.Logf("report.md:\n%s", raw)
			}
		})
	}
}

// TestReportWidthNote: a U-HNO run that --params scaled (built with C0 8
// where its configuration says 4) is reported with the width it was
// built with, read from the build record today's uhno train writes.
func TestReportWidthNote(t *testing.T) {
	dataDir, run, out := t.TempDir(), filepath.Join(t.TempDir(), "run"), t.TempDir()
	if code, _, stderr := execute(t, tinyTrain(dataDir, "--steps", "2", "--params", "50k", "--out", run)...); code != 0 {
		t.Fatalf("train: code %d, %s", code, stderr)
	}
	if code, _, stderr := execute(t, "report", "--runs", run, "--out", out); code != 0 {
		t.Fatalf("report: code %d, %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "model.c0 4, model.k0 8, spar.rho0 0.3 (built with C0 8: --params scaled it)"; !strings.Contains(string(raw), want) {
		t.Errorf("report.md lacks %q:\n%s", want, raw)
	}
}
