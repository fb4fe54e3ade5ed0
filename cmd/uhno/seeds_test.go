package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/train"
)

// firstLoss is the loss of the first training record in a run's log.
func firstLoss(t *testing.T, runDir string) float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(runDir, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Kind string  `json:"kind"`
			Loss float64 `json:"loss"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Kind == train.KindTrain {
			return r.Loss
		}
	}
	t.Fatalf("%s: no training record", runDir)
	return 0
}

// TestSeedKeepsData: a run's seed changes its initialisation and batch
// order, never its data (issue 39): runs of seeds 0 and 1 train on the one
// data file of data.seed 0, with other losses from the first step on;
// data.seed picks another file.
func TestSeedKeepsData(t *testing.T) {
	dataDir := t.TempDir()
	var losses []float64
	for seed, extra := range [][]string{nil, {"--set", "seed=1"}} {
		dir := filepath.Join(t.TempDir(), "run")
		args := tinyTrain(dataDir, append([]string{"--steps", "2", "--log-every", "1", "--out", dir}, extra...)...)
		if code, _, stderr := execute(t, args...); code != 0 {
			t.Fatalf("seed %d: code %d, %s", seed, code, stderr)
		}
		st, _, err := train.ReadState(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.Config.Seed != int64(seed) || st.Config.Data.Seed != 0 {
			t.Errorf("run of seed %d: seed %d, data.seed %d; want %d and 0", seed, st.Config.Seed, st.Config.Data.Seed, seed)
		}
		losses = append(losses, firstLoss(t, dir))
	}
	// One file, data.seed 0's: both runs read it.
	if file := filepath.Base(dataFile(t, dataDir)); !strings.HasPrefix(file, "burgers_seed0_") {
		t.Errorf("data file %s, want data.seed 0's", file)
	}
	if losses[0] == losses[1] {
		t.Errorf("seeds 0 and 1 start from the same loss %g: the seed did not reach the initialisation", losses[0])
	}
	args := tinyTrain(dataDir, "--steps", "2", "--out", filepath.Join(t.TempDir(), "data1"), "--set", "data.seed=1")
	if code, _, stderr := execute(t, args...); code != 0 {
		t.Fatalf("data.seed 1: code %d, %s", code, stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(dataDir, "burgers_seed1_*.h5")); len(files) != 1 {
		t.Errorf("data.seed 1 made %v, want one burgers_seed1_ file", files)
	}
}
