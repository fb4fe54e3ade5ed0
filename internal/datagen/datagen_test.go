package datagen

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"uhno/internal/config"
	"uhno/internal/config/configtest"
	"uhno/internal/data"
	"uhno/internal/data/h5"
	"uhno/internal/data/h5/h5test"
)

// builtin is configtest.Builtin: a task's embedded configuration with
// overrides, validated.
var builtin = configtest.Builtin

// TestGeneratorForEveryTask: every built-in configuration maps onto its
// solver with the configured shapes (cfd3d has none and says where its
// data comes from).
func TestGeneratorForEveryTask(t *testing.T) {
	for _, task := range config.TaskNames() {
		t.Run(task, func(t *testing.T) {
			c := builtin(t, task, nil)
			gen, err := Generator(c)
			if task == "cfd3d" {
				if err == nil || !strings.Contains(err.Error(), "--pdebench") {
					t.Fatalf("cfd3d: err %v, want a pointer to --pdebench", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			shapes := gen.Shapes()
			last := shapes[len(shapes)-1]
			if got := last[len(last)-len(c.PDE.Grid):]; !equal(got, c.PDE.Grid) {
				t.Fatalf("grid %v, config says %v", got, c.PDE.Grid)
			}
			if task != "darcy" && last[0] != c.Data.Snapshots {
				t.Fatalf("%d frames, config says %d", last[0], c.Data.Snapshots)
			}
		})
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRunWritesReadableFileAndSkips generates a small KS set, reads it
// back through the training reader, and checks that a second run reuses it
// and that another seed makes another file.
func TestRunWritesReadableFileAndSkips(t *testing.T) {
	dir := t.TempDir()
	c := builtin(t, "ks", map[string]any{"pde.t_burn": 1.0, "pde.t_end": 5.0})
	opt := Options{Config: c, Dir: dir, Train: 3, Test: 1, Workers: 2}
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Generated != 4 || res.Trajectories != 4 {
		t.Fatalf("result %+v", res)
	}
	ds, err := data.Open(res.Path, data.Options{Frames: c.Data.Snapshots, Grid: c.PDE.Grid})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Len() != 4 {
		t.Fatalf("file holds %d trajectories", ds.Len())
	}
	ds.Close()
	again, err := Run(context.Background(), opt)
	if err != nil || again.Generated != 0 || again.Path != res.Path {
		t.Fatalf("second run %+v, %v: want the same file, nothing generated", again, err)
	}
	opt.Config.Seed = 5 // the run's seed: the same data
	if same, err := Run(context.Background(), opt); err != nil || same.Path != res.Path || same.Generated != 0 {
		t.Fatalf("other run seed %+v, %v: want the same file, nothing generated", same, err)
	}
	opt.Config.Data.Seed = 5
	other, err := Run(context.Background(), opt)
	if err != nil || other.Path == res.Path || other.Generated != 4 {
		t.Fatalf("other data seed %+v, %v: want a new file", other, err)
	}
}

// TestRunInterruptedLeavesNoFile: a cancelled run returns a resumable
// error and leaves nothing at the final path; the next run completes it.
func TestRunInterruptedLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	c := builtin(t, "ks", map[string]any{"pde.t_burn": 1.0, "pde.t_end": 5.0})
	opt := Options{Config: c, Dir: dir, Train: 3, Test: 1, Workers: 1}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, opt)
	if err == nil || !strings.Contains(err.Error(), "run again to resume") {
		t.Fatalf("err %v, want an interruption message", err)
	}
	if _, statErr := os.Stat(res.Path); !errors.Is(statErr, os.ErrNotExist) {
		t.Fatalf("final file exists after an interrupted run: %v", statErr)
	}
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(res.Path); err != nil {
		t.Fatal(err)
	}
}

// TestRunWaitsForAnotherWriter: while another writer holds the file (as
// another uhno making the same data would), Run waits, says so once, and
// returns the file the other completes without generating it again; it
// stops waiting when cancelled; after the other stops short it resumes.
func TestRunWaitsForAnotherWriter(t *testing.T) {
	dir := t.TempDir()
	c := builtin(t, "ks", map[string]any{"pde.t_burn": 1.0, "pde.t_end": 5.0})
	opt := Options{Config: c, Dir: dir, Train: 3, Test: 1, Workers: 1}
	_, spec, path, n, err := Plan(opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}

	// The other writer is cancelled: the waiting Run stops.
	other, err := h5.Create(path, spec, n)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitPoll)
	defer cancel()
	if _, err := Run(ctx, opt); err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the other writer of "+path) {
		t.Errorf("cancelled while waiting: %v", err)
	}

	// The other writer completes the file (by a Run of its own, after
	// this one has started waiting): nothing is generated twice.
	var note strings.Builder
	done := make(chan struct{})
	var res Result
	var runErr error
	go func() {
		defer close(done)
		o := opt
		o.Progress = &lockedBuilder{b: &note}
		res, runErr = Run(context.Background(), o)
	}()
	time.Sleep(2 * waitPoll)
	other.Close() // stops short; its first Run below resumes the same temp file
	first, err := Run(context.Background(), opt)
	<-done
	if runErr != nil || err != nil {
		t.Fatalf("runs: %v, %v", runErr, err)
	}
	if first.Generated+res.Generated != n || first.Path != path || res.Path != path {
		t.Errorf("generated %d + %d of %d trajectories at %s, %s; want %d once at %s", first.Generated, res.Generated, n, first.Path, res.Path, n, path)
	}
	if !strings.Contains(note.String(), "datagen: waiting: h5: create "+path+": another process (pid ") {
		t.Errorf("no waiting note: %q", note.String())
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// lockedBuilder is a strings.Builder safe for the progress bar's and
// the note's writes from one goroutine each.
type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestIndexPDEBench records a PDEBench-layout Darcy file and refuses one
// that is too small or of the wrong task.
func TestIndexPDEBench(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "2D_DarcyFlow_beta1.0_Train.hdf5")
	if err := h5test.Darcy(file, 6, 128, 128, 1.0); err != nil {
		t.Fatal(err)
	}
	c := builtin(t, "darcy", nil)
	idx, path, err := IndexPDEBench(Options{Config: c, Dir: dir, Train: 4, Test: 2}, file)
	if err != nil {
		t.Fatal(err)
	}
	if idx.Stride != 2 || idx.Trajectories != 6 || filepath.Base(path) != "darcy.pdebench.json" {
		t.Fatalf("index %+v at %s", idx, path)
	}
	if _, _, err := IndexPDEBench(Options{Config: c, Dir: dir}, file); err == nil || !strings.Contains(err.Error(), "holds 6 trajectories, the task needs 1000") {
		t.Fatalf("err %v, want a trajectory-count error", err)
	}
	if _, _, err := IndexPDEBench(Options{Config: builtin(t, "burgers", nil), Dir: dir}, file); err == nil || !strings.Contains(err.Error(), "darcy and cfd3d") {
		t.Fatalf("err %v, want a task error", err)
	}
}

// TestGeneratorDatasetsSorted pins what h5.File.VerifyContent relies on:
// every generator lists its datasets in name order, the order in which the
// writer sums a trajectory's checksum and the verifier reads it back.
func TestGeneratorDatasetsSorted(t *testing.T) {
	for _, task := range []string{"burgers", "burgers-paper", "burgers-shock", "ks", "kdv", "adv2d", "ac2d", "ns2d", "darcy"} {
		gen, spec, _, _, err := Plan(Options{Config: builtin(t, task, nil), Dir: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		if !slices.IsSorted(gen.Datasets()) || !slices.Equal(spec.Datasets, gen.Datasets()) {
			t.Errorf("%s: datasets %v (spec %v), want them in name order", task, gen.Datasets(), spec.Datasets)
		}
	}
}
