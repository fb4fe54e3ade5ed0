package train

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"uhno/internal/data"
	"uhno/internal/testutil"
)

// faultFS is the real file system with injected faults: every operation
// of a save (mkdirtemp, create, write, sync, rename) asks fail first, and
// fails with its error, wrapped as the os package would, when not nil.
type faultFS struct {
	osFS
	fail func(op, path string) error
}

func (f faultFS) check(op, path string) error {
	if err := f.fail(op, path); err != nil {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	return nil
}

func (f faultFS) MkdirTemp(dir, pattern string) (string, error) {
	if err := f.check("mkdirtemp", filepath.Join(dir, pattern)); err != nil {
		return "", err
	}
	return f.osFS.MkdirTemp(dir, pattern)
}

func (f faultFS) Create(path string, perm fs.FileMode) (saveFile, error) {
	if err := f.check("open", path); err != nil {
		return nil, err
	}
	file, err := f.osFS.Create(path, perm)
	if err != nil {
		return nil, err
	}
	return faultFile{file, f, path}, nil
}

func (f faultFS) Rename(oldpath, newpath string) error {
	if err := f.check("rename", newpath); err != nil {
		return err
	}
	return f.osFS.Rename(oldpath, newpath)
}

type faultFile struct {
	saveFile
	fs   faultFS
	path string
}

func (f faultFile) Write(p []byte) (int, error) {
	if err := f.fs.check("write", f.path); err != nil {
		return 0, err
	}
	return f.saveFile.Write(p)
}

func (f faultFile) Sync() error {
	if err := f.fs.check("sync", f.path); err != nil {
		return err
	}
	return f.saveFile.Sync()
}

// leftovers lists the temporary files and directories in a run directory.
func leftovers(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || strings.Contains(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSaveDiskFull fails a save at each of its file-system operations in
// turn, with ENOSPC (a full disk) and EACCES (an unwritable directory):
// every failure is a one-line error naming the checkpoint, the operation
// and path that failed and the checkpoint latest still names; that
// checkpoint loads intact; no temporary file is left, and latest never
// names a half-written checkpoint.
func TestSaveDiskFull(t *testing.T) {
	// Count the operations of one save.
	ops := 0
	latestOps := map[string]bool{} // the operations of writing latest
	count := faultFS{fail: func(op, path string) error {
		ops++
		if strings.Contains(filepath.Base(path), LatestFile) {
			latestOps[op] = true
		}
		return nil
	}}
	if _, _, _, _, err := savedRun(t, t.TempDir(), 5, &saveHooks{fs: count}); err != nil {
		t.Fatal(err)
	}
	if ops < 12 {
		t.Fatalf("a save made %d file-system operations, want at least 12 (mkdirtemp, 4 files of open, 2 writes, sync, rename, latest)", ops)
	}
	// latest is written through the same seam (atomicfile.WriteFileFS), so
	// the faults below reach each step of its policy too.
	for _, op := range []string{"open", "write", "sync", "rename"} {
		if !latestOps[op] {
			t.Fatalf("writing latest made no %s through the save's file system (it made %v)", op, latestOps)
		}
	}
	for _, fault := range []syscall.Errno{syscall.ENOSPC, syscall.EACCES} {
		for at := 1; at <= ops; at++ {
			run := t.TempDir()
			_, mm, _, st, err := savedRun(t, run, 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			var failed string
			inject := faultFS{fail: func(op, path string) error {
				if n++; n == at {
					failed = op + " " + path
					return fault
				}
				return nil
			}}
			_, _, _, _, err = savedRun(t, run, 10, &saveHooks{fs: inject})
			final := filepath.Join(run, StepDirName(10))
			// The failed operation and path, as the os package words them;
			// latest's writer (atomicfile) adds which file it was writing.
			prefix := "train: checkpoint " + final + " not written: "
			cause := failed + ": " + fault.Error()
			suffix := "; " + filepath.Join(run, LatestFile) + " still names " + filepath.Join(run, StepDirName(5))
			if !errors.Is(err, fault) || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), cause+suffix) ||
				!strings.HasSuffix(err.Error(), suffix) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%v at operation %d (%s): got %v\nwant %s...%s%s", fault, at, failed, err, prefix, cause, suffix)
			}
			ck, dir, err := loadCheckpoint(run)
			if err != nil || dir != filepath.Join(run, StepDirName(5)) || !reflect.DeepEqual(ck.State, st) || !testutil.SameBits(ck.M, mm) {
				t.Fatalf("%v at %s: latest resolves to %s (%v), want the intact step 5", fault, failed, dir, err)
			}
			if l := leftovers(run); len(l) != 0 {
				t.Fatalf("%v at %s: left %v", fault, failed, l)
			}
			if _, err := os.Stat(final); err == nil {
				// Only a failure after the rename (writing latest) may
				// leave the new directory, and then it is complete.
				if _, _, err := loadCheckpoint(final); err != nil || !strings.Contains(failed, LatestFile) {
					t.Fatalf("%v at %s: left %s (%v)", fault, failed, final, err)
				}
			}
		}
	}
}

// TestSaveUnwritableDir makes the run directory read-only for real; root
// writes anyway, so it runs only for other users (TestSaveDiskFull
// injects EACCES for root).
func TestSaveUnwritableDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	run := t.TempDir()
	if _, _, _, _, err := savedRun(t, run, 5, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(run, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(run, 0o755)
	_, _, _, _, err := savedRun(t, run, 10, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "train: checkpoint "+filepath.Join(run, StepDirName(10))+" not written: mkdir "+filepath.Join(run, ".tmp-"+StepDirName(10))) ||
		!strings.Contains(err.Error(), "permission denied") || !strings.HasSuffix(err.Error(), "still names "+filepath.Join(run, StepDirName(5))) {
		t.Fatalf("got %v", err)
	}
}

// TestRunDiskFull fills the disk at the run's second checkpoint: the run
// stops with the one-line error, the first checkpoint stays latest, and a
// resume from it (the disk freed) ends bit for bit like a run that never
// failed.
func TestRunDiskFull(t *testing.T) {
	const steps = 20
	straight := t.TempDir()
	cfg, _, _ := tinyRun(straight, steps, 2, 1)
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	cfg, _, _ = tinyRun(dir, steps, 2, 1)
	cfg.fsys = faultFS{fail: func(op, path string) error {
		if op == "write" && strings.Contains(path, StepDirName(14)) {
			return syscall.ENOSPC
		}
		return nil
	}}
	res, err := Run(context.Background(), cfg, nil)
	prefix := "train: checkpoint " + filepath.Join(dir, StepDirName(14)) + " not written: write " + filepath.Join(dir, ".tmp-"+StepDirName(14))
	suffix := "/weights.safetensors: no space left on device; " + filepath.Join(dir, LatestFile) + " still names " + filepath.Join(dir, StepDirName(7))
	if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.HasSuffix(err.Error(), suffix) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v\nwant %s...%s", err, prefix, suffix)
	}
	if res.Checkpoint != filepath.Join(dir, StepDirName(7)) {
		t.Fatalf("result names checkpoint %s, want step 7", res.Checkpoint)
	}
	if got := checkpointSteps(dir); !reflect.DeepEqual(got, []int{7}) || len(leftovers(dir)) != 0 {
		t.Fatalf("checkpoints %v, leftovers %v; want [7] and none", got, leftovers(dir))
	}

	cfg, _, _ = tinyRun(dir, steps, 2, 3)
	cfg.Resume = dir
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	sameRun(t, straight, dir)
}

// poisonedModel is the tiny model whose weights turn NaN after the update
// of step `at` while that step's loss was finite: an update that
// diverged (an overflowing gradient, say).
type poisonedModel struct {
	*tinyModel
	at int
}

func (m poisonedModel) Params() ParamSet { return &poisonedParams{flatParams: m.p, at: m.at} }

type poisonedParams struct {
	*flatParams
	at, calls int
}

// ZeroGrad runs once before the first step and once after each update.
func (p *poisonedParams) ZeroGrad() {
	p.flatParams.ZeroGrad()
	if p.calls++; p.calls == p.at+1 {
		h := p.host()
		h[0] = float32(math.NaN())
		p.b.Upload(p.data, h)
	}
}

// TestRunNonFiniteWeights makes the weights NaN after the update of
// checkpoint step 14 (with a finite loss, so only the save can notice):
// the run stops with an error naming the step, the parameter and the last
// good checkpoint; no checkpoint of step 14 is written and step 7 stays.
func TestRunNonFiniteWeights(t *testing.T) {
	dir := t.TempDir()
	cfg, m, _ := tinyRun(dir, 20, 2, 1)
	cfg.Model = poisonedModel{m, 14}
	_, err := Run(context.Background(), cfg, nil)
	want := `train: step 14: parameter "lift.w" holds NaN (element 0): the weights diverged; no checkpoint written, ` +
		filepath.Join(dir, LatestFile) + " still names " + filepath.Join(dir, StepDirName(7))
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	if got := checkpointSteps(dir); !reflect.DeepEqual(got, []int{7}) {
		t.Fatalf("checkpoints %v, want [7]", got)
	}
	if _, _, err := loadCheckpoint(dir); err != nil {
		t.Fatal(err)
	}

	// The writer itself refuses non-finite moments.
	m2, mm, vv, _, err := savedRun(t, t.TempDir(), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	vv[2] = float32(math.Inf(1))
	run := t.TempDir()
	_, err = saveCheckpoint(run, State{Step: 4, Model: "tiny"}, m2.p.list, mm, vv, m2.p.b, 2, nil)
	if want := "train: step 4: AdamW moment adamw.v holds +Inf (element 2): the optimizer diverged; no checkpoint written, there is no earlier checkpoint in " + run; err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	if entries, _ := os.ReadDir(run); len(entries) != 0 {
		t.Fatalf("the refused save wrote %d entries", len(entries))
	}
}

// TestRunNaNValidation puts a NaN into the validation targets: the run
// stops at the first validation with an error naming the step, instead
// of failing to encode NaN into the log and the checkpoint.
func TestRunNaNValidation(t *testing.T) {
	dir := t.TempDir()
	cfg, _, _ := tinyRun(dir, 20, 2, 1)
	cfg.Val.Batches[1].Tgt[3] = float32(math.NaN())
	_, err := Run(context.Background(), cfg, nil)
	if want := "train: step 5: validation loss is NaN"; err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "last checkpoint (none)") {
		t.Fatalf("got %v, want %s ... last checkpoint (none)", err, want)
	}
	if got := checkpointSteps(dir); len(got) != 0 {
		t.Fatalf("checkpoints %v, want none", got)
	}
}

// TestRunDataChanged watches a data file (data.FileWatch, as uhno train
// does) and changes it under the run: a truncation is caught by the
// per-step check before the next update; a same-size rewrite that keeps
// the modification time is caught by the full check before the next
// checkpoint. Each error names the step, the file and the last
// checkpoint, and no later checkpoint is written.
func TestRunDataChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(path string) error
		want   string
	}{
		{"truncated", func(path string) error { return os.Truncate(path, 1000) },
			"train: step 11: data: %s has 1000 bytes"},
		{"rewritten, same size and time", func(path string) error {
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			raw, _ := os.ReadFile(path)
			raw[10] ^= 1
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				return err
			}
			return os.Chtimes(path, time.Now(), st.ModTime())
		}, "train: step 14: data: %s changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(t.TempDir(), "data.h5")
			if err := os.WriteFile(path, make([]byte, 5000), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := data.WatchFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			cfg, m, _ := tinyRun(dir, 20, 2, 1)
			cfg.DataGuard = w
			calls := 0
			m.forward = func() {
				if calls++; calls == 12 { // training step 10 (validation ran at step 5: 2 batches)
					if err := tt.change(path); err != nil {
						t.Error(err)
					}
				}
			}
			_, err = Run(context.Background(), cfg, nil)
			want := strings.Replace(tt.want, "%s", path, 1)
			if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "last checkpoint "+filepath.Join(dir, StepDirName(7))) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v\nwant %s ... last checkpoint step-7", err, want)
			}
			if got := checkpointSteps(dir); !reflect.DeepEqual(got, []int{7}) {
				t.Fatalf("checkpoints %v, want [7]", got)
			}
		})
	}
}

