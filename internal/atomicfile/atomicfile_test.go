package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leftovers lists the directory's entries other than want.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
outer:
	for _, e := range ents {
		for _, w := range want {
			if e.Name() == w {
				continue outer
			}
		}
		extra = append(extra, e.Name())
	}
	return extra
}

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
	if x := leftovers(t, dir, "results.json"); len(x) != 0 {
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
	if x := leftovers(t, dir, "report.md"); len(x) != 0 {
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
