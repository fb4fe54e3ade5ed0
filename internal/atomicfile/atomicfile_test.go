package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/testutil"
)

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "results.json")
	for _, s := range []string{"first", "second, longer than the first"} {
		if err := WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != s {
			t.Fatalf("read %q, %v; want %q", got, err, s)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if x := testutil.Extra(t, dir, "results.json"); len(x) != 0 {
		t.Errorf("temporary files left: %v", x)
	}
}

func TestAbortLeavesDestination(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.md")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half of a new re")
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Errorf("destination %q after Abort, want the old contents", got)
	}
	if x := testutil.Extra(t, dir, "report.md"); len(x) != 0 {
		t.Errorf("temporary files left: %v", x)
	}
}

func TestCommitThenAbortIsCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "fig.png")
	f, err := Create(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("png")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "png" {
		t.Errorf("got %q", got)
	}
}

func TestErrorsNameDestination(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no-such-dir", "results.json")
	err := WriteFile(p, []byte("x"), 0o644)
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("error %v does not name %s", err, p)
	}
	if strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("error spans lines: %q", err)
	}
}

func TestPublishRemovesTempOnFailure(t *testing.T) {
	dir := t.TempDir()
	tmp := TempPath(filepath.Join(dir, "a.h5"))
	if err := os.WriteFile(tmp, []byte("h5"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The destination is an existing non-empty directory: rename fails.
	dst := filepath.Join(dir, "busy")
	os.MkdirAll(filepath.Join(dst, "x"), 0o755)
	if err := Publish(tmp, dst); err == nil {
		t.Fatal("Publish over a non-empty directory succeeded")
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temporary file kept after a failed Publish")
	}
	good := filepath.Join(dir, "a.h5")
	os.WriteFile(tmp, []byte("h5"), 0o644)
	if err := Publish(tmp, good); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(good); string(got) != "h5" {
		t.Errorf("got %q", got)
	}
}

// faultFS is the real file system failing with errFault at operation op
// ("create", "write", "sync", "close" or "rename").
type faultFS struct{ op string }

var errFault = errors.New("injected fault")

func (f faultFS) Create(name string, perm os.FileMode) (Writer, error) {
	if f.op == "create" {
		return nil, errFault
	}
	w, err := OS.Create(name, perm)
	return faultWriter{w, f.op}, err
}

func (f faultFS) Rename(oldpath, newpath string) error {
	if f.op == "rename" {
		return errFault
	}
	return OS.Rename(oldpath, newpath)
}

type faultWriter struct {
	Writer
	op string
}

func (w faultWriter) Write(p []byte) (int, error) {
	if w.op == "write" {
		return 0, errFault
	}
	return w.Writer.Write(p)
}

func (w faultWriter) Sync() error {
	if w.op == "sync" {
		return errFault
	}
	return w.Writer.Sync()
}

func (w faultWriter) Close() error {
	err := w.Writer.Close()
	if w.op == "close" {
		return errFault
	}
	return err
}

// TestWriteFileFSFaults fails each operation of a write in turn: the error
// wraps the fault and names the destination, the destination keeps its
// old contents and no temporary file is left. Without faults the new
// contents replace the old.
func TestWriteFileFSFaults(t *testing.T) {
	for _, op := range []string{"create", "write", "sync", "close", "rename", ""} {
		dir := t.TempDir()
		p := filepath.Join(dir, "latest")
		if err := os.WriteFile(p, []byte("step-1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := WriteFileFS(faultFS{op}, p, []byte("step-2\n"), 0o644)
		want := "step-1\n"
		if op == "" {
			want = "step-2\n"
			if err != nil {
				t.Fatal(err)
			}
		} else if !errors.Is(err, errFault) || !strings.Contains(err.Error(), p) {
			t.Errorf("fault at %s: got %v, want the fault naming %s", op, err, p)
		}
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("fault at %q: destination holds %q, want %q", op, got, want)
		}
		if x := testutil.Extra(t, dir, "latest"); len(x) != 0 {
			t.Errorf("fault at %q: temporary files left: %v", op, x)
		}
	}
}
