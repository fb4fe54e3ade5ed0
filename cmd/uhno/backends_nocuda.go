//go:build !cuda && !cudaemu

package main

import (
	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// compiledBackends lists the compute backends linked into this binary. The
// default build has only the plain-Go CPU backend, so that it starts on any
// machine (a CUDA binary cannot start without a GPU).
func compiledBackends() []string { return []string{"cpu"} }

// gpuOrdinal is the GPU this binary computes on: none, the CPU build.
const gpuOrdinal = 0

// newBackend returns the backend that train, eval and bench compute on: in
// this build the CPU backend with `threads` workers per operation. The
// returned function releases the backend (nothing to release on the CPU);
// call it, from the same goroutine, when done.
func newBackend(threads int) (tensor.Backend, func() error, error) {
	return cpu.New(threads), func() error { return nil }, nil
}
