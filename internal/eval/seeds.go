package eval

import (
	"fmt"
	"math"
	"slices"
)

// SeedSummary says what a Summary merged over training seeds (MergeSeeds)
// was made of: the seeds, each seed's checkpoint, and each seed's value of
// every metric (its own Summary's mean), from which the spread between
// seeds is read.
type SeedSummary struct {
	Seeds       []int64           `json:"seeds"`
	Checkpoints []string          `json:"checkpoints"`
	Means       map[string]Floats `json:"means"`
}

// Spread is the range of the seeds' values of metric: the largest minus
// the smallest (NaN when a seed has none).
func (s *SeedSummary) Spread(metric string) float64 {
	v := s.Means[metric]
	if len(v) == 0 || slices.ContainsFunc(v, math.IsNaN) {
		return math.NaN()
	}
	return slices.Max(v) - slices.Min(v)
}

// MergeSeeds merges the evaluations of one grid's runs at several
// training seeds into one Results, model by model (matched by position
// and model name): every seed must have evaluated the same task, data
// file, test trajectories, horizon and models. Each metric of MetricNames
// becomes the mean over seeds of each seed's mean over trajectories with
// SeedBootstrap's interval (over seeds and trajectories, so it holds the
// training variance); the pooled band errors, whose per-trajectory sums
// are not kept, become the mean of the seeds' pooled values with an
// interval over seeds only; the crash rate is pooled over every seed's
// trajectories (Wilson); curves are the mean of the seeds' curves. Each
// model's SeedSummary records the seeds and their values. seeds[k] is
// the training seed of results[k].
func MergeSeeds(results []Results, seeds []int64, spec BootstrapSpec) (Results, error) {
	if len(results) == 0 || len(results) != len(seeds) {
		return Results{}, fmt.Errorf("eval: %d evaluations for %d seeds", len(results), len(seeds))
	}
	first := results[0]
	for k, r := range results[1:] {
		if r.Task != first.Task || r.Data != first.Data || r.Trajs != first.Trajs || r.Steps != first.Steps ||
			r.HorizonMult != first.HorizonMult || len(r.Models) != len(first.Models) {
			return Results{}, fmt.Errorf("eval: the evaluation of seed %d is not of seed %d's task, data, trajectories, horizon and models", seeds[k+1], seeds[0])
		}
	}
	out := first
	out.Models = make([]ResultsModel, len(first.Models))
	for i := range first.Models {
		var sums []Summary
		cps := make([]string, len(results))
		for k, r := range results {
			m := r.Models[i]
			if m.Model != first.Models[i].Model {
				return Results{}, fmt.Errorf("eval: model %d is %s at seed %d and %s at seed %d", i, first.Models[i].Model, seeds[0], m.Model, seeds[k])
			}
			sums = append(sums, m.Eval)
			cps[k] = m.Checkpoint
		}
		s, err := mergeSummaries(sums, spec)
		if err != nil {
			return Results{}, fmt.Errorf("eval: %s: %w", first.Models[i].Label, err)
		}
		s.Seeds.Seeds, s.Seeds.Checkpoints = slices.Clone(seeds), cps
		out.Models[i] = first.Models[i]
		out.Models[i].Eval = s
	}
	return out, nil
}

