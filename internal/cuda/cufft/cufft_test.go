package cufft

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
	fake := filepath.Join(dir, "libcufft.so.99")
	if err := os.WriteFile(fake, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFrom([]string{filepath.Join(dir, "absent.so"), fake})
	if err == nil {
		t.Fatal("loading two unusable paths succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"cufft: cuFFT not found: tried ", "absent.so (", "libcufft.so.99 (", "set UHNO_CUFFT"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
}

// TestLoadWithoutSymbols: a real shared library without cuFFT's symbols
// is refused, naming the missing ones.
func TestLoadWithoutSymbols(t *testing.T) {
	_, err := LoadFrom([]string{"libm.so.6"})
	if err == nil || !strings.Contains(err.Error(), "libm.so.6 (lacks cufftPlanMany") {
		t.Fatalf("error %v", err)
	}
}

// TestLoadEnvFirst: $UHNO_CUFFT is tried before the default names.
func TestLoadEnvFirst(t *testing.T) {
	t.Setenv(EnvPath, "/nonexistent/libcufft-custom.so")
	l, err := Load()
	if err == nil {
		// A machine with cuFFT installed loads a default name after the
		// missing override; the override must still have been skipped.
		if l.Path() == "/nonexistent/libcufft-custom.so" {
			t.Fatal("loaded a nonexistent path")
		}
		return
	}
	if !strings.Contains(err.Error(), "tried /nonexistent/libcufft-custom.so (") {
		t.Fatalf("override not tried first: %v", err)
	}
}

// TestPlanArgs: invalid plan shapes are refused before any call.
func TestPlanArgs(t *testing.T) {
	var l Lib
	for _, c := range []struct {
		n     []int
		batch int
	}{{nil, 1}, {[]int{1, 2, 3, 4}, 1}, {[]int{8}, 0}} {
		if _, err := l.PlanMany(c.n, c.batch, R2C); err == nil {
			t.Errorf("PlanMany(%v, %d) accepted", c.n, c.batch)
		}
	}
}
