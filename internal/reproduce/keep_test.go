package reproduce

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/eval"
)

// evalModels reads the model names an evaluation holds, in order.
func evalModels(t *testing.T, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, eval.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var r eval.Results
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range r.Models {
		out = append(out, m.Model)
	}
	return out
}

// TestRunSubsetKeepsEvaluations: a grid of one model (--models uhno)
// over a task whose evaluations held U-HNO and FNO keeps FNO's rows
// (trained, finished, in the same seed's folder) without evaluating them
// twice (a second run finds every evaluation current); a seed where FNO
// was never trained is merged over the models every seed has, and the
// report still reads the merge.
func TestRunSubsetKeepsEvaluations(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	both := Options{Tables: []string{"main-acc"}, Tasks: []string{"burgers"}, Models: []string{"uhno", "fno"}, Seeds: []int64{0, 1}}
	if stdout, err := run(t, tinyRun(t, data, out, 4, both)); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	want := []string{"fno", "uhno"} // the paper's row order: U-HNO last
	for _, d := range []string{"burgers/eval", "burgers/seed1/eval", "burgers/eval-seeds"} {
		if got := evalModels(t, filepath.Join(out, d)); !slices.Equal(got, want) {
			t.Fatalf("%s after the whole grid: %v, want %v", d, got, want)
		}
	}
	before := mtime(t, filepath.Join(out, "burgers/eval", eval.ResultsFile))

	one := Options{Tables: []string{"main-acc"}, Tasks: []string{"burgers"}, Models: []string{"uhno"}, Seeds: []int64{0, 1}}
	if stdout, err := run(t, tinyRun(t, data, out, 4, one)); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	for _, d := range []string{"burgers/eval", "burgers/seed1/eval", "burgers/eval-seeds"} {
		if got := evalModels(t, filepath.Join(out, d)); !slices.Equal(got, want) {
			t.Errorf("%s after --models uhno: %v, want %v (FNO's evaluation dropped)", d, got, want)
		}
	}
	if after := mtime(t, filepath.Join(out, "burgers/eval", eval.ResultsFile)); !after.Equal(before) {
		t.Error("burgers/eval was evaluated again: the kept runs made it look out of date")
	}

	three := Options{Tables: []string{"main-acc"}, Tasks: []string{"burgers"}, Models: []string{"uhno"}, Seeds: []int64{0, 1, 2}}
	stdout, err := run(t, tinyRun(t, data, out, 4, three))
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if got := evalModels(t, filepath.Join(out, "burgers/seed2/eval")); !slices.Equal(got, []string{"uhno"}) {
		t.Errorf("seed 2's evaluation: %v, want uhno alone (FNO was never trained at seed 2)", got)
	}
	if got := evalModels(t, filepath.Join(out, "burgers/eval-seeds")); !slices.Equal(got, []string{"uhno"}) {
		t.Errorf("the merge over seeds 0, 1, 2: %v, want uhno alone", got)
	}
	if !strings.Contains(stdout, "burgers/eval-seeds leaves out fno") {
		t.Errorf("the merge does not say it left FNO out:\n%s", stdout)
	}
	if got := evalModels(t, filepath.Join(out, "burgers/eval")); !slices.Equal(got, want) {
		t.Errorf("seed 0's evaluation after the three-seed grid: %v, want %v", got, want)
	}
	report, err := os.ReadFile(filepath.Join(out, "report", "report.md"))
	if err != nil || !strings.Contains(string(report), "**Over training seeds 0, 1, 2**") {
		t.Errorf("the report does not read the merge over seeds 0, 1, 2 (%v)", err)
	}
}

// TestRunSubsetKeptRunRefused: a kept run the evaluation refuses beside
// the planned ones (here an FNO trained with coordinate channels, so its
// inputs differ) does not stop the grid: the planned runs are evaluated
// alone, and the output says why.
func TestRunSubsetKeptRunRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	data, out, other := filepath.Join(dir, "data"), filepath.Join(dir, "out"), filepath.Join(dir, "other")
	both := Options{Tables: []string{"main-acc"}, Tasks: []string{"burgers"}, Models: []string{"uhno", "fno"}}
	if stdout, err := run(t, tinyRun(t, data, out, 4, both)); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	fno := Options{Tables: []string{"main-acc"}, Tasks: []string{"burgers"}, Models: []string{"fno"}}
	if stdout, err := run(t, tinyRun(t, data, other, 4, fno, "data.coordinates=true")); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if err := os.RemoveAll(filepath.Join(out, "burgers/fno")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(other, "burgers/fno"), filepath.Join(out, "burgers/fno")); err != nil {
		t.Fatal(err)
	}
	o := tinyRun(t, data, out, 4, Options{Tables: []string{"main-acc"}, Tasks: []string{"burgers"}, Models: []string{"uhno"}})
	stdout, err := run(t, o)
	if err != nil {
		t.Fatalf("a kept run the evaluation refuses stopped the grid: %v\n%s", err, stdout)
	}
	if !strings.Contains(stdout, "evaluating the planned runs alone") {
		t.Errorf("the fallback is not said:\n%s", stdout)
	}
	if got := evalModels(t, filepath.Join(out, "burgers/eval")); !slices.Equal(got, []string{"uhno"}) {
		t.Errorf("burgers/eval holds %v, want uhno alone", got)
	}
}
