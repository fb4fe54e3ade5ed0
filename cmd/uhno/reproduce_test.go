package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReproduceFlags checks that the flags become reproduce.RunOptions,
// that the grid's flags are what the Slurm jobs repeat, and that a bad
// --tables is one line.
func TestReproduceFlags(t *testing.T) {
	var got *reproduceOptions
	var out, errOut bytes.Buffer
	cmd := newReproduceCmd(&out, &errOut, func(_ context.Context, o *reproduceOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--tables", "main-acc,cost", "--tasks", "burgers,darcy", "--models", "uhno,fno", "--schedule", "cpu5k",
		"--steps", "30", "--params", "0.06M", "--parallel", "2", "--set", "optim.batch=4", "--out", "x", "--cell", "3", "--threads", "2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	o := got.RunOptions
	if !slices.Equal(o.Grid.Tables, []string{"main-acc", "cost"}) || !slices.Equal(o.Grid.Tasks, []string{"burgers", "darcy"}) ||
		!slices.Equal(o.Grid.Models, []string{"uhno", "fno"}) || o.Schedule != "cpu5k" || o.Steps != 30 || o.Params != "0.06M" ||
		o.Parallel != 2 || !slices.Equal(o.Sets, []string{"optim.batch=4"}) || o.Dir != "x" || o.Cell != 3 || o.Threads != 2 || o.Finish || o.DryRun {
		t.Errorf("options %+v", o)
	}
	for _, a := range []string{"--tables=main-acc", "--tables=cost", "--steps=30", "--set=optim.batch=4", "--out=x"} {
		if !slices.Contains(got.args, a) {
			t.Errorf("the Slurm jobs' flags %v lack %s", got.args, a)
		}
	}
	if slices.ContainsFunc(got.args, func(a string) bool { return strings.HasPrefix(a, "--cell") || strings.HasPrefix(a, "--parallel") }) {
		t.Errorf("the Slurm jobs' flags %v repeat --cell or --parallel", got.args)
	}

	code, _, stderr := execute(t, "reproduce", "--tables", "main-accc", "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, `reproduce: --tables: unknown "main-accc"`) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("bad --tables: code %d, stderr %q", code, stderr)
	}
	// Without --cell, Cell is -1 (every cell).
	cmd = newReproduceCmd(&out, &errOut, func(_ context.Context, o *reproduceOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--dry-run"})
	if err := cmd.Execute(); err != nil || got.Cell != -1 || !got.DryRun || got.Dir != "runs/reproduce" || got.Params != "0.62M" ||
		got.DryRunRepeats != 1 {
		t.Errorf("defaults: %v %+v", err, got.RunOptions)
	}
	cmd = newReproduceCmd(&out, &errOut, func(_ context.Context, o *reproduceOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--dry-run", "--estimate-steps", "3"})
	if err := cmd.Execute(); err != nil || got.DryRunRepeats != 3 || slices.ContainsFunc(got.args, func(a string) bool { return strings.HasPrefix(a, "--estimate-steps") }) {
		t.Errorf("--estimate-steps 3: %v, %d, Slurm flags %v", err, got.DryRunRepeats, got.args)
	}
	code, _, stderr = execute(t, "reproduce", "--dry-run", "--estimate-steps", "0", "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "--estimate-steps 0: want at least 1 timed step") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("--estimate-steps 0: code %d, stderr %q", code, stderr)
	}
}

// TestReproduceSlurm writes the script through the command: the cells of
// the grid, the grid's flags, --cell and --finish.
func TestReproduceSlurm(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.sh")
	code, stdout, stderr := execute(t, "reproduce", "--tables", "main-acc", "--tasks", "burgers", "--models", "uhno,fno",
		"--steps", "30", "--slurm", file, "--data", t.TempDir(), "--out", "shared/out")
	if code != 0 {
		t.Fatalf("code %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for _, want := range []string{"--array=0-1", "#   1: burgers/uhno", "--steps=30", "--out=shared/out", `--cell "$SLURM_ARRAY_TASK_ID"`, "--finish", "afterok"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "--slurm") || !strings.Contains(stdout, "2 cells") {
		t.Errorf("script repeats --slurm or stdout %q", stdout)
	}
}
