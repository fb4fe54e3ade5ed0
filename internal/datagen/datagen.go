// Package datagen turns a task's configuration into a dataset file: it
// builds the task's solver (internal/data/pde), runs it over the
// trajectories in parallel, and streams them into an HDF5 file in the
// PDEBench layout (internal/data/h5), atomically and resumably. It is what
// `uhno datagen` and the first run of `uhno train` call.
//
// Files live in a cache directory (DefaultDir, overridden by Options.Dir)
// under a name that carries the task, the seed, the trajectory count and a
// fingerprint of every solver setting, so a run with the same settings
// finds and reuses the file and a run with other settings never mistakes it
// for its own.
package datagen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"uhno/internal/config"
	"uhno/internal/data/h5"
	"uhno/internal/data/pde"
	"uhno/internal/progress"
)

// Options says what to generate and where.
type Options struct {
	// Config is the validated task configuration (pde.* and data.*).
	Config config.Config
	// Dir is the output directory; empty means DefaultDir().
	Dir string
	// Train and Test override the trajectory counts of data.* when > 0.
	Train, Test int
	// Workers is the number of trajectories solved at once (0: all cores).
	Workers int
	// Progress receives a progress bar (nil: none).
	Progress io.Writer
}

// Result describes the file a run produced or found.
type Result struct {
	Path         string
	Trajectories int
	// Generated is the number of trajectories solved by this run (0 when
	// the file was already complete; fewer than Trajectories when an
	// interrupted run was resumed).
	Generated int
	Elapsed   time.Duration
}

// DefaultDir is where datasets are cached when no directory is given:
// $UHNO_DATA if set, otherwise <user cache dir>/uhno/data (for example
// ~/.cache/uhno/data on Linux).
func DefaultDir() (string, error) {
	if d := os.Getenv("UHNO_DATA"); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("datagen: no cache directory (set UHNO_DATA or pass --out): %w", err)
	}
	return filepath.Join(c, "uhno", "data"), nil
}

// Plan returns the generator, the file spec and the path for a run,
// without solving anything.
func Plan(opt Options) (pde.Generator, h5.Spec, string, int, error) {
	cfg := opt.Config
	gen, err := Generator(cfg)
	if err != nil {
		return nil, h5.Spec{}, "", 0, err
	}
	train, test := cfg.Data.TrainTrajectories, cfg.Data.TestTrajectories
	if opt.Train > 0 {
		train = opt.Train
	}
	if opt.Test > 0 {
		test = opt.Test
	}
	n := train + test
	seed := uint64(cfg.Data.Seed)
	spec := h5.SpecOf(gen, seed)
	dir := opt.Dir
	if dir == "" {
		if dir, err = DefaultDir(); err != nil {
			return nil, h5.Spec{}, "", 0, err
		}
	}
	name := fmt.Sprintf("%s_seed%d_n%d_%s.h5", cfg.Task, seed, n, spec.Fingerprint(n)[:10])
	return gen, spec, filepath.Join(dir, name), n, nil
}

// waitPoll is how often create looks again at a file another writer
// holds.
const waitPoll = 250 * time.Millisecond

// create starts (or resumes) writing path. While another writer holds it
// (another uhno making the same data: a second training started at the
// same time, a --parallel grid, the job array of uhno reproduce --slurm
// on a shared file system) it waits, saying so once on note (nil: quiet),
// and returns a nil writer if the other writer completes the file
// meanwhile; if the other stops short, this one resumes its work.
func create(ctx context.Context, path string, spec h5.Spec, n int, note io.Writer) (*h5.Writer, error) {
	said := false
	for {
		w, err := h5.Create(path, spec, n)
		if err == nil {
			return w, nil
		}
		if !errors.Is(err, h5.ErrBusy) {
			return nil, fmt.Errorf("datagen: %w", err)
		}
		if !said && note != nil {
			fmt.Fprintf(note, "datagen: waiting: %v\n", err)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("datagen: %w while waiting for the other writer of %s", ctx.Err(), path)
		case <-time.After(waitPoll):
		}
		if ok, _ := h5.Existing(path, spec, n); ok {
			return nil, nil
		}
	}
}

// Run generates (or finds) the dataset of opt.Config and returns its path.
// Cancelling ctx stops the work; the partial temporary file is kept for the
// next run to resume, and nothing is ever left at the final path unless it
// is complete.
func Run(ctx context.Context, opt Options) (Result, error) {
	start := time.Now()
	gen, spec, path, n, err := Plan(opt)
	if err != nil {
		return Result{}, err
	}
	res := Result{Path: path, Trajectories: n}
	if ok, _ := h5.Existing(path, spec, n); ok {
		res.Elapsed = time.Since(start)
		return res, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return res, fmt.Errorf("datagen: %w", err)
	}
	w, err := create(ctx, path, spec, n, opt.Progress)
	if err != nil {
		return res, err
	}
	if w == nil { // another writer completed it meanwhile
		res.Elapsed = time.Since(start)
		return res, nil
	}
	defer w.Close()
	todo := w.Remaining()
	var bar *progress.Bar
	if opt.Progress != nil {
		bar = progress.New(opt.Progress, n, progress.Options{Description: "datagen " + opt.Config.Task, Unit: "traj"})
		bar.Set(n - len(todo))
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	err = generateAll(ctx, gen, uint64(opt.Config.Data.Seed), todo, workers, w, func(int) {
		res.Generated++
		if bar != nil {
			bar.Add(1)
		}
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return res, fmt.Errorf("datagen: interrupted after %d of %d trajectories; run again to resume", n-len(todo)+res.Generated, n)
		}
		return res, fmt.Errorf("datagen %s: %w", opt.Config.Task, err)
	}
	if err := w.Commit(); err != nil {
		return res, fmt.Errorf("datagen: %w", err)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}
