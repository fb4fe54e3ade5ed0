package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"uhno/internal/dynamics"
	"uhno/internal/train"
)

// TestTrainDynamics trains the tiny Burgers U-HNO with the
// training-dynamics probe every 2 steps: the log holds a dynamics record
// at steps 2, 4, 6 that dynamics.Read takes (the single test trajectory,
// a 5-step rollout, the SPAR statistics of every routing stage); the
// weights are those of a run without the probe; a run stopped at step 3
// and resumed with no flags probes at the same steps with the same
// values (the interval is recorded in the checkpoint); --dynamics-every
// given on resume overrides it with one line; FNO records the bands only;
// and dynamics.Figures draws the runs.
func TestTrainDynamics(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	args := func(out string, extra ...string) []string {
		return append(tinyTrain(dataDir, "--steps", "6", "--log-every", "1", "--val-every", "3", "--ckpt-every", "2", "--threads", "1", "--out", out), extra...)
	}

	probed := filepath.Join(dir, "probed")
	code, stdout, stderr := execute(t, args(probed, "--dynamics-every", "2", "--dynamics-trajectories", "4")...)
	if code != 0 {
		t.Fatalf("probed run: code %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"dynamics: every 2 steps, a 5-step rollout of all 1 test trajectories (fewer than --dynamics-trajectories 4; E_b per band, relL2, SPAR contrast and keep-ratio per routing stage) into log.jsonl\n",
		"probes (training-dynamics records) took ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	s, err := dynamics.Read(filepath.Join(probed, train.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, p := range s.Dynamics {
		steps = append(steps, p.Step)
		if p.Trajectories != 1 || p.RolloutSteps != 5 || len(p.BandSteps) != 5 || p.Crashed > 1 ||
			!slices.Equal(p.Stages, []string{"enc.0", "enc.1", "mid", "dec.1", "dec.0"}) || len(p.Contrast[0]) != 1 ||
			p.RhoRange == nil || *p.RhoRange != [2]float64{0.1, 0.9} {
			t.Errorf("record at step %d: %+v", p.Step, p.Record)
		}
	}
	if !slices.Equal(steps, []int{2, 4, 6}) || len(s.Train) != 6 || len(s.Val) != 2 {
		t.Fatalf("dynamics records at %v, %d train and %d val records; want [2 4 6], 6, 2", steps, len(s.Train), len(s.Val))
	}

	plain := filepath.Join(dir, "plain")
	if code, _, stderr := execute(t, args(plain, "--dynamics-every", "0")...); code != 0 {
		t.Fatalf("run without the probe: code %d, stderr %q", code, stderr)
	}
	sameWeights := func(a, b string) {
		t.Helper()
		for _, name := range []string{train.WeightsFile, train.OptimizerFile} {
			x, _ := os.ReadFile(filepath.Join(a, "step-00000006", name))
			y, _ := os.ReadFile(filepath.Join(b, "step-00000006", name))
			if len(x) == 0 || !bytes.Equal(x, y) {
				t.Errorf("%s differs between %s and %s", name, filepath.Base(a), filepath.Base(b))
			}
		}
	}
	sameWeights(probed, plain)
	if p, err := dynamics.Read(filepath.Join(plain, train.LogFile)); err != nil || len(p.Dynamics) != 0 {
		t.Errorf("--dynamics-every 0 wrote %d dynamics records (%v)", len(p.Dynamics), err)
	}

	resumed := filepath.Join(dir, "resumed")
	if code, _, stderr := execute(t, args(resumed, "--dynamics-every", "2", "--dynamics-trajectories", "4", "--stop-after", "3")...); code != 0 {
		t.Fatalf("stopped run: code %d, stderr %q", code, stderr)
	}
	code, stdout, stderr = execute(t, "train", "--resume", resumed, "--quiet", "--data", dataDir)
	if code != 0 || strings.Contains(stdout, "resume:") || !strings.Contains(stdout, "dynamics: every 2 steps") {
		t.Fatalf("resume: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	sameWeights(probed, resumed)
	r, err := dynamics.Read(filepath.Join(resumed, train.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Dynamics, s.Dynamics) {
		t.Errorf("resumed dynamics records differ from the straight run's:\n%+v\n%+v", r.Dynamics, s.Dynamics)
	}

	over := filepath.Join(dir, "override")
	if code, _, stderr := execute(t, args(over, "--dynamics-every", "2", "--stop-after", "3")...); code != 0 {
		t.Fatalf("stopped run: code %d, stderr %q", code, stderr)
	}
	code, stdout, stderr = execute(t, "train", "--resume", over, "--quiet", "--data", dataDir, "--dynamics-every", "0")
	if code != 0 || !strings.Contains(stdout, "resume: --dynamics-every 0 overrides the run's 2\n") || strings.Contains(stdout, "dynamics: every") {
		t.Fatalf("resume with --dynamics-every 0: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if o, err := dynamics.Read(filepath.Join(over, train.LogFile)); err != nil || len(o.Dynamics) != 1 || o.Dynamics[0].Step != 2 {
		t.Errorf("override: %v, %v; want the record of step 2 only", o, err)
	}

	fno := filepath.Join(dir, "fno")
	code, stdout, stderr = execute(t, append(tinyTrain(dataDir, "--steps", "2", "--out", fno, "--model", "fno"), "--dynamics-every", "1")...)
	if code != 0 || !strings.Contains(stdout, "; E_b per band, relL2) into log.jsonl") {
		t.Fatalf("fno run: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	f, err := dynamics.Read(filepath.Join(fno, train.LogFile))
	if err != nil || len(f.Dynamics) != 2 || f.Dynamics[0].Stages != nil {
		t.Fatalf("fno records: %+v, %v", f, err)
	}

	figs, err := dynamics.Figures(filepath.Join(dir, "figures"), []dynamics.Run{{Label: "uhno", Series: s}, {Label: "fno", Series: f}})
	if err != nil || len(figs) != 4 { // bands, contrast of uhno, rho, loss
		t.Fatalf("figures %v, %v", figs, err)
	}
}

func TestTrainDynamicsFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--dynamics-every", "-1"}, "train: --dynamics-every -1: want 0 or more (0: off)"},
		{[]string{"--dynamics-trajectories", "0"}, "train: --dynamics-trajectories 0: want 1 or more"},
	} {
		code, _, stderr := execute(t, append([]string{"train", "--task", "burgers"}, tt.args...)...)
		if code != 1 || stderr != "uhno: "+tt.want+"\n" {
			t.Errorf("%v: code %d, stderr %q, want %q", tt.args, code, stderr, tt.want)
		}
	}
	var opts *trainOptions
	cmd := newTrainCmd(&bytes.Buffer{}, &bytes.Buffer{}, func(_ context.Context, o *trainOptions) error { opts = o; return nil })
	cmd.SetArgs([]string{"--task", "burgers"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	// Every 1,000 steps by default (about 2% of a CPU run), not the
	// paper's 200 (about 11%): defaultDynamicsEvery.
	if opts.DynamicsEvery != 1000 || opts.DynamicsTrajs != 128 {
		t.Errorf("defaults: --dynamics-every %d --dynamics-trajectories %d, want 1000 and the paper's 128", opts.DynamicsEvery, opts.DynamicsTrajs)
	}
}
