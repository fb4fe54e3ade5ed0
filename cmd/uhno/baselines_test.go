package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBaselinesTrainAndEvaluate trains every baseline of baselines() for
// a few steps on the tiny Burgers set at --params 0.2M (Conv-FNO's fixed
// U-Net alone has 146k parameters), resumes one, and evaluates them all side by side: the build
// record carries each spec, and eval rebuilds each model from it.
func TestBaselinesTrainAndEvaluate(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	var runs []string
	for _, b := range baselines() {
		run := filepath.Join(dir, b.name)
		args := tinyTrain(dataDir, "--model", b.name, "--params", "0.2M", "--steps", "2", "--out", run, "--dynamics-every", "0")
		if b.name == "wno" {
			args = tinyTrain(dataDir, "--model", b.name, "--params", "0.2M", "--steps", "2", "--stop-after", "1", "--ckpt-every", "1", "--out", run, "--dynamics-every", "0")
		}
		code, stdout, stderr := execute(t, args...)
		if code != 0 {
			t.Fatalf("%s: code %d, stderr %q", b.name, code, stderr)
		}
		if !strings.Contains(stdout, "burgers on cpu: "+b.name+" (") {
			t.Errorf("%s: stdout %q", b.name, stdout)
		}
		runs = append(runs, "--checkpoint", run)
	}
	if code, stdout, stderr := execute(t, "train", "--resume", filepath.Join(dir, "wno"), "--data", dataDir, "--quiet"); code != 0 || !strings.Contains(stdout, "step 2/2") {
		t.Fatalf("resume wno: code %d, %q %q", code, stdout, stderr)
	}
	out := filepath.Join(dir, "eval")
	code, stdout, stderr := execute(t, append([]string{"eval", "--data", dataDir, "--out", out, "--quiet", "--resamples", "50", "--no-figures"}, runs...)...)
	if code != 0 {
		t.Fatalf("eval: code %d, %s", code, stderr)
	}
	for _, name := range []string{"| wno (", "| ffno (", "| loglofno (", "| convfno (", "| cno (", "| fno ("} {
		if !strings.Contains(stdout, name) {
			t.Errorf("the tables lack %q:\n%s", name, stdout)
		}
	}
}
