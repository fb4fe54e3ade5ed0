package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/eval"
)

// TestSwitchesConfig checks the switches of issue 20 at the command line:
// `uhno config` prints each with its default, --set changes it, and a bad
// value or a refused combination is one line naming the key.
func TestSwitchesConfig(t *testing.T) {
	cleanEnv(t, nil)
	code, out, errOut := execute(t, "config", "--task", "burgers")
	if code != 0 {
		t.Fatalf("config: code %d, %s", code, errOut)
	}
	for _, want := range []string{"decoder_residual: outside", "upsample: clamp", "spar_stages: all", "surrogate_centre: zero"} {
		if !strings.Contains(out, want) {
			t.Errorf("uhno config lacks %q", want)
		}
	}
	code, out, errOut = execute(t, "config", "--task", "burgers", "--set", "model.decoder_residual=inside", "--set", "spar.surrogate_centre=threshold",
		"--set", "model.upsample=periodic", "--set", "model.spar_stages=decoder")
	if code != 0 {
		t.Fatalf("config --set: code %d, %s", code, errOut)
	}
	for _, want := range []string{"decoder_residual: inside", "upsample: periodic", "spar_stages: decoder", "surrogate_centre: threshold"} {
		if !strings.Contains(out, want) {
			t.Errorf("uhno config --set lacks %q", want)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "burgers", "--set", "model.decoder_residual=both"}, "key model.decoder_residual: got \"both\", want one of inside, outside"},
		{[]string{"--task", "darcy", "--set", "model.upsample=periodic"}, "key model.upsample: got \"periodic\", want clamp: pde.boundary is dirichlet"},
		{[]string{"--task", "burgers", "--set", "model.ablation=F", "--set", "model.spar_stages=encoder"}, "key model.spar_stages: got \"encoder\", want all with model.ablation F"},
		{[]string{"--task", "burgers", "--set", "spar.surrogate_centre=tau"}, "key spar.surrogate_centre: got \"tau\", want one of zero, threshold"},
	} {
		code, _, errOut := execute(t, append([]string{"config"}, tt.args...)...)
		if code == 0 || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: code %d, stderr %q, want one line with %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestSwitchesSweepAndResume runs `uhno ablate --sweep
// model.decoder_residual=inside,outside` on a tiny Burgers, checks that
// each run records its switch in the checkpoint (the configuration and
// the build record's spec, where the default leaves no trace), and that
// resuming a run with the switch changed is refused on one line.
func TestSwitchesSweepAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	cleanEnv(t, nil)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	sweep := filepath.Join(dir, "sweep")
	args := append([]string{"ablate", "--sweep", "model.decoder_residual=inside,outside", "--data", dataDir, "--quiet", "--out", sweep,
		"--steps", "2", "--batch", "4", "--resamples", "100"}, tinySets...)
	if code, stdout, errOut := execute(t, args...); code != 0 {
		t.Fatalf("sweep: code %d, %s %s", code, errOut, stdout)
	}
	raw, err := os.ReadFile(filepath.Join(sweep, "ablation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res eval.Ablation
	if err := json.Unmarshal(raw, &res); err != nil || res.Kind != "sweep" || res.SweepKey != "model.decoder_residual" || len(res.Entries) != 2 ||
		res.Entries[0].Value != "inside" || res.Entries[1].Value != "outside" || res.Entries[0].Params != res.Entries[1].Params {
		t.Fatalf("sweep ablation.json: %v %+v", err, res)
	}
	for _, v := range []string{"inside", "outside"} {
		run := filepath.Join(sweep, "model.decoder_residual="+v)
		st, _ := checkpointState(t, run)
		if got := st["config"].(map[string]any)["model"].(map[string]any)["decoder_residual"]; got != v {
			t.Errorf("run %s: configuration has model.decoder_residual = %v", v, got)
		}
		spec := st["build"].(map[string]any)["spec"].(map[string]any)
		if got, recorded := spec["DecoderResidual"]; (v == "inside") == recorded || (recorded && got != v) {
			t.Errorf("run %s: build record spec has DecoderResidual = %v (recorded %t); the default must leave no trace", v, got, recorded)
		}
	}
	outside := filepath.Join(sweep, "model.decoder_residual=outside")
	code, _, errOut := execute(t, "train", "--resume", outside, "--quiet", "--steps", "3", "--set", "model.decoder_residual=inside")
	if code == 0 || !strings.Contains(errOut, "--set cannot be combined with --resume") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("resume with the switch changed: code %d, stderr %q, want a one-line refusal", code, errOut)
	}
	// The switch comes back from the record: resuming without flags
	// continues the outside run.
	code, stdout, errOut := execute(t, "train", "--resume", outside, "--quiet", "--steps", "3", "--data", dataDir)
	if code != 0 {
		t.Fatalf("resume: code %d, %s %s", code, errOut, stdout)
	}
	st, _ := checkpointState(t, outside)
	if got := st["build"].(map[string]any)["spec"].(map[string]any)["DecoderResidual"]; got != "outside" {
		t.Errorf("the resumed run's record has DecoderResidual = %v", got)
	}
}
