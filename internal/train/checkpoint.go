package train

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/maruel/safetensors"

	"uhno/internal/atomicfile"
	"uhno/internal/config"
	"uhno/internal/tensor"
)

// Checkpoint layout. A run directory holds one sub-directory per saved
// step and a pointer to the newest:
//
//	<run>/latest                      "step-00001000\n"
//	<run>/step-00001000/weights.safetensors
//	<run>/step-00001000/optimizer.safetensors
//	<run>/step-00001000/state.json
//	<run>/step-00001000/manifest.json  (written last)
//	<run>/log.jsonl                    the training log
const (
	// WeightsFile holds the parameters as float32 tensors named by the
	// parameter names (Model.Params().List()), in safetensors format: torch
	// users read it with safetensors.torch.load_file.
	WeightsFile = "weights.safetensors"
	// OptimizerFile holds AdamW's first and second moments as two flat
	// float32 tensors "adamw.m" and "adamw.v" in the order of the flat
	// parameter buffer.
	OptimizerFile = "optimizer.safetensors"
	// StateFile is the JSON State: step, schedule, data order, best
	// validation loss, the resolved configuration, model and version.
	StateFile = "state.json"
	// ManifestFile lists the size and SHA-256 of each other file; it is
	// written last, so a directory without it is incomplete.
	ManifestFile = "manifest.json"
	// LatestFile in a run directory names the newest checkpoint.
	LatestFile = "latest"

	// checkpointFormat versions State and the directory layout.
	checkpointFormat = "uhno-checkpoint/1"
	momentM          = "adamw.m"
	momentV          = "adamw.v"
)

// State is the JSON part of a checkpoint: everything besides the tensors
// that resuming needs, and what a reader needs to know what it holds.
type State struct {
	Format string `json:"format"`
	// Step is the number of optimizer updates done (the next is Step+1).
	Step int `json:"step"`
	// LR is the learning rate of update Step.
	LR       float64  `json:"lr"`
	Schedule Schedule `json:"schedule"`
	Optim    AdamW    `json:"optim"`
	// Loss holds the terms of update Step.
	Loss LossValues `json:"loss"`
	// BestVal is the lowest validation loss so far, at step BestValStep
	// (0 when none was measured).
	BestVal     float64 `json:"best_val,omitempty"`
	BestValStep int     `json:"best_val_step,omitempty"`
	// Data is the position in the training batch stream.
	Data DataState `json:"data"`
	// Model is the architecture's name and Params its parameter count.
	Model  string `json:"model"`
	Params int    `json:"params"`
	// Task and Config are the resolved configuration of the run.
	Task    string        `json:"task"`
	Config  config.Config `json:"config"`
	Version string        `json:"uhno_version"`
	// Build is what the command line recorded to rebuild the model and the
	// data pipeline on resume (Config.Build), opaque to this package.
	Build json.RawMessage `json:"build,omitempty"`
}

// DataState is the data-order state. The batch stream is a pure function
// of its seed and the number of batches drawn (data.Batcher guarantees
// this), so Drawn restores it exactly.
type DataState struct {
	Seed  uint64 `json:"seed"`
	Drawn int    `json:"batches_drawn"`
	Batch int    `json:"batch"`
}

// manifest is ManifestFile.
type manifest struct {
	Format string                  `json:"format"`
	Files  map[string]manifestFile `json:"files"`
}

type manifestFile struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// checkpoint is the in-memory content of one checkpoint.
type checkpoint struct {
	State   State
	Weights map[string]safetensors.Tensor
	Order   []string // weight names in file order
	M, V    []float32
}

// StepDirName is the name of the checkpoint directory of a step.
func StepDirName(step int) string { return fmt.Sprintf("step-%08d", step) }

// The stages of a checkpoint save, in the order a save passes them. A
// save calls its hook (Config.SaveFault; uhno train's
// UHNO_TEST_CRASH_IN_CHECKPOINT) at each, so tests can fail or kill it
// there. A process killed at any stage leaves latest naming a complete
// checkpoint: the previous one up to StageBeforeLatest, the new one at
// StageBeforePrune.
const (
	// StageMidWeights: half of weights.safetensors is in the temporary
	// directory.
	StageMidWeights = "mid-weights"
	// StageAfterWeights, StageAfterOptimizer, StageAfterState: that file
	// is written and fsynced in the temporary directory.
	StageAfterWeights   = "after-weights"
	StageAfterOptimizer = "after-optimizer"
	StageAfterState     = "after-state"
	// StageBeforeRename: the manifest is written and the temporary
	// directory fsynced, complete but not yet step-N.
	StageBeforeRename = "before-rename"
	// StageBeforeLatest: step-N is in place; latest still names the
	// previous checkpoint.
	StageBeforeLatest = "before-latest"
	// StageBeforePrune: latest names step-N; checkpoints beyond keep are
	// not yet deleted.
	StageBeforePrune = "before-prune"
)

