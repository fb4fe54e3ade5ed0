package main

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"

	"uhno/internal/config"
	"uhno/internal/data"
	"uhno/internal/tensor"
)

// taskData is a task's data file opened as training sees it: the dataset,
// the seeded trajectory split, the sampling plan and the training-set
// normalisation statistics. `uhno train` and `uhno eval` both open data
// through openTaskData, so evaluation sees exactly the test trajectories
// and the normalisation of the run that trained the model.
type taskData struct {
	ds    *data.Dataset
	split data.Split
	plan  *data.Plan
	stats data.Stats
}

// openTaskData opens the data file at path (read with the given spatial
// stride), checks its grid against cfg, splits it and loads (or computes
// and caches) the statistics. dataDir is the data cache: the statistics of
// a file outside it (a PDEBench download) are kept there. The caller
// closes td.ds.
func openTaskData(cfg config.Config, path string, stride int, dataDir string) (*taskData, error) {
	ds, err := data.Open(path, data.Options{Stride: stride, Frames: cfg.Data.Snapshots})
	if err != nil {
		return nil, err
	}
	td := &taskData{ds: ds}
	fail := func(err error) (*taskData, error) {
		ds.Close()
		return nil, err
	}
	if !slices.Equal(ds.Grid(), cfg.PDE.Grid) {
		return fail(fmt.Errorf("%s has grid %v after stride %d, the configuration's pde.grid is %v", path, ds.Grid(), stride, cfg.PDE.Grid))
	}
	if td.split, err = data.NewSplit(ds.Len(), cfg.Data.TrainTrajectories, cfg.Data.TestTrajectories, data.SplitSeeded, uint64(cfg.Seed)); err != nil {
		return fail(err)
	}
	if td.plan, err = ds.Plan(data.Sampling{Inputs: cfg.Data.Inputs, Outputs: cfg.Data.Outputs,
		History: cfg.Data.History, Pairs: cfg.Data.PairsPerTrajectory}); err != nil {
		return fail(err)
	}
	sidecar := data.StatsPath(path)
	if filepath.Dir(path) != dataDir { // a PDEBench file elsewhere: keep its statistics in the cache
		sidecar = filepath.Join(dataDir, filepath.Base(path)+".stats.json")
	}
	if td.stats, _, err = data.LoadOrComputeStats(td.plan, td.split.Train, sidecar); err != nil {
		return fail(err)
	}
	return td, nil
}

// openBackend opens the backend train and eval compute on (newBackend:
// the CPU with `threads` workers, all cores when threads <= 0, or the GPU
// in the cuda build). The returned function closes it, printing a failure
// to close as a warning on errOut: the command's work is done by then.
// Call both from the same goroutine.
func openBackend(threads int, errOut io.Writer) (tensor.Backend, func(), error) {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	b, closeB, err := newBackend(threads)
	if err != nil {
		return nil, nil, err
	}
	return b, func() {
		if err := closeB(); err != nil {
			fmt.Fprintf(errOut, "warning: %v\n", err)
		}
	}, nil
}
