package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"uhno/internal/dist/disttest"
	"uhno/internal/train"
)

// mpiTrain runs `uhno train args` as np ranks under mpirun (the test
// binary as TestTrainHelperProcess) and returns its combined output and
// error. start, when not nil, is called with the started command.
func mpiTrain(t *testing.T, np int, start func(*exec.Cmd), args ...string) (string, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := disttest.Command(t, np, []string{helperArgsEnv + "=" + string(raw)}, os.Args[0], "-test.run=^TestTrainHelperProcess$", "-test.count=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if start != nil {
		start(cmd)
	}
	err := cmd.Wait()
	return out.String(), err
}

// safetensorsFloats returns the header and the float32 values of a
// safetensors file, tensor by tensor in file order.
func safetensorsFloats(t *testing.T, path string) (string, map[string][]float32) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil || len(raw) < 8 {
		t.Fatalf("%s: %v", path, err)
	}
	n := binary.LittleEndian.Uint64(raw)
	head := raw[8 : 8+n]
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(head, &hdr); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	body := raw[8+n:]
	out := map[string][]float32{}
	for name, v := range hdr {
		var ti struct {
			Offsets [2]int `json:"data_offsets"`
		}
		if name == "__metadata__" || json.Unmarshal(v, &ti) != nil {
			continue
		}
		seg := body[ti.Offsets[0]:ti.Offsets[1]]
		f := make([]float32, len(seg)/4)
		for i := range f {
			f[i] = math.Float32frombits(binary.LittleEndian.Uint32(seg[4*i:]))
		}
		out[name] = f
	}
	return string(head), out
}

// closeCheckpoints requires the weights and AdamW moments of two
// checkpoints to agree tensor by tensor within rel times each tensor's
// largest magnitude (float32 reduction order); it returns the largest
// relative difference.
func closeCheckpoints(t *testing.T, want, got string, rel float64) float64 {
	t.Helper()
	worst := 0.0
	for _, name := range []string{train.WeightsFile, train.OptimizerFile} {
		hw, w := safetensorsFloats(t, filepath.Join(want, name))
		hg, g := safetensorsFloats(t, filepath.Join(got, name))
		if hw != hg {
			t.Fatalf("%s: the headers differ (other tensors or shapes)", name)
		}
		for tn, a := range w {
			b := g[tn]
			scale, diff := 0.0, 0.0
			for i := range a {
				scale = math.Max(scale, math.Abs(float64(a[i])))
				diff = math.Max(diff, math.Abs(float64(a[i])-float64(b[i])))
			}
			if scale == 0 {
				scale = 1
			}
			worst = math.Max(worst, diff/scale)
			if diff > rel*scale {
				t.Errorf("%s %s: differs by %g, largest value %g (tolerance %g relative)", name, tn, diff, scale, rel)
			}
		}
	}
	return worst
}

// mpiTol is the relative tolerance between a 2-rank run and one process:
// the gradients differ only in float32 summation order (about 1e-7
// relative); after a few steps the checkpoints differ by about 1e-7 of
// each tensor's largest value, while a gradient summed but not divided by
// the rank count doubles the first AdamW moment.
const mpiTol = 1e-4

