package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"uhno/internal/runlock"
	"uhno/internal/train"
)

// TestRunDirectoryOneWriter starts a training run in a child process,
// freezes it once it has checkpointed, and starts a second `uhno train
// --resume` on the same directory in another process: the second must stop
// at once with one line naming the directory and the first one's pid, and
// change nothing in the directory. The first is then SIGKILLed, and the
// run resumes with no manual clean-up (the kernel dropped the lock).
func TestRunDirectoryOneWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("trains in child processes")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	run := filepath.Join(dir, "run")
	first := startChild(t, nil, tinyTrain(dataDir, "--steps", "100000", "--ckpt-every", "2", "--val-every", "0",
		"--dynamics-every", "0", "--threads", "1", "--out", run)...)
	defer first.cmd.Process.Kill()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(run, train.LatestFile)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint after 2 minutes: %s", first.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := first.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, first.cmd.Process.Pid) // a write in flight lands before the snapshot
	before := snapshot(t, run)

	for _, args := range [][]string{
		{"train", "--resume", run, "--quiet"},
		tinyTrain(dataDir, "--steps", "10", "--out", run),
	} {
		second := startChild(t, nil, args...)
		stuck := time.AfterFunc(time.Minute, func() { second.cmd.Process.Kill() }) // a second writer let in would train on
		err := second.cmd.Wait()
		stuck.Stop()
		out := second.out.String()
		want := fmt.Sprintf("uhno: train: run directory %s is in use by another process (pid %d on host ", run, first.cmd.Process.Pid)
		if err == nil || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
			t.Errorf("second writer %v: %v, output %q; want one line starting %q", args[:2], err, out, want)
		}
		if after := snapshot(t, run); after != before {
			t.Errorf("the refused second writer changed the run directory:\nbefore %s\nafter  %s", before, after)
		}
	}

	first.cmd.Process.Kill()
	first.cmd.Wait()
	st, _, err := train.ReadState(run)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := execute(t, "train", "--resume", run, "--stop-after", fmt.Sprint(st.Step+2), "--quiet", "--data", dataDir)
	if code != 0 {
		t.Fatalf("resume after SIGKILL: code %d, %s", code, errOut)
	}
	if got := verifyCheckpoint(t, run); got != st.Step+2 {
		t.Errorf("resumed run ends at step %d, want %d", got, st.Step+2)
	}
}

// snapshot describes every file under dir: name, size and modification
// time, in walk order.
// waitStopped waits until every thread of process pid is stopped ("T" in
// /proc): a thread inside a system call (a checkpoint's mkdir or write on
// a loaded disk) stops only when the call returns, so a fixed sleep after
// SIGSTOP can miss a write still landing. Elsewhere than Linux it sleeps.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		time.Sleep(500 * time.Millisecond)
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		stopped := true
		for _, p := range tasks {
			raw, err := os.ReadFile(p)
			if err != nil {
				continue // the thread exited
			}
			// The state follows the parenthesised command name.
			if i := strings.LastIndexByte(string(raw), ')'); i < 0 || i+2 >= len(raw) || (raw[i+2] != 'T' && raw[i+2] != 't') {
				stopped = false
			}
		}
		if stopped {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not stop within 30 s of SIGSTOP", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.Name() == runlock.File {
			return nil // its content is the holder's; only its lock matters
		}
		fmt.Fprintf(&b, "%s:%d:%d ", strings.TrimPrefix(p, dir), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
