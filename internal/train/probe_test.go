package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"uhno/internal/tensor"
)

// probeValue is what the test probes record: the step they ran at, a
// digest of the weights they saw and the loss of their own forward pass.
type probeValue struct {
	Step   int     `json:"step"`
	Digest float64 `json:"digest"`
	Loss   float64 `json:"loss"`
}

// meddlingProbe returns a probe that does what a real probe may do and
// more than most: a forward and a backward pass of the model on its own
// tape and batch (leaving gradients in the flat buffer), random numbers
// from a generator of its own (seeded by the step), and a host copy of
// the weights. calls
// counts its runs; hook, when set, runs first and may fail it.
func meddlingProbe(cfg Config, m *tinyModel, every int, calls *int, hook func(ctx context.Context, step int) error) Probe {
	b := cfg.Backend
	return Probe{Name: "meddle", Every: every, Run: func(ctx context.Context, step int) (any, error) {
		*calls++
		if hook != nil {
			if err := hook(ctx, step); err != nil {
				return nil, err
			}
		}
		// Random numbers from a generator of its own, seeded by the step
		// so that a resumed run's probe draws what the straight run's did.
		rng := rand.New(rand.NewPCG(7, uint64(step)))
		tp := tensor.NewTape(b)
		defer tp.Release()
		in := make([]float32, tinyBatch*tinyGrid)
		for i := range in {
			in[i] = float32(rng.NormFloat64())
		}
		x := tp.FromHost(in, tinyBatch, 1, tinyGrid)
		pred, _ := m.Forward(tp, x)
		loss := tp.MSE(pred, x)
		tp.Backward(loss)
		var digest float64
		for i, w := range m.p.host() {
			digest += float64(w) * float64(i%7+1)
		}
		return probeValue{Step: step, Digest: digest, Loss: float64(tensor.ToHost(b, loss)[0])}, nil
	}}
}

// probeRecords returns the probe records of a run's log.
func probeRecords(t *testing.T, dir string) []ProbeRecord {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []ProbeRecord
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var r ProbeRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r.Kind == ProbeKind {
			out = append(out, r)
		}
	}
	return out
}

// probeValues decodes the values of probe records, with their steps.
func probeValues(t *testing.T, recs []ProbeRecord) []probeValue {
	t.Helper()
	var out []probeValue
	for _, r := range recs {
		var v probeValue
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatalf("probe value %s: %v", r.Value, err)
		}
		if v.Step != r.Step || r.Probe != "meddle" || r.Seconds < 0 {
			t.Fatalf("record %+v holds step %d", r, v.Step)
		}
		out = append(out, v)
	}
	return out
}

// lossRecords returns the training and validation records of a run's log
// without their timing fields.
func lossRecords(t *testing.T, dir string) []LogRecord {
	t.Helper()
	var out []LogRecord
	for _, r := range readLog(t, dir) {
		if r.Kind == ProbeKind {
			continue
		}
		r.StepsPerS, r.ElapsedSec = 0, 0
		out = append(out, r)
	}
	return out
}

func steps(vs []probeValue) []int {
	var out []int
	for _, v := range vs {
		out = append(out, v.Step)
	}
	return out
}

