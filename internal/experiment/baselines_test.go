package experiment

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/model"
)

// TestBaselinesTrainAndEvaluate trains every registered baseline (each
// model besides U-HNO, FNO and the additive hybrid) for a few steps on
// the tiny Burgers set at --params 0.2M (Conv-FNO's fixed U-Net alone
// has 146k parameters), resumes one, and evaluates them all side by side:
// the build record carries each spec, and eval rebuilds each model from
// it through the registry.
func TestBaselinesTrainAndEvaluate(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	ctx := context.Background()
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	var runs []string
	for _, name := range model.Names() {
		if name == "uhno" || name == "fno" || name == "additive" {
			continue
		}
		run := filepath.Join(dir, name)
		o := tinyTrain(t, dataDir, run, 2)
		var out bytes.Buffer
		o.Out, o.Model, o.Params, o.DynamicsEvery = &out, name, "0.2M", 0
		if name == "wno" {
			o.StopAfter, o.CkptEvery = 1, 1
		}
		if err := Train(ctx, o); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(out.String(), "burgers on cpu: "+name+" (") {
			t.Errorf("%s: stdout %q", name, out.String())
		}
		runs = append(runs, run)
	}
	var out bytes.Buffer
	resume := &TrainOptions{Env: testEnv(&out, nil), Resume: filepath.Join(dir, "wno"), DataDir: dataDir, Quiet: true,
		LogEvery: 10, ValEvery: 500, CkptEvery: 1000, Keep: 2, ValPairs: 256, Graph: true,
		DynamicsEvery: DefaultDynamicsEvery, DynamicsTrajs: 128}
	if err := Train(ctx, resume); err != nil || !strings.Contains(out.String(), "step 2/2") {
		t.Fatalf("resume wno: %v, %q", err, out.String())
	}
	out.Reset()
	eo := &EvalOptions{Env: testEnv(&out, nil), Checkpoints: runs, DataDir: dataDir, Dir: filepath.Join(dir, "eval"), HorizonMult: 1,
		Quiet: true, Resamples: 50, NoFigures: true}
	if err := Eval(ctx, eo); err != nil {
		t.Fatalf("eval: %v", err)
	}
	for _, name := range []string{"| wno (", "| ffno (", "| loglofno (", "| convfno (", "| cno (", "| fno ("} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("the tables lack %q:\n%s", name, out.String())
		}
	}
}
