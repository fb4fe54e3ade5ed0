package experiment

import (
	"bytes"
	"context"
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
	ctx := context.Background()
	o := tinyTrain(t, dataDir, run, 4)
	var out bytes.Buffer
	o.Out, o.Model, o.StopAfter, o.CkptEvery, o.DynamicsEvery, o.LogEvery = &out, "additive", 2, 2, 2, 1
	if err := Train(ctx, o); err != nil {
		t.Fatalf("additive run: %v", err)
	}
	stdout := out.String()
	for _, want := range []string{"additive (flat FNO + depthwise-conv hybrid), width ", "4 blocks",
		"dynamics: every 2 steps, the angle between the Fourier and depthwise branches' MSE gradient updates of each of the 4 matched layers"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	resume := &TrainOptions{Env: testEnv(nil, nil), Resume: run, DataDir: dataDir, Quiet: true, LogEvery: 10, ValEvery: 500,
		CkptEvery: 1000, Keep: 2, ValPairs: 256, Graph: true, DynamicsEvery: DefaultDynamicsEvery, DynamicsTrajs: 128}
	if err := Train(ctx, resume); err != nil {
		t.Fatalf("resume: %v", err)
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

	evalDir := filepath.Join(dir, "eval")
	out.Reset()
	if err := Eval(ctx, &EvalOptions{Env: testEnv(&out, nil), Checkpoints: []string{run}, DataDir: dataDir, Dir: evalDir,
		HorizonMult: 1, Quiet: true, Resamples: 50}); err != nil {
		t.Fatalf("eval: %v", err)
	}
	stdout = out.String()
	for _, f := range []string{dynamics.AngleFile, dynamics.BandsFile, dynamics.LossFile} {
		checkPNG(t, filepath.Join(evalDir, "figures", f))
	}
	if !strings.Contains(stdout, "| additive (") {
		t.Errorf("eval tables lack the additive model:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(evalDir, "figures", dynamics.RhoFile)); err == nil {
		t.Error("a keep-ratio panel for a model without SPAR routing")
	}
}
