package experiment

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	cpub "uhno/internal/cpu"

	"golang.org/x/sys/cpu"

	"uhno/internal/runrec"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
	"uhno/internal/train"
)

// oldCheckpoints are step directories written by `uhno train` before
// the model registry (testdata/v1, tiny Burgers runs of 2 steps at model.k0
// 2): their build records keep the spec in "uhno", "fno", "additive" and
// "baseline" (GNO). digests.json holds the SHA-256 of each model's forward
// output on a fixed input, computed by that uhno with the checkpoint's
// weights loaded.
var oldCheckpoints = []string{"uhno", "fno", "additive", "gno"}

// forwardDigest loads the checkpoint at dir into the model its build
// record describes and hashes the model's forward output on a fixed
// input, as the old uhno did when it wrote digests.json.
func forwardDigest(t *testing.T, dir string, rec runrec.BuildRecord) string {
	t.Helper()
	st, ck, err := train.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := cpub.New(1)
	m, _, err := buildModel(st.Config, 1, 1, modelChoice{}, &rec, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := train.LoadWeights(ck, train.Adapt(m), b); err != nil {
		t.Fatal(err)
	}
	shape := append([]int{2, 1}, st.Config.PDE.Grid...)
	tp := tensor.NewTape(b)
	defer tp.Release()
	y, _ := m.Forward(tp, tp.FromHost(gradcheck.Random(7, tensor.Numel(shape)), shape...))
	h := sha256.New()
	for _, f := range tensor.ToHost(b, y) {
		var buf [4]byte
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(f))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestOldCheckpointsLoad checks that checkpoints written before the
// model registry still load: their build records are upgraded to {model,
// spec}, the registry rebuilds the same architecture (LoadWeights checks
// every parameter's name and shape), a record in the new format rebuilds
// the model with the same output bits, and on the machine type that
// wrote them the output is bit-identical to the old uhno's.
func TestOldCheckpointsLoad(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "v1", "digests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	// The digests were computed with AVX-512 kernels; other machines
	// round differently (see internal/model's TestDefaultBitIdentical).
	sameMachine := runtime.GOARCH == "amd64" && cpu.X86.HasAVX512F && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	for _, name := range oldCheckpoints {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", "v1", name)
			st, _, rec, err := readRun("eval", dir)
			if err != nil {
				t.Fatal(err)
			}
			var legacy map[string]json.RawMessage
			if err := json.Unmarshal(st.Build, &legacy); err != nil {
				t.Fatal(err)
			}
			if _, ok := legacy["spec"]; ok {
				t.Fatalf("%s: the testdata record is in the new format; it must be an old one", name)
			}
			if l := rec.LegacySpecs; rec.Spec == nil || l.UHNO != nil || l.FNO != nil || l.Additive != nil || l.Baseline != nil {
				t.Fatalf("%s: record not upgraded: %+v", name, rec.Record)
			}
			digest := forwardDigest(t, dir, rec)
			if sameMachine && digest != want[name] {
				t.Errorf("%s: forward digest %s, the old uhno's %s", name, digest, want[name])
			}

			// The upgraded record, written and read back as a new
			// checkpoint would be, holds {model, spec} only and builds
			// the same model.
			enc, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, old := range []string{`"uhno":`, `"fno":`, `"additive":`, `"baseline":`} {
				if strings.Contains(string(enc), old) {
					t.Errorf("%s: the new record still writes %s: %s", name, old, enc)
				}
			}
			again, err := readRecord("eval", dir, enc)
			if err != nil {
				t.Fatal(err)
			}
			if forwardDigest(t, dir, again) != digest {
				t.Errorf("%s: the new-format record builds a model with other outputs", name)
			}
		})
	}
}
