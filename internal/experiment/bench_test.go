package experiment

import (
	"slices"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
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

// precisionBackend is the CPU backend with a precision setting, as the
// CUDA backend has one.
type precisionBackend struct {
	tensor.Backend
	p string
}

func (b *precisionBackend) SetPrecision(p string) error { b.p = p; return nil }
func (b *precisionBackend) Precision() string           { return b.p }

// TestBenchPrecision: --precision sets a backend's precision and the
// result records it; bf16 on a backend without one (the CPU) and an
// unknown value are one-line errors; without the flag a backend keeps
// its precision and the CPU's result records none.
func TestBenchPrecision(t *testing.T) {
	tests := []struct {
		be      tensor.Backend
		flag    string
		want    string
		wantErr string
	}{
		{cpu.New(1), "", "", ""},
		{cpu.New(1), "fp32", "", ""},
		{cpu.New(1), "bf16", "", "bench: --precision bf16 needs the CUDA backend (bin/uhno-cuda); the CPU backend computes in float32"},
		{cpu.New(1), "fp16", "", `bench: --precision "fp16": want bf16 or fp32`},
		{&precisionBackend{p: "fp32"}, "", "fp32", ""},
		{&precisionBackend{p: "fp32"}, "bf16", "bf16", ""},
		{&precisionBackend{p: "bf16"}, "fp32", "fp32", ""},
	}
	for _, tt := range tests {
		got, err := benchPrecision(tt.be, tt.flag)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%T --precision %q: error %v, want %s", tt.be, tt.flag, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%T --precision %q: %q, %v; want %q", tt.be, tt.flag, got, err, tt.want)
		}
	}
}
