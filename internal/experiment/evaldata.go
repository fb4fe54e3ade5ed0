package experiment

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"uhno/internal/config"
	"uhno/internal/data"
	"uhno/internal/datagen"
)

// Long test data (`uhno eval --test-data FILE`): Tab. stability rolls a
// model out to 4x its training horizon, and a task's own data may be too
// short for that (Burgers stores 51 frames for a 25-step horizon, so 4x
// needs 101). The run's data stays as it is; a second file made by the
// same solver with the same settings and frame spacing, only longer (and
// usually from another seed, so that no training initial condition comes
// back), supplies the test trajectories. StabilityData describes that file
// and evalTestData checks it against the run's data.

// testDataFree are the solver attributes a test file may change: its
// length and its seed. Every other attribute of the run's data file must
// be equal, and the time between frames too.
var testDataFree = []string{"t_end", "snapshots", "seed"}

// StabilitySeedOffset separates the seed of a long test file from the
// seed of the training data it accompanies (StabilityData), so that its
// initial conditions are not the training set's.
const StabilitySeedOffset = 1 << 20

// StabilityData returns the configuration and generator options of the
// long test file for evaluating runs of cfg at mult times the rollout of
// steps (0: data.rollout): the configuration's solver settings and frame
// spacing, enough frames for the history and the rollout, the
// configuration's test trajectory count, and the seed moved by
// StabilitySeedOffset. ok is false when cfg's own data already hold that
// horizon (or the task is a single prediction): nothing to make.
func StabilityData(cfg config.Config, steps, mult int) (opt datagen.Options, ok bool, err error) {
	if cfg.Data.Snapshots < 2 {
		return datagen.Options{}, false, nil
	}
	if steps <= 0 {
		steps = cfg.Data.Rollout
	}
	need := cfg.Data.History + steps*mult
	if need <= cfg.Data.Snapshots {
		return datagen.Options{}, false, nil
	}
	dt := cfg.SaveInterval()
	c := cfg
	c.Data.Snapshots = need
	c.PDE.TEnd = dt * float64(need-1)
	c.Data.Seed = cfg.Data.Seed + StabilitySeedOffset
	if err := c.Validate(); err != nil {
		return datagen.Options{}, false, fmt.Errorf("stability data for %s: %w", cfg.Task, err)
	}
	// The file holds data.test_trajectories trajectories (at least 2),
	// every one of them a test trajectory; datagen counts them as train
	// plus test, and neither may be 0.
	n := max(cfg.Data.TestTrajectories, 2)
	return datagen.Options{Config: c, Train: 1, Test: n - 1}, true, nil
}

// evalTestData opens the file at path as the test set of a run of cfg
// whose data are run (open, as Eval has them): every trajectory of the file is a test
// trajectory, normalised with the run's statistics st. The file must
// hold the run's grid and fields and come from the same solver settings
// as run (the attributes of the task's generator, all but
// testDataFree) with the same time between frames; the error names the
// first difference. The caller closes td.ds.
func evalTestData(cfg config.Config, run *data.Dataset, path string, stride int, st data.Stats) (*taskData, error) {
	runData := run.Path()
	gen, err := datagen.Generator(cfg)
	if err != nil {
		return nil, fmt.Errorf("eval: --test-data: %w", err)
	}
	ds, err := data.Open(path, data.Options{Stride: stride})
	if err != nil {
		return nil, fmt.Errorf("eval: --test-data: %w", err)
	}
	fail := func(format string, a ...any) (*taskData, error) {
		ds.Close()
		return nil, fmt.Errorf("eval: --test-data %s: "+format, append([]any{path}, a...)...)
	}
	names := make([]string, 0, len(gen.Attrs()))
	for k := range gen.Attrs() {
		if !slices.Contains(testDataFree, k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		want, err := run.Attr(k)
		if err != nil {
			return fail("the run's data %s has no solver attribute %q (not made by uhno datagen?): %v", runData, k, err)
		}
		got, err := ds.Attr(k)
		if err != nil {
			return fail("no solver attribute %q (want %v, as in the run's data %s; make it with uhno datagen)", k, want, runData)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fail("attribute %q is %v, the run's data %s has %v: another solver setting", k, got, runData, want)
		}
	}
	spacing := func(d *data.Dataset, name string) (float64, error) {
		t, err1 := d.Attr("t_end")
		n, err2 := d.Attr("snapshots")
		tf, ok1 := t.(float64)
		nf, ok2 := asInt(n)
		if err1 != nil || err2 != nil || !ok1 || !ok2 || nf < 2 {
			return 0, fmt.Errorf("%s: no t_end and snapshots >= 2 attributes", name)
		}
		return tf / float64(nf-1), nil
	}
	dtRun, err := spacing(run, runData)
	if err != nil {
		return fail("%v", err)
	}
	dtTest, err := spacing(ds, path)
	if err != nil {
		return fail("%v", err)
	}
	if math.Abs(dtTest-dtRun) > 1e-9*math.Abs(dtRun) {
		return fail("frames are %g apart, the run's data %s has %g (t_end / (snapshots - 1) must agree)", dtTest, runData, dtRun)
	}
	if !slices.Equal(ds.Grid(), cfg.PDE.Grid) {
		return fail("grid %v after stride %d, the run's pde.grid is %v", ds.Grid(), stride, cfg.PDE.Grid)
	}
	td := &taskData{ds: ds, stats: st}
	if td.plan, err = ds.Plan(data.Sampling{Inputs: cfg.Data.Inputs, Outputs: cfg.Data.Outputs,
		History: cfg.Data.History, Pairs: cfg.Data.PairsPerTrajectory, Constants: cfg.Data.Constants, Coordinates: cfg.Data.Coordinates}); err != nil {
		return fail("%v", err)
	}
	if err := st.Check(td.plan); err != nil {
		return fail("%v", err)
	}
	td.split.Test = make([]int, ds.Len())
	for i := range td.split.Test {
		td.split.Test[i] = i
	}
	return td, nil
}

// asInt reads an integer attribute as HDF5 returns it.
func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case int32:
		return int(x), true
	case uint64:
		return int(x), true
	case float64:
		return int(x), x == math.Trunc(x)
	}
	return 0, false
}