// mergeSummaries is MergeSeeds for one model's summaries, one per seed.
func mergeSummaries(sums []Summary, spec BootstrapSpec) (Summary, error) {
	first := sums[0]
	s := Summary{Steps: first.Steps, Static: first.Static, Trajectories: first.Trajectories, Metrics: map[string]Interval{},
		Curves: map[string]Curve{}, Bootstrap: spec, Seeds: &SeedSummary{Means: map[string]Floats{}}}
	for mi, name := range MetricNames() {
		if first.Static && name == MetricEnergyDrift {
			continue
		}
		var per [][]float64
		means := make(Floats, len(sums))
		for k, x := range sums {
			v, ok := x.Trajectory[name]
			if !ok {
				return Summary{}, fmt.Errorf("the evaluation of a seed holds no per-trajectory %s values (made before uhno kept them: evaluate it again)", name)
			}
			per = append(per, v)
			means[k] = x.Metrics[name].Mean
		}
		s.Metrics[name] = SeedBootstrap(per, spec.Resamples, spec.Level, spec.Seed+uint64(mi))
		s.Seeds.Means[name] = means
	}
	for b, name := range PooledBandNames() {
		per := make([][]float64, len(sums))
		means := make(Floats, len(sums))
		for k, x := range sums {
			iv, ok := x.Metrics[name]
			if !ok {
				iv.Mean = math.NaN()
			}
			per[k], means[k] = []float64{iv.Mean}, iv.Mean
		}
		s.Metrics[name] = SeedBootstrap(per, spec.Resamples, spec.Level, spec.Seed+uint64(500+b))
		s.Seeds.Means[name] = means
	}
	crashed, total := 0, 0
	for _, x := range sums {
		s.Crashes = append(s.Crashes, x.Crashes...)
		if x.CrashRate != nil {
			crashed += int(math.Round(x.CrashRate.Mean * float64(x.CrashRate.N)))
			total += x.CrashRate.N
		}
	}
	if first.CrashRate != nil && total > 0 {
		w := Wilson(crashed, total, spec.Level)
		s.CrashRate = &w
	}
	for name, c := range first.Curves {
		mean := make(Floats, len(c.Mean))
		for t := range mean {
			var col []float64
			for _, x := range sums {
				if xc, ok := x.Curves[name]; ok && t < len(xc.Mean) {
					col = append(col, xc.Mean[t])
				}
			}
			mean[t] = nanMean(col)
		}
		s.Curves[name] = Curve{Mean: mean}
	}
	return s, nil
}

// MergeAblations merges one ablation's results at several training seeds
// (seeds[k] the seed of abs[k]) entry by entry, as MergeSeeds merges
// evaluations: every seed must have run the same task, kind and entries
// on the same data and test trajectories. Each entry's run and step are
// seed 0's (the first given); its evaluation is the merge, and the
// degradation factors of a modes ablation are recomputed from the means
// over seeds.
func MergeAblations(abs []Ablation, seeds []int64, spec BootstrapSpec) (Ablation, error) {
	if len(abs) == 0 || len(abs) != len(seeds) {
		return Ablation{}, fmt.Errorf("eval: %d ablations for %d seeds", len(abs), len(seeds))
	}
	first := abs[0]
	out := first
	out.Entries = slices.Clone(first.Entries)
	for k, a := range abs[1:] {
		if a.Task != first.Task || a.Kind != first.Kind || a.Data != first.Data || a.Trajs != first.Trajs ||
			a.Steps != first.Steps || len(a.Entries) != len(first.Entries) {
			return Ablation{}, fmt.Errorf("eval: the ablation of seed %d is not of seed %d's task, entries, data and trajectories", seeds[k+1], seeds[0])
		}
	}
	for i, e := range first.Entries {
		sums := make([]Summary, len(abs))
		cps := make([]string, len(abs))
		for k, a := range abs {
			if a.Entries[i].Mode != e.Mode || a.Entries[i].Value != e.Value {
				return Ablation{}, fmt.Errorf("eval: entry %d is %s at seed %d and %s at seed %d", i, e.Label, seeds[0], a.Entries[i].Label, seeds[k])
			}
			sums[k], cps[k] = a.Entries[i].Eval, a.Entries[i].Run
		}
		s, err := mergeSummaries(sums, spec)
		if err != nil {
			return Ablation{}, fmt.Errorf("eval: %s: %w", e.Label, err)
		}
		s.Seeds.Seeds, s.Seeds.Checkpoints = slices.Clone(seeds), cps
		out.Entries[i].Eval = s
		out.Entries[i].Factor = nil
	}
	if out.Kind == "modes" {
		DegradationFactors(out.Entries, "full")
	}
	return out, nil
}
