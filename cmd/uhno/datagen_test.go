package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDatagen runs `uhno datagen` end to end on a small KS set and checks
// its bad-input messages.
func TestDatagen(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("UHNO_DATA", filepath.Join(dir, "cache"))
	args := []string{"datagen", "--task", "ks", "--train", "2", "--test", "1", "--quiet",
		"--set", "pde.t_burn=1", "--set", "pde.t_end=5", "--out", dir}
	code, out, errOut := execute(t, args...)
	if code != 0 || !strings.Contains(out, "3 trajectories (3 generated)") || errOut != "" {
		t.Fatalf("first run: code %d, out %q, err %q", code, out, errOut)
	}
	code, out, _ = execute(t, args...)
	if code != 0 || !strings.Contains(out, "up to date (3 trajectories)") {
		t.Fatalf("second run: code %d, out %q", code, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ks_seed0_n3_*.h5"))
	if len(files) != 1 {
		t.Fatalf("files %v, want one ks_seed0_n3_*.h5", files)
	}
	// --seed makes another file.
	code, out, _ = execute(t, append(args, "--seed", "4")...)
	if code != 0 || !strings.Contains(out, "ks_seed4_n3_") {
		t.Fatalf("--seed 4: code %d, out %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "cache")); !os.IsNotExist(err) {
		t.Fatalf("--out was given, yet the cache directory was created")
	}

	bad := []struct {
		args []string
		want string
	}{
		{[]string{"datagen", "--task", "cfd3d"}, "uhno: datagen: task cfd3d has no built-in solver"},
		{[]string{"datagen", "--task", "ks", "--pdebench", "x.h5"}, "uhno: datagen: --pdebench is for darcy and cfd3d; task ks generates its own data\n"},
		{[]string{"datagen", "--task", "darcy", "--pdebench", filepath.Join(dir, "missing.hdf5")}, "file does not exist; PDEBench files come from"},
		{[]string{"datagen", "--task", "ks", "--train", "-1"}, "uhno: datagen: --train -1 --test 0: counts must be >= 1\n"},
		{[]string{"datagen", "--task", "ks", "--set", "pde.dt=-1"}, "uhno: config: key pde.dt"},
	}
	for _, b := range bad {
		code, _, errOut := execute(t, b.args...)
		if code != 1 || !strings.Contains(errOut, b.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: code %d, stderr %q, want one line containing %q", b.args, code, errOut, b.want)
		}
	}
}
