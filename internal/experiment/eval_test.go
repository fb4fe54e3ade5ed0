package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDefaultCheckpoints: `uhno eval` without --checkpoint takes the
// default runs of --task (U-HNO and FNO beside it, those holding a
// checkpoint), else the run written last; with none it says what it
// looked for.
func TestDefaultCheckpoints(t *testing.T) {
	root := t.TempDir()
	run := func(name string, age time.Duration) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		latest := filepath.Join(dir, "latest")
		if err := os.WriteFile(latest, []byte("step-00000010\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(latest, when, when); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	if _, _, err := defaultCheckpoints(root, ""); err == nil || !strings.Contains(err.Error(), "no run in") {
		t.Fatalf("empty runs/: %v", err)
	}
	uh := run("burgers-uhno", 3*time.Hour)
	if err := os.MkdirAll(filepath.Join(root, "burgers-fno"), 0o755); err != nil { // no checkpoint yet
		t.Fatal(err)
	}
	ks := run("ks-uhno", time.Hour)
	run("eval-burgers", 0) // not a run, but it has no latest either way
	os.Remove(filepath.Join(root, "eval-burgers", "latest"))

	got, why, err := defaultCheckpoints(root, "burgers")
	if err != nil || len(got) != 1 || got[0] != uh || !strings.Contains(why, "burgers") {
		t.Fatalf("--task burgers: %v, %q, %v; want only %s", got, why, err, uh)
	}
	fno := run("burgers-fno", 2*time.Hour)
	if got, _, _ = defaultCheckpoints(root, "burgers"); len(got) != 2 || got[0] != uh || got[1] != fno {
		t.Fatalf("--task burgers: %v, want %s and %s", got, uh, fno)
	}
	if got, why, _ = defaultCheckpoints(root, ""); len(got) != 1 || got[0] != ks || !strings.Contains(why, "written last") {
		t.Fatalf("no task: %v (%q), want %s, the newest", got, why, ks)
	}
	if _, _, err := defaultCheckpoints(root, "ns2d"); err == nil || !strings.Contains(err.Error(), "ns2d-uhno") {
		t.Fatalf("--task ns2d with no run: %v", err)
	}
}
