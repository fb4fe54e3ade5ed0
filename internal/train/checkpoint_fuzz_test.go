package train

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/config/configtest"
	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// fuzzSeedCheckpoint saves a checkpoint of a tiny model at step 7 into a
// fresh run directory, with the built-in burgers configuration, and
// returns the step directory. Its files seed the fuzz targets below.
func fuzzSeedCheckpoint(tb testing.TB) string {
	tb.Helper()
	run := tb.TempDir()
	b := cpu.New(1)
	m := newTinyModel(b, 1, 1, 8, 7)
	rng := rand.New(rand.NewPCG(7, 3))
	mm, vv := make([]float32, m.p.n), make([]float32, m.p.n)
	for i := range mm {
		mm[i], vv[i] = float32(rng.NormFloat64()), float32(rng.Float64())
	}
	cfg := configtest.Builtin(tb, "burgers", nil)
	st := State{
		Step: 7, LR: 1e-3, Schedule: Schedule{Peak: 1e-3, Warmup: 2, Steps: 100},
		Optim: AdamW{0.9, 0.999, 1e-8, 1e-4}, Loss: LossValues{Total: 1.5, MSE: 1, H1: 2, CBC: 3},
		BestVal: 0.7, BestValStep: 5, Data: DataState{Seed: 4, Drawn: 7, Batch: 4},
		Model: "tiny", Params: m.p.n, Task: cfg.Task, Config: cfg, Version: "test",
		Build: json.RawMessage(`{"model":"uhno","data":"/data/burgers.hdf5","stride":1,"val_pairs":64}`),
	}
	dir, err := saveCheckpoint(run, st, m.p.list, mm, vv, b, 3, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// readSeed returns file name of checkpoint directory dir.
func readSeed(tb testing.TB, dir, name string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// safetensorsFile builds a safetensors file from a JSON header and data,
// with the header length as given (the real length when n < 0).
func safetensorsFile(header string, n int64, data []byte) []byte {
	if n < 0 {
		n = int64(len(header))
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(n))
	return append(append(out, header...), data...)
}

// manifestFor returns a manifest.json that lists the files with their
// real sizes and checksums, so a fuzzed file passes verification and
// reaches its parser.
func manifestFor(files map[string][]byte) []byte {
	man := manifest{Format: checkpointFormat, Files: map[string]manifestFile{}}
	for name, raw := range files {
		sum := sha256.Sum256(raw)
		man.Files[name] = manifestFile{Size: int64(len(raw)), SHA256: hex.EncodeToString(sum[:])}
	}
	out, err := json.Marshal(man)
	if err != nil {
		panic(err)
	}
	return out
}

// checkOneLineError fails t unless err is a one-line error that names the
// checkpoint (its path, or the run directory).
func checkOneLineError(t *testing.T, err error, dir string) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, "train: ") || strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, dir) {
		t.Fatalf("error is not one line starting with \"train: \" and naming %s: %q", dir, msg)
	}
}

