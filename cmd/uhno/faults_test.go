package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/hdf5"

	"uhno/internal/experiment"
	"uhno/internal/train"
)

// tinySets make Burgers small: a few trajectories of 6 frames, and a
// U-HNO of C0 4.
var tinySets = []string{"--set", "data.train_trajectories=3", "--set", "data.test_trajectories=1", "--set", "data.snapshots=6",
	"--set", "data.pairs_per_trajectory=5", "--set", "data.rollout=5", "--set", "pde.t_end=0.1",
	"--set", "model.c0=4", "--set", "model.levels=2", "--set", "model.k0=8", "--set", "model.proj_hidden=8"}

// tinyTrain returns the arguments of a small, fast training run of
// Burgers with its data in dataDir, followed by extra.
func tinyTrain(dataDir string, extra ...string) []string {
	args := []string{"train", "--task", "burgers", "--data", dataDir, "--quiet", "--warmup", "1", "--batch", "4", "--val-pairs", "8"}
	return append(append(args, tinySets...), extra...)
}

// dataFile returns the one data file in dataDir.
func dataFile(t *testing.T, dataDir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dataDir, "burgers_*.h5"))
	if len(files) != 1 {
		t.Fatalf("data files in %s: %v, want one", dataDir, files)
	}
	return files[0]
}

// checkpointState returns the state.json of the checkpoint at path (a run
// directory or a step directory) as a generic map.
func checkpointState(t *testing.T, path string) (map[string]any, string) {
	t.Helper()
	_, dir, err := train.ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, train.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m, dir
}

// stepDirs lists the checkpoint directories of a run directory.
func stepDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "step-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// logSteps returns the steps of the log records of one kind.
func logSteps(t *testing.T, dir, kind string) []int {
	t.Helper()
	var steps []int
	for _, r := range logRecords(t, dir) {
		if r["kind"] == kind {
			steps = append(steps, int(r["step"].(float64)))
		}
	}
	return steps
}

// logRecords returns the records of a run's log without their timing
// fields (elapsed_s, steps_per_s), which differ between runs.
func logRecords(t *testing.T, dir string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, train.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		delete(r, "elapsed_s")
		delete(r, "steps_per_s")
		recs = append(recs, r)
	}
	return recs
}

