package train

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"uhno/internal/config"
	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/testutil"
)

// savedRun writes one checkpoint of a tiny model at step `step` and
// returns the model, its moments and state.
func savedRun(t *testing.T, dir string, step int, hooks *saveHooks) (*tinyModel, []float32, []float32, State, error) {
	t.Helper()
	b := cpu.New(2)
	m := newTinyModel(b, 1, 1, 8, uint64(step))
	rng := rand.New(rand.NewPCG(uint64(step), 3))
	mm, vv := make([]float32, m.p.n), make([]float32, m.p.n)
	for i := range mm {
		mm[i], vv[i] = float32(rng.NormFloat64()), float32(rng.Float64())
	}
	st := State{
		Step: step, LR: 1e-3, Schedule: Schedule{Peak: 1e-3, Warmup: 2, Steps: 100},
		Optim: AdamW{0.9, 0.999, 1e-8, 1e-4}, Loss: LossValues{Total: 1.5, MSE: 1, H1: 2, CBC: 3},
		BestVal: 0.7, BestValStep: step, Data: DataState{Seed: 4, Drawn: step, Batch: 4},
		Model: "tiny", Params: m.p.n, Task: "burgers", Config: config.Config{Task: "burgers", Seed: 3}, Version: "test",
	}
	_, err := saveCheckpoint(dir, st, m.p.list, mm, vv, b, 3, hooks)
	st.Format = checkpointFormat
	return m, mm, vv, st, err
}

// TestCheckpointRoundTrip saves a checkpoint and loads it into a model
// with other weights: parameters, moments and state come back bit for bit.
func TestCheckpointRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m, mm, vv, st, err := savedRun(t, dir, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	ck, ckDir, err := loadCheckpoint(dir) // through the run directory's latest
	if err != nil {
		t.Fatal(err)
	}
	if ckDir != filepath.Join(dir, "step-00000007") {
		t.Fatalf("resolved %s, want the step-00000007 directory", ckDir)
	}
	if !reflect.DeepEqual(ck.State, st) {
		t.Fatalf("state\n%+v\nwant\n%+v", ck.State, st)
	}
	if !testutil.SameBits(ck.M, mm) || !testutil.SameBits(ck.V, vv) {
		t.Fatal("moments differ after the round trip")
	}
	other := newTinyModel(cpu.New(1), 1, 1, 8, 1234)
	if testutil.SameBits(other.p.host(), m.p.host()) {
		t.Fatal("test needs a model with other weights")
	}
	if err := ck.restoreWeights(ckDir, other.p.list, cpu.New(1), "tiny"); err != nil {
		t.Fatal(err)
	}
	if !testutil.SameBits(other.p.host(), m.p.host()) {
		t.Fatal("weights differ after the round trip")
	}
	got, _, err := ReadState(ckDir)
	if err != nil || !reflect.DeepEqual(got, st) {
		t.Fatalf("ReadState: %+v, %v", got, err)
	}
}

// TestWeightsFileFormat reads weights.safetensors with an independent
// reader written from the format's specification (huggingface/safetensors:
// u64 little-endian header length, a JSON header mapping each tensor name
// to dtype, shape and [begin, end) byte offsets into the data that
// follows, optional "__metadata__"), as PyTorch's safetensors.torch does.
func TestWeightsFileFormat(t *testing.T) {
	dir := t.TempDir()
	m, _, _, _, err := savedRun(t, dir, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, StepDirName(3), WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw)
	if (8+n)%8 != 0 {
		t.Errorf("data starts at byte %d, not 8-aligned", 8+n)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	var meta map[string]string
	if err := json.Unmarshal(header["__metadata__"], &meta); err != nil || meta["format"] != "pt" {
		t.Errorf("metadata %v (%v), want format pt", meta, err)
	}
	data := raw[8+n:]
	if len(header) != len(m.p.list)+1 {
		t.Fatalf("%d header entries, want %d tensors and the metadata", len(header), len(m.p.list))
	}
	for _, p := range m.p.list {
		var info struct {
			DType   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets [2]int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(header[p.Name], &info); err != nil {
			t.Fatalf("tensor %q: %v", p.Name, err)
		}
		if info.DType != "F32" || !tensor.SameShape(info.Shape, p.Shape) {
			t.Fatalf("tensor %q: %s %v, want F32 %v", p.Name, info.DType, info.Shape, p.Shape)
		}
		want := tensor.ToHost(cpu.New(1), p)
		seg := data[info.Offsets[0]:info.Offsets[1]]
		if len(seg) != 4*len(want) {
			t.Fatalf("tensor %q: %d bytes for %d values", p.Name, len(seg), len(want))
		}
		for i, w := range want {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(seg[4*i:])); got != w {
				t.Fatalf("tensor %q[%d] = %g, want %g", p.Name, i, got, w)
			}
		}
	}
}

// TestCheckpointDamage checks that every kind of damage gives a one-line
// error naming the file.
func TestCheckpointDamage(t *testing.T) {
	tests := []struct {
		name   string
		damage func(dir string) error
		want   string
	}{
		{"flipped byte", func(dir string) error {
			p := filepath.Join(dir, WeightsFile)
			raw, _ := os.ReadFile(p)
			raw[len(raw)/2] ^= 0x40
			return os.WriteFile(p, raw, 0o644)
		}, "weights.safetensors is corrupt (SHA-256 differs from the manifest)"},
		{"truncated", func(dir string) error {
			return os.Truncate(filepath.Join(dir, OptimizerFile), 100)
		}, "optimizer.safetensors has 100 bytes, the manifest says"},
		{"missing file", func(dir string) error { return os.Remove(filepath.Join(dir, StateFile)) },
			"state.json is missing"},
		{"no manifest", func(dir string) error { return os.Remove(filepath.Join(dir, ManifestFile)) },
			"is incomplete: no manifest.json (an interrupted save?)"},
		{"garbage manifest", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, ManifestFile), []byte("{\"format\": 3"), 0o644)
		}, "manifest.json is corrupt: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := t.TempDir()
			if _, _, _, _, err := savedRun(t, run, 5, nil); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(run, StepDirName(5))
			if err := tt.damage(dir); err != nil {
				t.Fatal(err)
			}
			_, _, err := loadCheckpoint(run)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "train: checkpoint "+dir) {
				t.Fatalf("got %v, want train: checkpoint %s...%s", err, dir, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		})
	}
	t.Run("no checkpoint", func(t *testing.T) {
		dir := t.TempDir()
		_, _, err := loadCheckpoint(dir)
		if want := "train: " + dir + " holds no checkpoint (no latest or manifest.json)"; err == nil || err.Error() != want {
			t.Fatalf("got %v, want %s", err, want)
		}
	})
}

