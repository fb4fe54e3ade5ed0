package train

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/config"
	"uhno/internal/cpu"
)

const (
	tinyGrid  = 16
	tinyBatch = 4
)

// tinyRun returns a Config for the tiny model on an in-memory stream; the
// model's initial weights come from initSeed.
func tinyRun(dir string, steps int, threads int, initSeed uint64) (Config, *tinyModel, *memStream) {
	b := cpu.New(threads)
	m := newTinyModel(b, 1, 1, 8, initSeed)
	s := newMemStream(24, tinyBatch, tinyGrid, 11)
	return Config{
		Model: m, Backend: b, Train: s, Val: s.valSet(2),
		Loss:     LossConfig{LambdaH1: 1e-3, LambdaCBC: 5e-3, Spacing: []float64{1.0 / tinyGrid}, Periodic: true},
		Schedule: Schedule{Peak: 1e-2, Warmup: 4, Steps: steps},
		Optim:    AdamW{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4},
		LogEvery: 1, ValEvery: 5, CkptEvery: 7, Keep: 2,
		Dir: dir, DataSeed: 11, Version: "test",
		Run: config.Config{Task: "burgers"},
	}, m, s
}

// readLog returns the records of a run's log.
func readLog(t *testing.T, dir string) []LogRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []LogRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r LogRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestRunLossFalls trains the tiny model and checks that the loss falls,
// that every step is logged with its terms, learning rate and SPAR
// statistics, and that validation and the final checkpoint happen.
func TestRunLossFalls(t *testing.T) {
	dir := t.TempDir()
	cfg, _, _ := tinyRun(dir, 60, 2, 1)
	var out bytes.Buffer
	res, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Step != 60 || res.Interrupted || res.Checkpoint != filepath.Join(dir, StepDirName(60)) {
		t.Fatalf("result %+v, want 60 steps, not interrupted, checkpoint step-60", res)
	}
	recs := readLog(t, dir)
	var train []LogRecord
	vals := 0
	for _, r := range recs {
		switch r.Kind {
		case "train":
			train = append(train, r)
			if len(r.Rho) != 1 || len(r.Contrast) != 1 || r.Rho[0] < 0.1 || r.Rho[0] > 0.9 {
				t.Fatalf("step %d: rho %v contrast %v, want one level with rho in [0.1, 0.9]", r.Step, r.Rho, r.Contrast)
			}
			if want := cfg.Schedule.LR(r.Step); r.LR != want {
				t.Fatalf("step %d: lr %g, want %g", r.Step, r.LR, want)
			}
			if r.H1 <= 0 || r.CBC <= 0 || r.Total <= r.MSE {
				t.Fatalf("step %d: terms %+v, want positive h1 and cbc adding to the total", r.Step, r.LossValues)
			}
		case "val":
			vals++
		}
	}
	if len(train) != 60 || vals != 12 {
		t.Fatalf("%d train and %d val records, want 60 and 12", len(train), vals)
	}
	first := (train[0].MSE + train[1].MSE + train[2].MSE) / 3
	last := (train[57].MSE + train[58].MSE + train[59].MSE) / 3
	if !(last < 0.3*first) {
		t.Fatalf("MSE went from %.4g to %.4g, want a fall by more than 3x", first, last)
	}
	if res.Val == nil || !(res.Val.MSE < 0.3*first) || res.BestValStep == 0 {
		t.Fatalf("validation %+v (best at %d), want it below 0.3 x the initial training MSE %.4g", res.Val, res.BestValStep, first)
	}
	// Keep = 2: the last two checkpoints (56 and 60) remain.
	if got := checkpointSteps(dir); len(got) != 2 || got[0] != 56 || got[1] != 60 {
		t.Fatalf("checkpoints kept: %v, want [56 60]", got)
	}
}

// runFiles returns the final checkpoint's files and the loss fields of the
// log, the things that must agree bit for bit between a straight and a
// resumed run.
func runFiles(t *testing.T, dir string) (map[string][]byte, []LossValues) {
	t.Helper()
	ck, err := ResolveCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{WeightsFile, OptimizerFile, StateFile, ManifestFile} {
		raw, err := os.ReadFile(filepath.Join(ck, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = raw
	}
	var losses []LossValues
	for _, r := range readLog(t, dir) {
		losses = append(losses, r.LossValues)
	}
	return files, losses
}

func sameRun(t *testing.T, straightDir, resumedDir string) {
	t.Helper()
	a, la := runFiles(t, straightDir)
	b, lb := runFiles(t, resumedDir)
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between the straight and the resumed run", name)
		}
	}
	if len(la) != len(lb) {
		t.Fatalf("log has %d records straight, %d resumed", len(la), len(lb))
	}
	for i := range la {
		if la[i] != lb[i] {
			t.Fatalf("log record %d: %+v straight, %+v resumed", i, la[i], lb[i])
		}
	}
}

// TestResumeBitIdentical trains 2N steps straight, and N steps, then
// resumes from the checkpoint in a new model (other initial weights, a
// fresh data stream, one thread instead of two) for the remaining N: the
// final weights, moments, state, manifest and every logged loss are
// identical bit for bit. N is not a multiple of the checkpoint interval,
// so the resume starts from the stop checkpoint.
func TestResumeBitIdentical(t *testing.T) {
	const n = 17
	straight := t.TempDir()
	cfg, _, _ := tinyRun(straight, 2*n, 2, 1)
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}

	resumed := t.TempDir()
	cfg, _, _ = tinyRun(resumed, 2*n, 2, 1)
	cfg.StopAfter = n
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Step != n || res.Checkpoint != filepath.Join(resumed, StepDirName(n)) {
		t.Fatalf("stopped run: %+v, want interrupted at %d with a checkpoint there", res, n)
	}
	cfg, m, _ := tinyRun(resumed, 2*n, 1, 99)
	before := m.p.host()
	cfg.Resume = resumed
	res, err = Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ResumedFrom != n || res.Step != 2*n || res.Interrupted {
		t.Fatalf("resumed run: %+v, want steps %d..%d", res, n, 2*n)
	}
	if after := m.p.host(); after[0] == before[0] {
		t.Fatalf("resumed model kept its own initial weights")
	}
	sameRun(t, straight, resumed)
}

