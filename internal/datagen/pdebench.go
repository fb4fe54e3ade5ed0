package datagen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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
	out := filepath.Join(dir, cfg.Task+".pdebench.json")
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return idx, "", fmt.Errorf("datagen: %w", err)
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return idx, "", fmt.Errorf("datagen: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return idx, "", fmt.Errorf("datagen: %w", err)
	}
	return idx, out, nil
}
