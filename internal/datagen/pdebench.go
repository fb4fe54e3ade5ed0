package datagen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"uhno/internal/atomicfile"
	"uhno/internal/data"
)

// PDEBenchIndex records a PDEBench file that a task trains on. The file is
// not copied (the 3D CFD file is about 88 GB): the index, written to the
// data directory as "<task>.pdebench.json", points at it after its layout
// was checked.
type PDEBenchIndex struct {
	Task         string `json:"task"`
	Path         string `json:"path"`
	Trajectories int    `json:"trajectories"`
	Frames       int    `json:"frames"`
	StoredGrid   []int  `json:"stored_grid"`
	// Stride is the spatial subsampling on read that turns the stored grid
	// into pde.grid (PDEBench's own [::s] convention).
	Stride int      `json:"stride"`
	Fields []string `json:"fields"`
}

// IndexPDEBench checks a PDEBench file against the task's configuration
// (datasets, frames, the stored grid data.source_grid, and enough
// trajectories for data.train + data.test) and records it in the data
// directory, so training finds it. Only darcy and cfd3d train on PDEBench
// files. It reads the file's metadata, never its whole contents.
func IndexPDEBench(opt Options, file string) (PDEBenchIndex, string, error) {
	cfg := opt.Config
	var format data.Format
	switch cfg.Task {
	case "darcy":
		format = data.FormatDarcy
	case "cfd3d":
		format = data.FormatCFD
	default:
		return PDEBenchIndex{}, "", fmt.Errorf("datagen: --pdebench is for darcy and cfd3d; task %s generates its own data", cfg.Task)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return PDEBenchIndex{}, "", fmt.Errorf("datagen: %s: %w", file, err)
	}
	grid := cfg.Data.SourceGrid
	stride := 1
	if len(grid) > 0 {
		if grid[0]%cfg.PDE.Grid[0] != 0 {
			return PDEBenchIndex{}, "", fmt.Errorf("datagen: data.source_grid %v is not a multiple of pde.grid %v", grid, cfg.PDE.Grid)
		}
		stride = grid[0] / cfg.PDE.Grid[0]
	}
	ds, err := data.Open(abs, data.Options{Format: format, Stride: stride, Frames: cfg.Data.Snapshots, Grid: grid})
	if err != nil {
		return PDEBenchIndex{}, "", err
	}
	defer ds.Close()
	train, test := cfg.Data.TrainTrajectories, cfg.Data.TestTrajectories
	if opt.Train > 0 {
		train = opt.Train
	}
	if opt.Test > 0 {
		test = opt.Test
	}
	if ds.Len() < train+test {
		return PDEBenchIndex{}, "", fmt.Errorf("datagen: %s holds %d trajectories, the task needs %d (train %d + test %d)", abs, ds.Len(), train+test, train, test)
	}
	idx := PDEBenchIndex{Task: cfg.Task, Path: abs, Trajectories: ds.Len(), Frames: ds.Frames(),
		StoredGrid: ds.StoredGrid(), Stride: ds.Stride(), Fields: ds.Fields()}
	dir := opt.Dir
	if dir == "" {
		if dir, err = DefaultDir(); err != nil {
			return idx, "", err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return idx, "", fmt.Errorf("datagen: %w", err)
	}
	out := IndexPath(dir, cfg.Task)
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return idx, "", fmt.Errorf("datagen: %w", err)
	}
	if err := atomicfile.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		return idx, "", fmt.Errorf("datagen: %w", err)
	}
	return idx, out, nil
}

// IndexPath is where IndexPDEBench records task's PDEBench file in the
// data directory dir.
func IndexPath(dir, task string) string {
	return filepath.Join(dir, task+".pdebench.json")
}

// indexFields are the datasets of the tasks that train on a PDEBench
// file, in channel order (data.FormatDarcy, data.FormatCFD).
var indexFields = map[string][]string{
	"darcy": {"nu", "tensor"},
	"cfd3d": {"density", "pressure", "Vx", "Vy", "Vz"},
}

// indexDims are the spatial dimensions of those tasks.
var indexDims = map[string]int{"darcy": 2, "cfd3d": 3}

// ReadPDEBenchIndex reads the index IndexPDEBench wrote for task into the
// data directory dir. A missing index gives an error that wraps
// fs.ErrNotExist (the task then uses generated data, or has none). The
// file is outside input (anyone can edit the data directory), so
// everything in it is checked before use: the task; an absolute path;
// the trajectories, frames and stored grid of the task's layout; a stride
// that divides the grid; the task's fields. Errors are one line, name the
// index file and say how to rebuild it.
func ReadPDEBenchIndex(dir, task string) (PDEBenchIndex, error) {
	path := IndexPath(dir, task)
	raw, err := os.ReadFile(path)
	if err != nil {
		return PDEBenchIndex{}, fmt.Errorf("datagen: PDEBench index: %w", err)
	}
	var idx PDEBenchIndex
	if err := json.Unmarshal(raw, &idx); err != nil {
		return PDEBenchIndex{}, fmt.Errorf("datagen: %s is corrupt (%v); index the file again with uhno datagen --task %s --pdebench FILE", path, err, task)
	}
	if err := idx.check(task); err != nil {
		return PDEBenchIndex{}, fmt.Errorf("datagen: %s is corrupt: %v; index the file again with uhno datagen --task %s --pdebench FILE", path, err, task)
	}
	return idx, nil
}

// check reports the first value of idx that IndexPDEBench cannot have
// written for task.
func (idx PDEBenchIndex) check(task string) error {
	fields, ok := indexFields[task]
	switch {
	case !ok:
		return fmt.Errorf("task %s does not train on a PDEBench file (only darcy and cfd3d do)", task)
	case idx.Task != task:
		return fmt.Errorf("task is %q, want %q", idx.Task, task)
	case idx.Path == "" || !filepath.IsAbs(idx.Path) || strings.ContainsFunc(idx.Path, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return fmt.Errorf("path is %q, want an absolute file path", idx.Path)
	case idx.Trajectories < 1:
		return fmt.Errorf("trajectories is %d, want >= 1", idx.Trajectories)
	case idx.Frames < 1:
		return fmt.Errorf("frames is %d, want >= 1", idx.Frames)
	case task == "darcy" && idx.Frames != 1:
		return fmt.Errorf("frames is %d, want 1 (Darcy is static)", idx.Frames)
	case len(idx.StoredGrid) != indexDims[task]:
		return fmt.Errorf("stored_grid is %v, want %d sizes", idx.StoredGrid, indexDims[task])
	case idx.Stride < 1:
		return fmt.Errorf("stride is %d, want >= 1", idx.Stride)
	case !slices.Equal(idx.Fields, fields):
		return fmt.Errorf("fields are %q, want %q", idx.Fields, fields)
	}
	for _, g := range idx.StoredGrid {
		if g < 1 || g%idx.Stride != 0 {
			return fmt.Errorf("stored_grid %v with stride %d, want positive sizes that the stride divides", idx.StoredGrid, idx.Stride)
		}
	}
	return nil
}
