package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
)

// TestOwnDataFreshHome is the path of a user who trains on their own data
// folder on a fresh machine (issue 25): datagen (or a PDEBench file
// indexed) into ./data, train with --data ./data, then eval without
// --data, with HOME pointing at an empty folder and no data cache. The
// evaluation must find the run's data and statistics from what the run
// recorded, and nothing may be written into the cache. A tampered data
// file is then refused by eval, as it is by a resume.
func TestOwnDataFreshHome(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	tiny := []string{"--set", "model.c0=4", "--set", "model.levels=2", "--set", "model.k0=8", "--set", "model.proj_hidden=8"}
	cases := []struct {
		name    string
		prepare func(t *testing.T) []string // writes ./data; returns the train/eval --task and --set flags
		rollout []string
	}{
		{name: "generated burgers", rollout: []string{"--rollout", "5"}, prepare: func(t *testing.T) []string {
			flags := []string{"--task", "burgers", "--set", "pde.t_end=0.1", "--set", "data.snapshots=11",
				"--set", "data.train_trajectories=6", "--set", "data.test_trajectories=3", "--set", "data.pairs_per_trajectory=5", "--set", "data.rollout=5", "--set", "optim.batch=4"}
			mustRun(t, append([]string{"datagen", "--train", "6", "--test", "3", "--out", "./data", "--quiet"}, flags...)...)
			return flags
		}},
		{name: "indexed PDEBench darcy", prepare: func(t *testing.T) []string {
			file, _ := filepath.Abs(filepath.Join("downloads", "2D_DarcyFlow_beta1.0_Train.hdf5"))
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := h5test.Darcy(file, 6, 128, 128, 1.0); err != nil {
				t.Fatal(err)
			}
			flags := []string{"--task", "darcy", "--set", "data.train_trajectories=4", "--set", "data.test_trajectories=2"}
			mustRun(t, "datagen", "--task", "darcy", "--pdebench", file, "--train", "4", "--test", "2", "--out", "./data")
			return flags
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			home, _ := filepath.Abs("home")
			if err := os.Mkdir(home, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("HOME", home)
			t.Setenv("XDG_CACHE_HOME", "")
			t.Setenv("UHNO_DATA", "")

			flags := tc.prepare(t)
			train := append([]string{"train", "--data", "./data", "--steps", "4", "--warmup", "1",
				"--batch", "4", "--val-pairs", "4", "--out", "./run", "--quiet"}, flags...)
			mustRun(t, append(train, tiny...)...)
			mustRun(t, append(figs("eval", "--checkpoint", "./run", "--out", "./ev", "--quiet", "--resamples", "50"), tc.rollout...)...)
			if _, err := os.Stat(filepath.Join("ev", "results.json")); err != nil {
				t.Fatal(err)
			}
			// Nothing in the cache: HOME holds nothing after train and eval.
			var written []string
			filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
				if p != home {
					written = append(written, p)
				}
				return nil
			})
			if len(written) > 0 {
				t.Errorf("files written under HOME: %v", written)
			}

			// A resume finds the data and statistics the same way.
			mustRun(t, "train", "--resume", "./run", "--steps", "6", "--quiet")
			if entries, _ := os.ReadDir(home); len(entries) > 0 {
				t.Errorf("resume wrote under HOME: %v", entries)
			}

			// A checkpoint of an older uhno records no statistics: eval
			// finds them (here: computes them in memory) and gives the
			// same results, still writing nothing under HOME.
			mustRun(t, append(figs("eval", "--checkpoint", "./run", "--out", "./ev-new", "--quiet", "--resamples", "50"), tc.rollout...)...)
			stripRecordedStats(t, "run")
			mustRun(t, append(figs("eval", "--checkpoint", "./run", "--out", "./ev-old", "--quiet", "--resamples", "50"), tc.rollout...)...)
			if a, b := evalModels(t, "ev-new"), evalModels(t, "ev-old"); a != b {
				t.Errorf("eval of the run without recorded statistics differs:\n%s\n%s", a, b)
			}
			if entries, _ := os.ReadDir(home); len(entries) > 0 {
				t.Errorf("eval of an older checkpoint wrote under HOME: %v", entries)
			}

			// The data file changed after training: eval refuses it in one line.
			paths, _ := filepath.Glob(filepath.Join("data", "*.h5"))
			if tc.name == "indexed PDEBench darcy" {
				paths, _ = filepath.Glob(filepath.Join("downloads", "*.hdf5"))
			}
			if len(paths) != 1 {
				t.Fatalf("data files %v", paths)
			}
			if tc.name == "indexed PDEBench darcy" {
				f, err := os.OpenFile(paths[0], os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write([]byte("tampered"))
				f.Close()
			} else {
				// A file uhno generated is judged by its values (the same
				// data generated again is accepted): change one.
				damageFirstValue(t, paths[0])
			}
			code, _, errOut := execute(t, append([]string{"eval", "--checkpoint", "./run", "--out", "./ev2", "--quiet"}, tc.rollout...)...)
			if code == 0 || !strings.HasPrefix(errOut, "uhno: eval: checkpoint ") || !strings.Contains(errOut, "not the data the run was trained on") ||
				strings.Count(errOut, "\n") != 1 {
				t.Errorf("eval of changed data: code %d, stderr %q", code, errOut)
			}
			if _, err := os.Stat("ev2"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("eval of changed data wrote its output folder: %v", err)
			}
		})
	}
}

