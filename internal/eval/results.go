package eval

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"

	"uhno/internal/config"
)

// ResultsFile is the name of the evaluation's output in the directory of
// `uhno eval`, and ResultsFormat versions it.
const (
	ResultsFile   = "results.json"
	ResultsFormat = "uhno-eval/1"
)

// Results is results.json, the output of `uhno eval`: every evaluated
// checkpoint's Summary on one task's test trajectories. Its writer
// (cmd/uhno) and its readers (internal/report, `uhno ablate`) share this
// type, so the format is defined once. Readers accept files written
// before a field existed: every field added later decodes as its zero
// value.
type Results struct {
	Format      string `json:"format"`
	Version     string `json:"uhno_version"`
	Task        string `json:"task"`
	Steps       int    `json:"rollout_steps"`
	HorizonMult int    `json:"horizon_mult"`
	// Data is the test data file and Trajs the number of its test
	// trajectories evaluated.
	Data   string         `json:"data"`
	Trajs  int            `json:"test_trajectories"`
	Models []ResultsModel `json:"models"`
}

// ResultsModel is one evaluated checkpoint of results.json.
type ResultsModel struct {
	Label      string        `json:"label"`
	Model      string        `json:"model"` // "uhno", "uhno-A" ... "uhno-I", "fno", ...
	Params     int           `json:"params"`
	Checkpoint string        `json:"checkpoint"`
	Step       int           `json:"step"`
	Config     config.Config `json:"config"`
	// BuiltC0 is the width C0 the U-HNO was built with: the
	// configuration's model.c0 unless --params scaled it (0 for another
	// model, and in files written before it).
	BuiltC0 int     `json:"built_c0,omitempty"`
	Elapsed float64 `json:"elapsed_s"`
	Eval    Summary `json:"evaluation"`
}

// Summary is one model's evaluation: the trajectory-level metrics with
// their bootstrap intervals, the crash rate with its Wilson interval, the
// per-step curves and the crashed trajectories. It is the "evaluation"
// part of results.json.
type Summary struct {
	// Steps is the rollout length; Static marks a single prediction
	// (Darcy), for which the rollout metrics (energy drift, crash rate) do
	// not apply and are left out.
	Steps        int  `json:"rollout_steps"`
	Static       bool `json:"static"`
	Trajectories int  `json:"trajectories"`
	// Metrics maps each of MetricNames to the mean over the non-crashed
	// trajectories of their trajectory-level values
	// (TrajectoryMetrics.Mean) with a percentile bootstrap interval (App.
	// bootstrap), and each of PooledBandNames to its pooled ratio with
	// RatioBootstrap's interval (absent from files written before it).
	Metrics map[string]Interval `json:"metrics"`
	// CrashRate is the fraction of crashed trajectories with its Wilson
	// interval (nil for static data).
	CrashRate *Interval `json:"crash_rate,omitempty"`
	Crashes   []Crash   `json:"crashes,omitempty"`
	// Curves are the per-step means over the non-crashed trajectories of
	// every metric; relL2 and relH1 also carry per-step bootstrap
	// intervals (the error-growth figure).
	Curves map[string]Curve `json:"curves"`
	// Bootstrap records how the intervals were computed.
	Bootstrap BootstrapSpec `json:"bootstrap"`
	// Trajectory holds, for each of MetricNames, every test trajectory's
	// value (TrajectoryMetrics.Mean; NaN, written null, for a crashed or
	// undefined one) in the order of the evaluated trajectories: what
	// an interval over seeds and trajectories resamples (SeedBootstrap).
	// Absent in files written before it.
	Trajectory map[string]Floats `json:"trajectory_values,omitempty"`
	// Seeds is set on a summary merged over training seeds (MergeSeeds):
	// the seeds and each one's values. Metrics are then means over seeds
	// with intervals over seeds and trajectories.
	Seeds *SeedSummary `json:"seeds,omitempty"`
}

// Crash is one crashed trajectory: its index in the data file, the first
// step that met the crash rule and why.
type Crash struct {
	Traj   int    `json:"trajectory"`
	Step   int    `json:"step"`
	Reason string `json:"reason"`
}

// Curve is a metric along the rollout: Mean[t-1] is the value at step t;
// Low and High, when present, its interval.
type Curve struct {
	Mean Floats `json:"mean"`
	Low  Floats `json:"low,omitempty"`
	High Floats `json:"high,omitempty"`
}

// Floats is a list of values that encodes NaN and ±Inf (undefined or
// blown-up metrics) as JSON null, which encoding/json would refuse.
type Floats []float64

// MarshalJSON implements json.Marshaler.
func (f Floats) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, v)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON implements json.Unmarshaler, reading null as NaN (what
// MarshalJSON writes for a non-finite value; a plain []float64 would read
// it as 0).
func (f *Floats) UnmarshalJSON(raw []byte) error {
	var v []*float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	if v == nil {
		*f = nil
		return nil
	}
	out := make(Floats, len(v))
	for i, p := range v {
		out[i] = math.NaN()
		if p != nil {
			out[i] = *p
		}
	}
	*f = out
	return nil
}

// MarshalJSON implements json.Marshaler: {"mean", "low", "high", "n"},
// with null for a non-finite value.
func (iv Interval) MarshalJSON() ([]byte, error) {
	b := []byte(`{"mean":`)
	b = appendFloat(b, iv.Mean)
	b = append(b, `,"low":`...)
	b = appendFloat(b, iv.Low)
	b = append(b, `,"high":`...)
	b = appendFloat(b, iv.High)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(iv.N), 10)
	return append(b, '}'), nil
}

