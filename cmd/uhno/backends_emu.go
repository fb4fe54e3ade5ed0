//go:build cudaemu && !cuda

package main

import (
	"fmt"

	"uhno/internal/cuda"
	"uhno/internal/experiment"
	"uhno/internal/tensor"
)

// This file is the emulated-GPU side of cmd/uhno, linked only into
// bin/uhno-emu (`make emu`): the CUDA backend, its kernels and its
// CUDA-graph path running on the CPU under the emulator (internal/cuda/emu).
// It is for debugging the GPU code path without a GPU, far slower than
// the CPU build; it computes what bin/uhno-cuda computes.

// compiledBackends lists the compute backends this binary computes on.
func compiledBackends() []string { return []string{"cuda (emulated on the CPU)"} }

// gpuOrdinal is the GPU this binary computes on: the emulated GPU 0.
const gpuOrdinal = 0

// newBackend opens the CUDA backend on the emulator (threads, the CPU
// backend's worker count, has no use here: $UHNO_EMU_THREADS sets the
// emulator's).
func newBackend(int) (tensor.Backend, func() error, error) {
	b, err := cuda.New(gpuOrdinal)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the emulated GPU: %s", experiment.OneLine(err.Error()))
	}
	return b, b.Close, nil
}

// The CUDA backend has bf16 autocast (--precision, internal/experiment/precision.go).
var _ experiment.PrecisionSetter = (*cuda.Backend)(nil)
