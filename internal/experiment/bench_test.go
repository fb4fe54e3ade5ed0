package experiment

import (
	"slices"
	"testing"
)

// TestBenchPlan checks how presets and flags become the rows to measure,
// without measuring.
func TestBenchPlan(t *testing.T) {
	parse := func(o BenchOptions) (string, []benchEntry, error) {
		o.Repeats, o.Warmup = 10, 2 // uhno bench's defaults
		return benchPlan(&o)
	}
	tests := []struct {
		args   BenchOptions
		preset string
		want   []benchEntry
	}{
		{BenchOptions{}, "burgers", []benchEntry{{"burgers", 128, 32, "uhno", ""}, {"burgers", 128, 32, "fno", ""}}},
		{BenchOptions{Preset: "cost-ns2d"}, "cost-ns2d", costRows("uhno", "fno", "wno", "ffno", "loglofno", "convfno", "cno", "gno", "fno-wider")},
		{BenchOptions{Preset: "cost-spar"}, "cost-spar", []benchEntry{{"ns2d", 128, 16, "uhno", "full"}, {"ns2d", 128, 16, "uhno", "F"},
			{"burgers", 128, 32, "uhno", "full"}, {"burgers", 128, 32, "uhno", "F"}}},
		{BenchOptions{Preset: "cost-spar", Task: "ns2d", Grid: 64}, "cost-spar", []benchEntry{{"ns2d", 64, 16, "uhno", "full"}, {"ns2d", 64, 16, "uhno", "F"}}},
		{BenchOptions{Preset: "cost-ns2d", Model: "fno", Batch: 4}, "cost-ns2d", []benchEntry{{"ns2d", 128, 4, "fno", ""}}},
		{BenchOptions{Task: "ks"}, "", []benchEntry{{"ks", 0, 0, "uhno", ""}, {"ks", 0, 0, "fno", ""}}},
		// An architectural mode changes U-HNO only; a loss mode applies to both.
		{BenchOptions{Task: "burgers", Mode: "f"}, "", []benchEntry{{"burgers", 0, 0, "uhno", "F"}, {"burgers", 0, 0, "fno", ""}}},
		{BenchOptions{Task: "burgers", Mode: "c"}, "", []benchEntry{{"burgers", 0, 0, "uhno", "C"}, {"burgers", 0, 0, "fno", "C"}}},
		{BenchOptions{Mode: "FULL", Model: "uhno"}, "burgers", []benchEntry{{"burgers", 128, 32, "uhno", "full"}}},
	}
	for _, tt := range tests {
		preset, got, err := parse(tt.args)
		if err != nil || preset != tt.preset || !slices.Equal(got, tt.want) {
			t.Errorf("%+v: preset %q, rows %+v, %v; want %q, %+v", tt.args, preset, got, err, tt.preset, tt.want)
		}
	}
}

// costRows are the rows of preset cost-ns2d for the models named.
func costRows(names ...string) []benchEntry {
	var rows []benchEntry
	for _, m := range names {
		rows = append(rows, benchEntry{"ns2d", 128, 16, m, ""})
	}
	return rows
}
