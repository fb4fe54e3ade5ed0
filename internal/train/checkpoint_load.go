package train

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"uhno/internal/tensor"
)

// ResolveCheckpoint returns the checkpoint directory that path names:
// path itself when it holds a manifest, or the step directory its latest
// file names when it is a run directory.
func ResolveCheckpoint(path string) (string, error) {
	if _, err := os.Stat(filepath.Join(path, ManifestFile)); err == nil {
		return path, nil
	}
	raw, err := os.ReadFile(filepath.Join(path, LatestFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(path); serr != nil {
				return "", fmt.Errorf("train: checkpoint %s: %w", path, serr)
			}
			return "", fmt.Errorf("train: %s holds no checkpoint (no %s or %s)", path, LatestFile, ManifestFile)
		}
		return "", fmt.Errorf("train: checkpoint %s: %w", path, err)
	}
	name := strings.TrimSpace(string(raw))
	if err := checkStepName(path, name); err != nil {
		return "", err
	}
	return filepath.Join(path, name), nil
}

// ReadState reads the State of the checkpoint that path names (a step
// directory or a run directory), verifying the manifest's checksum of
// state.json. The command line uses it to take a resumed run's
// configuration from its checkpoint.
func ReadState(path string) (State, string, error) {
	dir, err := ResolveCheckpoint(path)
	if err != nil {
		return State{}, "", err
	}
	man, err := readManifest(dir)
	if err != nil {
		return State{}, "", err
	}
	raw, err := readVerified(dir, StateFile, man)
	if err != nil {
		return State{}, "", err
	}
	st, err := decodeState(dir, raw)
	return st, dir, err
}

func decodeState(dir string, raw []byte) (State, error) {
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		return State{}, fmt.Errorf("train: checkpoint %s: %s: %w", dir, StateFile, err)
	}
	if st.Format != checkpointFormat {
		return State{}, fmt.Errorf("train: checkpoint %s: format %q, this uhno reads %q", dir, st.Format, checkpointFormat)
	}
	// A state written before data.seed existed trained on the data of its
	// run's seed: keep that, so it resumes and evaluates on its own data.
	var keys struct {
		Config struct {
			Data map[string]json.RawMessage `json:"data"`
		} `json:"config"`
	}
	if json.Unmarshal(raw, &keys) == nil {
		if _, ok := keys.Config.Data["seed"]; !ok {
			st.Config.Data.Seed = st.Config.Seed
		}
	}
	if err := checkState(dir, st); err != nil {
		return State{}, err
	}
	return st, nil
}

func readManifest(dir string) (manifest, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return manifest{}, fmt.Errorf("train: checkpoint %s is incomplete: no %s (an interrupted save?)", dir, ManifestFile)
		}
		return manifest{}, fmt.Errorf("train: checkpoint %s: %w", dir, err)
	}
	var man manifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return manifest{}, fmt.Errorf("train: checkpoint %s: %s is corrupt: %w", dir, ManifestFile, err)
	}
	if man.Format != checkpointFormat {
		return manifest{}, fmt.Errorf("train: checkpoint %s: format %q, this uhno reads %q", dir, man.Format, checkpointFormat)
	}
	if err := checkManifest(dir, man); err != nil {
		return manifest{}, err
	}
	return man, nil
}

// readVerified reads one file of a checkpoint and checks its size and
// SHA-256 against the manifest.
func readVerified(dir, name string, man manifest) ([]byte, error) {
	want, ok := man.Files[name]
	if !ok {
		return nil, fmt.Errorf("train: checkpoint %s: %s does not list %s", dir, ManifestFile, name)
	}
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("train: checkpoint %s: %s is missing", dir, name)
		}
		return nil, fmt.Errorf("train: checkpoint %s: %w", dir, err)
	}
	if int64(len(raw)) != want.Size {
		return nil, fmt.Errorf("train: checkpoint %s: %s has %d bytes, the manifest says %d (truncated or replaced)", dir, name, len(raw), want.Size)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != want.SHA256 {
		return nil, fmt.Errorf("train: checkpoint %s: %s is corrupt (SHA-256 differs from the manifest)", dir, name)
	}
	return raw, nil
}

// loadCheckpoint reads and verifies every file of the checkpoint that path
// names.
func loadCheckpoint(path string) (*checkpoint, string, error) {
	dir, err := ResolveCheckpoint(path)
	if err != nil {
		return nil, "", err
	}
	man, err := readManifest(dir)
	if err != nil {
		return nil, "", err
	}
	raw := map[string][]byte{}
	for _, name := range []string{StateFile, WeightsFile, OptimizerFile} {
		if raw[name], err = readVerified(dir, name, man); err != nil {
			return nil, "", err
		}
	}
	ck := &checkpoint{}
	if ck.State, err = decodeState(dir, raw[StateFile]); err != nil {
		return nil, "", err
	}
	if ck.Weights, ck.Order, err = decodeWeights(dir, raw[WeightsFile]); err != nil {
		return nil, "", err
	}
	if ck.M, ck.V, err = decodeMoments(dir, raw[OptimizerFile]); err != nil {
		return nil, "", err
	}
	return ck, dir, nil
}

// restoreWeights checks that the checkpoint's weights match the model's
// parameters by name and shape and uploads them. Errors name both sides.
func (ck *checkpoint) restoreWeights(dir string, params []*tensor.Tensor, b tensor.Backend, model string) error {
	have := map[string]bool{}
	for _, p := range params {
		have[p.Name] = true
		t, ok := ck.Weights[p.Name]
		if !ok {
			return fmt.Errorf("train: checkpoint %s has no parameter %q (shape %s) of model %s; it holds %d others, first %q",
				dir, p.Name, tensor.ShapeString(p.Shape), model, len(ck.Order), firstOr(ck.Order))
		}
		shape := make([]int, len(t.Shape))
		for i, s := range t.Shape {
			shape[i] = int(s)
		}
		if !tensor.SameShape(shape, p.Shape) {
			return fmt.Errorf("train: checkpoint %s: parameter %q is %s in the checkpoint, %s in model %s",
				dir, p.Name, tensor.ShapeString(shape), tensor.ShapeString(p.Shape), model)
		}
	}
	for _, name := range ck.Order {
		if !have[name] {
			return fmt.Errorf("train: checkpoint %s: parameter %q is not in model %s", dir, name, model)
		}
	}
	for _, p := range params {
		b.Upload(p.Data, float32s(ck.Weights[p.Name]))
	}
	return nil
}

func firstOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// LoadWeights reads the checkpoint that path names (a step directory or a
// run directory), verifies every file against its manifest, checks that
// its weights are those of model m (the architecture's name, and every
// parameter's name and shape) and uploads them into m's parameters. It
// returns the checkpoint's State and directory. Evaluation uses it; the
// optimizer moments are read and verified but not kept.
func LoadWeights(path string, m Model, b tensor.Backend) (State, string, error) {
	ck, dir, err := loadCheckpoint(path)
	if err != nil {
		return State{}, "", err
	}
	if ck.State.Model != m.Name() {
		return State{}, "", fmt.Errorf("train: checkpoint %s holds model %s, not %s", dir, ck.State.Model, m.Name())
	}
	if err := ck.restoreWeights(dir, m.Params().List(), b, m.Name()); err != nil {
		return State{}, "", err
	}
	return ck.State, dir, nil
}
