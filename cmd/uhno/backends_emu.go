//go:build cudaemu && !cuda

package main

import (
	"context"
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

// gpuUsable reports whether this binary can run on a GPU.
const gpuUsable = false

// gpuRows are the GPU rows of `uhno-emu doctor`: the emulated backend
// opens (every kernel of the launch table, FFTW for cuFFT) and computes
// one kernel round trip. The error, when not nil, is why it could not;
// doctor prints the rows first and then exits non-zero with it.
func gpuRows(context.Context, hostProbe) ([][2]string, error) {
	line := "emulated: " + cuda.EmulatorNote
	b, closeB, err := newBackend(0)
	if err != nil {
		return [][2]string{{"GPU backend", "cannot open: " + experiment.OneLine(err.Error())}}, err
	}
	dev := b.(*cuda.Backend).Device()
	rtErr := gpuRoundTrip(b)
	if err := closeB(); rtErr == nil && err != nil {
		rtErr = err
	}
	if rtErr != nil {
		return [][2]string{{"GPU", line}, {"GPU backend", dev + ", but " + experiment.OneLine(rtErr.Error())}}, rtErr
	}
	return [][2]string{{"GPU", line}, {"GPU backend", "ready: " + dev + "; kernel round trip ok"}}, nil
}

// newBackend opens the CUDA backend on the emulator (threads, the CPU
// backend's worker count, has no use here: $UHNO_EMU_THREADS sets the
// emulator's).
func newBackend(int) (tensor.Backend, func() error, error) {
	b, err := cuda.New(0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the emulated GPU: %s", experiment.OneLine(err.Error()))
	}
	return b, b.Close, nil
}

// The CUDA backend has bf16 autocast (--precision, internal/experiment/precision.go).
var _ experiment.PrecisionSetter = (*cuda.Backend)(nil)
