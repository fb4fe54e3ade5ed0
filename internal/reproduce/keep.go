package reproduce

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"uhno/internal/eval"
	"uhno/internal/train"
)

// A grid of a subset of models (--models uhno) evaluates a task's runs
// side by side in the same folder (<task>/eval) as the whole grid did.
// Evaluating only the planned runs there would drop the other models'
// rows, trained and still on disk, until the next whole grid: a user
// asking for one model's seeds would lose another's evaluation. So an
// evaluation keeps, beside its planned runs, every run the folder's
// previous evaluation held that lives in the same task and seed folder
// and is finished (D-reproduce-keep).

// runOfCheckpoint is the run directory of a checkpoint an evaluation
// recorded: the run itself, or its parent for a step-NNNNNNNN folder.
func runOfCheckpoint(ck string) string {
	if strings.HasPrefix(filepath.Base(ck), "step-") {
		return filepath.Dir(ck)
	}
	return ck
}

// keptRuns returns the run directories the evaluation in evalDir held
// besides planned (run directories): each inside within, still finished
// (its latest checkpoint at its last step). A missing or unreadable
// evaluation keeps nothing; a run no longer there, or unfinished, is
// left out.
func keptRuns(evalDir, within string, planned []string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(evalDir, eval.ResultsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("reproduce: %w", err)
	}
	var r eval.Results
	if err := json.Unmarshal(raw, &r); err != nil || r.Format != eval.ResultsFormat {
		return nil, nil // not ours or damaged: it is evaluated again from the plan
	}
	abs := func(p string) string { // relative and absolute spellings compare equal
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return filepath.Clean(p)
	}
	within = abs(within)
	var out []string
	for _, m := range r.Models {
		run := runOfCheckpoint(m.Checkpoint)
		if filepath.Dir(abs(run)) != within || slices.ContainsFunc(planned, func(p string) bool { return abs(p) == abs(run) }) ||
			slices.ContainsFunc(out, func(p string) bool { return abs(p) == abs(run) }) {
			continue
		}
		st, _, err := train.ReadState(run)
		if err != nil || st.Step < st.Config.Optim.Steps {
			continue
		}
		out = append(out, run)
	}
	return out, nil
}

// byModelOrder sorts run directories as a whole grid plans them: by
// model (the directory's name) in the paper's order, others after.
func byModelOrder(runs []string) {
	rank := func(d string) int {
		if i := slices.Index(Models, filepath.Base(d)); i >= 0 {
			return i
		}
		return len(Models)
	}
	slices.SortStableFunc(runs, func(a, b string) int { return rank(a) - rank(b) })
}

// commonModels restricts per-seed evaluations to the models every seed
// evaluated (by label, in the first seed's order), so that a model kept
// at one seed only (keptRuns) is not merged over seeds it lacks. It
// returns the labels left out.
func commonModels(results []eval.Results) (dropped []string) {
	in := func(r eval.Results, label string) bool {
		return slices.ContainsFunc(r.Models, func(m eval.ResultsModel) bool { return m.Label == label })
	}
	for k := range results {
		results[k].Models = slices.DeleteFunc(slices.Clone(results[k].Models), func(m eval.ResultsModel) bool {
			for _, r := range results {
				if !in(r, m.Label) {
					if !slices.Contains(dropped, m.Label) {
						dropped = append(dropped, m.Label)
					}
					return true
				}
			}
			return false
		})
	}
	return dropped
}
