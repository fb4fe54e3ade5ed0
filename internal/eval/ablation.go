package eval

import (
	"encoding/json"
	"math"
	"slices"
)

// AblationFile is the name of `uhno ablate`'s result in its directory,
// and AblationFormat versions it.
const (
	AblationFile   = "ablation.json"
	AblationFormat = "uhno-ablation/1"
)

// Ablation is ablation.json, the result of `uhno ablate`: the Full model
// and each ablation mode of Tab. ablation-setup (Kind "modes"), or one
// configuration value swept over a list (Kind "sweep", Fig.
// training-dynamics (f)), every entry trained under one shared schedule
// and evaluated with the rollout suite of `uhno eval`.
type Ablation struct {
	Format  string `json:"format"`
	Version string `json:"uhno_version"`
	Task    string `json:"task"`
	// Kind is "modes" or "sweep".
	Kind string `json:"kind"`
	// SweepKey is the configuration key of a sweep (e.g. spar.rho0).
	SweepKey string `json:"sweep_key,omitempty"`
	// Schedule is the shared training schedule of every entry.
	Schedule AblationSchedule `json:"schedule"`
	// Steps is the rollout length of the evaluation, Trajs the number of
	// test trajectories, Data the data file.
	Steps int    `json:"rollout_steps"`
	Trajs int    `json:"test_trajectories"`
	Data  string `json:"data"`
	// Command is the command line that produced the file.
	Command string `json:"command"`
	// Entries are in the paper's order (Full first) or the sweep's.
	Entries []AblationEntry `json:"entries"`
}

// AblationSchedule is the training schedule shared by every entry.
type AblationSchedule struct {
	Steps  int      `json:"steps"`
	Warmup int      `json:"warmup"`
	Batch  int      `json:"batch"`
	LR     float64  `json:"lr"`
	Params string   `json:"params,omitempty"` // the --params budget
	Sets   []string `json:"sets,omitempty"`   // --set flags given
	Seed   int64    `json:"seed"`
}

// AblationEntry is one trained and evaluated configuration.
type AblationEntry struct {
	// Mode is "full" or "A" ... "I"; for a sweep, the mode every entry
	// shares.
	Mode string `json:"mode"`
	// Label is the row label: "Full U-HNO", "A: NoLocal", ...; for a sweep
	// "spar.rho0 = 0.3".
	Label string `json:"label"`
	// Value is the swept value (sweeps only).
	Value string `json:"value,omitempty"`
	// Run is the run directory, Params the parameter count, Step the
	// evaluated checkpoint's step, TrainSeconds the training time recorded
	// in the run's log (0 when unknown).
	Run          string  `json:"run"`
	Params       int     `json:"params"`
	Step         int     `json:"step"`
	TrainSeconds float64 `json:"train_seconds"`
	// Eval is the evaluation (as in results.json).
	Eval Summary `json:"evaluation"`
	// Factor is the degradation factor of each metric relative to Full
	// (this entry's mean over Full's): MetricMSE, MetricRelL2,
	// MetricRelH1. Absent for a sweep, whose entries have no reference.
	Factor Factors `json:"factor,omitempty"`
}

// AblationMetrics are the columns of Tab. burgers-ablation.
var AblationMetrics = []string{MetricMSE, MetricRelL2, MetricRelH1}

// DegradationFactors fills in each entry's Factor relative to the entry
// of mode ref (normally "full"): the ratio of the means of each of
// AblationMetrics, NaN where either mean is undefined or the reference is
// zero. Entries are left without factors when no entry has mode ref.
func DegradationFactors(entries []AblationEntry, ref string) {
	var base *AblationEntry
	for i := range entries {
		if entries[i].Mode == ref {
			base = &entries[i]
			break
		}
	}
	if base == nil {
		return
	}
	for i := range entries {
		f := Factors{}
		for _, m := range AblationMetrics {
			a, b := entries[i].Eval.Metrics[m].Mean, base.Eval.Metrics[m].Mean
			if _, ok := entries[i].Eval.Metrics[m]; !ok || b == 0 || math.IsNaN(a) || math.IsNaN(b) {
				f[m] = math.NaN()
				continue
			}
			if _, ok := base.Eval.Metrics[m]; !ok {
				f[m] = math.NaN()
				continue
			}
			f[m] = a / b
		}
		entries[i].Factor = f
	}
}

// Factors maps a metric name to a degradation factor. It encodes NaN and
// ±Inf (an undefined factor) as JSON null, which encoding/json would
// refuse, and reads null back as NaN.
type Factors map[string]float64

// MarshalJSON implements json.Marshaler, with the keys sorted.
func (f Factors) MarshalJSON() ([]byte, error) {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b = append(append(b, kb...), ':')
		b = appendFloat(b, f[k])
	}
	return append(b, '}'), nil
}

// UnmarshalJSON implements json.Unmarshaler, reading null as NaN.
func (f *Factors) UnmarshalJSON(raw []byte) error {
	var v map[string]*float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	out := make(Factors, len(v))
	for k, p := range v {
		out[k] = math.NaN()
		if p != nil {
			out[k] = *p
		}
	}
	*f = out
	return nil
}
