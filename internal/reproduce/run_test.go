package reproduce

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"uhno/internal/config"
	"uhno/internal/config/configtest"
	"uhno/internal/cpu"
	"uhno/internal/eval"
	"uhno/internal/experiment"
	"uhno/internal/tensor"
)

// tinySets make Burgers and Darcy small (TASK: applies to one task).
var tinySets = []string{"data.train_trajectories=4", "data.test_trajectories=1", "optim.batch=4",
	"burgers:data.snapshots=6", "burgers:data.pairs_per_trajectory=5", "burgers:data.rollout=5", "burgers:pde.t_end=0.1",
	"darcy:pde.grid=16,16"}

// configure resolves a run's configuration as the command does, without
// viper: the built-in file, the sets, the mode, and the steps with the
// warm-up scaled from the configuration's.
func configure(t testing.TB) func(task, mode string, steps int, sets []string) (config.Config, error) {
	return func(task, mode string, steps int, sets []string) (config.Config, error) {
		vals := map[string]any{}
		for _, s := range sets {
			k, v, _ := strings.Cut(s, "=")
			vals[k] = v
		}
		if mode != "" {
			vals["model.ablation"] = mode
		}
		if steps > 0 {
			base := configtest.Builtin(t, task, nil)
			vals["optim.steps"] = strconv.Itoa(steps)
			vals["optim.warmup"] = strconv.Itoa(min(steps-1, int(math.Round(float64(base.Optim.Warmup)*float64(steps)/float64(base.Optim.Steps)))))
		}
		return configtest.Builtin(t, task, vals), nil
	}
}

func cpuBackend(threads int) (tensor.Backend, func() error, error) {
	return cpu.New(threads), func() error { return nil }, nil
}

// tinyRun returns the options of `uhno reproduce --steps steps --params
// 0.06M --quiet` over tinySets into out.
func tinyRun(t testing.TB, dataDir, out string, steps int, o Options, sets ...string) *RunOptions {
	return &RunOptions{Env: experiment.Env{Out: io.Discard, Err: io.Discard, Version: "test", NewBackend: cpuBackend},
		Grid: o, Configure: configure(t), Dir: out, Steps: steps, Params: "0.06M", Sets: append(append([]string(nil), tinySets...), sets...),
		DataDir: dataDir, Quiet: true, Cell: -1, Resamples: 50, BenchRepeats: 1}
}

func run(t *testing.T, o *RunOptions) (string, error) {
	t.Helper()
	var b bytes.Buffer
	o.Out = &b
	err := Run(context.Background(), o)
	return b.String(), err
}

// trainedAlready counts the runs Run found finished.
func trainedAlready(stdout string) int {
	n := 0
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "reproduce: ") && strings.HasSuffix(l, ": trained already") {
			n++
		}
	}
	return n
}

func mtime(t *testing.T, path string) time.Time {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime()
}

