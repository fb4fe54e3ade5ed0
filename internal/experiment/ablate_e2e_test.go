package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"uhno/internal/config"
	"uhno/internal/eval"
	"uhno/internal/testutil"
	"uhno/internal/train"
)

// TestAblateEndToEnd runs a tiny ablation (Full, A, E), checks its
// outputs, reruns it (nothing is trained or evaluated again), resumes an
// interrupted mode, refuses a run of other settings, and runs a sweep.
func TestAblateEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	out := filepath.Join(dir, "abl")
	ctx := context.Background()
	args := tinyAblate(t, dataDir, out, 4)
	args.Modes, args.CkptEvery = "A,E", 2
	ablate := func(o *AblateOptions) (string, error) {
		var stdout bytes.Buffer
		o.Out = &stdout
		err := Ablate(ctx, o)
		return stdout.String(), err
	}

	// Mode A stopped half way, as after Ctrl-C: ablate must resume it.
	// The warm-up matches ablate's schedule: scaled from the task's (0 of 4).
	trainA := tinyTrain(t, dataDir, filepath.Join(out, "A"), 4, "optim.warmup=0", "model.ablation=A")
	trainA.StopAfter, trainA.CkptEvery = 2, 2
	if err := Train(ctx, trainA); err != nil {
		t.Fatalf("train A: %v", err)
	}

	stdout, err := ablate(args)
	if err != nil {
		t.Fatalf("ablate: %v, stdout %q", err, stdout)
	}
	for _, want := range []string{"Full U-HNO", "A: NoLocal", "E: MSE only", "parameters (", "resuming " + filepath.Join(out, "A"),
		"training into " + filepath.Join(out, "full"), "relL2 factor", "1.00×"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "ablation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res eval.Ablation
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("ablation.json: %v", err)
	}
	if res.Format != eval.AblationFormat || res.Kind != "modes" || res.Task != "burgers" || res.Schedule.Steps != 4 || len(res.Entries) != 3 {
		t.Fatalf("ablation.json: %+v", res)
	}
	for i, mode := range []string{"full", "A", "E"} {
		e := res.Entries[i]
		if e.Mode != mode || e.Step != 4 || e.Params == 0 || e.Run != filepath.Join(out, mode) {
			t.Errorf("entry %d: %+v", i, e)
		}
		for _, m := range eval.AblationMetrics {
			iv, ok := e.Eval.Metrics[m]
			f := e.Factor[m]
			full := res.Entries[0].Eval.Metrics[m].Mean
			if !ok || iv.Mean <= 0 || f <= 0 || (f-iv.Mean/full) > 1e-12 {
				t.Errorf("entry %s metric %s: %+v, factor %v", mode, m, iv, f)
			}
		}
	}
	if res.Entries[1].Params >= res.Entries[0].Params || res.Entries[2].Params != res.Entries[0].Params {
		t.Errorf("parameters: Full %d, A %d (no local branch: fewer), E %d (loss only: same)",
			res.Entries[0].Params, res.Entries[1].Params, res.Entries[2].Params)
	}
	md, err := os.ReadFile(filepath.Join(out, "ablation.md"))
	if err != nil || !strings.Contains(string(md), "| A: NoLocal |") || !strings.Contains(string(md), "Command: `uhno ablate --task burgers --modes A,E --steps 4") {
		t.Errorf("ablation.md: %v\n%s", err, md)
	}
	if testutil.Race {
		// tinyAblate draws no figures under -race: none may be there.
		noPNG(t, out)
	} else {
		checkPNG(t, filepath.Join(out, "figures", "degradation.png"))
		// The same results with NoFigures: the tables, no figure.
		bare := filepath.Join(dir, "bare")
		if err := os.MkdirAll(bare, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := writeAblation(bare, &res, &b, true); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{eval.AblationFile, "ablation.md"} {
			if _, err := os.Stat(filepath.Join(bare, f)); err != nil {
				t.Errorf("NoFigures: %v", err)
			}
		}
		noPNG(t, bare)
		if strings.Contains(b.String(), "figure") {
			t.Errorf("NoFigures: the output names a figure:\n%s", b.String())
		}
	}

	// Rerunning finishes at once: nothing trained, nothing evaluated.
	before, _ := os.ReadFile(filepath.Join(out, "eval", "A", "results.json"))
	if stdout, err = ablate(args); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if strings.Contains(stdout, "training into") || strings.Contains(stdout, "resuming") || strings.Contains(stdout, "evaluating") ||
		strings.Count(stdout, "trained already") != 3 {
		t.Errorf("the rerun trained or evaluated again:\n%s", stdout)
	}
	after, _ := os.ReadFile(filepath.Join(out, "eval", "A", "results.json"))
	if string(before) != string(after) {
		t.Error("the rerun rewrote an evaluation")
	}

	// Other settings in the same directory are refused, not overwritten.
	other := tinyAblate(t, dataDir, out, 4, "spar.rho0=0.4")
	other.Modes, other.CkptEvery = "A,E", 2
	if _, err := ablate(other); err == nil || !strings.Contains(err.Error(), "holds a run with other settings (configuration key spar.rho0") {
		t.Errorf("other settings: %v", err)
	}

	// A sweep of spar.rho0 over two values.
	sweep := filepath.Join(dir, "sweep")
	sargs := tinyAblate(t, dataDir, sweep, 2)
	sargs.Sweep = "spar.rho0=0.2,0.4"
	if stdout, err := ablate(sargs); err != nil {
		t.Fatalf("sweep: %v, %s", err, stdout)
	}
	raw, err = os.ReadFile(filepath.Join(sweep, "ablation.json"))
	if err != nil {
		t.Fatal(err)
	}
	res = eval.Ablation{}
	if err := json.Unmarshal(raw, &res); err != nil || res.Kind != "sweep" || res.SweepKey != "spar.rho0" || len(res.Entries) != 2 ||
		res.Entries[0].Value != "0.2" || res.Entries[1].Run != filepath.Join(sweep, "spar.rho0=0.4") {
		t.Fatalf("sweep ablation.json: %v %+v", err, res)
	}
	if testutil.Race {
		noPNG(t, sweep)
	} else {
		checkPNG(t, filepath.Join(sweep, "figures", "sweep.png"))
	}
	st, _, err := train.ReadState(filepath.Join(sweep, "spar.rho0=0.4"))
	if err != nil {
		t.Fatal(err)
	}
	if rho := st.Config.SPAR.Rho0; rho != 0.4 {
		t.Errorf("the sweep's second run has spar.rho0 = %v", rho)
	}
}

