//go:build cudaemu && !cuda

package doctor

import (
	"context"

	"uhno/internal/cuda"
	"uhno/internal/experiment"
)

// GPUUsable reports whether this binary can run on a GPU.
const GPUUsable = false

// gpuRows are the GPU rows of `uhno-emu doctor`: the emulated backend
// opens (every kernel of the launch table, FFTW for cuFFT) and computes
// one kernel round trip. The error, when not nil, is why it could not;
// doctor prints the rows first and then exits non-zero with it.
func gpuRows(_ context.Context, build Build, _ Probe) ([][2]string, error) {
	line := "emulated: " + cuda.EmulatorNote
	b, closeB, err := build.NewBackend(0)
	if err != nil {
		return [][2]string{{"GPU backend", "cannot open: " + experiment.OneLine(err.Error())}}, err
	}
	dev := b.(*cuda.Backend).Device()
	rtErr := roundTrip(b)
	if err := closeB(); rtErr == nil && err != nil {
		rtErr = err
	}
	if rtErr != nil {
		return [][2]string{{"GPU", line}, {"GPU backend", dev + ", but " + experiment.OneLine(rtErr.Error())}}, rtErr
	}
	return [][2]string{{"GPU", line}, {"GPU backend", "ready: " + dev + "; kernel round trip ok"}}, nil
}