// TestTrainResumeKeepsRunControl stops a run with uncommon run-control
// settings and resumes it with none: the resumed part logs, validates,
// checkpoints and prunes at the run's intervals, not at the flags'
// defaults. A resume that passes --ckpt-every uses it, says so in one
// line, and records it; flags that change the math stay refused; the
// weights do not depend on the intervals.
func TestTrainResumeKeepsRunControl(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	first := func(out string) {
		t.Helper()
		code, stdout, stderr := execute(t, tinyTrain(dataDir, "--steps", "12", "--log-every", "3", "--val-every", "4", "--ckpt-every", "2", "--keep", "5",
			"--threads", "1", "--stop-after", "3", "--out", out)...)
		if code != 0 || !strings.Contains(stdout, "stopped at step 3") {
			t.Fatalf("first part: code %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	}

	kept := filepath.Join(dir, "kept")
	first(kept)
	code, stdout, stderr := execute(t, "train", "--resume", kept, "--quiet", "--data", dataDir)
	if code != 0 || !strings.Contains(stdout, "step 12/12") || strings.Contains(stdout, "resume:") {
		t.Fatalf("resume: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got, want := stepDirs(t, kept), []string{"step-00000004", "step-00000006", "step-00000008", "step-00000010", "step-00000012"}; !slices.Equal(got, want) {
		t.Errorf("checkpoints %v, want %v (every 2 steps, 5 kept)", got, want)
	}
	if got := logSteps(t, kept, "train"); !slices.Equal(got, []int{3, 6, 9, 12}) {
		t.Errorf("train records at %v, want every 3 steps", got)
	}
	if got := logSteps(t, kept, "val"); !slices.Equal(got, []int{4, 8, 12}) {
		t.Errorf("val records at %v, want every 4 steps", got)
	}
	st, _ := checkpointState(t, kept)
	control := st["build"].(map[string]any)["control"]
	want := map[string]any{"log_every": 3.0, "val_every": 4.0, "ckpt_every": 2.0, "keep": 5.0, "threads": 1.0, "graph": true,
		"dynamics_every": 1000.0, "dynamics_trajectories": 128.0}
	if fmt.Sprint(control) != fmt.Sprint(want) {
		t.Errorf("recorded control %v, want %v", control, want)
	}

	over := filepath.Join(dir, "override")
	first(over)
	code, stdout, stderr = execute(t, "train", "--resume", over, "--quiet", "--data", dataDir, "--batch", "8")
	if want := "uhno: train: --batch cannot be combined with --resume: a resumed run keeps the settings of its checkpoint\n"; code != 1 || stderr != want {
		t.Errorf("--batch on resume: code %d, stderr %q, want %q", code, stderr, want)
	}
	code, stdout, stderr = execute(t, "train", "--resume", over, "--quiet", "--data", dataDir, "--ckpt-every", "5", "--log-every", "3")
	if code != 0 || !strings.Contains(stdout, "resume: --ckpt-every 5 overrides the run's 2\n") || strings.Count(stdout, "resume:") != 1 {
		t.Fatalf("resume with --ckpt-every 5: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got, want := stepDirs(t, over), []string{"step-00000002", "step-00000003", "step-00000005", "step-00000010", "step-00000012"}; !slices.Equal(got, want) {
		t.Errorf("checkpoints %v, want %v (every 5 steps after the override)", got, want)
	}
	st, _ = checkpointState(t, over)
	if got := st["build"].(map[string]any)["control"].(map[string]any)["ckpt_every"]; got != 5.0 {
		t.Errorf("recorded ckpt_every %v after the override, want 5", got)
	}
	for _, name := range []string{train.WeightsFile, train.OptimizerFile} {
		a, _ := os.ReadFile(filepath.Join(kept, "step-00000012", name))
		b, _ := os.ReadFile(filepath.Join(over, "step-00000012", name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between runs that differ only in run-control settings", name)
		}
	}
}

// TestTrainResumeRefusesChangedData changes the data file of a stopped
// run: a value changed in place (its checksum kept) and a truncation are
// refused on resume with a one-line error naming the file; with the bytes
// restored (a new modification time) the resume goes on.
func TestTrainResumeRefusesChangedData(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	run := filepath.Join(dir, "run")
	code, stdout, stderr := execute(t, tinyTrain(dataDir, "--steps", "6", "--stop-after", "3", "--out", run)...)
	if code != 0 {
		t.Fatalf("first part: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	path := dataFile(t, dataDir)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(run, "step-00000003")
	resume := func() (int, string, string) {
		return execute(t, "train", "--resume", run, "--quiet", "--data", dataDir)
	}

	damageFirstValue(t, path)
	code, _, stderr = resume()
	prefix := "uhno: train: cannot resume " + ck + ": data: " + path + " changed (modified "
	if code != 1 || !strings.HasPrefix(stderr, prefix) || !strings.Contains(stderr, "its bytes differ from the run's and trajectory 0's values no longer match their checksum") ||
		!strings.HasSuffix(stderr, "it is not the data the run was trained on (restore the file, or start a new run)\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("damaged value: code %d, stderr %q, want %q...", code, stderr, prefix)
	}

	if err := os.WriteFile(path, orig[:len(orig)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = resume()
	prefix = fmt.Sprintf("uhno: train: cannot resume %s: data: %s has %d bytes (modified ", ck, path, len(orig)-100)
	if code != 1 || !strings.HasPrefix(stderr, prefix) || !strings.Contains(stderr, fmt.Sprintf("the run recorded %d bytes", len(orig))) ||
		!strings.Contains(stderr, "truncated, extended or replaced") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("truncated: code %d, stderr %q, want %q...", code, stderr, prefix)
	}

	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr = resume(); code != 0 || !strings.Contains(stdout, "step 6/6") {
		t.Errorf("restored file: code %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// helperArgsEnv carries the command line of TestTrainHelperProcess.
const helperArgsEnv = "UHNO_TEST_HELPER_ARGS"

// TestTrainHelperProcess is not a test: the crash tests start the test
// binary again with helperArgsEnv set, and it is then `uhno` with those
// arguments, in a process of its own that can be killed.
func TestTrainHelperProcess(t *testing.T) {
	raw := os.Getenv(helperArgsEnv)
	if raw == "" {
		t.Skip("the child process of the crash tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// child is one uhno process started by the crash tests.
type child struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	raw, _ := json.Marshal(args)
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^TestTrainHelperProcess$", "-test.count=1")}
	c.cmd.Env = append(append(os.Environ(), helperArgsEnv+"="+string(raw)), env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return c
}

// killed reports whether the finished child died of SIGKILL.
func (c *child) killed() bool {
	ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// verifyCheckpoint checks every file of the checkpoint that latest names
// in run against its manifest (size and SHA-256) and returns its step.
func verifyCheckpoint(t *testing.T, run string) int {
	t.Helper()
	st, dir, err := train.ReadState(run)
	if err != nil {
		t.Fatalf("latest does not name a readable checkpoint: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, train.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Files map[string]struct {
			Size   int64  `json:"size"`
			SHA256 string `json:"sha256"`
		} `json:"files"`
	}
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{train.WeightsFile, train.OptimizerFile, train.StateFile} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		sum := sha256.Sum256(raw)
		if want, ok := man.Files[name]; err != nil || !ok || int64(len(raw)) != want.Size || hex.EncodeToString(sum[:]) != want.SHA256 {
			t.Fatalf("checkpoint %s: %s does not match its manifest (%v)", dir, name, err)
		}
	}
	return st.Step
}

// sameFinal requires the final checkpoint files (of step `steps`) and
// the logged losses of two runs to be equal byte for byte.
func sameFinal(t *testing.T, want, got string, steps int) {
	t.Helper()
	final := train.StepDirName(steps)
	for _, name := range []string{train.WeightsFile, train.OptimizerFile, train.StateFile} {
		a, errA := os.ReadFile(filepath.Join(want, final, name))
		b, errB := os.ReadFile(filepath.Join(got, final, name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the uninterrupted run (%v, %v)", name, errA, errB)
		}
	}
	a, _ := json.Marshal(logRecords(t, want))
	b, _ := json.Marshal(logRecords(t, got))
	if !bytes.Equal(a, b) {
		t.Errorf("the log differs from the uninterrupted run:\n%s\n%s", a, b)
	}
}

// TestTrainSurvivesSIGKILL kills training processes with SIGKILL, which
// gives them no chance to clean up: first at seeded random moments (while
// starting, in a step, in the log, in a checkpoint, before the first
// one), continuing each time with --resume (or afresh when no checkpoint
// was written yet); then inside a checkpoint save at each of its stages
// (UHNO_TEST_CRASH_IN_CHECKPOINT). After every kill latest, when present,
// names a checkpoint whose files match their manifest, and both finished
// runs equal an uninterrupted one bit for bit: weights, moments, state
// and every logged loss.
func TestTrainSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains in child processes")
	}
	const steps = 45
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	flags := []string{"--steps", fmt.Sprint(steps), "--log-every", "1", "--val-every", "5", "--ckpt-every", "3", "--keep", "2", "--threads", "1"}
	fresh := func(out string) []string { return tinyTrain(dataDir, append(slices.Clone(flags), "--out", out)...) }
	resume := func(out string) []string { return []string{"train", "--resume", out, "--quiet", "--data", dataDir} }
	// continuing resumes the run in out, or starts it when no checkpoint
	// was written yet, as a user would.
	continuing := func(out string) []string {
		if _, err := os.Stat(filepath.Join(out, train.LatestFile)); err != nil {
			return fresh(out)
		}
		return resume(out)
	}

	gen := append([]string{"datagen", "--task", "burgers", "--out", dataDir, "--quiet", "--set", "optim.batch=4"}, tinySets...)
	if code, out, errOut := execute(t, gen...); code != 0 {
		t.Fatalf("datagen %v: code %d, stdout %q, stderr %q", gen, code, out, errOut)
	}
	straight := filepath.Join(dir, "straight")
	begin := time.Now()
	c := startChild(t, nil, fresh(straight)...)
	if err := c.cmd.Wait(); err != nil || strings.Contains(c.out.String(), "generated") {
		t.Fatalf("straight run: %v: %s", err, c.out.String())
	}
	span := time.Since(begin)
	// The run's own time (the log's elapsed_s at its last step) and the
	// process's start-up (the rest) scale the random kill times below.
	recs := logRecords(t, straight)
	raw, _ := os.ReadFile(filepath.Join(straight, train.LogFile))
	var last struct {
		Elapsed float64 `json:"elapsed_s"`
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil || len(recs) == 0 {
		t.Fatalf("straight log: %v", err)
	}
	work := time.Duration(last.Elapsed * float64(time.Second))
	startup := max(span-work, 0)

	t.Run("random", func(t *testing.T) {
		// Each process is killed at a random moment: from its start,
		// within its start-up or its first checkpoint interval; or after
		// it has written one to three more checkpoints, within the next
		// interval. Counting checkpoints (latest changes) rather than
		// trusting the clock alone keeps the kills inside the run when
		// the machine is faster or slower than during the timed run. The
		// seed fixes the plan (checkpoints to wait for, delays); where a
		// kill lands exactly (start-up, a step, the log, a save) varies
		// with the machine's timing.
		run := filepath.Join(dir, "random")
		latest := filepath.Join(run, train.LatestFile)
		readLatest := func() string { raw, _ := os.ReadFile(latest); return string(raw) }
		interval := work * 3 / steps
		rng := rand.New(rand.NewPCG(15, 1))
		kills, done := 0, false
		for kills < 6 {
			left := steps
			if st, _, err := train.ReadState(run); err == nil {
				left -= st.Step
			}
			if left < 9 {
				break // fewer than three intervals left: let it finish
			}
			wait, delay := rng.IntN(4), time.Duration(rng.Float64()*float64(interval))
			if wait == 0 {
				delay = time.Duration(rng.Float64() * float64(startup+interval))
			}
			prev := readLatest()
			c := startChild(t, nil, continuing(run)...)
			exited := make(chan error, 1)
			go func() { exited <- c.cmd.Wait() }()
			var err error
			finished := false
			for seen := 0; seen < wait && !finished; {
				select {
				case err = <-exited:
					finished = true
				case <-time.After(time.Millisecond):
					if now := readLatest(); now != prev {
						seen, prev = seen+1, now
					}
				}
			}
			if !finished {
				select {
				case err = <-exited:
				case <-time.After(delay):
					c.cmd.Process.Kill()
					err = <-exited
				}
			}
			if !c.killed() {
				if err != nil {
					t.Fatalf("child: %v: %s", err, c.out.String())
				}
				done = true // it finished first
				break
			}
			kills++
			if _, err := os.Stat(latest); err == nil {
				t.Logf("kill %d: latest names step %d", kills, verifyCheckpoint(t, run))
			} else {
				t.Logf("kill %d: no checkpoint yet", kills)
			}
		}
		if kills < 3 {
			t.Fatalf("only %d processes were killed before the run finished; the test needs longer runs", kills)
		}
		if !done {
			if c := startChild(t, nil, continuing(run)...); c.cmd.Wait() != nil {
				t.Fatalf("final run: %s", c.out.String())
			}
		}
		sameFinal(t, straight, run, steps)
	})

	t.Run("in checkpoint", func(t *testing.T) {
		run := filepath.Join(dir, "crash")
		// Killed in its first checkpoint, a run has none: it starts
		// again afresh, over the log records of the dead process.
		c := startChild(t, []string{experiment.CrashEnv + "=" + train.StageAfterState}, fresh(run)...)
		if err := c.cmd.Wait(); !c.killed() {
			t.Fatalf("%s: the process was not killed (%v): %s", train.StageAfterState, err, c.out.String())
		}
		if _, err := os.Stat(filepath.Join(run, train.LatestFile)); err == nil {
			t.Fatal("a process killed in its first checkpoint left latest")
		}
		if got := logSteps(t, run, "train"); !slices.Equal(got, []int{1, 2, 3}) {
			t.Fatalf("the dead process logged steps %v, want 1, 2, 3", got)
		}
		for i, stage := range train.SaveStages() {
			step := 3 * (i + 2) // 6, 9, ..., 24
			c := startChild(t, []string{fmt.Sprintf("%s=%s@%d", experiment.CrashEnv, stage, step)}, continuing(run)...)
			if err := c.cmd.Wait(); !c.killed() {
				t.Fatalf("%s@%d: the process was not killed (%v): %s", stage, step, err, c.out.String())
			}
			want := step - 3 // latest still names the previous checkpoint
			if stage == train.StageBeforePrune {
				want = step
			}
			if got := verifyCheckpoint(t, run); got != want {
				t.Fatalf("killed at %s of step %d: latest names step %d, want %d", stage, step, got, want)
			}
		}
		if c := startChild(t, nil, resume(run)...); c.cmd.Wait() != nil {
			t.Fatalf("final resume: %s", c.out.String())
		}
		sameFinal(t, straight, run, steps)
	})
}

// damageFirstValue changes the first value of the "tensor" dataset of the
// uhno-generated file at path in place, leaving its checksums (the
// writer's bookkeeping) as they were: damage only a read of the values
// finds.
func damageFirstValue(t *testing.T, path string) {
	t.Helper()
	hf, err := hdf5.OpenFile(path, hdf5.F_ACC_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	d, err := hf.OpenDataset("tensor")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sp := d.Space()
	n := sp.SimpleExtentNPoints()
	sp.Close()
	all := make([]float32, n)
	if err := d.Read(&all); err != nil {
		t.Fatal(err)
	}
	all[0] += 1
	if err := d.Write(&all); err != nil {
		t.Fatal(err)
	}
}