// tinyAblate returns the options of `uhno ablate --data dataDir --quiet
// --out dir --steps steps --batch 4 --resamples 100` over tinySets and
// sets: every entry configured as uhno train would, with the warm-up
// scaled from the task's (0 of a few steps).
func tinyAblate(t testing.TB, dataDir, dir string, steps int, sets ...string) *AblateOptions {
	shared := append(append(slices.Clone(tinySets), "optim.steps="+strconv.Itoa(steps), "optim.warmup=0"), sets...)
	return &AblateOptions{Env: testEnv(nil, nil), Task: "burgers", DataDir: dataDir, Quiet: true, Dir: dir,
		Steps: steps, Batch: 4, Sets: sets, Resamples: 100, LogEvery: 10, ValEvery: 500, CkptEvery: 1000,
		DynamicsEvery: DefaultDynamicsEvery, NoFigures: testutil.Race, // rendering is serial: no race to find, minutes under -race
		Configure: func(mode string, extra []string) (config.Config, error) {
			return taskConfig(t, "burgers", append(append(slices.Clone(shared), "model.ablation="+mode), extra...)...), nil
		}}
}

// noPNG asserts that no .png file is under dir.
func noPNG(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".png") {
			t.Errorf("a figure was drawn: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkPNG asserts that path decodes as a PNG.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}
