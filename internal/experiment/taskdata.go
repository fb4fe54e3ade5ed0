package experiment

import (
	"fmt"
	"path/filepath"
	"slices"

	"uhno/internal/config"
	"uhno/internal/data"
	"uhno/internal/runrec"
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

// statsFrom says where openTaskData takes the normalisation statistics
// from. A run records the statistics it trained with in its build record
// (runrec.BuildRecord.Stats), so every command that opens the run (eval, a
// resume, ablate's evaluations, predict) normalises exactly as training
// did without looking anywhere else: a run trained on --data ./data and
// evaluated on another machine, or with another HOME, finds everything it
// needs in its checkpoint and the data file it names.
type statsFrom struct {
	// Recorded are the run's statistics; when set they are checked against
	// the data's fields and used as they are.
	Recorded *data.Stats
	// Sidecar is where a fresh run caches the statistics it computes (the
	// run's own data folder). Empty with Lookup set: look up, never write.
	Sidecar string
	// Lookup lists sidecars an older uhno may have cached the statistics
	// of a run without Recorded in; the first entry that matches is used,
	// and otherwise they are computed in memory and nothing is written.
	Lookup []string
}

// openTaskData opens the data file at path (read with the given spatial
// stride), checks its grid against cfg, splits it and takes the
// statistics as st says. The caller closes td.ds.
func openTaskData(cfg config.Config, path string, stride int, st statsFrom) (*taskData, error) {
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
	if td.split, err = data.NewSplit(ds.Len(), cfg.Data.TrainTrajectories, cfg.Data.TestTrajectories, data.SplitSeeded, uint64(cfg.Data.Seed)); err != nil {
		return fail(err)
	}
	if td.plan, err = ds.Plan(data.Sampling{Inputs: cfg.Data.Inputs, Outputs: cfg.Data.Outputs,
		History: cfg.Data.History, Pairs: cfg.Data.PairsPerTrajectory, Constants: cfg.Data.Constants, Coordinates: cfg.Data.Coordinates}); err != nil {
		return fail(err)
	}
	switch {
	case st.Recorded != nil:
		if err := st.Recorded.Check(td.plan); err != nil {
			return fail(err)
		}
		td.stats = *st.Recorded
		return td, nil
	case st.Sidecar != "":
		if td.stats, _, err = data.LoadOrComputeStats(td.plan, td.split.Train, st.Sidecar); err != nil {
			return fail(err)
		}
		return td, nil
	}
	for _, sc := range st.Lookup {
		s, ok, err := data.CachedStats(td.plan, td.split.Train, sc)
		if err != nil {
			return fail(err)
		}
		if ok {
			td.stats = s
			return td, nil
		}
	}
	if td.stats, err = data.ComputeStats(td.plan, td.split.Train); err != nil {
		return fail(err)
	}
	return td, nil
}

// freshSidecar is where a new run trained on the data file at path, with
// dataDir its data folder (--data, or the cache), caches the file's
// statistics: beside the file when the file is in that folder, otherwise
// (a PDEBench file indexed from elsewhere, perhaps read-only) in the
// folder, which holds the index.
func freshSidecar(path, dataDir string) string {
	dir, err1 := filepath.Abs(filepath.Dir(path))
	want, err2 := filepath.Abs(dataDir)
	if err1 == nil && err2 == nil && dir == want {
		return data.StatsPath(path)
	}
	return filepath.Join(dataDir, filepath.Base(path)+".stats.json")
}

// runStats is how a recorded run's statistics are found: those the run
// recorded; for a checkpoint of an older uhno, which did not record them,
// the sidecars freshSidecar would have written beside the data or in
// dataDir (looked up, never written), else computed in memory.
func runStats(rec runrec.BuildRecord, dataDir string) statsFrom {
	if rec.Stats != nil {
		return statsFrom{Recorded: rec.Stats}
	}
	look := []string{data.StatsPath(rec.Data)}
	if dataDir != "" {
		look = append(look, filepath.Join(dataDir, filepath.Base(rec.Data)+".stats.json"))
	}
	return statsFrom{Lookup: look}
}
