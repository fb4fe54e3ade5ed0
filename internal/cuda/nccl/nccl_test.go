package nccl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadMissing: with no loadable library the error is one line, names
// every path tried and says how to fix it.
func TestLoadMissing(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "libnccl.so.9")
	if err := os.WriteFile(fake, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFrom([]string{filepath.Join(dir, "absent.so"), fake})
	if err == nil {
		t.Fatal("loading two unusable paths succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"nccl: NCCL not found: tried ", "absent.so (", "libnccl.so.9 (", "set UHNO_NCCL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
}

// TestLoadWithoutSymbols: a real shared library without NCCL's symbols
// is refused, naming the missing ones.
func TestLoadWithoutSymbols(t *testing.T) {
	_, err := LoadFrom([]string{"libm.so.6"})
	if err == nil || !strings.Contains(err.Error(), "libm.so.6 (lacks ncclGetVersion, ncclGetUniqueId") {
		t.Fatalf("error %v", err)
	}
}

// TestLoadEnvFirst: $UHNO_NCCL is tried before the default names.
func TestLoadEnvFirst(t *testing.T) {
	t.Setenv(EnvPath, "/nonexistent/libnccl-custom.so")
	l, err := Load()
	if err == nil {
		if l.Path() == "/nonexistent/libnccl-custom.so" {
			t.Fatal("loaded a nonexistent path")
		}
		return
	}
	if !strings.Contains(err.Error(), "tried /nonexistent/libnccl-custom.so (") {
		t.Fatalf("override not tried first: %v", err)
	}
}

// TestCommInitRankRefusesRanks: a rank outside [0, n) is refused before
// NCCL is called.
func TestCommInitRankRefusesRanks(t *testing.T) {
	l := &Lib{}
	for _, c := range []struct{ n, rank int }{{0, 0}, {2, 2}, {2, -1}} {
		if _, err := l.CommInitRank(ID{}, c.n, c.rank); err == nil {
			t.Errorf("rank %d of %d: want an error", c.rank, c.n)
		}
	}
}
