package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/eval"
)

// TestAblateEndToEnd runs a tiny ablation (Full, A, E), checks its
// outputs, reruns it (nothing is trained or evaluated again), resumes an
// interrupted mode, refuses a run of other settings, and runs a sweep.
func TestAblateEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	out := filepath.Join(dir, "abl")
	args := append([]string{"ablate", "--modes", "A,E", "--data", dataDir, "--quiet", "--out", out,
		"--steps", "4", "--batch", "4", "--resamples", "100", "--ckpt-every", "2"}, tinySets...)

	// Mode A stopped half way, as after Ctrl-C: ablate must resume it.
	trainA := tinyTrain(dataDir, "--mode", "A", "--steps", "4", "--out", filepath.Join(out, "A"), "--stop-after", "2", "--ckpt-every", "2")
	trainA = slices.DeleteFunc(trainA, func(s string) bool { return s == "--warmup" || s == "1" })
	// Match ablate's schedule exactly: warm-up scaled from the task's (0 of 4).
	trainA = append(trainA, "--warmup", "0")
	if code, _, errOut := execute(t, trainA...); code != 0 {
		t.Fatalf("train A: code %d, %s", code, errOut)
	}

	code, stdout, errOut := execute(t, args...)
	if code != 0 {
		t.Fatalf("ablate: code %d, stderr %q, stdout %q", code, errOut, stdout)
	}
	for _, want := range []string{"Full U-HNO", "A: NoLocal", "E: MSE only", "parameters (", "resuming " + filepath.Join(out, "A"),
		"training into " + filepath.Join(out, "full"), "relL2 factor", "1.00×"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "ablation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res eval.Ablation
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("ablation.json: %v", err)
	}
	if res.Format != eval.AblationFormat || res.Kind != "modes" || res.Task != "burgers" || res.Schedule.Steps != 4 || len(res.Entries) != 3 {
		t.Fatalf("ablation.json: %+v", res)
	}
	for i, mode := range []string{"full", "A", "E"} {
		e := res.Entries[i]
		if e.Mode != mode || e.Step != 4 || e.Params == 0 || e.Run != filepath.Join(out, mode) {
			t.Errorf("entry %d: %+v", i, e)
		}
		for _, m := range eval.AblationMetrics {
			iv, ok := e.Eval.Metrics[m]
			f := e.Factor[m]
			full := res.Entries[0].Eval.Metrics[m].Mean
			if !ok || iv.Mean <= 0 || f <= 0 || (f-iv.Mean/full) > 1e-12 {
				t.Errorf("entry %s metric %s: %+v, factor %v", mode, m, iv, f)
			}
		}
	}
	if res.Entries[1].Params >= res.Entries[0].Params || res.Entries[2].Params != res.Entries[0].Params {
		t.Errorf("parameters: Full %d, A %d (no local branch: fewer), E %d (loss only: same)",
			res.Entries[0].Params, res.Entries[1].Params, res.Entries[2].Params)
	}
	md, err := os.ReadFile(filepath.Join(out, "ablation.md"))
	if err != nil || !strings.Contains(string(md), "| A: NoLocal |") || !strings.Contains(string(md), "Command: `uhno ablate --task burgers --modes A,E --steps 4") {
		t.Errorf("ablation.md: %v\n%s", err, md)
	}
	checkPNGFile(t, filepath.Join(out, "figures", "degradation.png"))

	// Rerunning finishes at once: nothing trained, nothing evaluated.
	before, _ := os.ReadFile(filepath.Join(out, "eval", "A", "results.json"))
	code, stdout, errOut = execute(t, args...)
	if code != 0 {
		t.Fatalf("rerun: code %d, %s", code, errOut)
	}
	if strings.Contains(stdout, "training into") || strings.Contains(stdout, "resuming") || strings.Contains(stdout, "evaluating") ||
		strings.Count(stdout, "trained already") != 3 {
		t.Errorf("the rerun trained or evaluated again:\n%s", stdout)
	}
	after, _ := os.ReadFile(filepath.Join(out, "eval", "A", "results.json"))
	if string(before) != string(after) {
		t.Error("the rerun rewrote an evaluation")
	}

	// Other settings in the same directory are refused, not overwritten.
	other := append(slices.Clone(args), "--set", "spar.rho0=0.4")
	if code, _, errOut := execute(t, other...); code == 0 || !strings.Contains(errOut, "holds a run with other settings (configuration key spar.rho0") {
		t.Errorf("other settings: code %d, %q", code, errOut)
	}

	// A sweep of spar.rho0 over two values.
	sweep := filepath.Join(dir, "sweep")
	sargs := append([]string{"ablate", "--sweep", "spar.rho0=0.2,0.4", "--data", dataDir, "--quiet", "--out", sweep,
		"--steps", "2", "--batch", "4", "--resamples", "100"}, tinySets...)
	if code, stdout, errOut := execute(t, sargs...); code != 0 {
		t.Fatalf("sweep: code %d, %s %s", code, errOut, stdout)
	}
	raw, err = os.ReadFile(filepath.Join(sweep, "ablation.json"))
	if err != nil {
		t.Fatal(err)
	}
	res = eval.Ablation{}
	if err := json.Unmarshal(raw, &res); err != nil || res.Kind != "sweep" || res.SweepKey != "spar.rho0" || len(res.Entries) != 2 ||
		res.Entries[0].Value != "0.2" || res.Entries[1].Run != filepath.Join(sweep, "spar.rho0=0.4") {
		t.Fatalf("sweep ablation.json: %v %+v", err, res)
	}
	checkPNGFile(t, filepath.Join(sweep, "figures", "sweep.png"))
	st, _ := checkpointState(t, filepath.Join(sweep, "spar.rho0=0.4"))
	if rho := st["config"].(map[string]any)["spar"].(map[string]any)["rho0"]; rho != 0.4 {
		t.Errorf("the sweep's second run has spar.rho0 = %v", rho)
	}
}

// TestAblateErrors checks the one-line refusals of bad flags.
func TestAblateErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--modes", "Z"}, `ablate: --modes "Z": "Z" is not a mode`},
		{[]string{"--sweep", "rho"}, `ablate: --sweep "rho": want key=v1,v2,...`},
		{[]string{"--sweep", "spar.rho0=0.1", "--modes", "A,B"}, `--sweep runs one mode over the values; --modes "A,B" names 2`},
		{[]string{"--sweep", "spar.nope=1"}, "spar.nope"},
		{[]string{"--steps", "-1"}, "must not be negative"},
		{[]string{"--task", "nope"}, "nope"},
	}
	for _, tt := range tests {
		code, _, errOut := execute(t, append([]string{"ablate", "--out", t.TempDir()}, tt.args...)...)
		if code == 0 || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: code %d, stderr %q, want one line with %q", tt.args, code, errOut, tt.want)
		}
	}
}

// checkPNGFile asserts that path decodes as a PNG.
func checkPNGFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}
