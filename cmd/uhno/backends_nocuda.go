//go:build !cuda && !cudaemu

package main

import (
	"context"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// compiledBackends lists the compute backends linked into this binary. The
// default build has only the plain-Go CPU backend, so that it starts on any
// machine (a CUDA binary cannot start without a GPU).
func compiledBackends() []string { return []string{"cpu"} }

// gpuUsable reports whether this binary can run on a GPU.
const gpuUsable = false

// gpuBuildNote is what `uhno doctor` says about GPUs in this build.
const gpuBuildNote = "not available in this build (build bin/uhno-cuda with `make cuda`)"

// gpuRows are the GPU rows of `uhno doctor`: in the CPU build, one line
// saying how to get a GPU build, and never an error (doctor exits 0).
func gpuRows(context.Context, hostProbe) ([][2]string, error) {
	return [][2]string{{"GPU", gpuBuildNote}}, nil
}

// newBackend returns the backend that train, eval and bench compute on: in
// this build the CPU backend with `threads` workers per operation. The
// returned function releases the backend (nothing to release on the CPU);
// call it, from the same goroutine, when done.
func newBackend(threads int) (tensor.Backend, func() error, error) {
	return cpu.New(threads), func() error { return nil }, nil
}