// SaveStages returns the stages of a save in order.
func SaveStages() []string {
	return []string{StageMidWeights, StageAfterWeights, StageAfterOptimizer, StageAfterState, StageBeforeRename, StageBeforeLatest, StageBeforePrune}
}

// saveFS is the file system as a checkpoint save writes to it: the seam
// where tests put a full disk (ENOSPC at the Nth write or at fsync), an
// unwritable directory (EACCES) or a failing rename, which chmod cannot
// simulate for root and no test can get from a real device. osFS is the
// real one.
// Files are created and renamed through atomicfile.FS, so the latest
// pointer is written by atomicfile's one policy through the same seam.
type saveFS interface {
	atomicfile.FS
	MkdirAll(path string, perm fs.FileMode) error
	MkdirTemp(dir, pattern string) (string, error)
	// Exchange swaps two existing paths atomically, or returns
	// errors.ErrUnsupported where the system cannot.
	Exchange(a, b string) error
}

// saveFile is a file being written by a save.
type saveFile = atomicfile.Writer

type osFS struct{}

func (osFS) MkdirAll(path string, perm fs.FileMode) error  { return os.MkdirAll(path, perm) }
func (osFS) MkdirTemp(dir, pattern string) (string, error) { return os.MkdirTemp(dir, pattern) }
func (osFS) Rename(oldpath, newpath string) error          { return os.Rename(oldpath, newpath) }
func (osFS) Exchange(a, b string) error                    { return renameExchange(a, b) }
func (osFS) Create(path string, perm fs.FileMode) (saveFile, error) {
	return atomicfile.OS.Create(path, perm)
}

// saveHooks are a save's test seams; nil (or nil fields) in normal use.
type saveHooks struct {
	// after is called at each stage (SaveStages); an error ends the save
	// there, as a crash or an I/O error would.
	after func(stage string) error
	// fs replaces the file system.
	fs saveFS
}

func (h *saveHooks) at(stage string) error {
	if h == nil || h.after == nil || stage == "" {
		return nil
	}
	return h.after(stage)
}

func (h *saveHooks) fsys() saveFS {
	if h == nil || h.fs == nil {
		return osFS{}
	}
	return h.fs
}