// FuzzCheckpointTensors reads a checkpoint whose weights.safetensors and
// optimizer.safetensors come from the fuzzer (listed with their true size
// and SHA-256 in the manifest, so they reach the safetensors parser), as
// `uhno train --resume` and `uhno eval` do: loadCheckpoint, then
// restoreWeights into the tiny model.
//
// Any bytes may only give a one-line error naming the checkpoint. No
// allocation may exceed what the file holds: the parser must refuse a
// header that declares more elements than the data has before anything is
// sized from it. A checkpoint that loads holds distinct F32 tensors, each
// with positive dimensions whose product is exactly its data's length,
// and two moment vectors of equal length.
func FuzzCheckpointTensors(f *testing.F) {
	seed := fuzzSeedCheckpoint(f)
	weights, opt := readSeed(f, seed, WeightsFile), readSeed(f, seed, OptimizerFile)
	f.Add(weights, opt)
	f.Add(opt, weights)
	f32 := make([]byte, 16)
	for _, w := range [][]byte{
		nil,
		[]byte("12345678"),
		safetensorsFile(`{}`, -1, nil),
		safetensorsFile(`{"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,16]}}`, -1, f32),
		safetensorsFile(`{"a":{"dtype":"F32","shape":[0,4611686018427387904,4],"data_offsets":[0,0]}}`, -1, nil),
		safetensorsFile(`{"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"a":{"dtype":"F32","shape":[4],"data_offsets":[16,32]}}`, -1, append(f32, f32...)),
		safetensorsFile(`{"a":{"dtype":"F16","shape":[8],"data_offsets":[0,16]}}`, -1, f32),
		safetensorsFile(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`, -1, f32[:4]),
		safetensorsFile(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[18446744073709551615,16]}}`, -1, f32),
		safetensorsFile(`{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, 1<<62, f32),
		safetensorsFile(`{"__metadata__":{"format":"pt"},"":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, -1, f32),
	} {
		f.Add(w, opt)
	}
	for _, o := range [][]byte{
		safetensorsFile(`{"adamw.m":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, -1, f32),
		safetensorsFile(`{"adamw.m":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"adamw.v":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"adamw.v":{"dtype":"F32","shape":[0],"data_offsets":[16,16]}}`, -1, f32),
		safetensorsFile(`{"adamw.m":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"adamw.v":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},"x":{"dtype":"F32","shape":[0],"data_offsets":[16,16]}}`, -1, f32),
		safetensorsFile(`{"adamw.m":{"dtype":"F32","shape":[2,1],"data_offsets":[0,8]},"adamw.v":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`, -1, f32),
	} {
		f.Add(weights, o)
	}
	state := readSeed(f, seed, StateFile)
	dir := f.TempDir() // rewritten by every input: faster than a new one
	b := cpu.New(1)
	m := newTinyModel(b, 1, 1, 8, 1) // restored into by every input
	f.Fuzz(func(t *testing.T, weights, opt []byte) {
		files := map[string][]byte{StateFile: state, WeightsFile: weights, OptimizerFile: opt}
		for name, raw := range files {
			if err := os.WriteFile(filepath.Join(dir, name), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), manifestFor(files), 0o644); err != nil {
			t.Fatal(err)
		}
		ck, got, err := loadCheckpoint(dir)
		if err != nil {
			checkOneLineError(t, err, dir)
			return
		}
		if got != dir {
			t.Fatalf("loaded %s, want %s", got, dir)
		}
		if len(ck.Order) != len(ck.Weights) {
			t.Fatalf("%d tensor names for %d tensors: a name is used twice", len(ck.Order), len(ck.Weights))
		}
		total := 0
		for _, name := range ck.Order {
			w := ck.Weights[name]
			n := 1
			for _, d := range w.Shape {
				if d < 1 || d > uint64(len(weights)) {
					t.Fatalf("tensor %q: dimension %d of shape %v in a file of %d bytes", name, d, w.Shape, len(weights))
				}
				n *= int(d)
				if n > len(weights) {
					t.Fatalf("tensor %q: shape %v holds more values than the file has bytes (%d)", name, w.Shape, len(weights))
				}
			}
			if 4*n != len(w.Data) || w.DType != "F32" {
				t.Fatalf("tensor %q: %s shape %v with %d bytes of data", name, w.DType, w.Shape, len(w.Data))
			}
			total += len(w.Data)
		}
		if total > len(weights) {
			t.Fatalf("tensors hold %d bytes, the file %d", total, len(weights))
		}
		if len(ck.M) != len(ck.V) || 8*len(ck.M) > len(opt) {
			t.Fatalf("moments of %d and %d values from a file of %d bytes", len(ck.M), len(ck.V), len(opt))
		}
		if err := ck.restoreWeights(got, m.p.list, b, "tiny"); err != nil {
			checkOneLineError(t, err, dir)
			return
		}
		for _, p := range m.p.list {
			if !tensor.SameShape(shapeOf(ck.Weights[p.Name].Shape), p.Shape) {
				t.Fatalf("restored %q of shape %v into %v", p.Name, ck.Weights[p.Name].Shape, p.Shape)
			}
		}
	})
}

// shapeOf converts a safetensors shape (whose dimensions the fuzz target
// has bounded) to ints.
func shapeOf(s []uint64) []int {
	out := make([]int, len(s))
	for i, d := range s {
		out[i] = int(d)
	}
	return out
}

// FuzzCheckpointState reads a run directory whose latest file,
// state.json and manifest.json come from the fuzzer, as `uhno train
// --resume` and `uhno eval` do first: ReadState (ResolveCheckpoint,
// readManifest, readVerified, decodeState). With listed set, the manifest
// is replaced by one that lists state.json with its true size and
// checksum, so the state's decoding is reached; otherwise the fuzzed
// manifest is used as it is.
//
// Any input may only give a one-line error naming the run or checkpoint
// directory. A state that reads resolves to a directory inside the run
// and is consistent: the format this uhno reads, a valid schedule, a
// step within it, at most one batch drawn per step, a parameter count, a
// best validation step not after the step, and a task that is its
// configuration's.
func FuzzCheckpointState(f *testing.F) {
	seed := fuzzSeedCheckpoint(f)
	state, man := readSeed(f, seed, StateFile), readSeed(f, seed, ManifestFile)
	latest := readSeed(f, filepath.Dir(seed), LatestFile)
	f.Add(latest, state, man, false)
	f.Add(latest, state, man, true)
	for _, s := range []string{
		`{}`,
		`{"format":"uhno-checkpoint/1"}`,
		`{"format":"uhno-checkpoint/1","step":-5,"schedule":{"Peak":0.001,"Warmup":2,"Steps":100}}`,
		`{"format":"uhno-checkpoint/1","step":500,"schedule":{"Peak":0.001,"Warmup":2,"Steps":100},"data":{"batch":4}}`,
		`{"format":"uhno-checkpoint/1","step":1,"schedule":{"Peak":1e308,"Warmup":0,"Steps":1},"data":{"batch":4,"batches_drawn":-1}}`,
		`{"format":"uhno-checkpoint/1","step":1,"lr":1e999}`,
		`{"format":"uhno-checkpoint/1","task":"burgers","config":{"task":"ks"}}`,
		`{"format":"uhno-checkpoint/1","build":[1,2,3]}`,
		`[]`,
		``,
	} {
		f.Add(latest, []byte(s), man, true)
	}
	for _, l := range []string{"", "..", "../step-00000007", "step-00000007/..", "/etc", "step-99999999", strings.Repeat("s", 300), "step-00000007\n\n"} {
		f.Add([]byte(l), state, man, true)
	}
	for _, m := range []string{
		`{}`,
		`{"format":"uhno-checkpoint/1","files":{"state.json":{"size":-1,"sha256":""}}}`,
		`{"format":"uhno-checkpoint/1","files":{"state.json":{"size":9223372036854775807,"sha256":"00"}}}`,
		`{"format":"uhno-checkpoint/1","files":null}`,
		`{"format":"uhno-checkpoint/1","files":{"state.json":null}}`,
	} {
		f.Add(latest, state, []byte(m), false)
	}
	run := f.TempDir() // rewritten by every input: faster than a new one
	step := filepath.Join(run, StepDirName(7))
	if err := os.Mkdir(step, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, latest, state, man []byte, listed bool) {
		if listed {
			man = manifestFor(map[string][]byte{StateFile: state})
		}
		for path, raw := range map[string][]byte{
			filepath.Join(run, LatestFile):    latest,
			filepath.Join(step, StateFile):    state,
			filepath.Join(step, ManifestFile): man,
		} {
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		st, dir, err := ReadState(run)
		if err != nil {
			checkOneLineError(t, err, run)
			return
		}
		if filepath.Dir(dir) != run {
			t.Fatalf("resolved %s, outside the run directory %s", dir, run)
		}
		if st.Format != checkpointFormat {
			t.Fatalf("read format %q", st.Format)
		}
		if err := st.Schedule.Validate(); err != nil {
			t.Fatalf("read a state with an invalid schedule: %v", err)
		}
		if st.Step < 0 || st.Step > st.Schedule.Steps || st.Data.Drawn < 0 || st.Data.Drawn > st.Step || st.Data.Batch < 0 || st.Params < 1 || st.BestValStep < 0 || st.BestValStep > st.Step {
			t.Fatalf("read an inconsistent state: step %d of %d, %d batches of %d drawn, %d parameters, best at step %d",
				st.Step, st.Schedule.Steps, st.Data.Drawn, st.Data.Batch, st.Params, st.BestValStep)
		}
		if st.Task != st.Config.Task {
			t.Fatalf("read task %q with a configuration of task %q", st.Task, st.Config.Task)
		}
	})
}
