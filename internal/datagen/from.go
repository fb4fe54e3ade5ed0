package datagen

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"uhno/internal/atomicfile"
	"uhno/internal/config"
	"uhno/internal/data"
	"uhno/internal/data/layout"
)

// TaskFileName is the task description `uhno datagen --from` writes into
// its output directory.
const TaskFileName = "task.json"

// TaskFormat versions the task description.
const TaskFormat = "uhno-task/1"

// FromOptions are the inputs of `uhno datagen --from FILE --out DIR`.
type FromOptions struct {
	// File is the user's data file (read in place, never copied).
	File string
	// Dir receives the task description; it is created if missing.
	Dir string
	// Base is the built-in task whose model, loss and training settings
	// the new task takes (--task BASE); empty: the built-in task of the
	// file's dimension (BaseByDim).
	Base string
	// Configure loads a built-in task's configuration (the command's
	// layers: the embedded file, --config, --set).
	Configure func(task string) (config.Config, error)
	// Test is the number of test trajectories; 0: a tenth of them (at
	// least 1), as PDEBench holds out a tenth.
	Test int
	// Hints say what a plain array does not (lengths, dt, boundaries,
	// channel names).
	Hints layout.Hints
}

// TaskFile is a task described by a data file: what `uhno datagen --from`
// writes and a task made from the file is built on.
type TaskFile struct {
	Format string `json:"format"`
	// Description is the file as layout read it.
	Description layout.Description `json:"description"`
	// Base is the built-in task whose model, loss and training settings
	// the task takes.
	Base string `json:"base"`
	// Train and Test count the split of the trajectories: Test held out
	// for testing, Train to train on (the validation pairs are drawn from
	// them). Which trajectories fall where is the run's seeded split
	// (data.seed), as for every task.
	Train int `json:"train"`
	Test  int `json:"test"`
	// History and Rollout are the base task's frames in and rollout
	// steps (the rollout at most what the frames after the history
	// allow).
	History int `json:"history"`
	Rollout int `json:"rollout"`
	// Pairs is the training pairs taken from each trajectory: the base
	// task's, at most the frames after the history allow.
	Pairs int `json:"pairs"`
	// SolverTime is true when the base task's configuration has a solver
	// time step and end time (pde.dt, pde.t_end), which the task then sets
	// to the file's frame interval and span, so the configuration's time
	// axis is the file's.
	SolverTime bool `json:"solver_time,omitempty"`
	// Batch is the base task's batch, at most the training pairs there
	// are.
	Batch int `json:"batch"`
}

// BaseByDim is the built-in task a file of each spatial dimension takes
// its model and training settings from by default: the paper's 1D, 2D and
// 3D benchmarks whose settings its Tab. per-task-hp gives (Burgers,
// NS-2D, 3D-CFD).
var BaseByDim = map[int]string{1: "burgers", 2: "ns2d", 3: "cfd3d"}

// DescribeFile reads opt.File's layout, checks it against the base task
// (dimension, frames for the history and one rollout step, a grid the
// base's U-HNO levels can halve) and writes DIR/task.json, atomically.
// Nothing is written when any check fails.
func DescribeFile(opt FromOptions) (TaskFile, string, error) {
	if opt.Dir == "" {
		return TaskFile{}, "", fmt.Errorf("datagen: --from needs --out DIR for the task description")
	}
	abs, err := filepath.Abs(opt.File)
	if err != nil {
		return TaskFile{}, "", fmt.Errorf("datagen: %s: %w", opt.File, err)
	}
	d, err := layout.DescribeWith(abs, opt.Hints)
	if err != nil {
		return TaskFile{}, "", fmt.Errorf("datagen: %w", err)
	}
	tf, err := planTask(d, opt)
	if err != nil {
		return TaskFile{}, "", err
	}
	if err := checkSampleFinite(d); err != nil {
		return TaskFile{}, "", err
	}
	raw, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return TaskFile{}, "", fmt.Errorf("datagen: %w", err)
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return TaskFile{}, "", fmt.Errorf("datagen: %w", err)
	}
	path := filepath.Join(opt.Dir, TaskFileName)
	if err := atomicfile.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
		return TaskFile{}, "", fmt.Errorf("datagen: %w", err)
	}
	return tf, path, nil
}

