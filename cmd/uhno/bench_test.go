package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/bench"
	"uhno/internal/model"
)

// TestBenchErrors checks that every refusal is one line naming the flag.
func TestBenchErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "cost"}, `bench: --preset "cost": want one of burgers, cost-ns2d, cost-spar`},
		{[]string{"--model", "nope"}, `bench: --model "nope": want one of ` + strings.Join(model.Names(), ", ")},
		{[]string{"--mode", "Z"}, `bench: --mode "Z": want full or one of A..I (Tab. ablation-setup)`},
		{[]string{"--repeats", "0"}, "bench: --repeats 0: want 1 or more"},
		{[]string{"--batch", "-1"}, "bench: --batch -1: want 0 or more (0: the preset's or the task's)"},
		{[]string{"--op-times", "-2"}, "bench: --op-times -2: want 0 or more (0: no operation times)"},
		{[]string{"--warmup", "-1", "--threads", "-3"}, "bench: --warmup -1: want 0 or more"},
		{[]string{"--threads", "-3"}, "bench: --threads -3: want 0 or more (0: all cores)"},
		{[]string{"--task", "burger"}, `bench: --task "burger": want one of burgers, ks, kdv, adv2d, ac2d, ns2d, darcy, cfd3d, burgers-paper, burgers-shock`},
		{[]string{"--params", "lots"}, `bench: --params: model: parameter count "lots": want a positive number with an optional k or M suffix, such as 0.62M (or "text": Tab. per-task-hp)`},
		{[]string{"--preset", "cost-spar", "--mode", "F"}, "bench: --mode does not apply to preset cost-spar, which compares modes full and F"},
		{[]string{"--preset", "cost-spar", "--model", "fno"}, "bench: preset cost-spar has no fno rows: it compares U-HNO's modes full and F"},
		{[]string{"--preset", "burgers", "--task", "ns2d"}, "bench: preset burgers has no ns2d rows; drop --preset to measure ns2d at its own shape"},
		{[]string{"--task", "burgers", "--model", "fno", "--mode", "F"}, "bench: --mode F changes U-HNO's architecture; --model fno takes only the loss modes C, D and E"},
		{[]string{"--grid", "12"}, "bench: burgers at grid 12: model: uhno with 3 levels needs every grid axis to be a multiple of 8 with at least 2 points at the coarsest level, got [12]"},
		{[]string{"--grid", "4"}, "bench: burgers: config: key pde.grid: got [4], want at least 8 cells per axis (2^model.levels, so the coarsest level keeps a cell)"},
		{[]string{"--warmup", "x"}, `invalid argument "x" for "--warmup" flag: strconv.ParseInt: parsing "x": invalid syntax (see 'uhno bench --help')`},
	}
	for _, tt := range tests {
		code, stdout, stderr := execute(t, append([]string{"bench"}, tt.args...)...)
		if code != 1 || stdout != "" || stderr != "uhno: "+tt.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and the one line %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}

// TestBenchJSON runs the cost-spar preset at a tiny shape and checks the
// JSON report it writes: every row measured, sane figures, the SPAR
// overheads; then --json - writes only JSON to stdout.
func TestBenchJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bench.json")
	code, stdout, stderr := execute(t, "bench", "--preset", "cost-spar", "--grid", "16", "--batch", "2", "--params", "60k",
		"--repeats", "2", "--warmup", "1", "--threads", "2", "--quiet", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"| ns2d/uhno C0=1 | 2x10x16x16 |", "| burgers/uhno-F C0=3 | 2x1x16 |", "SPAR overhead", "report in " + path} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("the report is not valid JSON: %v", err)
	}
	if rep.Format != bench.ReportFormat || rep.Preset != "cost-spar" || rep.Threads != 2 || len(rep.Results) != 4 || len(rep.Overheads) != 2 {
		t.Fatalf("report: format %s, preset %s, %d threads, %d results, %d overheads; want %s, cost-spar, 2, 4, 2",
			rep.Format, rep.Preset, rep.Threads, len(rep.Results), len(rep.Overheads), bench.ReportFormat)
	}
	for _, r := range rep.Results {
		if r.Params <= 0 || r.FLOPs.ForwardPerSample <= 0 || r.FLOPs.TrainStep <= r.FLOPs.Forward || len(r.Train.SamplesMS) != 2 ||
			!(r.Train.MinMS > 0) || r.Train.MinMS > r.Train.MedianMS || !(r.Infer.MinMS > 0) || len(r.Ops) == 0 {
			t.Errorf("%s: implausible result %+v", r.Name, r)
		}
	}
	for _, o := range rep.Overheads {
		// Full over mode F of the same task and width.
		if o.Params <= 0 || o.FLOPs <= 0 || o.Train <= 0 || o.Infer <= 0 || !strings.HasPrefix(o.Variant, o.Task+"/uhno C0=") ||
			o.Baseline != strings.Replace(o.Variant, "/uhno ", "/uhno-F ", 1) {
			t.Errorf("overhead %+v", o)
		}
	}

	code, stdout, stderr = execute(t, "bench", "--task", "burgers", "--model", "fno", "--grid", "16", "--batch", "2", "--params", "30k",
		"--repeats", "1", "--warmup", "0", "--quiet", "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var one bench.Report
	if err := json.Unmarshal([]byte(stdout), &one); err != nil || len(one.Results) != 1 || one.Preset != "" {
		t.Fatalf("--json -: stdout is not the report (%v):\n%s", err, stdout)
	}
	if !strings.Contains(stderr, "| burgers/fno width=") {
		t.Fatalf("--json -: the table is not on stderr:\n%s", stderr)
	}
}