// TestSaveFaultHook checks Config.SaveFault: it sees every stage of every
// save with the step, in order, and its error fails the save there.
func TestSaveFaultHook(t *testing.T) {
	dir := t.TempDir()
	cfg, _, _ := tinyRun(dir, 14, 2, 1)
	var seen []string
	stop := errors.New("stop")
	cfg.SaveFault = func(step int, stage string) error {
		seen = append(seen, stage)
		if step == 14 && stage == StageAfterState {
			return stop
		}
		return nil
	}
	_, err := Run(context.Background(), cfg, nil)
	if !errors.Is(err, stop) {
		t.Fatalf("got %v, want the hook's error", err)
	}
	want := append(SaveStages(), SaveStages()[:4]...)
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("stages %v\nwant %v", seen, want)
	}
}

func (f faultFS) Exchange(a, b string) error {
	if err := f.check("exchange", b); err != nil {
		return err
	}
	return f.osFS.Exchange(a, b)
}

// TestSaveSameStepTwice saves step 10 over an existing step 10 (a run
// resumed from an older checkpoint of its directory passes its steps
// again): the new copy replaces the old, with the atomic swap and with
// the fallback of two renames; a failed second rename puts the old copy
// back; and the copy a crash between the two renames leaves aside is
// moved back by the next save.
func TestSaveSameStepTwice(t *testing.T) {
	m, _, _, st, err := savedRun(t, t.TempDir(), 10, nil) // a model and a valid state of step 10
	if err != nil {
		t.Fatal(err)
	}
	b := m.p.b
	moments := func(x float32) []float32 {
		v := make([]float32, m.p.n)
		for i := range v {
			v[i] = x
		}
		return v
	}
	save := func(run string, x float32, fsys saveFS) error {
		_, err := saveCheckpoint(run, st, m.p.list, moments(x), moments(x), b, 3, &saveHooks{fs: fsys})
		return err
	}
	heldM := func(run string) float32 {
		ck, _, err := loadCheckpoint(run)
		if err != nil {
			t.Fatal(err)
		}
		return ck.M[0]
	}
	noSwap := faultFS{fail: func(op, path string) error {
		if op == "exchange" {
			return errors.ErrUnsupported
		}
		return nil
	}}
	for _, fsys := range []saveFS{osFS{}, noSwap} {
		run := t.TempDir()
		if err := save(run, 1, fsys); err != nil {
			t.Fatal(err)
		}
		if err := save(run, 2, fsys); err != nil {
			t.Fatal(err)
		}
		if got := heldM(run); got != 2 || len(leftovers(run)) != 0 {
			t.Fatalf("%T: step 10 holds moments %g, leftovers %v; want the second save's 2 and none", fsys, got, leftovers(run))
		}
	}

	run := t.TempDir()
	if err := save(run, 1, nil); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(run, StepDirName(10))
	failRename := faultFS{fail: func(op, path string) error {
		switch {
		case op == "exchange":
			return errors.ErrUnsupported
		case op == "rename" && path == final && !strings.Contains(path, ".old"):
			if _, err := os.Stat(final); errors.Is(err, fs.ErrNotExist) { // the old copy is aside
				return syscall.EIO
			}
		}
		return nil
	}}
	if err := save(run, 2, failRename); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Fatalf("got %v, want the failed rename", err)
	}
	if got := heldM(run); got != 1 || len(leftovers(run)) != 0 {
		t.Fatalf("after a failed rename step 10 holds %g, leftovers %v; want the old copy's 1 and none", got, leftovers(run))
	}

	// A crash between the renames: the old copy aside, no step-10.
	if err := os.Rename(final, filepath.Join(run, ".old-"+StepDirName(10))); err != nil {
		t.Fatal(err)
	}
	st.Step, st.Data.Drawn = 11, 11
	if err := save(run, 3, nil); err != nil {
		t.Fatal(err)
	}
	ck, _, err := loadCheckpoint(final)
	if err != nil || ck.M[0] != 1 || len(leftovers(run)) != 0 {
		t.Fatalf("the copy left aside was not moved back: %v, leftovers %v", err, leftovers(run))
	}
}

// TestRenameExchange checks the atomic swap replaceDir relies on where
// the system has one.
func TestRenameExchange(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	os.WriteFile(filepath.Join(a, "x"), []byte("a"), 0o644)
	err := renameExchange(a, b)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no atomic exchange on this system or file system")
	}
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(filepath.Join(b, "x")); err != nil || string(raw) != "a" {
		t.Fatalf("after the swap b holds %q (%v)", raw, err)
	}
	if _, err := os.Stat(filepath.Join(a, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after the swap a still holds x (%v)", err)
	}
}
