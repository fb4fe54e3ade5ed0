package runlock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAcquire: a second lock on a held directory is refused with the
// holder named, and taken once the first is released. Two open file
// descriptions in one process conflict under flock as two processes do
// (the command tests also run two real processes).
func TestAcquire(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	a, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "pid ") || !strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("second Acquire: %v, want a one-line refusal naming %s and the holder", err, dir)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, File))
	if !strings.HasPrefix(string(raw), "pid ") {
		t.Fatalf("lock file holds %q", raw)
	}
	a.Release()
	b, err := Acquire(dir)
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	b.Release()
	b.Release() // twice is harmless
}
