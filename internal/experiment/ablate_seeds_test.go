package experiment

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/eval"
	"uhno/internal/testutil"
	"uhno/internal/train"
)

// TestAblateSeeds: --seeds 0,1 runs the ablation once per seed on one
// data file (seed 1's under seed1/, with its own initialisation), and
// writes the merge in seeds/: each entry's values are the mean over the
// seeds with each seed's value kept, and the factors are of those means.
func TestAblateSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	if testutil.Race {
		// The seed axis is serial bookkeeping around the ablation whose
		// concurrent paths TestAblateEndToEnd runs under the race
		// detector; repeating them per seed finds nothing new.
		t.Skip("the ablation's concurrency is TestAblateEndToEnd's under -race (D-ci-time)")
	}
	dir := t.TempDir()
	dataDir, out := filepath.Join(dir, "data"), filepath.Join(dir, "abl")
	o := tinyAblate(t, dataDir, out, 3)
	o.Modes, o.Seeds, o.Out = "E", []int64{0, 1}, io.Discard
	// The dry run first: four runs to train, timed, and nothing written.
	dry := func(steps int) string {
		var b strings.Builder
		d := *o
		d.Out = &b
		if err := AblateDryRun(context.Background(), &d, steps); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	before := dry(1)
	for _, want := range []string{"ablate --dry-run: 4 runs of 3 steps", "\n0     Full U-HNO", "\n1     E: MSE only", "not started  3",
		"time: ", "a step (Full U-HNO's, measured on this machine", "nothing was generated, read, trained or written"} {
		if !strings.Contains(before, want) {
			t.Errorf("dry run lacks %q:\n%s", want, before)
		}
	}
	for _, p := range []string{out, dataDir} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the dry run created %s", p)
		}
	}
	if err := Ablate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	// After: every run finished, none timed.
	if after := dry(1); !strings.Contains(after, "already there: 4 of 4 runs finished, 0 unfinished") || strings.Contains(after, "time: ") ||
		strings.Count(after, "finished  0") != 4 {
		t.Errorf("dry run after the ablation:\n%s", after)
	}
	if files, _ := filepath.Glob(filepath.Join(dataDir, "burgers_*.h5")); len(files) != 1 {
		t.Errorf("data files %v, want one for both seeds", files)
	}
	a, _, err := train.ReadState(filepath.Join(out, "full"))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := train.ReadState(filepath.Join(out, "seed1", "full"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Config.Seed != 0 || b.Config.Seed != 1 || a.Loss == b.Loss {
		t.Errorf("seeds %d and %d, losses %+v and %+v: want seeds 0 and 1 with other losses", a.Config.Seed, b.Config.Seed, a.Loss, b.Loss)
	}
	raw, err := os.ReadFile(filepath.Join(out, "seeds", eval.AblationFile))
	if err != nil {
		t.Fatal(err)
	}
	var merged eval.Ablation
	if err := json.Unmarshal(raw, &merged); err != nil {
		t.Fatal(err)
	}
	if len(merged.Entries) != 2 || !strings.Contains(merged.Command, "--seeds 0,1") {
		t.Fatalf("merged ablation: %d entries, command %q", len(merged.Entries), merged.Command)
	}
	full := merged.Entries[0].Eval
	for _, e := range merged.Entries {
		s := e.Eval.Seeds
		if s == nil || !slices.Equal(s.Seeds, []int64{0, 1}) {
			t.Fatalf("%s: seed summary %+v", e.Label, s)
		}
		v := s.Means[eval.MetricRelL2]
		if got := e.Eval.Metrics[eval.MetricRelL2].Mean; math.Abs(got-(v[0]+v[1])/2) > 1e-12 {
			t.Errorf("%s: relL2 %g, the seeds' %v", e.Label, got, v)
		}
		if f := e.Factor[eval.MetricRelL2]; math.Abs(f-e.Eval.Metrics[eval.MetricRelL2].Mean/full.Metrics[eval.MetricRelL2].Mean) > 1e-12 {
			t.Errorf("%s: factor %g, not of the seed means", e.Label, f)
		}
	}
	o.Sets = append(o.Sets, "seed=3")
	if err := Ablate(context.Background(), o); err == nil || !strings.Contains(err.Error(), "--set seed=3 and --seeds") {
		t.Errorf("--set seed with --seeds: %v", err)
	}
}
