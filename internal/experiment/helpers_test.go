package experiment

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"

	"uhno/internal/config"
	"uhno/internal/config/configtest"
	"uhno/internal/cpu"
	"uhno/internal/dynamics"
	"uhno/internal/tensor"
)

// tinySets make Burgers small: a few trajectories of 6 frames, and a
// U-HNO of C0 4 (the same as cmd/uhno's tests).
var tinySets = []string{"data.train_trajectories=3", "data.test_trajectories=1", "data.snapshots=6",
	"data.pairs_per_trajectory=5", "data.rollout=5", "pde.t_end=0.1",
	"model.c0=4", "model.levels=2", "model.k0=8", "model.proj_hidden=8",
	"optim.warmup=1", "optim.batch=4"}

// taskConfig is task's built-in configuration with sets (key=value, as
// --set gives them) applied and validated (configtest.Builtin).
func taskConfig(t testing.TB, task string, sets ...string) config.Config {
	t.Helper()
	vals := map[string]any{}
	for _, s := range sets {
		k, v, _ := strings.Cut(s, "=")
		vals[k] = v
	}
	return configtest.Builtin(t, task, vals)
}

// cpuBackend opens the CPU backend, as the CPU build of cmd/uhno does.
func cpuBackend(threads int) (tensor.Backend, func() error, error) {
	return cpu.New(threads), func() error { return nil }, nil
}

// testEnv prints into out and errOut (nil: discarded) and computes on
// the CPU.
func testEnv(out, errOut *bytes.Buffer) Env {
	e := Env{Out: io.Discard, Err: io.Discard, Version: "test", NewBackend: cpuBackend}
	if out != nil {
		e.Out = out
	}
	if errOut != nil {
		e.Err = errOut
	}
	return e
}

// tinyTrain returns the options of a small, fast training run of
// Burgers (tinySets and sets) of steps steps into dir with its data in
// dataDir, as `uhno train --quiet --val-pairs 8` sets them.
func tinyTrain(t testing.TB, dataDir, dir string, steps int, sets ...string) *TrainOptions {
	cfg := taskConfig(t, "burgers", append(append(append([]string(nil), tinySets...), "optim.steps="+strconv.Itoa(steps)), sets...)...)
	return &TrainOptions{Env: testEnv(nil, nil), Configure: func(io.Writer) (config.Config, error) { return cfg, nil },
		Model: "uhno", Dir: dir, DataDir: dataDir, Quiet: true, Graph: true, LogEvery: 10, ValEvery: 500, CkptEvery: 1000,
		Keep: 2, ValPairs: 8, DynamicsEvery: DefaultDynamicsEvery, DynamicsTrajs: dynamics.DefaultTrajectories}
}
