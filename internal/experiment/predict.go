package experiment

import (
	"context"
	"fmt"
	"slices"

	"uhno/internal/data"
	"uhno/internal/flagcheck"
	"uhno/internal/predict"
	"uhno/internal/progress"
	"uhno/internal/train"
)

// PredictOptions are the inputs of `uhno predict`: a run applied to
// initial conditions of one's own.
type PredictOptions struct {
	Env
	Checkpoint string
	Input      string
	Dataset    string
	Steps      int    // 0: the run's data.rollout
	Output     string // the output file (.npy, .h5 or .hdf5)
	Batch      int
	Threads    int
	Reference  string
	TestSplit  bool
	Resamples  int
	Seed       uint64
	Quiet      bool
}

// Predict loads the run and hands it to predict.Run.
func Predict(ctx context.Context, opts *PredictOptions) error {
	if opts.Checkpoint == "" || opts.Input == "" {
		return fmt.Errorf("predict: --checkpoint and --input are required")
	}
	if err := flagcheck.Check("predict",
		flagcheck.NonNeg("--steps", opts.Steps, "the run's data.rollout"),
		flagcheck.Positive("--batch", opts.Batch),
		flagcheck.NonNeg("--threads", opts.Threads, "all cores"),
		flagcheck.Positive("--resamples", opts.Resamples),
	); err != nil {
		return err
	}
	st, dir, rec, err := readRun("predict", opts.Checkpoint)
	if err != nil {
		return err
	}
	cfg := st.Config
	if cfg.Data.Snapshots == 1 {
		return fmt.Errorf("predict: checkpoint %s is a model of task %s, a single prediction a -> u; predict rolls out time-dependent tasks", dir, cfg.Task)
	}
	if cfg.Data.Inputs != nil && cfg.Data.Outputs != nil && !slices.Equal(cfg.Data.Inputs, cfg.Data.Outputs) {
		return fmt.Errorf("predict: checkpoint %s maps fields %v to %v; an autoregressive rollout needs the predicted fields to be the input fields", dir, cfg.Data.Inputs, cfg.Data.Outputs)
	}
	stats := rec.Stats
	if stats == nil { // a run of an older uhno: the statistics come from its data
		td, err := openTaskData(cfg, rec.Data, rec.Stride, runStats(rec, ""))
		if err != nil {
			return fmt.Errorf("predict: checkpoint %s records no normalisation statistics, and its data cannot give them: %w", dir, err)
		}
		td.ds.Close()
		stats = &td.stats
	}
	var fields []string // the statistics' fields less the constant inputs' channels
	for _, f := range stats.Fields {
		if !data.IsFixed(f) {
			fields = append(fields, f)
		}
	}
	history := max(cfg.Data.History, 1)
	steps := opts.Steps
	if steps == 0 {
		steps = cfg.Data.Rollout
	}
	backend, closeBackend, err := opts.openBackend(opts.Threads)
	if err != nil {
		return err
	}
	defer closeBackend()
	m, desc, err := buildModel(cfg, history*len(fields), len(fields), modelChoice{}, &rec, backend)
	if err != nil {
		return AsCommand("predict", err)
	}
	ws, wdir, err := train.LoadWeights(dir, train.Adapt(m), backend)
	if err != nil {
		return AsCommand("predict", err)
	}
	fmt.Fprintf(opts.Out, "%s: %s, checkpoint %s (step %d)\n", m.Name(), desc, wdir, ws.Step)
	pm := predict.Model{Net: m, Backend: backend, Fields: fields, History: history, Constants: cfg.Data.Constants, Coordinates: cfg.Data.Coordinates, Grid: cfg.PDE.Grid, Domain: cfg.PDE.Domain,
		Stats: stats, About: fmt.Sprintf("%s, checkpoint %s (step %d)", m.Name(), wdir, ws.Step)}
	if cfg.PDE.TEnd > 0 && cfg.Data.Snapshots > 1 {
		pm.Dt = cfg.PDE.TEnd / float64(cfg.Data.Snapshots-1)
	}
	out := opts.Output
	popt := predict.Options{Input: opts.Input, Dataset: opts.Dataset, Output: out, Steps: steps, Batch: opts.Batch,
		Reference: opts.Reference, Resamples: opts.Resamples, Seed: opts.Seed}
	if opts.TestSplit {
		popt.Select = func(n int) ([]int, error) {
			sp, err := data.NewSplit(n, cfg.Data.TrainTrajectories, cfg.Data.TestTrajectories, data.SplitSeeded, uint64(cfg.Data.Seed))
			if err != nil {
				return nil, fmt.Errorf("--test-split: %w", err)
			}
			return sp.Test, nil
		}
	}
	var bar *progress.Bar
	if !opts.Quiet {
		popt.Progress = func(done, total int) {
			if bar == nil {
				bar = progress.New(opts.Err, total, progress.Options{Description: "predict", Unit: "trajectories"})
			}
			bar.Set(done)
		}
	}
	res, err := predict.Run(ctx, pm, popt)
	if err != nil {
		if bar != nil {
			bar.Exit()
		}
		return err
	}
	fmt.Fprintf(opts.Out, "%d trajectories on grid %v, %d steps from %d history frame(s): %s\n", res.Trajectories, res.Grid, res.Steps, history, res.Output)
	if s := res.Score; s != nil {
		fmt.Fprintf(opts.Out, "relL2 against %s (mean over %d trajectories, 95%% bootstrap interval):\n", opts.Reference, res.Trajectories)
		for t, iv := range s.PerStep {
			fmt.Fprintf(opts.Out, "  step %3d  %.4g [%.4g, %.4g]\n", t+1, iv.Mean, iv.Low, iv.High)
		}
		fmt.Fprintf(opts.Out, "  mean over steps  %.4g [%.4g, %.4g]\n", s.Mean.Mean, s.Mean.Low, s.Mean.High)
	}
	return nil
}