// saveCheckpoint writes a checkpoint of step st.Step into run directory
// dir atomically and returns its path:
//
//  1. every file goes into a fresh temporary directory <dir>/.tmp-<step>-*,
//     each written and fsynced, the manifest last, then the directory is
//     fsynced;
//  2. the temporary directory is renamed to <dir>/step-<step> (a rename
//     is atomic; replaceDir swaps it with an older directory of the same
//     step);
//  3. <dir>/latest is replaced atomically (temporary file, fsync, rename)
//     and dir is fsynced.
//
// A crash at any point leaves latest naming the previous, complete
// checkpoint; leftovers of a crashed save are removed by the next save.
// Older step directories beyond keep (>= 1) are deleted afterwards.
//
// A failed write (a full disk, an unwritable directory) returns a
// one-line error naming the checkpoint, the operation and path that
// failed, and the checkpoint latest still names; the temporary directory
// is removed. Weights or moments that are not finite are refused before
// anything is written: a diverged run never replaces a good checkpoint.
func saveCheckpoint(dir string, st State, params []*tensor.Tensor, m, v []float32, b tensor.Backend, keep int, hooks *saveHooks) (string, error) {
	final := filepath.Join(dir, StepDirName(st.Step))
	names, vals, shapes, err := hostWeights(params, b)
	if err != nil {
		return "", err
	}
	if err := checkFinite(st.Step, names, vals, m, v); err != nil {
		return "", fmt.Errorf("%w; no checkpoint written, %s", err, latestNote(dir))
	}
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("train: checkpoint %s not written: %w; %s", final, err, latestNote(dir))
	}
	fsys := hooks.fsys()
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	removeLeftovers(dir)
	tmp, err := fsys.MkdirTemp(dir, ".tmp-"+StepDirName(st.Step)+"-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)                      // a no-op once renamed
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it private
		return fail(err)
	}

	man := manifest{Format: checkpointFormat, Files: map[string]manifestFile{}}
	write := func(name string, data []byte, mid, after string) error {
		if err := writeFileFS(fsys, filepath.Join(tmp, name), data, func() error { return hooks.at(mid) }); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		man.Files[name] = manifestFile{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
		return hooks.at(after)
	}

	weights, err := encodeShaped(names, vals, shapes, map[string]string{"format": "pt", "uhno": "weights", "model": st.Model})
	if err != nil {
		return "", err
	}
	if err := write(WeightsFile, weights, StageMidWeights, StageAfterWeights); err != nil {
		return fail(err)
	}
	opt, err := encodeTensors([]string{momentM, momentV}, [][]float32{m, v}, map[string]string{"format": "pt", "uhno": "adamw-moments"})
	if err != nil {
		return "", err
	}
	if err := write(OptimizerFile, opt, "", StageAfterOptimizer); err != nil {
		return fail(err)
	}
	st.Format = checkpointFormat
	stJSON, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return "", fmt.Errorf("train: checkpoint %s: state: %w", final, err)
	}
	if err := write(StateFile, append(stJSON, '\n'), "", StageAfterState); err != nil {
		return fail(err)
	}
	manJSON, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return "", fmt.Errorf("train: checkpoint %s: manifest: %w", final, err)
	}
	if err := writeFileFS(fsys, filepath.Join(tmp, ManifestFile), append(manJSON, '\n'), nil); err != nil {
		return fail(err)
	}
	if err := atomicfile.SyncDir(tmp); err != nil {
		return fail(err)
	}
	if err := hooks.at(StageBeforeRename); err != nil {
		return fail(err)
	}
	if err := replaceDir(fsys, tmp, final); err != nil {
		return fail(err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return fail(err)
	}
	if err := hooks.at(StageBeforeLatest); err != nil {
		return fail(err)
	}
	if err := atomicfile.WriteFileFS(fsys, filepath.Join(dir, LatestFile), []byte(StepDirName(st.Step)+"\n"), 0o644); err != nil {
		return fail(err)
	}
	if err := hooks.at(StageBeforePrune); err != nil {
		return "", fmt.Errorf("train: checkpoint %s written, then: %w", final, err)
	}
	pruneCheckpoints(dir, keep, st.Step)
	return final, nil
}

// latestNote says which checkpoint the run directory's latest names, for
// the errors of a save that did not replace it.
func latestNote(dir string) string {
	prev, err := ResolveCheckpoint(dir)
	if err != nil {
		return "there is no earlier checkpoint in " + dir
	}
	return fmt.Sprintf("%s still names %s", filepath.Join(dir, LatestFile), prev)
}

// checkFinite returns an error naming the first parameter or moment of
// step's state that is NaN or infinite.
func checkFinite(step int, names []string, vals [][]float32, m, v []float32) error {
	bad := func(x float32) bool { return math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) }
	for i, p := range vals {
		for j, x := range p {
			if bad(x) {
				return fmt.Errorf("train: step %d: parameter %q holds %g (element %d): the weights diverged", step, names[i], x, j)
			}
		}
	}
	for k, mv := range [][]float32{m, v} {
		for j, x := range mv {
			if bad(x) {
				return fmt.Errorf("train: step %d: AdamW moment %s holds %g (element %d): the optimizer diverged", step, []string{momentM, momentV}[k], x, j)
			}
		}
	}
	return nil
}

// replaceDir moves the complete temporary directory tmp to final. When
// final exists (the same step saved twice: a run resumed from an older
// checkpoint of its directory passes steps it had saved before), the two
// are swapped with one atomic rename (RENAME_EXCHANGE on Linux) and the
// old copy goes with tmp, so final never stops existing while latest may
// name it. Where the swap is unsupported the old copy is moved aside to
// .old-step-N first and moved back if the rename fails; a crash between
// the two renames leaves it there, and the next save moves it back.
func replaceDir(fsys saveFS, tmp, final string) error {
	if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
		return fsys.Rename(tmp, final)
	}
	if err := fsys.Exchange(tmp, final); err == nil {
		return nil // tmp now holds the old copy; the caller removes it
	}
	old := filepath.Join(filepath.Dir(final), ".old-"+filepath.Base(final))
	os.RemoveAll(old)
	if err := fsys.Rename(final, old); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, final); err != nil {
		os.Rename(old, final)
		return err
	}
	os.RemoveAll(old)
	return nil
}