// TestProbesLeaveTrainingAlone trains with and without a probe that runs
// forward and backward passes, draws random numbers and reads the
// weights: the final checkpoint (weights, moments, state) and every loss
// record are the same bits, and the probe ran at its steps only.
func TestProbesLeaveTrainingAlone(t *testing.T) {
	const steps20 = 20
	plain := t.TempDir()
	cfg, _, _ := tinyRun(plain, steps20, 2, 1)
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}

	probed := t.TempDir()
	cfg, m, _ := tinyRun(probed, steps20, 2, 1)
	calls := 0
	cfg.Probes = []Probe{meddlingProbe(cfg, m, 3, &calls, nil)}
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 6 || res.ProbeTime <= 0 {
		t.Errorf("probe ran %d times (%v), want 6 (steps 3, 6, ..., 18)", calls, res.ProbeTime)
	}
	a, _ := runFiles(t, plain)
	b, _ := runFiles(t, probed)
	for name := range a {
		if string(a[name]) != string(b[name]) {
			t.Errorf("%s differs between the runs with and without the probe", name)
		}
	}
	la, lb := lossRecords(t, plain), lossRecords(t, probed)
	if len(la) != len(lb) {
		t.Fatalf("%d loss records without the probe, %d with", len(la), len(lb))
	}
	for i := range la {
		if !reflect.DeepEqual(la[i], lb[i]) {
			t.Fatalf("loss record %d differs with the probe:\n%+v\n%+v", i, la[i], lb[i])
		}
	}
	vs := probeValues(t, probeRecords(t, probed))
	if got := steps(vs); !slices.Equal(got, []int{3, 6, 9, 12, 15, 18}) {
		t.Errorf("probe records at steps %v, want every 3", got)
	}
	// Each record follows its step's training and validation records and
	// comes before the next step's.
	var order []string
	for _, r := range readLog(t, probed) {
		if r.Step == 15 {
			order = append(order, r.Kind)
		}
	}
	if !slices.Equal(order, []string{"train", "val", ProbeKind}) {
		t.Errorf("records of step 15: %v, want train, val, probe", order)
	}
}

// TestProbeResumeKeepsCadence stops a probed run between probe steps and
// resumes it in a fresh model: the probe runs at the same steps and sees
// the same weights as in the straight run, and the checkpoints agree.
func TestProbeResumeKeepsCadence(t *testing.T) {
	const n = 11
	straight := t.TempDir()
	cfg, m, _ := tinyRun(straight, 2*n, 2, 1)
	calls := 0
	cfg.Probes = []Probe{meddlingProbe(cfg, m, 4, &calls, nil)}
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}

	resumed := t.TempDir()
	cfg, m, _ = tinyRun(resumed, 2*n, 2, 1)
	cfg.StopAfter = n
	cfg.Probes = []Probe{meddlingProbe(cfg, m, 4, &calls, nil)}
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	cfg, m, _ = tinyRun(resumed, 2*n, 1, 99)
	cfg.Resume = resumed
	calls = 0
	cfg.Probes = []Probe{meddlingProbe(cfg, m, 4, &calls, nil)}
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	if calls != 3 { // 12, 16, 20
		t.Errorf("resumed run probed %d times, want 3", calls)
	}
	sameRun(t, straight, resumed)
	a, b := probeValues(t, probeRecords(t, straight)), probeValues(t, probeRecords(t, resumed))
	if !slices.Equal(a, b) {
		t.Errorf("probe records differ:\nstraight %+v\nresumed  %+v", a, b)
	}
	if got := steps(a); !slices.Equal(got, []int{4, 8, 12, 16, 20}) {
		t.Errorf("probe records at %v, want every 4 steps", got)
	}
}

// TestProbeInterrupted cancels the run's context while a probe runs: the
// run stops at that step with a checkpoint and without the record, and
// the resume runs the probe on the checkpoint's weights before going on,
// so the log ends as the straight run's.
func TestProbeInterrupted(t *testing.T) {
	const total = 14
	straight := t.TempDir()
	cfg, m, _ := tinyRun(straight, total, 2, 1)
	calls := 0
	cfg.Probes = []Probe{meddlingProbe(cfg, m, 4, &calls, nil)}
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, m, _ = tinyRun(dir, total, 2, 1)
	cfg.Probes = []Probe{meddlingProbe(cfg, m, 4, &calls, func(ctx context.Context, step int) error {
		if step == 8 {
			cancel()
			return ctx.Err()
		}
		return nil
	})}
	res, err := Run(ctx, cfg, nil)
	if err != nil {
		t.Fatalf("interrupted run: %v", err)
	}
	if !res.Interrupted || res.Step != 8 || res.Checkpoint != filepath.Join(dir, StepDirName(8)) {
		t.Fatalf("interrupted run: %+v, want interrupted at 8 with a checkpoint there", res)
	}
	if got := steps(probeValues(t, probeRecords(t, dir))); !slices.Equal(got, []int{4}) {
		t.Fatalf("probe records %v before the resume, want [4] (8 interrupted)", got)
	}
	cfg, m, _ = tinyRun(dir, total, 2, 5)
	cfg.Resume = dir
	calls = 0
	cfg.Probes = []Probe{meddlingProbe(cfg, m, 4, &calls, nil)}
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	if calls != 2 { // 8 again, then 12
		t.Errorf("resumed run probed %d times, want 2", calls)
	}
	sameRun(t, straight, dir)
	a, b := probeValues(t, probeRecords(t, straight)), probeValues(t, probeRecords(t, dir))
	if !slices.Equal(a, b) {
		t.Errorf("probe records differ:\nstraight %+v\nresumed  %+v", a, b)
	}
}