// TestTrainMPIMatchesOneProcess trains the tiny Burgers model with two
// ranks under mpirun and in one process with the same flags: the final
// weights and AdamW moments agree within mpiTol, the logs hold the same
// losses and only rank 0 wrote; a batch that does not split over the
// ranks is refused on one line.
func TestTrainMPIMatchesOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mpirun")
	}
	disttest.MPIRun(t)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	flags := []string{"--steps", "8", "--log-every", "1", "--val-every", "4", "--ckpt-every", "4"}
	one := filepath.Join(dir, "one")
	if code, _, errOut := execute(t, tinyTrain(dataDir, append(flags, "--out", one)...)...); code != 0 {
		t.Fatalf("one process: %s", errOut)
	}
	dp := filepath.Join(dir, "dp")
	out, err := mpiTrain(t, 2, nil, tinyTrain(dataDir, append(flags, "--out", dp)...)...)
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	for _, want := range []string{"data parallel: 2 ranks (Open MPI), global batch 4 = 2 x 2 per rank", "step 8/8: loss ", "all-reduce (gradients, with host copies) took "} {
		if strings.Count(out, want) != 1 {
			t.Errorf("output should hold %q once (rank 0 alone prints):\n%s", want, out)
		}
	}
	final := train.StepDirName(8)
	worst := closeCheckpoints(t, filepath.Join(one, final), filepath.Join(dp, final), mpiTol)
	t.Logf("largest relative difference from one process: %.3g", worst)
	a, b := logRecords(t, one), logRecords(t, dp)
	if len(a) != len(b) {
		t.Fatalf("log: %d records in one process, %d with two ranks", len(a), len(b))
	}
	for i := range a {
		la, lb := a[i]["loss"].(float64), b[i]["loss"].(float64)
		if a[i]["kind"] != b[i]["kind"] || math.Abs(la-lb) > 1e-4*math.Abs(la) {
			t.Errorf("log record %d: %v vs %v", i, a[i], b[i])
		}
		if share, ok := b[i]["allreduce_share"].(float64); b[i]["kind"] == "train" && (!ok || share <= 0 || share >= 1) {
			t.Errorf("log record %d: all-reduce share %v", i, b[i]["allreduce_share"])
		}
	}

	out, err = mpiTrain(t, 2, nil, tinyTrain(dataDir, "--steps", "2", "--batch", "3", "--out", filepath.Join(dir, "odd"))...)
	want := "uhno: rank 0 of 2: train: the batch of 3 (--batch, the global batch) does not split evenly over 2 ranks; use a multiple of 2\n"
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("batch 3 over 2 ranks: %v\n%s\nwant %q", err, out, want)
	}
}

// rankPID returns the PID of the child of mpirun (pid) that is rank
// `rank`, from OMPI_COMM_WORLD_RANK in its environment (0: not found).
func rankPID(pid, rank int) int {
	kids, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, k := range kids {
		raw, err := os.ReadFile(k)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; split after ')'.
		s := string(raw)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		dir := filepath.Dir(k)
		env, _ := os.ReadFile(filepath.Join(dir, "environ"))
		if bytes.Contains(env, []byte("\x00OMPI_COMM_WORLD_RANK="+strconv.Itoa(rank)+"\x00")) {
			n, _ := strconv.Atoi(filepath.Base(dir))
			return n
		}
	}
	return 0
}

