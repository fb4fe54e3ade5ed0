package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/dynamics"
	"uhno/internal/train"
)

// TestAdditiveRun trains the flat additive hybrid (--model additive) with
// training-dynamics records every 2 steps: its size is matched to U-HNO's,
// every record step also holds one branch-gradient angle per matched layer
// in [0, 180], the run resumes, and uhno eval draws the run's
// training-dynamics panels (the angle histogram among them) beside its
// rollout figures.
func TestAdditiveRun(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	run := filepath.Join(dir, "additive")
	code, stdout, stderr := execute(t, tinyTrain(dataDir, "--model", "additive", "--steps", "4", "--stop-after", "2",
		"--ckpt-every", "2", "--dynamics-every", "2", "--log-every", "1", "--out", run)...)
	if code != 0 {
		t.Fatalf("additive run: code %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"additive (flat FNO + depthwise-conv hybrid), width ", "4 blocks",
		"dynamics: every 2 steps, the angle between the Fourier and depthwise branches' MSE gradient updates of each of the 4 matched layers"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, stderr := execute(t, "train", "--resume", run, "--data", dataDir, "--quiet"); code != 0 {
		t.Fatalf("resume: code %d, %s", code, stderr)
	}
	s, err := dynamics.Read(filepath.Join(run, train.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Angles) != 2 || s.Angles[0].Step != 2 || s.Angles[1].Step != 4 {
		t.Fatalf("angle records: %+v", s.Angles)
	}
	for _, a := range s.Angles {
		if len(a.Degrees) != 4 {
			t.Errorf("step %d: %d angles, want one per matched layer (4)", a.Step, len(a.Degrees))
		}
		for _, d := range a.Degrees {
			if math.IsNaN(d) || d < 0 || d > 180 {
				t.Errorf("step %d: angle %v outside [0, 180]", a.Step, d)
			}
		}
	}
	if len(s.Dynamics) != 2 || len(s.Dynamics[0].Stages) != 0 {
		t.Errorf("dynamics records: %d, stages %v; want 2 records without routing stages", len(s.Dynamics), s.Dynamics[0].Stages)
	}

	out := filepath.Join(dir, "eval")
	code, stdout, stderr = execute(t, "eval", "--checkpoint", run, "--data", dataDir, "--out", out, "--quiet", "--resamples", "50")
	if code != 0 {
		t.Fatalf("eval: code %d, %s", code, stderr)
	}
	for _, f := range []string{dynamics.AngleFile, dynamics.BandsFile, dynamics.LossFile} {
		checkPNGFile(t, filepath.Join(out, "figures", f))
	}
	if !strings.Contains(stdout, "| additive (") {
		t.Errorf("eval tables lack the additive model:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "figures", dynamics.RhoFile)); err == nil {
		t.Error("a keep-ratio panel for a model without SPAR routing")
	}
}