// UnmarshalJSON implements json.Unmarshaler, reading null as NaN.
func (iv *Interval) UnmarshalJSON(raw []byte) error {
	var v struct {
		Mean, Low, High *float64
		N               int
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	get := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*iv = Interval{Mean: get(v.Mean), Low: get(v.Low), High: get(v.High), N: v.N}
	return nil
}

// appendFloat appends v in JSON, null when it is not finite.
func appendFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// BootstrapSpec is the interval recipe: B resamples at this level, seeded.
type BootstrapSpec struct {
	Resamples int     `json:"resamples"`
	Level     float64 `json:"level"`
	Seed      uint64  `json:"seed"`
}

// DefaultBootstrap is the paper's recipe: B = 10,000 resamples, 95%.
var DefaultBootstrap = BootstrapSpec{Resamples: 10000, Level: 0.95}

// curveIntervals are the metrics whose per-step curves get intervals.
var curveIntervals = []string{MetricRelL2, MetricRelH1}

// Summarize reduces a rollout's per-trajectory metrics to the reported
// numbers. Means and intervals are over test trajectories (GUIDE section
// 4: relative metrics per trajectory and step, then averaged); a crashed
// trajectory counts only in the crash rate (see TrajectoryMetrics.Mean).
// Every interval uses its own seed derived from spec.Seed, so a metric's
// interval does not depend on which others are computed.
func Summarize(o *Outcome, spec BootstrapSpec) Summary {
	s := Summary{Steps: o.Steps, Static: o.Static, Trajectories: len(o.Metrics),
		Metrics: map[string]Interval{}, Curves: map[string]Curve{}, Bootstrap: spec, Trajectory: map[string]Floats{}}
	crashed := 0
	for i, m := range o.Metrics {
		if m.Crashed {
			crashed++
			s.Crashes = append(s.Crashes, Crash{Traj: o.Trajs[i], Step: m.CrashStep, Reason: m.CrashReason})
		}
	}
	names := MetricNames()
	for mi, name := range names {
		if o.Static && name == MetricEnergyDrift {
			continue
		}
		vals := make([]float64, len(o.Metrics))
		for i, m := range o.Metrics {
			vals[i] = m.Mean(name)
		}
		s.Metrics[name] = Bootstrap(vals, spec.Resamples, spec.Level, spec.Seed+uint64(mi))
		s.Trajectory[name] = vals

		c := Curve{Mean: make([]float64, o.Steps)}
		withCI := slices.Contains(curveIntervals, name)
		if withCI {
			c.Low, c.High = make([]float64, o.Steps), make([]float64, o.Steps)
		}
		col := make([]float64, len(o.Metrics))
		for t := range o.Steps {
			for i, m := range o.Metrics {
				col[i] = math.NaN()
				if v := m.Curve(name); !m.Crashed && t < len(v) {
					col[i] = v[t]
				}
			}
			if withCI {
				iv := Bootstrap(col, spec.Resamples, spec.Level, spec.Seed+uint64(1000*(mi+1)+t))
				c.Mean[t], c.Low[t], c.High[t] = iv.Mean, iv.Low, iv.High
			} else {
				c.Mean[t] = nanMean(col)
			}
		}
		s.Curves[name] = c
	}
	s.pool(o, spec)
	if !o.Static {
		w := Wilson(crashed, len(o.Metrics), spec.Level)
		s.CrashRate = &w
	}
	return s
}

// pool adds the pooled band errors (PooledBandNames; D-band-pooled): per
// band, the sum of E_b's numerators over every step of every non-crashed
// trajectory over the sum of its denominators, with RatioBootstrap's
// interval over trajectories, and the curve of the same ratio per step.
func (s *Summary) pool(o *Outcome, spec BootstrapSpec) {
	traj := make([]BandSum, len(o.Metrics))
	steps := make([]BandSum, o.Steps)
	var live []int
	for i, m := range o.Metrics {
		if m.Crashed {
			continue
		}
		live = append(live, i)
		for t, bs := range m.BandSums {
			traj[i] = traj[i].Add(bs)
			if t < o.Steps {
				steps[t] = steps[t].Add(bs)
			}
		}
	}
	for b, name := range PooledBandNames() {
		num, den := make([]float64, len(live)), make([]float64, len(live))
		for j, i := range live {
			num[j], den[j] = traj[i].Num[b], traj[i].Den[b]
		}
		s.Metrics[name] = RatioBootstrap(num, den, spec.Resamples, spec.Level, spec.Seed+uint64(500+b))
		c := Curve{Mean: make([]float64, o.Steps)}
		for t := range c.Mean {
			c.Mean[t] = math.NaN()
			if len(live) > 0 {
				c.Mean[t] = steps[t].Errors()[b]
			}
		}
		s.Curves[name] = c
	}
}

// nanMean is the mean of the values that are not NaN (NaN if none).
func nanMean(v []float64) float64 {
	var sum float64
	n := 0
	for _, x := range v {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