// TestTrainMPIRankKilled kills rank 1 of a 2-rank run with SIGKILL after
// its first checkpoint: the job stops within a bound (mpirun ends it;
// where a launcher does not, --dist-timeout does, TestDataParallelFaults
// and internal/dist's TestMPI), rank 0 says on one line why, latest
// names a complete checkpoint, and --resume under mpirun continues from
// it to the end, within mpiTol of an uninterrupted one-process run.
func TestTrainMPIRankKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mpirun")
	}
	disttest.MPIRun(t)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	const steps = 300
	flags := []string{"--steps", strconv.Itoa(steps), "--log-every", "10", "--val-every", "100", "--ckpt-every", "20", "--dist-timeout", "20s"}
	one := filepath.Join(dir, "one")
	if code, _, errOut := execute(t, tinyTrain(dataDir, append(flags, "--out", one)...)...); code != 0 {
		t.Fatalf("one process: %s", errOut)
	}

	run := filepath.Join(dir, "dp")
	var killedAt time.Time
	out, err := mpiTrain(t, 2, func(cmd *exec.Cmd) {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(run, train.LatestFile)); err == nil {
				if pid := rankPID(cmd.Process.Pid, 1); pid != 0 {
					syscall.Kill(pid, syscall.SIGKILL)
					killedAt = time.Now()
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Errorf("no checkpoint or no rank 1 within a minute")
	}, tinyTrain(dataDir, append(flags, "--out", run)...)...)
	took := time.Since(killedAt)
	if killedAt.IsZero() {
		t.Fatalf("rank 1 was not killed:\n%s", out)
	}
	t.Logf("the job ended %s after rank 1 was killed", took.Round(time.Millisecond))
	if err == nil || took > 30*time.Second {
		t.Fatalf("after rank 1 was killed: %v, %s later\n%s", err, took, out)
	}
	if !strings.Contains(out, "uhno: rank 0 of 2: train: interrupted (Ctrl-C, or the launcher ending the job because a rank stopped)") &&
		!strings.Contains(out, "uhno: rank 0 of 2: train: step ") {
		t.Errorf("rank 0 printed no line of its own:\n%s", out)
	}
	if strings.Contains(out, "goroutine ") || strings.Contains(out, "panic") {
		t.Errorf("a stack trace:\n%s", out)
	}
	at := verifyCheckpoint(t, run)
	if at < 20 || at >= steps || at%20 != 0 {
		t.Fatalf("latest: step %d", at)
	}
	out, err = mpiTrain(t, 2, nil, "train", "--resume", run, "--data", dataDir, "--quiet")
	if err != nil || !strings.Contains(out, "step 300/300") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	final := train.StepDirName(steps)
	worst := closeCheckpoints(t, filepath.Join(one, final), filepath.Join(run, final), mpiTol)
	t.Logf("killed at step %d or later, resumed from %d; largest relative difference from one process %.3g", at, at, worst)
}

// TestAblateRefusesLauncher: uhno ablate under a launcher of several
// ranks stops on one line instead of running every mode on every rank.
func TestAblateRefusesLauncher(t *testing.T) {
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	t.Setenv("OMPI_COMM_WORLD_RANK", "1")
	code, _, errOut := execute(t, "ablate", "--task", "burgers", "--modes", "A", "--out", t.TempDir())
	want := "uhno: ablate: started by Open MPI as 2 ranks, but uhno ablate does not run data-parallel; run it as one process, or train each mode with mpirun ... uhno train --mode X\n"
	if code != 1 || errOut != want {
		t.Errorf("code %d, stderr %q; want %q", code, errOut, want)
	}
}

// TestTrainMPIInterrupt sends Ctrl-C (SIGINT) to mpirun, which passes it
// on to the ranks as SIGTERM: they agree to stop after the same step,
// rank 0 writes a checkpoint there, and one process (another rank count)
// resumes it to the end.
func TestTrainMPIInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mpirun")
	}
	disttest.MPIRun(t)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	run := filepath.Join(dir, "dp")
	const steps = 100000 // far more than the test waits for
	out, err := mpiTrain(t, 2, func(cmd *exec.Cmd) {
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if recs, _ := os.ReadFile(filepath.Join(run, "log.jsonl")); bytes.Count(recs, []byte(`"kind":"train"`)) >= 20 {
				cmd.Process.Signal(os.Interrupt)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Errorf("no 20 steps within a minute")
	}, tinyTrain(dataDir, "--steps", strconv.Itoa(steps), "--log-every", "1", "--ckpt-every", "5000", "--out", run)...)
	// mpirun itself exits 1 after a Ctrl-C, whatever the ranks did.
	at := verifyCheckpoint(t, run)
	if !strings.Contains(out, "stopped at step "+strconv.Itoa(at)+"; checkpoint ") || at < 20 {
		t.Fatalf("interrupted: %v, latest step %d\n%s", err, at, out)
	}
	code, stdout, errOut := execute(t, "train", "--resume", run, "--data", dataDir, "--quiet", "--stop-after", strconv.Itoa(at+3))
	if code != 0 || !strings.Contains(stdout, "stopped at step "+strconv.Itoa(at+3)) {
		t.Fatalf("resumed by one process: code %d\n%s\n%s", code, stdout, errOut)
	}
}
