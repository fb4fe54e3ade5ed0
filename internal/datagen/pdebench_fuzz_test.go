package datagen

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
)

// FuzzPDEBenchIndex reads a "<task>.pdebench.json" index whose bytes come
// from the fuzzer, for darcy, cfd3d or a task that has no index, as
// `uhno train` does before it opens the indexed file.
//
// Any bytes may only give a one-line error naming the index file. An
// index that reads belongs to the task, points at an absolute path, and
// describes the task's layout: at least one trajectory and frame, the
// task's number of spatial axes, positive sizes that the stride divides,
// and the task's fields.
func FuzzPDEBenchIndex(f *testing.F) {
	// A real index, written by IndexPDEBench for a PDEBench-layout file.
	dir := f.TempDir()
	file := filepath.Join(dir, "2D_DarcyFlow_beta1.0_Train.hdf5")
	if err := h5test.Darcy(file, 3, 128, 128, 1.0); err != nil {
		f.Fatal(err)
	}
	_, path, err := IndexPDEBench(Options{Config: builtin(f, "darcy", nil), Dir: dir, Train: 2, Test: 1}, file)
	if err != nil {
		f.Fatal(err)
	}
	real, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(0), real)
	f.Add(uint8(1), real)
	f.Add(uint8(2), real)
	for _, s := range []string{
		`{"task":"cfd3d","path":"/data/3D_CFD.hdf5","trajectories":100,"frames":21,"stored_grid":[128,128,128],"stride":2,"fields":["density","pressure","Vx","Vy","Vz"]}`,
		`{"task":"darcy","path":"relative.hdf5","trajectories":1,"frames":1,"stored_grid":[8,8],"stride":1,"fields":["nu","tensor"]}`,
		`{"task":"darcy","path":"/x\n.hdf5","trajectories":1,"frames":1,"stored_grid":[8,8],"stride":1,"fields":["nu","tensor"]}`,
		`{"task":"darcy","path":"/x.hdf5","trajectories":1,"frames":1,"stored_grid":[8,8],"stride":0,"fields":["nu","tensor"]}`,
		`{"task":"darcy","path":"/x.hdf5","trajectories":1,"frames":1,"stored_grid":[8,8],"stride":3,"fields":["nu","tensor"]}`,
		`{"task":"darcy","path":"/x.hdf5","trajectories":-1,"frames":1,"stored_grid":[0,0],"stride":1,"fields":[]}`,
		`{"task":"darcy","path":"/x.hdf5","trajectories":1e300}`,
		`{"task":"darcy","path":"/x.hdf5","trajectories":1,"frames":1,"stored_grid":[9223372036854775807,8],"stride":-9223372036854775808,"fields":["nu","tensor"]}`,
		`{"Task":"darcy","PATH":"/x.hdf5"}`,
		`{}`, `null`, `[]`, ``, `{"task":"darcy"} trailing`,
	} {
		f.Add(uint8(0), []byte(s))
		f.Add(uint8(1), []byte(s))
	}
	tasks := []string{"darcy", "cfd3d", "burgers"}
	work := f.TempDir()
	f.Fuzz(func(t *testing.T, pick uint8, body []byte) {
		task := tasks[int(pick)%len(tasks)]
		path := IndexPath(work, task)
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		idx, err := ReadPDEBenchIndex(work, task)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "datagen: ") || !strings.Contains(msg, path) || strings.ContainsAny(msg, "\n\r") || errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("error is not one line starting with \"datagen: \" and naming %s: %q", path, msg)
			}
			return
		}
		if idx.Task != task || !filepath.IsAbs(idx.Path) || strings.ContainsAny(idx.Path, "\x00\n\r") {
			t.Fatalf("read an index of task %q for %s with path %q", idx.Task, task, idx.Path)
		}
		if idx.Trajectories < 1 || idx.Frames < 1 || idx.Stride < 1 || len(idx.StoredGrid) != indexDims[task] {
			t.Fatalf("read an inconsistent index: %+v", idx)
		}
		for _, g := range idx.StoredGrid {
			if g < 1 || g%idx.Stride != 0 {
				t.Fatalf("read grid %v with stride %d", idx.StoredGrid, idx.Stride)
			}
		}
		if !slices.Equal(idx.Fields, indexFields[task]) {
			t.Fatalf("read fields %q for task %s", idx.Fields, task)
		}
	})
}

// TestReadPDEBenchIndexMissing checks that a missing index is reported as
// such, so training falls back to generated data.
func TestReadPDEBenchIndexMissing(t *testing.T) {
	_, err := ReadPDEBenchIndex(t.TempDir(), "darcy")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want an error wrapping fs.ErrNotExist", err)
	}
}
