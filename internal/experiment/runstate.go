package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"uhno/internal/bench"
	"uhno/internal/config"
	"uhno/internal/eval"
	"uhno/internal/model"
	"uhno/internal/runrec"
	"uhno/internal/train"
)

// The resumable-grid logic shared by every command that trains many runs
// into directories it names (uhno ablate, uhno reproduce): what a run
// directory holds (RunState), and whether an evaluation on disk is still
// the one that would be made now (currentResults).

// State is what a run directory holds for the run planned in it.
type State int

// Run states.
const (
	RunNone    State = iota // no run in the directory
	RunPartial              // a checkpoint before the last step
	RunDone                 // a checkpoint at the last step
)

func (s State) String() string {
	return [...]string{"not started", "unfinished", "finished"}[s]
}

// RunState says whether dir holds nothing, an unfinished run or a
// finished one of the planned configuration cfg and model rec (a record
// of PlanRecord), and refuses a run whose configuration or model differs:
// it is another experiment, which is neither mixed in nor overwritten.
// The error names the first difference (a configuration key, in sorted
// order, or the model).
func RunState(dir string, cfg config.Config, rec model.Record) (State, error) {
	if _, err := os.Stat(filepath.Join(dir, train.LatestFile)); errors.Is(err, fs.ErrNotExist) {
		return RunNone, nil
	}
	st, ck, err := train.ReadState(dir)
	if err != nil {
		return 0, err
	}
	other := func(what string) error {
		return fmt.Errorf("%s holds a run with other settings (%s); choose another --out or remove it", dir, what)
	}
	if key := configDiff(st.Config, cfg); key != "" {
		return 0, other("configuration key " + key)
	}
	have, err := runrec.DecodeRecord(ck, st.Build)
	if err != nil {
		return 0, other("not a run of uhno train")
	}
	if have.Model != rec.Model {
		return 0, other(fmt.Sprintf("model %s, not %s", have.Model, rec.Model))
	}
	a, errA := canonicalSpec(have.Record)
	b, errB := canonicalSpec(rec)
	if errA != nil {
		return 0, other(fmt.Sprintf("architecture of checkpoint %s: %v", ck, errA))
	}
	if errB != nil {
		return 0, errB
	}
	if a != b {
		return 0, other(fmt.Sprintf("architecture: %s, not %s (--params)", describeRecord(have.Record), describeRecord(rec)))
	}
	if st.Step >= st.Config.Optim.Steps {
		return RunDone, nil
	}
	return RunPartial, nil
}

// canonicalSpec is a record's spec as JSON with sorted keys; U-HNO's with
// mode G's automatic flat stack resolved (model.ResolveFlat), as NewUHNO
// builds it.
func canonicalSpec(r model.Record) (string, error) {
	if r.Model == "uhno" {
		var s model.Spec
		if err := json.Unmarshal(r.Spec, &s); err != nil {
			return "", err
		}
		s, err := model.ResolveFlat(s)
		if err != nil {
			return "", err
		}
		raw, err := json.Marshal(s)
		return string(raw), err
	}
	var v any
	if err := json.Unmarshal(r.Spec, &v); err != nil {
		return "", err
	}
	raw, err := json.Marshal(v)
	return string(raw), err
}

// describeRecord is a model's one-line description with its parameter
// count, built on a bench.Planner (no memory).
func describeRecord(r model.Record) string {
	m, desc, err := model.Build(&bench.Planner{}, r, 0)
	if err != nil {
		return r.Model + " (" + err.Error() + ")"
	}
	return fmt.Sprintf("%s, %s parameters", desc, groupDigits(m.Params().Count()))
}