// TestProbeErrors: a failing probe, a result JSON cannot hold and a bad
// probe list stop the run with one-line errors.
func TestProbeErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name  string
		probe func(cfg Config, m *tinyModel, calls *int) []Probe
		want  string
	}{
		{"probe fails", func(cfg Config, m *tinyModel, calls *int) []Probe {
			return []Probe{meddlingProbe(cfg, m, 3, calls, func(_ context.Context, step int) error {
				if step == 9 {
					return boom
				}
				return nil
			})}
		}, `train: step 9: probe "meddle": boom; the run stopped, last checkpoint DIR/step-00000007`},
		{"NaN result", func(cfg Config, m *tinyModel, calls *int) []Probe {
			return []Probe{{Name: "nan", Every: 2, Run: func(context.Context, int) (any, error) { return math.NaN(), nil }}}
		}, `train: step 2: probe "nan": encoding its result: json: unsupported value: NaN; the run stopped, last checkpoint (none)`},
		{"no name", func(Config, *tinyModel, *int) []Probe {
			return []Probe{{Every: 1, Run: func(context.Context, int) (any, error) { return 1, nil }}}
		}, "train: probe 0 has no name"},
		{"zero interval", func(Config, *tinyModel, *int) []Probe {
			return []Probe{{Name: "z", Run: func(context.Context, int) (any, error) { return 1, nil }}}
		}, `train: probe "z": interval 0 steps, want >= 1`},
		{"no function", func(Config, *tinyModel, *int) []Probe { return []Probe{{Name: "f", Every: 1}} },
			`train: probe "f" has no Run function`},
		{"twice", func(Config, *tinyModel, *int) []Probe {
			p := Probe{Name: "p", Every: 1, Run: func(context.Context, int) (any, error) { return 1, nil }}
			return []Probe{p, p}
		}, `train: two probes named "p"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, m, _ := tinyRun(dir, 12, 2, 1)
			calls := 0
			cfg.Probes = tt.probe(cfg, m, &calls)
			_, err := Run(context.Background(), cfg, nil)
			want := strings.ReplaceAll(tt.want, "DIR", dir)
			if err == nil || err.Error() != want {
				t.Fatalf("got  %v\nwant %s", err, want)
			}
		})
	}
}

// TestLogCurrentWhileRunning: the log is written through as the run goes
// (one write per record), not held in a buffer until a checkpoint, so
// that a long run can be watched (tail -f, uhno report on a live run).
// A probe reads the log at steps 4 and 8 of a run with no checkpoint
// before its end: every train and validation record up to its step is
// there already, and whole.
func TestLogCurrentWhileRunning(t *testing.T) {
	dir := t.TempDir()
	cfg, _, _ := tinyRun(dir, 10, 2, 1)
	cfg.CkptEvery = 0
	var seen [][]int // the train steps in the log, per probe call
	cfg.Probes = []Probe{{Name: "watch", Every: 4, Run: func(_ context.Context, step int) (any, error) {
		raw, err := os.ReadFile(filepath.Join(dir, LogFile))
		if err != nil {
			return nil, err
		}
		var got []int
		for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
			var r LogRecord
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return nil, fmt.Errorf("log line %q at step %d: %w", line, step, err)
			}
			if r.Kind == KindTrain {
				got = append(got, r.Step)
			}
		}
		seen = append(seen, got)
		return step, nil
	}}}
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	want := [][]int{{1, 2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8}}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("train records in the log while running: %v, want %v", seen, want)
	}
}
