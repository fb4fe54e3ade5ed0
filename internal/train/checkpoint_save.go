package train

import (
	"crypto/sha256"
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

	"uhno/internal/atomicfile"
	"uhno/internal/tensor"
)

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
