package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dryRunModels are the models --dry-run is checked for.
var dryRunModels = []string{"uhno", "fno", "additive", "wno", "ffno", "loglofno", "convfno", "cno", "gno"}

// TestTrainDryRun: for every model on burgers, ks, ns2d and darcy at
// --params 0.62M, --dry-run prints a parameter count within 10% of Full
// U-HNO's and the plan, and leaves the data directory untouched (not even
// created).
func TestTrainDryRun(t *testing.T) {
	re := regexp.MustCompile(`parameters: ([0-9,]+), Full U-HNO at this budget ([0-9,]+) \(C0 [0-9]+\): ([+-][0-9.]+)%`)
	for _, task := range []string{"burgers", "ks", "ns2d", "darcy"} {
		for _, m := range dryRunModels {
			dataDir := filepath.Join(t.TempDir(), "data")
			code, stdout, stderr := execute(t, "train", "--task", task, "--model", m, "--params", "0.62M", "--dry-run", "--estimate-steps", "0", "--data", dataDir)
			if code != 0 {
				t.Errorf("%s %s: code %d, stderr %q", task, m, code, stderr)
				continue
			}
			n, ref, ok := dryRunCounts(t, re, stdout)
			if !ok {
				t.Errorf("%s %s: no parameter line in\n%s", task, m, stdout)
				continue
			}
			if d := float64(n)/float64(ref) - 1; d < -0.10 || d > 0.10 {
				t.Errorf("%s %s: %d parameters, %+.1f%% from Full U-HNO's %d", task, m, n, 100*d, ref)
			}
			for _, want := range []string{"plan: 20000 steps, warm-up 1000", "generated on first use", "nothing was generated, read or written"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("%s %s: stdout lacks %q:\n%s", task, m, want, stdout)
				}
			}
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("%s %s: the data directory was created (%v)", task, m, err)
			}
		}
	}
	if code, _, stderr := execute(t, "train", "--resume", t.TempDir(), "--dry-run"); code == 0 || !strings.Contains(stderr, "--dry-run plans a new run") {
		t.Errorf("--dry-run with --resume: code %d, %q", code, stderr)
	}
}

// TestTrainDryRunMemory: --dry-run prints the memory plan of one step,
// and for cfd3d (845M parameters at 128^3, planned without allocating
// them) the paper's figure and the largest cubic grid this machine can
// train; the float32 peak is the sum of its parts.
func TestTrainDryRunMemory(t *testing.T) {
	code, stdout, stderr := execute(t, "train", "--task", "cfd3d", "--dry-run", "--estimate-steps", "0", "--data", filepath.Join(t.TempDir(), "data"))
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"memory of one training step at batch", "weights 3.15 GiB, gradients 3.15 GiB, AdamW moments 6.30 GiB",
		"128x128x128", "16x16x16", "weights by part: lift", "12.5 GB per GPU", "largest cubic grid within this machine's"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	peak := regexp.MustCompile(`peak ([0-9.]+) GiB in float32, ([0-9.]+) GiB with the tape in bf16`).FindStringSubmatch(stdout)
	if peak == nil {
		t.Fatalf("no peak line in\n%s", stdout)
	}
	p32, _ := strconv.ParseFloat(peak[1], 64)
	p16, _ := strconv.ParseFloat(peak[2], 64)
	if !(p16 < p32 && p32 > 3.15*4) {
		t.Errorf("peaks %g GiB float32 and %g GiB bf16: want bf16 below float32 and float32 above weights, gradients and moments", p32, p16)
	}
}