// removeLeftovers deletes temporary directories and files of crashed
// saves, and moves an older copy left aside by replaceDir back when its
// step directory is missing.
func removeLeftovers(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		if step, ok := strings.CutPrefix(name, ".old-"); ok && strings.HasPrefix(step, "step-") {
			if _, err := os.Lstat(filepath.Join(dir, step)); errors.Is(err, fs.ErrNotExist) {
				os.Rename(filepath.Join(dir, name), filepath.Join(dir, step))
				continue
			}
		}
		// latest's temporary file: atomicfile.TempPath's, and the
		// "latest.tmp-<pid>" of earlier versions.
		if strings.HasPrefix(name, ".tmp-step-") || strings.HasPrefix(name, ".old-step-") ||
			strings.HasPrefix(name, "."+LatestFile+".tmp-") || strings.HasPrefix(name, LatestFile+".tmp-") {
			os.RemoveAll(filepath.Join(dir, name))
		}
	}
}

// pruneCheckpoints keeps the newest keep step directories (by step number)
// and always the one just written.
func pruneCheckpoints(dir string, keep, current int) {
	steps := checkpointSteps(dir)
	slices.Sort(steps)
	if keep < 1 {
		keep = 1
	}
	for i := 0; i < len(steps)-keep; i++ {
		if steps[i] != current {
			os.RemoveAll(filepath.Join(dir, StepDirName(steps[i])))
		}
	}
}

// checkpointSteps lists the steps of the step directories in dir.
func checkpointSteps(dir string) []int {
	entries, _ := os.ReadDir(dir)
	var steps []int
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), "step-"); ok && e.IsDir() {
			if n, err := strconv.Atoi(rest); err == nil {
				steps = append(steps, n)
			}
		}
	}
	return steps
}

// writeFileFS creates path with data and fsyncs it. It writes data in two
// halves and calls mid (when not nil) between them, so a test can stop a
// save with a file half written.
func writeFileFS(fsys saveFS, path string, data []byte, mid func() error) error {
	f, err := fsys.Create(path, 0o644)
	if err != nil {
		return err
	}
	half := len(data) / 2
	for i, part := range [][]byte{data[:half], data[half:]} {
		if i == 1 && mid != nil {
			if err := mid(); err != nil {
				f.Close()
				return err
			}
		}
		if n, err := f.Write(part); err != nil || n != len(part) {
			f.Close()
			if err == nil {
				err = &fs.PathError{Op: "write", Path: path, Err: io.ErrShortWrite}
			}
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hostWeights returns the parameters' names, host values and shapes.
func hostWeights(params []*tensor.Tensor, b tensor.Backend) (names []string, vals [][]float32, shapes [][]int, err error) {
	names = make([]string, len(params))
	vals = make([][]float32, len(params))
	shapes = make([][]int, len(params))
	for i, p := range params {
		if p.Name == "" {
			return nil, nil, nil, fmt.Errorf("train: checkpoint: parameter %d (shape %v) has no name", i, p.Shape)
		}
		names[i], vals[i], shapes[i] = p.Name, tensor.ToHost(b, p), p.Shape
	}
	return names, vals, shapes, nil
}

// encodeTensors serialises flat float32 vectors.
func encodeTensors(names []string, vals [][]float32, meta map[string]string) ([]byte, error) {
	shapes := make([][]int, len(vals))
	for i, v := range vals {
		shapes[i] = []int{len(v)}
	}
	return encodeShaped(names, vals, shapes, meta)
}

func encodeShaped(names []string, vals [][]float32, shapes [][]int, meta map[string]string) ([]byte, error) {
	f := safetensors.File{Metadata: meta, Tensors: make([]safetensors.Tensor, len(names))}
	seen := map[string]bool{}
	for i, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("train: checkpoint: two parameters named %q", name)
		}
		seen[name] = true
		shape := make([]uint64, len(shapes[i]))
		for j, s := range shapes[i] {
			shape[j] = uint64(s)
		}
		raw := make([]byte, 4*len(vals[i]))
		for j, x := range vals[i] {
			binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(x))
		}
		f.Tensors[i] = safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape, Data: raw}
	}
	var buf bytesWriter
	if err := f.Serialize(&buf); err != nil {
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	}
	return buf, nil
}

// bytesWriter is an io.Writer appending to a byte slice.
type bytesWriter []byte

func (w *bytesWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}

// float32s decodes a little-endian F32 safetensors tensor.
func float32s(t safetensors.Tensor) []float32 {
	out := make([]float32, len(t.Data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return out
}

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