// TestRunEndToEnd is the "done when" command (burgers and darcy,
// uhno and fno, every table, small): it trains, evaluates, benches and
// reports from a fresh directory, and rerunning it trains and evaluates
// nothing.
func TestRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	o := tinyRun(t, data, out, 20, Options{Tasks: []string{"burgers", "darcy"}, Models: []string{"uhno", "fno"}})
	stdout, err := run(t, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	for _, f := range []string{"burgers/eval/results.json", "burgers/eval-4x/results.json", "darcy/eval/results.json",
		"burgers/ablate/ablation.json", "bench/cost-uhno.json", "bench/cost-fno.json", "report/report.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(out, "burgers/ablate/full")); err != nil || target != "../uhno" {
		t.Errorf("burgers/ablate/full: %q, %v", target, err)
	}
	var ab eval.Ablation
	raw, _ := os.ReadFile(filepath.Join(out, "burgers/ablate/ablation.json"))
	if err := json.Unmarshal(raw, &ab); err != nil || len(ab.Entries) != 10 || ab.Entries[0].Step != 20 {
		t.Errorf("ablation.json: %v, %d entries", err, len(ab.Entries))
	}
	md, _ := os.ReadFile(filepath.Join(out, "report/report.md"))
	for _, want := range []string{"## Reproduction (uhno reproduce)", "commit ", "| 0 | `burgers/fno` |",
		"Tab. ablation-extra"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if trainedAlready(stdout) > 0 {
		t.Errorf("a fresh directory had trained runs:\n%s", stdout)
	}
	// Burgers was evaluated and reported as soon as its last run was
	// trained, before Darcy's first run.
	interimFirst(t, stdout, "burgers", "darcy/fno", "(1 of 2 tasks)")
	// Its models' tables were evaluated and reported before the ablation's
	// first mode trained, and the ablation evaluated only after its last.
	models := strings.Index(stdout, "reproduce: every model's run of burgers is trained, its ablation's are not: evaluating the models now")
	partial := strings.Index(stdout, "(0 of 2 tasks, burgers but the ablation)")
	firstMode, ablation := trainingAt(stdout, "burgers/ablate/A"), strings.Index(stdout, "reproduce: ablation of burgers")
	if models < 0 || partial < models || firstMode < partial || ablation < firstMode || strings.Count(stdout, "reproduce: ablation of burgers") != 2 {
		t.Errorf("want burgers's models evaluated (at %d) and reported (at %d) before its first mode trains (at %d), "+
			"its ablation evaluated after (at %d), once in the interim and once in the finish:\n%s", models, partial, firstMode, ablation, stdout)
	}
	// Tab. stability on Burgers: the tiny data are too short for 4x, so
	// reproduce made a longer test file from another seed.
	var r4 eval.Results
	raw, _ = os.ReadFile(filepath.Join(out, "burgers/eval-4x/results.json"))
	if err := json.Unmarshal(raw, &r4); err != nil || r4.HorizonMult != 4 || filepath.Dir(r4.Data) != data ||
		!strings.Contains(filepath.Base(r4.Data), fmt.Sprintf("_seed%d_", experiment.StabilitySeedOffset)) {
		t.Errorf("burgers/eval-4x: %v, horizon %d, data %s; want 4x on a file of seed %d in %s", err, r4.HorizonMult, r4.Data,
			experiment.StabilitySeedOffset, data)
	}
	if strings.Contains(string(md), "not evaluated") {
		t.Errorf("report.md says a table was not evaluated")
	}

	// The rerun does nothing: no training, no evaluation recomputed.
	evals := []string{"burgers/eval/results.json", "burgers/eval-4x/results.json", "darcy/eval/results.json",
		"burgers/ablate/eval/A/results.json", "bench/cost-uhno.json"}
	before := map[string]time.Time{}
	for _, f := range evals {
		before[f] = mtime(t, filepath.Join(out, f))
	}
	longData := mtime(t, r4.Data)
	stdout, err = run(t, o)
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if strings.Contains(stdout, "training into") || strings.Contains(stdout, "resuming") || trainedAlready(stdout) != 13 ||
		strings.Count(stdout, "is current") != 3 || strings.Contains(stdout, "ablate: evaluating") {
		t.Errorf("the rerun trained or evaluated:\n%s", stdout)
	}
	for _, f := range evals {
		if !mtime(t, filepath.Join(out, f)).Equal(before[f]) {
			t.Errorf("the rerun rewrote %s", f)
		}
	}
	if !mtime(t, r4.Data).Equal(longData) {
		t.Errorf("the rerun rewrote the long test file %s", r4.Data)
	}

	// A grid with Burgers trained and a Darcy run to train: Burgers's
	// column is reported (its evaluations current, not redone) before
	// Darcy trains.
	if err := os.RemoveAll(filepath.Join(out, "darcy/fno")); err != nil {
		t.Fatal(err)
	}
	stdout, err = run(t, o)
	if err != nil {
		t.Fatalf("rerun without darcy/fno: %v\n%s", err, stdout)
	}
	interimFirst(t, stdout, "burgers", "darcy/fno", "(1 of 2 tasks)")
	if !mtime(t, filepath.Join(out, "burgers/eval/results.json")).Equal(before["burgers/eval/results.json"]) {
		t.Errorf("the interim evaluation redid burgers/eval")
	}
	md, _ = os.ReadFile(filepath.Join(out, "report/report.md"))
	if strings.Contains(string(md), "interim") {
		t.Errorf("the final report says it is interim")
	}

	// The interim report says so at its top, before the reproduction
	// section, and holds the tasks evaluated so far.
	steps, about, _ := o.schedule()
	g, runs, err := o.plan(steps)
	if err != nil {
		t.Fatal(err)
	}
	it := &interim{o: o, g: g, runs: runs, steps: steps, about: about, total: 2}
	if err := it.taskDone(context.Background(), o.Env, "burgers", true); err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(filepath.Join(out, "report/report.md"))
	top, _, _ := strings.Cut(string(md), "## Reproduction")
	if !strings.Contains(top, "**This report is interim:** 1 of the grid's 2 tasks are trained and evaluated (the last: burgers)") ||
		!strings.Contains(string(md), "1D Burgers") || strings.Contains(string(md), "2D Darcy") {
		t.Errorf("interim report: top %q; holds burgers %v, darcy %v", top, strings.Contains(string(md), "1D Burgers"), strings.Contains(string(md), "2D Darcy"))
	}
}

// interimFirst checks that stdout says task was evaluated and the interim
// report written (with the count want) before the run next started
// training.
func interimFirst(t *testing.T, stdout, task, next, want string) {
	t.Helper()
	ev := strings.Index(stdout, "reproduce: every run of "+task+" is trained: evaluating it now")
	rep := -1
	if ev >= 0 {
		if i := strings.Index(stdout[ev:], "reproduce: interim report in "); i >= 0 {
			rep = ev + i
		}
	}
	tr := trainingAt(stdout, next)
	if ev < 0 || rep < ev || tr < rep || !strings.Contains(stdout[rep:], want) {
		t.Errorf("want %s evaluated (at %d) and the interim report %s (at %d) before %s trains (at %d):\n%s", task, ev, want, rep, next, tr, stdout)
	}
}

// trainingAt is the offset in stdout of the line where run starts
// training, -1 if none.
func trainingAt(stdout, run string) int {
	lines := strings.SplitAfter(stdout, "\n")
	for i, l := range lines {
		if (strings.Contains(l, " "+run+" (") || strings.Contains(l, " "+run+": ")) && strings.Contains(l, ": training into ") {
			return len(strings.Join(lines[:i], ""))
		}
	}
	return -1
}

// TestCellsThenFinish: --cell K for every K, then --finish, gives the
// outputs of one plain run; --finish before the cells refuses; a
// directory of other settings is refused naming the first difference.
// sameOutputs checks that two output trees of the same grid hold the same
// evaluations (bit for bit), results.md files and report tables.
// pngs counts the .png files under dir.
func pngs(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".png") {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func sameOutputs(t *testing.T, one, other string) {
	t.Helper()
	for _, task := range []string{"burgers", "darcy"} {
		read := func(root string) eval.Results {
			var r eval.Results
			raw, err := os.ReadFile(filepath.Join(root, task, "eval", eval.ResultsFile))
			if err != nil || json.Unmarshal(raw, &r) != nil {
				t.Fatalf("%s: %v", root, err)
			}
			return r
		}
		a, b := read(one), read(other)
		if len(a.Models) != 2 || len(b.Models) != 2 {
			t.Fatalf("%s: %d and %d models", task, len(a.Models), len(b.Models))
		}
		for i := range a.Models {
			if !reflect.DeepEqual(a.Models[i].Eval, b.Models[i].Eval) || a.Models[i].Step != b.Models[i].Step {
				t.Errorf("%s model %d: the other' evaluation differs from the plain run's", task, i)
			}
		}
		mdA, _ := os.ReadFile(filepath.Join(one, task, "eval", "results.md"))
		mdB, _ := os.ReadFile(filepath.Join(other, task, "eval", "results.md"))
		if len(mdA) == 0 || string(mdA) != string(mdB) {
			t.Errorf("%s: results.md differs:\n%s\n---\n%s", task, mdA, mdB)
		}
	}
	tables := func(root string) string {
		raw, _ := os.ReadFile(filepath.Join(root, "report", "report.md"))
		var keep []string
		for _, l := range strings.Split(strings.ReplaceAll(string(raw), root, "OUT"), "\n") {
			if strings.HasPrefix(l, "| uhno") || strings.HasPrefix(l, "| fno") || strings.HasPrefix(l, "| U-HNO") || strings.HasPrefix(l, "| FNO") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if ta, tb := tables(one), tables(other); ta == "" || ta != tb {
		t.Errorf("the reports' tables differ:\n%s\n---\n%s", ta, tb)
	}

}

func TestCellsThenFinish(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	grid := Options{Tables: []string{"main-acc"}, Tasks: []string{"burgers", "darcy"}, Models: []string{"uhno", "fno"}}
	one, cells := filepath.Join(dir, "one"), filepath.Join(dir, "cells")
	if out, err := run(t, tinyRun(t, data, one, 12, grid)); err != nil {
		t.Fatalf("plain run: %v\n%s", err, out)
	}
	fin := tinyRun(t, data, cells, 12, grid)
	fin.Finish = true
	if _, err := run(t, fin); err == nil || !strings.Contains(err.Error(), "4 of 4 runs are not finished: burgers/fno (cell 0, not started)") {
		t.Errorf("--finish before the cells: %v", err)
	}
	for k := 0; k < 4; k++ {
		c := tinyRun(t, data, cells, 12, grid)
		c.Cell = k
		if out, err := run(t, c); err != nil {
			t.Fatalf("--cell %d: %v\n%s", k, err, out)
		}
		if k == 0 {
			if _, err := os.Stat(filepath.Join(cells, "burgers/uhno")); err == nil {
				t.Error("--cell 0 trained more than cell 0")
			}
		}
	}
	if out, err := run(t, fin); err != nil {
		t.Fatalf("--finish: %v\n%s", err, out)
	}
	sameOutputs(t, one, cells)

	// Two trainings at once, the threads split between them: the same
	// bits as one at a time (training is independent of the thread count).
	// With --no-figures: the same tables and JSON, and not one PNG.
	par := tinyRun(t, data, filepath.Join(dir, "par"), 12, grid)
	par.Parallel, par.Threads, par.NoFigures = 2, 2, true
	if out, err := run(t, par); err != nil {
		t.Fatalf("--parallel 2: %v\n%s", err, out)
	}
	sameOutputs(t, one, filepath.Join(dir, "par"))
	if pngs(t, one) == 0 || pngs(t, filepath.Join(dir, "par")) != 0 {
		t.Errorf("PNGs: %d with figures, %d with NoFigures (want some, none)", pngs(t, one), pngs(t, filepath.Join(dir, "par")))
	}

	// Other settings in the same directory: refused before training.
	other := tinyRun(t, data, cells, 12, grid, "spar.rho0=0.4")
	if _, err := run(t, other); err == nil || !strings.Contains(err.Error(), "holds a run with other settings (configuration key spar.rho0: 0.3 here, 0.4 asked)") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("other settings: %v", err)
	}
	// Another budget: the model differs.
	other = tinyRun(t, data, cells, 12, grid)
	other.Params = "0.1M"
	if _, err := run(t, other); err == nil || !strings.Contains(err.Error(), "holds a run with other settings (architecture: ") {
		t.Errorf("other budget: %v", err)
	}
}

// TestParallelFreshData: two trainings of one task start together on
// data not generated yet; one generates the file while the other waits
// for it (datagen; before, the second found the file's lock held and
// stopped the grid), and each run's lines are led by its name.
func TestParallelFreshData(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	o := tinyRun(t, filepath.Join(dir, "data"), filepath.Join(dir, "out"), 4,
		Options{Tables: []string{"main-acc"}, Tasks: []string{"burgers"}, Models: []string{"uhno", "fno"}})
	o.Parallel, o.Threads, o.Quiet = 2, 2, false
	var errOut bytes.Buffer
	o.Err = &errOut
	stdout, err := run(t, o)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout, errOut.String())
	}
	if n := strings.Count(stdout, ": generated "); n != 1 {
		t.Errorf("the data were generated %d times, want once:\n%s", n, stdout)
	}
	for _, want := range []string{"\nburgers/uhno: ", "\nburgers/fno: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no line led by %q:\n%s", strings.TrimSpace(want), stdout)
		}
	}
	for _, want := range []string{"burgers/uhno: ", "burgers/fno: "} {
		found := false
		for _, l := range strings.Split(errOut.String(), "\n") {
			found = found || strings.HasPrefix(l, want) && strings.Contains(l, "4/4 steps (100%)")
		}
		if !found {
			t.Errorf("no progress line led by %q:\n%s", want, errOut.String())
		}
	}
}

