package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/model"
	"uhno/internal/train"
)

// TestTrainFlags checks how flags become options, configuration keys and
// refusals, without training.
func TestTrainFlags(t *testing.T) {
	parse := func(args ...string) (*trainOptions, error) {
		var got *trainOptions
		cmd := newTrainCmd(&bytes.Buffer{}, &bytes.Buffer{}, func(_ context.Context, o *trainOptions) error {
			got = o
			return checkTrainFlags(o)
		})
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		return got, err
	}

	o, err := parse("--task", "ks", "--mode", "c", "--steps", "50", "--warmup", "5", "--batch", "8", "--set", "seed=3")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loadTrain(o)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model.Ablation != "C" || cfg.Optim.Steps != 50 || cfg.Optim.Warmup != 5 || cfg.Optim.Batch != 8 || cfg.Seed != 3 {
		t.Fatalf("config: ablation %s steps %d warmup %d batch %d seed %d; want C 50 5 8 3",
			cfg.Model.Ablation, cfg.Optim.Steps, cfg.Optim.Warmup, cfg.Optim.Batch, cfg.Seed)
	}
	if o.Model != "uhno" || o.LogEvery != 10 || o.CkptEvery != 1000 || o.Keep != 2 {
		t.Fatalf("defaults: %+v", o)
	}
	o, err = parse("--task", "burgers")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = loadTrain(o); err != nil || cfg.Optim.Steps != 20000 || cfg.Optim.Warmup != 1000 || cfg.Model.Ablation != "full" {
		t.Fatalf("no overrides: steps %d warmup %d ablation %s (%v); want the paper's 20000, 1000, full", cfg.Optim.Steps, cfg.Optim.Warmup, cfg.Model.Ablation, err)
	}

	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--task", "burgers", "--model", "nope"}, `train: --model "nope": want one of ` + strings.Join(model.Names(), ", ")},
		{[]string{"--task", "burgers", "--width", "56"}, "train: --width sets the FNO's width; use --params to size U-HNO"},
		{[]string{"--resume", "runs/x", "--warmup", "10"}, "train: --warmup cannot be combined with --resume: a resumed run keeps the settings of its checkpoint"},
		{[]string{"--resume", "runs/x", "--set", "optim.lr=1"}, "train: --set cannot be combined with --resume: a resumed run keeps the settings of its checkpoint"},
		{[]string{"--steps", "10"}, "train: no task given; pass --task NAME (one of burgers, ks, kdv, adv2d, ac2d, ns2d, darcy, cfd3d, burgers-paper, burgers-shock), --data DIR of a task uhno datagen --from described, or --resume DIR"},
		{[]string{"--task", "burgers", "--keep", "0"}, "train: --keep 0: want 1 or more"},
		{[]string{"--task", "burgers", "--batch", "-3"}, "train: --batch -3: want 0 or more (0: optim.batch)"},
		{[]string{"--task", "burgers", "--threads", "-2", "--dry-run"}, "train: --threads -2: want 0 or more (0: all cores)"},
		{[]string{"--task", "burgers", "--ckpt-every", "-1"}, "train: --ckpt-every -1: want 0 or more (0: only at the end)"},
		{[]string{"--task", "burgers", "--dist-timeout", "0s"}, "train: --dist-timeout 0s: want a positive duration such as 5m"},
	}
	for _, b := range bad {
		if _, err := parse(b.args...); err == nil || err.Error() != b.want {
			t.Errorf("%v: got %v, want %s", b.args, err, b.want)
		}
	}
}