// TestInterruptSavesAndResumes cancels the context in the middle of a
// step: the run finishes that step, saves a checkpoint, returns without an
// error, and resuming from the run directory ends exactly like a run that
// was never interrupted.
func TestInterruptSavesAndResumes(t *testing.T) {
	const steps = 20
	straight := t.TempDir()
	cfg, _, _ := tinyRun(straight, steps, 2, 1)
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cfg, m, _ := tinyRun(dir, steps, 2, 1)
	calls := 0
	m.forward = func() {
		calls++
		if calls == 12 { // training step 10 (validation ran at step 5: 2 batches)
			cancel()
		}
	}
	res, err := Run(ctx, cfg, nil)
	if err != nil {
		t.Fatalf("interrupted run returned %v", err)
	}
	if !res.Interrupted || res.Step != 10 {
		t.Fatalf("interrupted run: %+v, want interrupted after step 10", res)
	}
	st, _, err := ReadState(dir)
	if err != nil || st.Step != 10 || st.Data.Drawn != 10 {
		t.Fatalf("latest checkpoint: step %d, %d batches drawn (%v); want 10, 10", st.Step, st.Data.Drawn, err)
	}

	cfg, _, _ = tinyRun(dir, steps, 2, 5)
	cfg.Resume = dir
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	sameRun(t, straight, dir)
}

// TestRunRefusals checks the one-line errors for a diverged loss, a run
// directory that already holds a run, and resuming another run's
// checkpoint.
func TestRunRefusals(t *testing.T) {
	t.Run("NaN loss", func(t *testing.T) {
		dir := t.TempDir()
		cfg, _, s := tinyRun(dir, 20, 2, 1)
		s.nanAt = 9
		_, err := Run(context.Background(), cfg, nil)
		want := "train: step 9: loss is NaN"
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "last checkpoint "+filepath.Join(dir, StepDirName(7))) {
			t.Fatalf("got %v, want %q ... naming the step-7 checkpoint", err, want)
		}
		// No checkpoint of the diverged weights; the last good one stays
		// latest and intact.
		if got := checkpointSteps(dir); len(got) != 1 || got[0] != 7 {
			t.Fatalf("checkpoints %v after the NaN, want [7]", got)
		}
		if _, ckDir, err := loadCheckpoint(dir); err != nil || ckDir != filepath.Join(dir, StepDirName(7)) {
			t.Fatalf("latest %s (%v), want the intact step 7", ckDir, err)
		}
	})

	dir := t.TempDir()
	cfg, _, _ := tinyRun(dir, 8, 2, 1)
	cfg.StopAfter = 3
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string
	}{
		{"fresh run over an old one", func(c *Config) { c.Resume = "" },
			"train: " + dir + " already holds a run; resume it or choose another directory"},
		{"other task", func(c *Config) { c.Run.Task = "ks" },
			`train: checkpoint ` + filepath.Join(dir, StepDirName(3)) + ` is from another run: task "burgers" there, "ks" here`},
		{"other schedule", func(c *Config) { c.Schedule.Steps = 9 },
			`train: checkpoint ` + filepath.Join(dir, StepDirName(3)) + ` is from another run: schedule (lr, warmup, steps) 0.01, 4, 8 there, 0.01, 4, 9 here`},
		{"other batch", func(c *Config) { c.Train = newMemStream(24, 2, tinyGrid, 11) },
			`train: checkpoint ` + filepath.Join(dir, StepDirName(3)) + ` is from another run: data seed and batch 11, 4 there, 11, 2 here`},
		{"other model", func(c *Config) { c.Model = renamed{c.Model} },
			`train: checkpoint ` + filepath.Join(dir, StepDirName(3)) + ` is from another run: model "tiny" there, "tiny2" here`},
		{"other width", func(c *Config) { c.Model = newTinyModel(c.Backend, 1, 1, 6, 1) },
			fmt.Sprintf("train: checkpoint %s is from another run: parameter count %d there, %d here",
				filepath.Join(dir, StepDirName(3)), newTinyModel(cpu.New(1), 1, 1, 8, 1).p.n, newTinyModel(cpu.New(1), 1, 1, 6, 1).p.n)},
		{"no checkpoint", func(c *Config) { c.Resume = filepath.Join(dir, "nothing") },
			"train: checkpoint " + filepath.Join(dir, "nothing") + ": stat " + filepath.Join(dir, "nothing") + ": no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, _ := tinyRun(dir, 8, 2, 1)
			cfg.Resume = dir
			tt.mutate(&cfg)
			_, err := Run(context.Background(), cfg, nil)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}

// renamed is a model under another name.
type renamed struct{ Model }

func (renamed) Name() string { return "tiny2" }

// TestTrimLog checks that resuming drops the log records written after
// the checkpoint (and a torn last line), keeping the rest byte for byte.
func TestTrimLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogFile)
	lines := `{"kind":"train","step":1,"loss":1}` + "\n" +
		`{"kind":"val","step":2,"loss":1}` + "\n" +
		`{"kind":"train","step":3,"loss":1}` + "\n" +
		`{"kind":"train","st`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := trimLog(path, 2); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := lines[:strings.Index(lines, `{"kind":"train","step":3`)]; string(got) != want {
		t.Fatalf("trimmed log %q, want %q", got, want)
	}
}