// TestLinePrefix: whole lines, each led by the prefix, whatever the
// writes' boundaries; Flush ends a last partial line.
func TestLinePrefix(t *testing.T) {
	var b bytes.Buffer
	l := &linePrefix{prefix: "ks/fno: ", w: &b}
	for _, w := range []string{"one\ntw", "o\n", "", "three\nfour\nfi", "ve"} {
		if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "ks/fno: one\nks/fno: two\nks/fno: three\nks/fno: four\nks/fno: five\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	if err := l.Flush(); err != nil || b.String() != want {
		t.Errorf("a second Flush wrote %q, %v", strings.TrimPrefix(b.String(), want), err)
	}
}

// TestDryRun prints the grid with counts, data and an estimate, and
// writes nothing.
func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	o := tinyRun(t, filepath.Join(dir, "data"), out, 30, Options{Tables: []string{"main-acc", "ablation-extra"}, Tasks: []string{"burgers"}, Models: []string{"uhno", "fno"}})
	o.DryRun = true
	stdout, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"11 runs", "cell  run", "burgers/fno", "burgers/ablate/I", "generated on first use", "total: about", "+0.0%", "nothing was trained"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the dry run created the output directory")
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("the dry run generated data")
	}

	// --parallel 2: steps timed two at once on a thread each, the wall
	// time and the run time both stated.
	o.Parallel, o.Threads = 2, 2
	stdout, err = run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"with --parallel 2, ", "of run time in all (1 thread(s) per run; each step time the slowest of 2 runs timed at once"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run --parallel 2 lacks %q:\n%s", want, stdout)
		}
	}

	// A cell trained already is said to be finished and left out of the
	// estimate, which is of the steps left.
	o.DryRun, o.Parallel, o.Cell = false, 1, 0
	if stdout, err := run(t, o); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	o.DryRun, o.Cell = true, -1
	stdout, err = run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	var cell0 string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "0 ") {
			cell0 = l
		}
	}
	if f := strings.Fields(cell0); len(f) < 8 || f[5] != "0" || f[6] != "-" || f[7] != "finished" {
		t.Errorf("cell 0, trained, reads %q; want 0 steps left, no step time, finished", cell0)
	}
	if want := "already: 1 of 11 runs finished, 0 unfinished"; !strings.Contains(stdout, want) {
		t.Errorf("dry run after cell 0 lacks %q:\n%s", want, stdout)
	}
}