// TestRestoreWeightsMismatch checks the errors for a parameter missing
// from the checkpoint, one of another shape and one the model lacks.
func TestRestoreWeightsMismatch(t *testing.T) {
	run := t.TempDir()
	if _, _, _, _, err := savedRun(t, run, 2, nil); err != nil {
		t.Fatal(err)
	}
	ck, dir, err := loadCheckpoint(run)
	if err != nil {
		t.Fatal(err)
	}
	b := cpu.New(1)
	fresh := func() []*tensor.Tensor { return newTinyModel(b, 1, 1, 8, 9).p.list }

	ps := fresh()
	ps[3].Name = "local.w"
	err = ck.restoreWeights(dir, ps, b, "tiny")
	if want := `train: checkpoint ` + dir + ` has no parameter "local.w" (shape 8x8) of model tiny; it holds 8 others, first "lift.w"`; err == nil || err.Error() != want {
		t.Errorf("renamed: got %v\nwant %s", err, want)
	}

	ps = fresh()
	ps[0].Shape = []int{1, 8}
	err = ck.restoreWeights(dir, ps, b, "tiny")
	if want := `train: checkpoint ` + dir + `: parameter "lift.w" is 8x1 in the checkpoint, 1x8 in model tiny`; err == nil || err.Error() != want {
		t.Errorf("reshaped: got %v\nwant %s", err, want)
	}

	ps = fresh()[:7]
	err = ck.restoreWeights(dir, ps, b, "tiny")
	if want := `train: checkpoint ` + dir + `: parameter "proj.b" is not in model tiny`; err == nil || err.Error() != want {
		t.Errorf("extra: got %v\nwant %s", err, want)
	}
}

// TestInterruptedSave crashes a save at each of its stages (SaveStages):
// the run directory still resolves to the previous, intact checkpoint (to
// the new one once latest names it), and the next successful save clears
// the leftovers.
func TestInterruptedSave(t *testing.T) {
	crash := errors.New("simulated crash")
	for _, stage := range SaveStages() {
		t.Run(stage, func(t *testing.T) {
			run := t.TempDir()
			_, mm, _, st, err := savedRun(t, run, 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _, _, _, err = savedRun(t, run, 10, &saveHooks{after: func(s string) error {
				if s == stage {
					return crash
				}
				return nil
			}})
			if !errors.Is(err, crash) {
				t.Fatalf("save returned %v, want the simulated crash", err)
			}
			ck, dir, err := loadCheckpoint(run)
			if err != nil {
				t.Fatalf("previous checkpoint unreadable: %v", err)
			}
			if stage == StageBeforePrune {
				// latest already names the new, complete checkpoint.
				if dir != filepath.Join(run, StepDirName(10)) || ck.State.Step != 10 {
					t.Fatalf("after a crash at %s the run resolves to %s (step %d), want the new step 10", stage, dir, ck.State.Step)
				}
			} else if dir != filepath.Join(run, StepDirName(5)) || !reflect.DeepEqual(ck.State, st) || !testutil.SameBits(ck.M, mm) {
				t.Fatalf("after a crash at %s the run resolves to %s (step %d), want the intact step 5", stage, dir, ck.State.Step)
			}
			// What a killed process would leave besides: its temporary
			// directory and a temporary latest file.
			if err := os.MkdirAll(filepath.Join(run, ".tmp-step-00000010-killed"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(run, LatestFile+".tmp-999"), []byte("step-"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, _, _, err := savedRun(t, run, 10, nil); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(run)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") || strings.Contains(e.Name(), ".tmp") {
					t.Errorf("leftover %s after the next save", e.Name())
				}
			}
			if st, _, err := ReadState(run); err != nil || st.Step != 10 {
				t.Fatalf("after the next save: step %d, %v; want 10", st.Step, err)
			}
		})
	}
}

// TestLoadWeights loads a checkpoint's weights for evaluation and refuses
// a model of another architecture, naming both.
func TestLoadWeights(t *testing.T) {
	dir := t.TempDir()
	m, _, _, st, err := savedRun(t, dir, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := cpu.New(1)
	other := newTinyModel(b, 1, 1, 8, 99)
	got, ckDir, err := LoadWeights(dir, other, b)
	if err != nil || got.Step != st.Step || ckDir != filepath.Join(dir, "step-00000005") {
		t.Fatalf("LoadWeights: step %d, dir %s, %v", got.Step, ckDir, err)
	}
	if !testutil.SameBits(other.p.host(), m.p.host()) {
		t.Fatal("weights differ after LoadWeights")
	}
	_, _, err = LoadWeights(dir, renamed{newTinyModel(b, 1, 1, 8, 99)}, b)
	if want := "train: checkpoint " + ckDir + " holds model tiny, not tiny2"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}
