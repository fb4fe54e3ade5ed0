package experiment

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"uhno/internal/data"
	"uhno/internal/datagen"
	"uhno/internal/eval"
)

// TestEvalTestData: `uhno eval --test-data FILE` evaluates a run on a
// longer file made by the same solver. On a file from the run's seed and
// count, whose first frames are the run's data, a 1x evaluation equals
// the one on the run's own file to the bit, and the 4x rollout's first
// steps are the 1x rollout; files of another solver setting or frame
// spacing are refused naming the difference; a result of another test
// file is not taken for current.
func TestEvalTestData(t *testing.T) {
	if testing.Short() {
		t.Skip("trains and generates data")
	}
	ctx := context.Background()
	dir := t.TempDir()
	dataDir, runDir := filepath.Join(dir, "data"), filepath.Join(dir, "run")
	const steps = 3
	if err := Train(ctx, tinyTrain(t, dataDir, runDir, steps)); err != nil {
		t.Fatal(err)
	}
	cfg := taskConfig(t, "burgers", append(append([]string(nil), tinySets...), "optim.steps="+strconv.Itoa(steps))...)
	_, _, own, _, err := datagen.Plan(datagen.Options{Config: cfg, Dir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	// tinySets: 6 frames 0.02 apart, rollout 5; 4x needs 1 + 20 frames.
	gen := func(name string, frames int, sets ...string) string {
		c := taskConfig(t, "burgers", append(append([]string(nil), tinySets...), sets...)...)
		c.Data.Snapshots = frames
		c.PDE.TEnd = 0.02 * float64(frames-1)
		res, err := datagen.Run(ctx, datagen.Options{Config: c, Dir: filepath.Join(dir, name)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Path
	}
	long := gen("long", 21)
	// The file's trajectories are normalised with the run's statistics,
	// not the file's own.
	_, _, rec, err := readRun("eval", runDir)
	if err != nil || rec.Stats == nil {
		t.Fatalf("the run's record: %v (stats %v)", err, rec.Stats)
	}
	ownDS, err := data.Open(own, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ownDS.Close()
	td, err := evalTestData(cfg, ownDS, long, 1, *rec.Stats)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(td.stats, *rec.Stats) || !reflect.DeepEqual(td.split.Test, []int{0, 1, 2, 3}) {
		t.Errorf("test data: statistics %+v and trajectories %v; want the run's %+v and all 4", td.stats, td.split.Test, *rec.Stats)
	}
	td.ds.Close()
	evalTo := func(out, test string, mult int, skip bool) (*EvalOptions, eval.Results, error) {
		o := &EvalOptions{Env: testEnv(nil, nil), Checkpoints: []string{runDir}, HorizonMult: mult, Dir: filepath.Join(dir, out),
			TestData: test, Resamples: 20, Quiet: true, NoFigures: true, SkipCurrent: skip}
		var r eval.Results
		if err := Eval(ctx, o); err != nil {
			return o, r, err
		}
		raw, err := os.ReadFile(filepath.Join(o.Dir, eval.ResultsFile))
		if err == nil {
			err = json.Unmarshal(raw, &r)
		}
		return o, r, err
	}
	_, a, err := evalTo("a", own, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := evalTo("b", long, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if a.Trajs != 4 || b.Trajs != 4 || b.Data != long || a.Data != own {
		t.Fatalf("1x: %d trajectories of %s and %d of %s; want all 4 of each file", a.Trajs, a.Data, b.Trajs, b.Data)
	}
	ea, eb := a.Models[0].Eval, b.Models[0].Eval
	ea.Bootstrap, eb.Bootstrap = eval.BootstrapSpec{}, eval.BootstrapSpec{}
	if ja, jb := mustJSON(t, ea), mustJSON(t, eb); ja != jb {
		t.Errorf("1x on the long file differs from 1x on the run's own file:\n%s\n%s", ja, jb)
	}
	_, c, err := evalTo("c", long, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Steps != 20 || c.HorizonMult != 4 {
		t.Fatalf("4x: %d steps at horizon %d, want 20 at 4", c.Steps, c.HorizonMult)
	}
	for _, m := range []string{eval.MetricRelL2, eval.MetricMSE} {
		c4, c1 := c.Models[0].Eval.Curves[m].Mean, b.Models[0].Eval.Curves[m].Mean
		if len(c4) != 20 || len(c1) != 5 || !reflect.DeepEqual(c4[:5], c1) {
			t.Errorf("%s: the 4x curve's first 5 steps %v are not the 1x curve %v", m, c4[:min(5, len(c4))], c1)
		}
		if math.IsNaN(c4[19]) {
			t.Errorf("%s at step 20 is NaN", m)
		}
	}

	// Without a long file the 4x evaluation points at --test-data.
	if _, _, err := evalTo("d", "", 4, false); err == nil || !strings.Contains(err.Error(), "--test-data") {
		t.Errorf("4x on the run's 6 frames: %v, want a refusal naming --test-data", err)
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"another viscosity", gen("nu", 21, "pde.nu=0.05"), `attribute "nu" is 0.05`},
		{"another frame spacing", func() string {
			c := taskConfig(t, "burgers", tinySets...)
			c.Data.Snapshots, c.PDE.TEnd = 11, 0.4
			res, err := datagen.Run(ctx, datagen.Options{Config: c, Dir: filepath.Join(dir, "spacing")})
			if err != nil {
				t.Fatal(err)
			}
			return res.Path
		}(), "frames are 0.04 apart"},
		{"no file", filepath.Join(dir, "none.h5"), "none.h5"},
	} {
		if _, _, err := evalTo("e", tc.file, 1, false); err == nil || !strings.Contains(err.Error(), tc.want) ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", tc.name, err, tc.want)
		}
	}

	// "b" holds the long file's 1x result: current for the long file, not
	// for the run's own file.
	if o, _, err := evalTo("b", long, 1, true); err != nil || !o.Current {
		t.Errorf("the same evaluation again: current %v, %v", o.Current, err)
	}
	if o, r, err := evalTo("b", own, 1, true); err != nil || o.Current || r.Data != own {
		t.Errorf("another test file: current %v (results of %s), %v; want evaluated again", o.Current, r.Data, err)
	}
}

// TestStabilityData: the long test file of Tab. stability has the
// configuration's frame spacing and solver, enough frames for the
// history and 4x the rollout, another seed, and the test count; a task
// whose data already hold 4x (NS-2D: 10 + 40 of 50 frames) needs none.
func TestStabilityData(t *testing.T) {
	cfg := taskConfig(t, "burgers")
	opt, ok, err := StabilityData(cfg, 0, 4)
	if err != nil || !ok {
		t.Fatalf("burgers: %v, %v", ok, err)
	}
	c := opt.Config
	want := cfg.Data.History + 4*cfg.Data.Rollout
	if c.Data.Snapshots != want || math.Abs(c.SaveInterval()-cfg.SaveInterval()) > 1e-12 ||
		c.Data.Seed != cfg.Data.Seed+StabilitySeedOffset || opt.Train+opt.Test != cfg.Data.TestTrajectories {
		t.Errorf("burgers: %d frames %g apart, seed %d, %d+%d trajectories; want %d frames %g apart, seed %d, %d",
			c.Data.Snapshots, c.SaveInterval(), c.Data.Seed, opt.Train, opt.Test, want, cfg.SaveInterval(),
			cfg.Data.Seed+StabilitySeedOffset, cfg.Data.TestTrajectories)
	}
	if c.PDE.Nu != cfg.PDE.Nu || c.PDE.Dt != cfg.PDE.Dt || !reflect.DeepEqual(c.PDE.Grid, cfg.PDE.Grid) {
		t.Errorf("burgers: the solver settings changed: %+v, want %+v", c.PDE, cfg.PDE)
	}
	for _, task := range []string{"ns2d", "darcy"} {
		if _, ok, err := StabilityData(taskConfig(t, task), 0, 4); ok || err != nil {
			t.Errorf("%s: %v, %v; want nothing to make", task, ok, err)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestChannelsCoordinates: a model's input channels are the fields times
// the history, plus one per grid axis where data.coordinates is set
// (Darcy's built-in configuration: a, x, y), as the data plan gives them.
func TestChannelsCoordinates(t *testing.T) {
	tests := []struct {
		task    string
		in, out int
	}{
		{"darcy", 3, 1},
		{"ns2d", 10, 1},
		{"burgers", 1, 1},
	}
	for _, tc := range tests {
		if in, out := Channels(taskConfig(t, tc.task)); in != tc.in || out != tc.out {
			t.Errorf("%s: %d -> %d channels, want %d -> %d", tc.task, in, out, tc.in, tc.out)
		}
	}
	cfg := taskConfig(t, "darcy")
	cfg.Data.Coordinates = false
	if in, _ := Channels(cfg); in != 1 {
		t.Errorf("darcy without coordinates: %d input channels, want 1", in)
	}
	cfg = taskConfig(t, "ns2d")
	cfg.Data.Constants, cfg.Data.Coordinates = []string{"k", "Re"}, true
	if in, _ := Channels(cfg); in != 10+2+2 {
		t.Errorf("ns2d with two constants and coordinates: %d input channels, want 14", in)
	}
}