// planTask checks d against the base task and splits the trajectories.
func planTask(d layout.Description, opt FromOptions) (TaskFile, error) {
	base := opt.Base
	if base == "" {
		base = BaseByDim[d.Dim]
	}
	spec, err := config.LookupTask(base)
	if err != nil {
		return TaskFile{}, fmt.Errorf("datagen: --task %s: %w", base, err)
	}
	if spec.Dim != d.Dim || spec.Static {
		return TaskFile{}, fmt.Errorf("datagen: %s: the file is %dD and time-dependent; --task %s is %dD%s: give a built-in task of the file's kind",
			d.File, d.Dim, base, spec.Dim, map[bool]string{true: " and static", false: ""}[spec.Static])
	}
	cfg, err := opt.Configure(base)
	if err != nil {
		return TaskFile{}, fmt.Errorf("datagen: --task %s: %w", base, err)
	}
	tf := TaskFile{Format: TaskFormat, Description: d, Base: base, History: cfg.Data.History, Rollout: cfg.Data.Rollout}
	if d.Frames < tf.History+1 {
		return TaskFile{}, fmt.Errorf("datagen: %s: %d frames per trajectory; the %s settings take %d frames in and predict the next, so at least %d are needed (choose a --task with a shorter history)",
			d.File, d.Frames, base, tf.History, tf.History+1)
	}
	div := 1 << cfg.Model.Levels
	for i, n := range d.Grid {
		if n%div != 0 || n/div < 2 {
			return TaskFile{}, fmt.Errorf("datagen: %s: axis %s has %d points; U-HNO's %d levels (%s) halve it %d times, so it must be a multiple of %d with at least %d points",
				d.File, d.Axes[i], n, cfg.Model.Levels, base, cfg.Model.Levels, div, 2*div)
		}
	}
	tf.Rollout = min(tf.Rollout, d.Frames-tf.History)
	tf.Pairs = min(cfg.Data.PairsPerTrajectory, d.Frames-tf.History)
	tf.SolverTime = cfg.PDE.Dt != 0 && cfg.PDE.TEnd != 0
	tf.Test = opt.Test
	if tf.Test == 0 {
		tf.Test = max(1, d.Trajectories/10)
	}
	tf.Train = d.Trajectories - tf.Test
	if tf.Test < 1 || tf.Train < 1 {
		return TaskFile{}, fmt.Errorf("datagen: %s: %d trajectories cannot be split into --test %d and at least 1 to train on", d.File, d.Trajectories, tf.Test)
	}
	tf.Batch = min(cfg.Optim.Batch, tf.Train*tf.Pairs)
	return tf, nil
}

// Values are the configuration keys the task sets over its base task's
// built-in configuration (a layer below --config, the environment and
// --set, which override them): the described file as the data
// (data.source described, data.file the task description at path), its
// grid and lengths, frames, split, channels as the fields read and
// predicted, the constant inputs (ConstantInputs), the rollout the
// frames allow, and pde.boundary dirichlet (not periodic) when an axis
// has walls or open ends.
func (tf TaskFile) Values(path string) map[string]any {
	d := tf.Description
	names := d.ChannelNames()
	v := map[string]any{
		"data.source":               config.SourceDescribed,
		"data.file":                 path,
		"data.source_grid":          "[]",
		"pde.solver_grid":           "[]",
		"pde.grid":                  d.Grid,
		"pde.domain":                d.Domain,
		"data.snapshots":            d.Frames,
		"data.train_trajectories":   tf.Train,
		"data.test_trajectories":    tf.Test,
		"data.inputs":               names,
		"data.outputs":              names,
		"data.rollout":              tf.Rollout,
		"data.pairs_per_trajectory": tf.Pairs,
		"optim.batch":               tf.Batch,
	}
	if !d.Periodic() {
		v["pde.boundary"] = "dirichlet"
	}
	if in, _ := ConstantInputs(d); len(in) > 0 {
		v["data.constants"] = in
	}
	if tf.SolverTime {
		v["pde.dt"], v["pde.t_end"] = d.Dt, d.Dt*float64(d.Frames-1)
	}
	return v
}

// ConstantInputs splits a description's constants into the inputs a task
// gives its models (data.constants: every field without a time axis, and
// every scalar that differs between trajectories) and those it leaves out
// (a scalar the same for every trajectory: one number the models would
// see unchanged in every sample, which carries nothing).
func ConstantInputs(d layout.Description) (in, out []string) {
	for _, c := range d.Constants {
		if c.Scalar && !c.PerTrajectory {
			out = append(out, c.Name)
			continue
		}
		in = append(in, c.Name)
	}
	return in, out
}

// checkSampleFinite reads the first and the last trajectory whole (every
// channel and frame) and refuses a NaN or Inf, naming the trajectory,
// dataset and frame (data.Dataset.CheckFinite). The rest of the file is
// checked as training reads it: every read refuses a non-finite value the
// same way; a whole scan would cost a read of the file, which describing
// it is meant not to.
func checkSampleFinite(d layout.Description) error {
	ds, err := data.OpenDescribed(d, data.Options{})
	if err != nil {
		return fmt.Errorf("datagen: %w", err)
	}
	defer ds.Close()
	if err := ds.CheckFinite([]int{0, ds.Len() - 1}, nil); err != nil {
		return fmt.Errorf("datagen: %w", err)
	}
	return nil
}

// ReadTaskFile reads DIR/task.json.
func ReadTaskFile(dir string) (TaskFile, error) {
	path := filepath.Join(dir, TaskFileName)
	raw, err := os.ReadFile(path)
	if err != nil {
		return TaskFile{}, fmt.Errorf("datagen: %w (make it with uhno datagen --from FILE --out %s)", err, dir)
	}
	var tf TaskFile
	if err := json.Unmarshal(raw, &tf); err != nil {
		return TaskFile{}, fmt.Errorf("datagen: %s: %w", path, err)
	}
	if tf.Format != TaskFormat {
		return TaskFile{}, fmt.Errorf("datagen: %s: format %q, want %q", path, tf.Format, TaskFormat)
	}
	if tf.Base == "" || tf.Train < 1 || tf.Test < 1 || tf.History < 1 || tf.Rollout < 1 || tf.Pairs < 1 || tf.Batch < 1 {
		return TaskFile{}, fmt.Errorf("datagen: %s: incomplete (base %q, train %d, test %d, history %d, rollout %d, pairs %d, batch %d); describe the file again with uhno datagen --from",
			path, tf.Base, tf.Train, tf.Test, tf.History, tf.Rollout, tf.Pairs, tf.Batch)
	}
	return tf, nil
}
