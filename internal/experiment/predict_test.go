package experiment

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"uhno/internal/data"
	"uhno/internal/data/h5/h5test"
	"uhno/internal/eval"
	"uhno/internal/train"
)

// TestPredictEqualsEvalRollout trains a tiny Burgers U-HNO, rolls it out
// on its test trajectory with eval's rollout and with uhno predict (from
// that trajectory's first frame, written to a PDEBench-style file, and
// from the data file itself with --test-split), and requires the same
// bits; --reference on the data file scores the prediction.
func TestPredictEqualsEvalRollout(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir, run := filepath.Join(dir, "data"), filepath.Join(dir, "run")
	ctx := context.Background()
	if err := Train(ctx, tinyTrain(t, dataDir, run, 3)); err != nil {
		t.Fatal(err)
	}

	// eval's rollout, called as uhno eval calls it.
	st, ckDir, err := train.ReadState(run)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := readRecord("test", ckDir, st.Build)
	if err != nil {
		t.Fatal(err)
	}
	td, err := openTaskData(st.Config, rec.Data, rec.Stride, runStats(rec, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer td.ds.Close()
	backend, closeB, err := testEnv(nil, nil).openBackend(2)
	if err != nil {
		t.Fatal(err)
	}
	defer closeB()
	in, out := td.plan.InputShape(1)[1], td.plan.TargetShape(1)[1]
	m, _, err := buildModel(st.Config, in, out, modelChoice{}, &rec, backend)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := train.LoadWeights(ckDir, train.Adapt(m), backend); err != nil {
		t.Fatal(err)
	}
	grid, err := metricGrid(st.Config, td)
	if err != nil {
		t.Fatal(err)
	}
	steps := st.Config.Data.Rollout
	trajs := td.split.Test
	if len(trajs) != 1 {
		t.Fatalf("test trajectories %v, want one (tinySets)", trajs)
	}
	o, err := eval.Rollout(context.Background(), m, backend, eval.Source{Plan: td.plan, Trajs: trajs, Stats: &td.stats, Grid: grid},
		eval.RolloutOptions{Steps: steps, Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	pts := td.ds.Points()

	// The test trajectory's first frame as a PDEBench 1D file.
	first := make([]float32, pts)
	if err := td.ds.ReadFrames(first, trajs[0], 0, 1, []string{"tensor"}); err != nil {
		t.Fatal(err)
	}
	ics := filepath.Join(dir, "ics.h5")
	if err := h5test.Write(ics, []h5test.Dataset{{Name: "tensor", Dims: []int{1, 1, pts}, Data: first}}, nil); err != nil {
		t.Fatal(err)
	}
	check := func(name string, outFile string) {
		t.Helper()
		ds, err := data.Open(outFile, data.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer ds.Close()
		if ds.Len() != 1 || ds.Frames() != steps+1 {
			t.Fatalf("%s: %d trajectories of %d frames, want 1 of %d", name, ds.Len(), ds.Frames(), steps+1)
		}
		got := make([]float32, (steps+1)*pts)
		if err := ds.ReadFrames(got, 0, 0, steps+1, []string{"tensor"}); err != nil {
			t.Fatal(err)
		}
		for s := 1; s <= steps; s++ {
			want := o.Sample.Pred[s-1]
			for j := range pts {
				if math.Float32bits(got[s*pts+j]) != math.Float32bits(want[j]) {
					t.Fatalf("%s: step %d point %d: predict %v, eval %v", name, s, j, got[s*pts+j], want[j])
				}
			}
		}
	}
	predict := func(o PredictOptions) (string, error) {
		var stdout bytes.Buffer
		o.Env, o.Checkpoint, o.Quiet, o.Threads, o.Batch = testEnv(&stdout, nil), run, true, 2, 32
		if o.Resamples == 0 {
			o.Resamples = eval.DefaultResamples
		}
		err := Predict(ctx, &o)
		return stdout.String(), err
	}
	p1 := filepath.Join(dir, "p1.h5")
	if stdout, err := predict(PredictOptions{Input: ics, Output: p1}); err != nil {
		t.Fatalf("predict: %v", err)
	} else if !strings.Contains(stdout, "1 trajectories on grid [128], 5 steps") {
		t.Errorf("stdout %q", stdout)
	}
	check("first frame in a PDEBench file", p1)

	p2 := filepath.Join(dir, "p2.h5")
	stdout, err := predict(PredictOptions{Input: rec.Data, TestSplit: true, Reference: rec.Data, Output: p2, Resamples: 100})
	if err != nil {
		t.Fatalf("predict --test-split: %v", err)
	}
	check("the data file's test split", p2)
	// eval's relL2 at the last step is the reference score's.
	want := o.Metrics[0].Curve("relL2")[steps-1]
	if !strings.Contains(stdout, "relL2 against") || !strings.Contains(stdout, "step   5") {
		t.Errorf("stdout lacks the reference scores:\n%s", stdout)
	}
	if line := lastStepLine(stdout, steps); !strings.Contains(line, fmt.Sprintf("%.4g [", want)) {
		t.Errorf("step %d line %q, want eval's relL2 %.4g", steps, line, want)
	}

	// The refusals are one line naming the command.
	absent := filepath.Join(dir, "absent.npy")
	if _, err := predict(PredictOptions{Input: absent, Output: filepath.Join(dir, "p3.npy")}); err == nil || !strings.HasPrefix(err.Error(), "predict: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("absent input: %v", err)
	}
}

// lastStepLine returns the reference score's line of step step.
func lastStepLine(stdout string, step int) string {
	for _, l := range strings.Split(stdout, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "step" && f[1] == strconv.Itoa(step) {
			return l
		}
	}
	return ""
}