// mustRun runs the uhno command line and fails the test on a non-zero exit.
func mustRun(t *testing.T, args ...string) {
	t.Helper()
	if code, _, errOut := execute(t, args...); code != 0 {
		t.Fatalf("uhno %s: code %d, stderr %q", strings.Join(args, " "), code, errOut)
	}
}

// stripRecordedStats rewrites every checkpoint of the run as an older uhno
// wrote it: the build record without "stats", the manifest updated.
func stripRecordedStats(t *testing.T, run string) {
	t.Helper()
	steps, _ := filepath.Glob(filepath.Join(run, "step-*"))
	if len(steps) == 0 {
		t.Fatalf("no checkpoints in %s", run)
	}
	for _, dir := range steps {
		var state map[string]json.RawMessage
		readJSON(t, filepath.Join(dir, "state.json"), &state)
		var build map[string]json.RawMessage
		if err := json.Unmarshal(state["build"], &build); err != nil || build["stats"] == nil {
			t.Fatalf("%s: build record without stats (%v)", dir, err)
		}
		delete(build, "stats")
		state["build"], _ = json.Marshal(build)
		raw, _ := json.Marshal(state)
		if err := os.WriteFile(filepath.Join(dir, "state.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		var man struct {
			Format string `json:"format"`
			Files  map[string]struct {
				Size   int64  `json:"size"`
				SHA256 string `json:"sha256"`
			} `json:"files"`
		}
		readJSON(t, filepath.Join(dir, "manifest.json"), &man)
		sum := sha256.Sum256(raw)
		f := man.Files["state.json"]
		f.Size, f.SHA256 = int64(len(raw)), hex.EncodeToString(sum[:])
		man.Files["state.json"] = f
		out, _ := json.Marshal(man)
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// evalModels is the "models" part of an eval output's results.json, as
// text: the metrics and curves of every evaluated run, without the
// evaluation's wall-clock times.
func evalModels(t *testing.T, dir string) string {
	t.Helper()
	var res map[string]json.RawMessage
	readJSON(t, filepath.Join(dir, "results.json"), &res)
	return regexp.MustCompile(`"elapsed_s":\s*[-+.e0-9]+`).ReplaceAllString(string(res["models"]), "")
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestProgressPlainWhenPiped: progress written to a file or pipe (here a
// buffer) is a few plain lines, not a redrawn bar: no carriage returns,
// and at most a line per tenth of the work plus the summary.
func TestProgressPlainWhenPiped(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sets := append(slices.Clone(tinySets), "--set", "data.train_trajectories=40", "--set", "data.test_trajectories=10", "--set", "optim.batch=4")
	gen := append([]string{"datagen", "--task", "burgers", "--out", data}, sets...)
	code, _, errOut := execute(t, gen...)
	if code != 0 {
		t.Fatalf("datagen: %d %s", code, errOut)
	}
	if strings.Contains(errOut, "\r") || strings.Count(errOut, "\n") > 12 || !strings.Contains(errOut, "datagen burgers: 50/50 traj (100%) in ") {
		t.Errorf("datagen progress, piped:\n%q", errOut)
	}
	train := append([]string{"train", "--task", "burgers", "--data", data, "--warmup", "1", "--val-pairs", "8", "--steps", "200",
		"--out", filepath.Join(dir, "run")}, sets...)
	code, _, errOut = execute(t, train...)
	if code != 0 {
		t.Fatalf("train: %d %s", code, errOut)
	}
	lines := strings.Count(errOut, "\n")
	if strings.Contains(errOut, "\r") || lines > 14 || !strings.Contains(errOut, "200/200 steps (100%) in ") {
		t.Errorf("train progress, piped (%d lines):\n%s", lines, errOut)
	}
}
