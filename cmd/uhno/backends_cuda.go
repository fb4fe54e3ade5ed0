//go:build cuda

package main

import (
	"fmt"
	"os"
	"runtime"

	"uhno/internal/cuda"
	"uhno/internal/experiment"
	"uhno/internal/tensor"
)

// This file is the GPU side of cmd/uhno, linked only into bin/uhno-cuda
// (`make cuda`). gorgonia.org/cu calls cuInit when the binary starts and
// exits with its own message when no NVIDIA driver is present, so nothing
// here runs on a machine without one.

// gpuOrdinal is the GPU uhno-cuda computes on: the process's rank on its
// node under mpirun or srun (one GPU a rank), else GPU 0.
var gpuOrdinal = localRank(os.Getenv)

// compiledBackends lists the compute backends this binary computes on: the
// CUDA backend; train and eval use GPU 0.
func compiledBackends() []string { return []string{"cuda"} }

// newBackend opens the CUDA backend on GPU 0 for train, eval and bench
// (threads, the CPU backend's worker count, has no use here). The backend
// binds its context to the calling OS thread, so newBackend locks the
// calling goroutine to its thread until the returned function runs: call
// both, and every backend method, from one goroutine. The returned
// function releases the device memory, the FFT plans and the context.
func newBackend(int) (tensor.Backend, func() error, error) {
	runtime.LockOSThread()
	b, err := cuda.New(gpuOrdinal)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, nil, fmt.Errorf("opening GPU %d: %s", gpuOrdinal, experiment.OneLine(err.Error()))
	}
	closed := false
	return b, func() error {
		if closed {
			return nil
		}
		closed = true
		defer runtime.UnlockOSThread()
		if err := b.Close(); err != nil {
			return fmt.Errorf("closing GPU %d: %s", gpuOrdinal, experiment.OneLine(err.Error()))
		}
		return nil
	}, nil
}

// The CUDA backend has bf16 autocast (--precision, internal/experiment/precision.go).
var _ experiment.PrecisionSetter = (*cuda.Backend)(nil)