// TestSplit: --parallel and --threads give the trainings at once and the
// threads of each.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		parallel, threads, n int
		par, each            int
	}{
		{0, 4, 10, 1, 4},
		{1, 4, 10, 1, 4},
		{2, 4, 10, 2, 2},
		{3, 4, 10, 3, 1},
		{8, 4, 10, 8, 1}, // more runs than threads: one thread each
		{4, 4, 2, 2, 2},  // fewer runs than --parallel: the threads go to those there are
		{2, 5, 10, 2, 2},
	} {
		o := RunOptions{Parallel: tc.parallel, Threads: tc.threads}
		if par, each := o.split(tc.n); par != tc.par || each != tc.each {
			t.Errorf("--parallel %d --threads %d over %d runs: %d at once, %d threads each; want %d, %d",
				tc.parallel, tc.threads, tc.n, par, each, tc.par, tc.each)
		}
	}
}

// TestSchedules: paper keeps the configuration's steps, cpu5k sets 5,000,
// --steps wins, an unknown name is one line.
func TestSchedules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps int
		want  int
		err   string
	}{
		{"", 0, 0, ""}, {"paper", 0, 0, ""}, {"cpu5k", 0, 5000, ""}, {"cpu5k", 30, 30, ""}, {"gpu", 0, 0, `--schedule "gpu": want one of paper, cpu5k`},
	} {
		o := RunOptions{Schedule: tc.name, Steps: tc.steps}
		got, _, err := o.schedule()
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q --steps %d: %d, %v", tc.name, tc.steps, got, err)
		}
	}
	o := RunOptions{Sets: []string{"a.b=1", "burgers:c.d=2", "darcy:e=3"}}
	if got := o.setsFor("burgers"); !reflect.DeepEqual(got, []string{"a.b=1", "c.d=2"}) {
		t.Errorf("setsFor(burgers) = %v", got)
	}
}
