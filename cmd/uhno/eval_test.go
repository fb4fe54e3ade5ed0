package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalEndToEnd trains a tiny U-HNO and FNO on a small Burgers set,
// evaluates both side by side and checks results.json, the tables and
// the figures; then the one-line refusals of bad input.
func TestEvalEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	common := []string{"train", "--task", "burgers", "--data", dataDir, "--quiet",
		"--steps", "3", "--warmup", "1", "--batch", "4", "--val-pairs", "4",
		"--set", "data.train_trajectories=3", "--set", "data.test_trajectories=3", "--set", "data.snapshots=6",
		"--set", "data.pairs_per_trajectory=5", "--set", "data.rollout=5", "--set", "pde.t_end=0.1",
		"--set", "model.c0=4", "--set", "model.levels=2", "--set", "model.k0=8", "--set", "model.proj_hidden=8"}
	with := func(extra ...string) []string { return append(append([]string(nil), common...), extra...) }
	uhno, fno := filepath.Join(dir, "uhno"), filepath.Join(dir, "fno")
	for _, args := range [][]string{with("--out", uhno), with("--out", fno, "--model", "fno")} {
		if code, _, errOut := execute(t, args...); code != 0 {
			t.Fatalf("%v: code %d, stderr %q", args, code, errOut)
		}
	}

	out := filepath.Join(dir, "eval")
	code, stdout, errOut := execute(t, "eval", "--checkpoint", uhno, "--checkpoint", fno, "--data", dataDir,
		"--out", out, "--quiet", "--resamples", "200")
	if code != 0 {
		t.Fatalf("eval: code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"Accuracy (Tab. main-acc)", "Stability (Tab. stability)", "| uhno (", "| fno (", "rollout of 5 steps"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Task   string `json:"task"`
		Steps  int    `json:"rollout_steps"`
		Trajs  int    `json:"test_trajectories"`
		Models []struct {
			Model      string `json:"model"`
			Checkpoint string `json:"checkpoint"`
			Eval       struct {
				Metrics map[string]struct {
					Mean, Low, High *float64
					N               int
				} `json:"metrics"`
				Curves map[string]struct {
					Mean []*float64 `json:"mean"`
				} `json:"curves"`
				CrashRate *struct{ Mean float64 } `json:"crash_rate"`
			} `json:"evaluation"`
		} `json:"models"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	if res.Task != "burgers" || res.Steps != 5 || res.Trajs != 3 || len(res.Models) != 2 ||
		res.Models[0].Model != "uhno" || res.Models[1].Model != "fno" {
		t.Fatalf("results.json: %+v", res)
	}
	for _, m := range res.Models {
		if !strings.HasPrefix(m.Checkpoint, filepath.Join(dir, m.Model, "step-")) || m.Eval.CrashRate == nil {
			t.Errorf("%s: checkpoint %q, crash rate %v", m.Model, m.Checkpoint, m.Eval.CrashRate)
		}
		for _, name := range []string{"relL2", "relH1", "mse", "band_low", "band_mid", "band_high", "sf", "energy_drift"} {
			iv, ok := m.Eval.Metrics[name]
			if !ok || len(m.Eval.Curves[name].Mean) != 5 {
				t.Errorf("%s: metric %s missing or curve of %d steps", m.Model, name, len(m.Eval.Curves[name].Mean))
				continue
			}
			if iv.Mean != nil && (iv.Low == nil || *iv.Low > *iv.Mean || *iv.Mean > *iv.High) {
				t.Errorf("%s: %s interval %v not around its mean %v", m.Model, name, iv.Low, *iv.Mean)
			}
		}
	}
	for _, name := range []string{"uhno__", "fno__"} {
		matches, _ := filepath.Glob(filepath.Join(out, "figures", name+"*_spacetime.png"))
		if len(matches) != 1 {
			t.Errorf("no space-time figure for %s: %v", name, matches)
		}
	}
	for _, glob := range []string{"uhno__*_routing.png", "error_growth.png", "*_spacetime.png", "band_growth.png", "motivation_bands.png"} {
		matches, _ := filepath.Glob(filepath.Join(out, "figures", glob))
		for _, p := range matches {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(f)
			f.Close()
			if err != nil || cfg.Width < 100 || cfg.Height < 100 {
				t.Errorf("%s: not a PNG figure (%v, %dx%d)", p, err, cfg.Width, cfg.Height)
			}
		}
		if len(matches) == 0 {
			t.Errorf("no figure %s", glob)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "results.md")); err != nil {
		t.Error(err)
	}

	bad := []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--data", dataDir}, "uhno: eval: no --checkpoint given and no run in runs/; train one (uhno train --task burgers) or pass --checkpoint DIR"},
		{[]string{"eval", "--checkpoint", uhno, "--task", "ks", "--data", dataDir}, "uhno: eval: checkpoint " + filepath.Join(uhno, "step-00000003") + " is a model of task burgers, but --task ks"},
		{[]string{"eval", "--checkpoint", uhno, "--rollout", "6", "--data", dataDir, "--out", out}, "uhno: eval: a rollout of 6 steps from 1 history frames needs 7 frames per trajectory; "},
		{[]string{"eval", "--checkpoint", uhno, "--horizon-mult", "4", "--data", dataDir, "--out", out}, "--horizon-mult 4 needs trajectories that long"},
		{[]string{"eval", "--checkpoint", filepath.Join(dir, "nothing"), "--data", dataDir}, "uhno: eval: " /* replaced below */},
	}
	bad[4].want = "uhno: eval: checkpoint " + filepath.Join(dir, "nothing")
	for _, b := range bad {
		code, _, errOut := execute(t, b.args...)
		if code != 1 || !strings.Contains(errOut, b.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: code %d, stderr %q, want one line with %q", b.args[1:], code, errOut, b.want)
		}
	}

	// A run on other data (another data seed: another file and split) is
	// not put beside the first.
	other := filepath.Join(dir, "other")
	if code, _, errOut := execute(t, with("--out", other, "--set", "data.seed=5")...); code != 0 {
		t.Fatalf("data.seed-5 run: code %d, stderr %q", code, errOut)
	}
	code, _, errOut = execute(t, "eval", "--checkpoint", uhno, "--checkpoint", other, "--data", dataDir, "--out", out)
	if code != 1 || !strings.Contains(errOut, "differ in data file") || !strings.Contains(errOut, filepath.Join(other, "step-00000003")) {
		t.Errorf("mismatched checkpoints: code %d, stderr %q", code, errOut)
	}
}
