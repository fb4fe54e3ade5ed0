package train

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointReadRefuses checks the one-line errors for checkpoint
// files that pass the manifest's checksum but hold what no save writes:
// each case rewrites one file of a saved checkpoint (and the manifest
// with it) and names the error it must give.
func TestCheckpointReadRefuses(t *testing.T) {
	f32 := make([]byte, 16)
	state := func(edit func(st map[string]any)) func([]byte) []byte {
		return func(raw []byte) []byte {
			var st map[string]any
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatal(err)
			}
			edit(st)
			out, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	replace := func(b []byte) func([]byte) []byte { return func([]byte) []byte { return b } }
	tests := []struct {
		name, file string
		edit       func([]byte) []byte
		want       string
	}{
		{"negative step", StateFile, state(func(st map[string]any) { st["step"] = -5 }),
			"state.json: step is -5, want 0..100 (schedule.steps)"},
		{"step past the schedule", StateFile, state(func(st map[string]any) { st["step"] = 500 }),
			"state.json: step is 500, want 0..100 (schedule.steps)"},
		{"no schedule", StateFile, state(func(st map[string]any) { delete(st, "schedule") }),
			"state.json: the schedule (peak lr, warmup, steps) is 0, 0, 0, want a peak > 0 and 0 <= warmup < steps"},
		{"more batches than steps", StateFile, state(func(st map[string]any) { st["data"].(map[string]any)["batches_drawn"] = 1 << 40 }),
			"state.json: batches_drawn is 1099511627776, want 0..7, at most one batch per step"},
		{"no parameters", StateFile, state(func(st map[string]any) { st["params"] = 0 }),
			"state.json: params is 0, want >= 1"},
		{"best step after the step", StateFile, state(func(st map[string]any) { st["best_val_step"] = 8 }),
			"state.json: best_val_step is 8, want 0..7 (step)"},
		{"task of another configuration", StateFile, state(func(st map[string]any) { st["task"] = "ks" }),
			`state.json: task is "ks", want "burgers", the task of its configuration`},
		{"a zero dimension beside a huge one", WeightsFile,
			replace(safetensorsFile(`{"a":{"dtype":"F32","shape":[0,4611686018427387904,4],"data_offsets":[0,0]}}`, -1, nil)),
			`weights.safetensors: tensor "a" has shape [0 4611686018427387904 4] for 0 values of data, want positive dimensions whose product is the number of values`},
		{"a name used twice", WeightsFile,
			replace(safetensorsFile(`{"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"a":{"dtype":"F32","shape":[4],"data_offsets":[16,32]}}`, -1, append(f32, f32...))),
			`weights.safetensors: tensor "a" appears twice`},
		{"another dtype", WeightsFile,
			replace(safetensorsFile(`{"a":{"dtype":"F16","shape":[8],"data_offsets":[0,16]}}`, -1, f32)),
			`weights.safetensors: tensor "a" is F16, want F32`},
		{"an extra optimizer tensor", OptimizerFile,
			replace(safetensorsFile(`{"adamw.m":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"adamw.v":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},"x":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}}`, -1, f32)),
			`optimizer.safetensors holds tensor "x", want only "adamw.m" and "adamw.v"`},
		{"a moment that is not flat", OptimizerFile,
			replace(safetensorsFile(`{"adamw.m":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]},"adamw.v":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, -1, f32)),
			`optimizer.safetensors: tensor "adamw.m" has shape [2 1], want a flat vector`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fuzzSeedCheckpoint(t)
			files := map[string][]byte{}
			for _, name := range []string{StateFile, WeightsFile, OptimizerFile} {
				files[name] = readSeed(t, dir, name)
			}
			files[tt.file] = tt.edit(files[tt.file])
			if err := os.WriteFile(filepath.Join(dir, tt.file), files[tt.file], 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ManifestFile), manifestFor(files), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := loadCheckpoint(dir)
			want := "train: checkpoint " + dir + ": " + tt.want
			if err == nil || err.Error() != want {
				t.Fatalf("got %v\nwant %s", err, want)
			}
		})
	}
}

// TestLatestRefuses checks that latest must name a step directory: a
// path, a parent or a name with a line break in it is refused with a
// one-line error.
func TestLatestRefuses(t *testing.T) {
	for _, latest := range []string{"..", "../step-00000007", "/etc", "step-7/..", "step-1\nstep-2", "step--1", "step-+1", "latest"} {
		run := t.TempDir()
		if err := os.WriteFile(filepath.Join(run, LatestFile), []byte(latest), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ResolveCheckpoint(run)
		if err == nil || !strings.Contains(err.Error(), "want a step directory name such as \"step-00001000\"") || strings.Contains(err.Error(), "\n") {
			t.Errorf("latest %q: got %v", latest, err)
		}
	}
}