// TestTrainEndToEnd trains a small U-HNO on a small Burgers set generated
// on first use, stops it half-way with --stop-after, resumes it and checks
// that the result equals an uninterrupted run byte for byte; then checks
// the FNO baseline and the refusals of a finished run directory.
func TestTrainEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	common := []string{"train", "--task", "burgers", "--data", dataDir, "--quiet",
		"--steps", "6", "--warmup", "1", "--batch", "4", "--log-every", "1", "--val-every", "3", "--ckpt-every", "4", "--val-pairs", "8",
		"--set", "data.train_trajectories=3", "--set", "data.test_trajectories=1", "--set", "data.snapshots=6", "--set", "data.pairs_per_trajectory=5", "--set", "data.rollout=5", "--set", "pde.t_end=0.1",
		"--set", "model.c0=4", "--set", "model.levels=2", "--set", "model.k0=8", "--set", "model.proj_hidden=8"}
	with := func(extra ...string) []string { return append(append([]string(nil), common...), extra...) }

	straight := filepath.Join(dir, "straight")
	code, out, errOut := execute(t, with("--out", straight)...)
	if code != 0 {
		t.Fatalf("straight run: code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"generated ", "burgers on cpu: uhno (mode full), L 2, C0 4, K0 8: ", " parameters",
		"15 training pairs, 5 validation pairs", "step 6/6: loss ", "checkpoint " + filepath.Join(straight, "step-00000006")} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	log, err := os.ReadFile(filepath.Join(straight, "log.jsonl"))
	if err != nil || strings.Count(string(log), `"kind":"train"`) != 6 || strings.Count(string(log), `"kind":"val"`) != 2 {
		t.Fatalf("log: %v\n%s", err, log)
	}

	resumed := filepath.Join(dir, "resumed")
	code, out, errOut = execute(t, with("--out", resumed, "--stop-after", "3")...)
	if code != 0 || !strings.Contains(out, "stopped at step 3; checkpoint "+filepath.Join(resumed, "step-00000003")+"; continue with: uhno train --resume "+resumed) {
		t.Fatalf("stopped run: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = execute(t, "train", "--resume", resumed, "--data", dataDir, "--quiet", "--log-every", "1", "--val-every", "3", "--ckpt-every", "4")
	if code != 0 || !strings.Contains(out, "step 6/6") || strings.Contains(out, "generated ") {
		t.Fatalf("resumed run: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, name := range []string{"weights.safetensors", "optimizer.safetensors"} {
		a, _ := os.ReadFile(filepath.Join(straight, "step-00000006", name))
		b, _ := os.ReadFile(filepath.Join(resumed, "step-00000006", name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the straight and the resumed run", name)
		}
	}

	code, out, _ = execute(t, "train", "--resume", straight, "--data", dataDir, "--quiet")
	if code != 0 || !strings.Contains(out, "the run was already complete at step 6") {
		t.Errorf("resuming a finished run: code %d, stdout %q", code, out)
	}

	// Lengthening a finished run: it continues to the new end on the
	// longer cosine and says that this is not a run started that long.
	longer := filepath.Join(dir, "longer")
	if err := os.CopyFS(longer, os.DirFS(resumed)); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = execute(t, "train", "--resume", longer, "--data", dataDir, "--quiet", "--steps", "9")
	if code != 0 || !strings.Contains(out, "step 9/9") || !strings.Contains(errOut, "lengthening the run from 6 to 9 steps") ||
		!strings.Contains(errOut, "not bit-identical to a run started with --steps 9") {
		t.Fatalf("lengthened run: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	st, _, err := train.ReadState(longer)
	if err != nil || st.Step != 9 || st.Schedule.Steps != 9 || st.Config.Optim.Steps != 9 {
		t.Fatalf("lengthened run's state: %+v, %v", st.Schedule, err)
	}
	if want := (train.Schedule{Peak: st.Schedule.Peak, Warmup: 1, Steps: 9}).LR(9); st.LR != want {
		t.Errorf("lengthened run's last learning rate %g, want %g (the 9-step cosine)", st.LR, want)
	}
	code, _, errOut = execute(t, "train", "--resume", longer, "--data", dataDir, "--quiet", "--steps", "7")
	if code != 1 || !strings.Contains(errOut, "--steps can only lengthen a run") {
		t.Errorf("shortening: code %d, stderr %q", code, errOut)
	}
	code, _, errOut = execute(t, with("--out", straight)...)
	if want := "uhno: train: " + straight + " already holds a run; resume it or choose another directory\n"; code != 1 || errOut != want {
		t.Errorf("fresh run over a finished one: code %d, stderr %q, want %q", code, errOut, want)
	}
	code, _, errOut = execute(t, "train", "--resume", filepath.Join(dir, "nothing"), "--quiet")
	if code != 1 || !strings.HasPrefix(errOut, "uhno: train: checkpoint "+filepath.Join(dir, "nothing")) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("resuming nothing: code %d, stderr %q", code, errOut)
	}

	code, out, errOut = execute(t, with("--out", filepath.Join(dir, "fno"), "--model", "fno", "--steps", "2")...)
	if code != 0 || !strings.Contains(out, "burgers on cpu: fno, width ") || !strings.Contains(out, "step 2/2") {
		t.Errorf("fno run: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = execute(t, with("--out", filepath.Join(dir, "fnoA"), "--model", "fno", "--mode", "A")...)
	if want := "uhno: train: mode A changes U-HNO's architecture; --model fno takes only the loss modes C, D and E\n"; code != 1 || errOut != want {
		t.Errorf("fno with mode A: code %d, stderr %q", code, errOut)
	}
}
