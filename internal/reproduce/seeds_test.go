package reproduce

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/eval"
	"uhno/internal/train"
)

// TestPlanSeeds: --seeds plans every cell once per seed, seed 0's in the
// one-seed grid's directories and numbers, seed s's under <task>/seed<s>;
// one evaluation per seed and task, merged over the seeds; a seed given
// twice or negative is refused.
func TestPlanSeeds(t *testing.T) {
	one, err := Plan(Options{Tables: []string{"main-acc", "ablation-extra"}, Tasks: []string{"burgers"}, Models: []string{"uhno", "fno"}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Plan(Options{Tables: []string{"main-acc", "ablation-extra"}, Tasks: []string{"burgers"}, Models: []string{"uhno", "fno"}, Seeds: []int64{0, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Runs) != 2*len(one.Runs) {
		t.Fatalf("%d runs for two seeds, %d for one", len(g.Runs), len(one.Runs))
	}
	for i, r := range one.Runs {
		if g.Runs[i].Dir != r.Dir || g.Runs[i].Seed != 0 {
			t.Errorf("cell %d: %s (seed %d), the one-seed grid's is %s", i, g.Runs[i].Dir, g.Runs[i].Seed, r.Dir)
		}
		s := g.Runs[len(one.Runs)+i]
		if want := strings.Replace(r.Dir, "burgers/", "burgers/seed3/", 1); s.Dir != want || s.Seed != 3 {
			t.Errorf("cell %d: %s (seed %d), want %s (seed 3)", len(one.Runs)+i, s.Dir, s.Seed, want)
		}
	}
	var evals []string
	for _, e := range g.Evals {
		evals = append(evals, e.Dir)
	}
	if want := []string{"burgers/eval", "burgers/seed3/eval"}; !slices.Equal(evals, want) {
		t.Errorf("evaluations %v, want %v", evals, want)
	}
	if len(g.Merges) != 1 || g.Merges[0].Dir != "burgers/eval-seeds" || !slices.Equal(g.Merges[0].Evals, evals) || !slices.Equal(g.Merges[0].Seeds, []int64{0, 3}) {
		t.Errorf("merges %+v", g.Merges)
	}
	if len(one.Merges) != 0 {
		t.Errorf("one seed merged: %+v", one.Merges)
	}
	for _, bad := range [][]int64{{0, 0}, {-1}} {
		if _, err := Plan(Options{Tasks: []string{"burgers"}, Seeds: bad}); err == nil || !strings.Contains(err.Error(), "--seeds") {
			t.Errorf("--seeds %v: %v", bad, err)
		}
	}
}

// TestRunSeeds is issue 39's "done when" for seeds: a small grid at
// --seeds 0,1 trains two runs per cell on one data file, with other
// initialisations (other first losses), evaluates both on the same test
// trajectories and merges them: the report gives the seed means and the
// spread. A second --set of the seed is refused.
func TestRunSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	grid := Options{Tables: []string{"main-acc"}, Tasks: []string{"burgers"}, Models: []string{"uhno", "fno"}, Seeds: []int64{0, 1}}
	if stdout, err := run(t, tinyRun(t, data, out, 6, grid)); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if files, _ := filepath.Glob(filepath.Join(data, "burgers_*.h5")); len(files) != 1 {
		t.Errorf("data files %v, want one for both seeds", files)
	}
	for _, m := range []string{"uhno", "fno"} {
		a, _, err := train.ReadState(filepath.Join(out, "burgers", m))
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := train.ReadState(filepath.Join(out, "burgers/seed1", m))
		if err != nil {
			t.Fatal(err)
		}
		if a.Config.Seed != 0 || b.Config.Seed != 1 || a.Config.Data.Seed != b.Config.Data.Seed {
			t.Errorf("%s: seeds %d and %d, data seeds %d and %d; want 0 and 1 on one data seed", m, a.Config.Seed, b.Config.Seed, a.Config.Data.Seed, b.Config.Data.Seed)
		}
		if a.Loss == b.Loss {
			t.Errorf("%s: seeds 0 and 1 ended with the same loss %+v: the seed did not reach the run", m, a.Loss)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "burgers/eval-seeds", eval.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var merged eval.Results
	if err := json.Unmarshal(raw, &merged); err != nil {
		t.Fatal(err)
	}
	for _, m := range merged.Models {
		s := m.Eval.Seeds
		if s == nil || !slices.Equal(s.Seeds, []int64{0, 1}) || len(s.Means[eval.MetricRelL2]) != 2 {
			t.Fatalf("%s: seed summary %+v", m.Label, s)
		}
		mean := (s.Means[eval.MetricRelL2][0] + s.Means[eval.MetricRelL2][1]) / 2
		if got := m.Eval.Metrics[eval.MetricRelL2].Mean; abs(got-mean) > 1e-12*mean {
			t.Errorf("%s: merged relL2 %g, the seeds' mean %g", m.Label, got, mean)
		}
	}
	report, err := os.ReadFile(filepath.Join(out, "report", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Over training seeds 0, 1**", "- relL2 per seed (0, 1): ", "(spread ",
		// no one eval command gave the merge: the report says so
		"Command: none: `uhno reproduce --seeds` merged the evaluations of seeds 0, 1 (eval.MergeSeeds); seed 0's evaluation",
		// the rankings say their intervals hold the training variance
		" | seeds 0, 1 and trajectories |"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(string(report), "burgers/seed1/eval`") {
		t.Error("the report read a seed's evaluation beside their merge")
	}
	again := tinyRun(t, data, out, 6, grid, "seed=4")
	if _, err := run(t, again); err == nil || !strings.Contains(err.Error(), "--set seed=4 and --seeds both set the runs' seed") {
		t.Errorf("--set seed with --seeds: %v", err)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestRunSeedsAblation: with --seeds, Tab. ablation-extra's ablation runs
// once per seed and the report reads their merge (<task>/ablate-seeds).
func TestRunSeedsAblation(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	// Two modes and no A: Full is still each seed's U-HNO run, linked.
	grid := Options{Tables: []string{"ablation-extra"}, Tasks: []string{"burgers"}, Models: []string{"uhno"}, Seeds: []int64{0, 1}, Modes: "F,C"}
	if stdout, err := run(t, tinyRun(t, data, out, 4, grid)); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	for _, d := range []string{"burgers/ablate", "burgers/seed1/ablate"} {
		if target, err := os.Readlink(filepath.Join(out, d, "full")); err != nil || target != filepath.Join("..", "uhno") {
			t.Errorf("%s/full: link to %q (%v), want ../uhno: Full trained twice", d, target, err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, "burgers/ablate-seeds", eval.AblationFile))
	if err != nil {
		t.Fatal(err)
	}
	var ab eval.Ablation
	if err := json.Unmarshal(raw, &ab); err != nil {
		t.Fatal(err)
	}
	if len(ab.Entries) != 3 || ab.Entries[0].Eval.Seeds == nil || !slices.Equal(ab.Entries[0].Eval.Seeds.Seeds, []int64{0, 1}) {
		t.Fatalf("merged ablation: %d entries, seeds %+v", len(ab.Entries), ab.Entries[0].Eval.Seeds)
	}
	report, err := os.ReadFile(filepath.Join(out, "report", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "lr 0.001, seeds 0, 1") {
		t.Errorf("the ablation's schedule line does not name both seeds:\n%s", report)
	}
	if !strings.Contains(string(report), " for seed 0, merged over seeds 0, 1 by `uhno reproduce --seeds` (eval.MergeAblations)") {
		t.Errorf("the ablation's command line does not say it is seed 0's of a merge:\n%s", report)
	}
	if !strings.Contains(string(report), "(uhno ablate --seeds; eval.MergeAblations)") || strings.Contains(string(report), "burgers/seed1/ablate/ablation.json") {
		t.Errorf("the report does not read the ablation over seeds alone:\n%s", report)
	}
}