// PlanRecord is the model record a fresh run of model name would train
// for configuration cfg with in and out channels: U-HNO's spec scaled to
// the budget params ("": as configured), the other models planned from it
// through the registry (width: FNO's --width, 0: matched).
func PlanRecord(cfg config.Config, name string, in, out int, params string, width int) (model.Record, error) {
	spec, err := uhnoSpec(cfg, in, out, params)
	if err != nil {
		return model.Record{}, err
	}
	if !model.TakesMode(name, model.Mode(spec.Mode)) && model.Registered(name) {
		return model.Record{}, fmt.Errorf("train: mode %s changes U-HNO's architecture; --model %s takes only the loss modes C, D and E", spec.Mode, name)
	}
	return model.PlanRecord(name, model.Plan{UHNO: spec, Grid: cfg.PDE.Grid, Periodic: cfg.PDE.Boundary != "dirichlet", Width: width})
}

// Channels are the input and output channels of cfg's models, from its
// data.inputs, data.outputs and data.history, plus one input channel per
// constant input (data.constants) and per grid axis with data.coordinates
// (as uhno bench and the dry run take them, and as data.Plan.InputShape
// gives them); 0 when the configuration names no fields.
func Channels(cfg config.Config) (in, out int) {
	in = max(cfg.Data.History, 1) * len(cfg.Data.Inputs)
	if in > 0 {
		in += len(cfg.Data.Constants)
	}
	if cfg.Data.Coordinates && in > 0 {
		in += len(cfg.PDE.Grid)
	}
	return in, len(cfg.Data.Outputs)
}

// evalWant is the evaluation that would be made now: of each run's
// checkpoint (Checkpoint "" : any) at its step, a rollout of Steps steps
// (HorizonMult times the horizon) on Trajs test trajectories, with the
// bootstrap's resamples and seed.
type evalWant struct {
	Runs []evalRun
	// Data is the test data file; empty: not compared (ablate's
	// evaluations, always on the run's own data).
	Data                      string
	Steps, Trajs, HorizonMult int
	Resamples                 int
	Seed                      uint64
}

type evalRun struct {
	Checkpoint string
	Step       int
}

// currentResults returns the evaluation in dir when it exists and is the
// one w describes; nil when it must be (re)made (missing, damaged, of
// other checkpoints, steps or settings).
func currentResults(dir string, w evalWant) (*eval.Results, error) {
	raw, err := os.ReadFile(filepath.Join(dir, eval.ResultsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r eval.Results
	if err := json.Unmarshal(raw, &r); err != nil || r.Format != eval.ResultsFormat || len(r.Models) != len(w.Runs) {
		return nil, nil // not ours or damaged: evaluate again
	}
	if r.Steps != w.Steps || r.Trajs != w.Trajs || r.HorizonMult != w.HorizonMult {
		return nil, nil
	}
	if w.Data != "" && filepath.Clean(r.Data) != filepath.Clean(w.Data) {
		return nil, nil
	}
	for i, m := range r.Models {
		want := w.Runs[i]
		if m.Step != want.Step || (want.Checkpoint != "" && filepath.Clean(m.Checkpoint) != filepath.Clean(want.Checkpoint)) ||
			m.Eval.Bootstrap.Resamples != w.Resamples || m.Eval.Bootstrap.Seed != w.Seed {
			return nil, nil
		}
	}
	return &r, nil
}

// configDiff returns the first configuration key (dotted, in sorted
// order) whose value differs between a and b, or "" when they are equal.
func configDiff(a, b config.Config) string {
	flat := func(c config.Config) map[string]string {
		raw, _ := json.Marshal(c)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		out := map[string]string{}
		var walk func(prefix string, v any)
		walk = func(prefix string, v any) {
			if mm, ok := v.(map[string]any); ok {
				for k, x := range mm {
					walk(strings.TrimPrefix(prefix+"."+k, "."), x)
				}
				return
			}
			s, _ := json.Marshal(v)
			out[prefix] = string(s)
		}
		walk("", m)
		return out
	}
	fa, fb := flat(a), flat(b)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if fa[k] != fb[k] {
			return fmt.Sprintf("%s: %s here, %s asked", k, orNone(fa[k]), orNone(fb[k]))
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
