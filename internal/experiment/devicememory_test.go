package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

// smallDevice is the CPU backend dressed as a device with little memory
// (tensor.DeviceMemory): MemInfo reports free of total bytes, and once
// failAt allocations have been made (failAt > 0) Alloc panics with a
// *tensor.OutOfMemory, as the CUDA backend does on a full card. Embedding
// only tensor.Backend hides the CPU's optional interfaces; the results
// are the same operations composed, so runs on it are deterministic.
type smallDevice struct {
	tensor.Backend
	free, total    int64
	allocs, failAt int
}

func (d *smallDevice) MemInfo() (free, total int64, err error) { return d.free, d.total, nil }

func (d *smallDevice) Alloc(n int) tensor.Storage {
	d.allocs++
	if d.failAt > 0 && d.allocs >= d.failAt {
		panic(&tensor.OutOfMemory{Device: "a small test device", Bytes: 4 * int64(n), Free: 0, Total: d.total,
			Err: errors.New("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY")})
	}
	return d.Backend.Alloc(n)
}

func onSmallDevice(o *TrainOptions, d *smallDevice) {
	o.NewBackend = func(int) (tensor.Backend, func() error, error) {
		d.Backend = cpu.New(1)
		return d, func() error { return nil }, nil
	}
}

// TestTrainRefusesStepBeyondDeviceMemory: a run whose step the memory
// plan puts above the device's free memory stops before its first step
// with one line naming the batch, the size asked and the free memory, and
// writes no checkpoint.
func TestTrainRefusesStepBeyondDeviceMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data")
	}
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	o := tinyTrain(t, filepath.Join(dir, "data"), run, 4)
	onSmallDevice(o, &smallDevice{free: 1 << 16, total: 1 << 20})
	err := Train(context.Background(), o)
	if err == nil {
		t.Fatal("a step beyond the device's memory trained")
	}
	msg := err.Error()
	for _, want := range []string{"train: one training step at batch ", "more on cpu (the memory plan, as --dry-run prints it), which has 0.1 MiB free of 1.0 MiB: lower --batch"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	if _, err := os.Stat(filepath.Join(run, train.LatestFile)); err == nil {
		t.Error("a checkpoint was written")
	}
}

// TestTrainOutOfMemoryMidRun: a device that runs out of memory during the
// run (after the plan let it start) stops it with one line that says so
// and where to resume; the checkpoint written before is intact, and
// --resume on a device with room ends where an uninterrupted run ends,
// bit for bit.
func TestTrainOutOfMemoryMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("generates data and trains")
	}
	const steps = 8
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	big := func() *smallDevice { return &smallDevice{free: 1 << 40, total: 1 << 40} }

	whole := filepath.Join(dir, "whole")
	o := tinyTrain(t, data, whole, steps)
	o.CkptEvery = 4
	counted := big()
	onSmallDevice(o, counted)
	if err := Train(context.Background(), o); err != nil {
		t.Fatal(err)
	}

	cut := filepath.Join(dir, "cut")
	o = tinyTrain(t, data, cut, steps)
	o.CkptEvery = 4
	failing := big()
	failing.failAt = counted.allocs * 7 / 8 // in step 7 or 8, after step 4's checkpoint
	onSmallDevice(o, failing)
	var stderr bytes.Buffer
	o.Err = &stderr
	err := Train(context.Background(), o)
	if err == nil {
		t.Fatal("the run did not stop when the device ran out of memory")
	}
	msg := err.Error()
	for _, want := range []string{"train: out of device memory on a small test device: an allocation of ", "failed with 0.0 MiB free of ",
		"the checkpoints already in " + cut + " are intact (uhno train --resume " + cut + " continues from the last)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	latest, err := os.ReadFile(filepath.Join(cut, train.LatestFile))
	if err != nil || strings.TrimSpace(string(latest)) != train.StepDirName(4) {
		t.Fatalf("latest = %q (%v), want step 4's checkpoint", latest, err)
	}

	r := &TrainOptions{Env: testEnv(nil, nil), Resume: cut, Quiet: true, Graph: true}
	onSmallDevice(r, big())
	if err := Train(context.Background(), r); err != nil {
		t.Fatalf("resume: %v", err)
	}
	final := train.StepDirName(steps)
	for _, name := range []string{train.WeightsFile, train.OptimizerFile, train.StateFile} {
		a, errA := os.ReadFile(filepath.Join(whole, final, name))
		b, errB := os.ReadFile(filepath.Join(cut, final, name))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s after the resume differs from the uninterrupted run (%v, %v)", name, errA, errB)
		}
	}
}