// TestTrainDryRunText: --params text builds U-HNO exactly at Tab.
// per-task-hp (NS-2D's 64,266,460 and Burgers' 6,696,892 parameters,
// the counts of docs/DECISIONS.md, D-params-budget) and every baseline
// within 10% of it (App. C); a --set that leaves the table, or a value
// that is neither a count nor "text", is refused in one line before any
// data are touched; the time estimate times a step and scales it to the
// run's steps.
func TestTrainDryRunText(t *testing.T) {
	re := regexp.MustCompile(`parameters: ([0-9,]+), Full U-HNO at the text's size \(Tab. per-task-hp\) ([0-9,]+) \(C0 32\): ([+-][0-9.]+)%`)
	for task, full := range map[string]int{"ns2d": 64266460, "burgers": 6696892} {
		for _, m := range dryRunModels {
			if m == "additive" { // the flat hybrid of a diagnostic, not a baseline
				continue
			}
			code, stdout, stderr := execute(t, "train", "--task", task, "--model", m, "--params", "text", "--dry-run", "--estimate-steps", "0",
				"--data", filepath.Join(t.TempDir(), "data"))
			if code != 0 {
				t.Errorf("%s %s: code %d, stderr %q", task, m, code, stderr)
				continue
			}
			n, ref, ok := dryRunCounts(t, re, stdout)
			if !ok {
				t.Errorf("%s %s: no parameter line in\n%s", task, m, stdout)
				continue
			}
			if ref != full || (m == "uhno" && n != full) {
				t.Errorf("%s %s: %d parameters beside Full U-HNO's %d, want U-HNO at %d", task, m, n, ref, full)
			}
			if d := float64(n)/float64(ref) - 1; d < -0.10 || d > 0.10 {
				t.Errorf("%s %s: %d parameters, %+.1f%% from Full U-HNO's %d", task, m, n, 100*d, ref)
			}
			if strings.Contains(stdout, "time:") {
				t.Errorf("%s %s: --estimate-steps 0 timed a step:\n%s", task, m, stdout)
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "ns2d", "--params", "text", "--set", "model.c0=16"}, "model.c0 is 16, Tab. per-task-hp gives 32"},
		{[]string{"--task", "burgers", "--params", "text", "--set", "model.k0=12", "--set", "model.levels=2"}, "model.levels is 2, Tab. per-task-hp gives 3; model.k0 is 12, Tab. per-task-hp gives 24"},
		{[]string{"--task", "ns2d", "--params", "txt"}, `parameter count "txt"`},
		{[]string{"--task", "ns2d", "--estimate-steps", "-1"}, "--estimate-steps -1"},
	} {
		dataDir := filepath.Join(t.TempDir(), "data")
		for _, dry := range []bool{true, false} {
			args := append([]string{"train", "--data", dataDir, "--steps", "2", "--warmup", "0", "--quiet"}, c.args...)
			if dry {
				args = append(args, "--dry-run")
			} else if slices.Contains(c.args, "--estimate-steps") {
				continue
			} else {
				// Were the refusal to go, a few trajectories keep the
				// failure quick (the data directory is then created).
				args = append(args, "--set", "data.train_trajectories=4", "--set", "data.test_trajectories=2")
			}
			code, _, stderr := execute(t, args...)
			if code == 0 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("%v: code %d, stderr %q, want one line with %q", args, code, stderr, c.want)
			}
			if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
				t.Errorf("%v: the data directory was created (%v)", args, err)
			}
		}
	}
	code, stdout, stderr := execute(t, "train", "--task", "burgers", "--params", "0.06M", "--dry-run", "--estimate-steps", "2", "--threads", "1",
		"--data", filepath.Join(t.TempDir(), "data"))
	if code != 0 {
		t.Fatalf("estimate: code %d, stderr %q", code, stderr)
	}
	if !regexp.MustCompile(`time: [0-9.]+[µm]?s per training step on this machine \(cpu backend, 1 threads; median of 2 step\(s\) after one discarded\), about [0-9.]+ ?(h|min|s|ms) for 20000 steps`).MatchString(stdout) {
		t.Errorf("estimate: no time line in\n%s", stdout)
	}
}

// dryRunCounts reads the dry run's parameter line with re: the model's
// count and Full U-HNO's (grouped digits), false when the line is missing.
func dryRunCounts(t *testing.T, re *regexp.Regexp, stdout string) (n, ref int, ok bool) {
	t.Helper()
	g := re.FindStringSubmatch(stdout)
	if g == nil {
		return 0, 0, false
	}
	num := func(s string) int {
		v, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return num(g[1]), num(g[2]), true
}
