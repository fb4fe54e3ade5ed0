package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/runrec"
	"uhno/internal/train"
)

// TestTrainPrecision: on the CPU build --precision bf16 is refused in one
// line before any data is touched; a run records its precision in the
// checkpoint, and a resume refuses another.
func TestTrainPrecision(t *testing.T) {
	if !slicesHasCPU() {
		t.Skip("the CPU build's behaviour")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	code, out, errOut := execute(t, "train", "--task", "burgers", "--data", dataDir, "--quiet", "--precision", "bf16")
	if want := "train: --precision bf16 needs the CUDA backend (bin/uhno-cuda); the CPU backend computes in float32\n"; code == 0 || !strings.HasSuffix(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("bf16 on the CPU: code %d, stdout %q, stderr %q; want the one line %q", code, out, errOut, want)
	}
	if testing.Short() {
		return
	}
	run := filepath.Join(dir, "run")
	code, _, errOut = execute(t, "train", "--task", "burgers", "--data", dataDir, "--quiet", "--out", run, "--precision", "fp32",
		"--steps", "2", "--warmup", "1", "--batch", "4", "--val-pairs", "8",
		"--set", "data.train_trajectories=3", "--set", "data.test_trajectories=1", "--set", "data.snapshots=6", "--set", "data.pairs_per_trajectory=5", "--set", "data.rollout=5", "--set", "pde.t_end=0.1",
		"--set", "model.c0=4", "--set", "model.levels=2", "--set", "model.k0=8", "--set", "model.proj_hidden=8")
	if code != 0 {
		t.Fatalf("fp32 run: code %d, stderr %q", code, errOut)
	}
	st, _, err := train.ReadState(run)
	if err != nil {
		t.Fatal(err)
	}
	var rec runrec.BuildRecord
	if err := json.Unmarshal(st.Build, &rec); err != nil || rec.Precision != "fp32" {
		t.Fatalf("build record: precision %q, %v", rec.Precision, err)
	}
	code, _, errOut = execute(t, "train", "--resume", run, "--data", dataDir, "--quiet", "--steps", "3", "--precision", "bf16")
	if code == 0 || !strings.Contains(errOut, "train: --precision bf16 cannot be combined with --resume of a fp32 run") {
		t.Fatalf("resume with another precision: code %d, stderr %q", code, errOut)
	}
}

// slicesHasCPU reports whether this binary computes on the CPU backend.
func slicesHasCPU() bool {
	for _, b := range compiledBackends() {
		if b == "cpu" {
			return true
		}
	}
	return false
}
