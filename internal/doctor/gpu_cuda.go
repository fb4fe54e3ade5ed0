//go:build cuda

package doctor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"gorgonia.org/cu"

	"uhno/internal/cuda"
	"uhno/internal/cuda/cufft"
	"uhno/internal/experiment"
)

// GPUUsable reports whether this binary can run on a GPU.
const GPUUsable = true

// gpuRows are the GPU rows of `uhno-cuda doctor`: the GPU (name, memory,
// compute capability), the driver and the CUDA driver API version it
// offers, the cuFFT library found and its version, and whether the CUDA
// backend opens on the build's GPU (context, stream, every embedded PTX
// module JIT-compiled for this GPU, cuFFT) and computes one kernel round
// trip. Every row is returned; the error, when not nil, is the first
// failure (no device, cuFFT not loadable, the backend not opening or
// computing), and doctor exits non-zero with it once the report is out.
func gpuRows(_ context.Context, b Build, p Probe) ([][2]string, error) {
	gpu, gpuErr := gpuLine(b.Ordinal)
	cufftRow, cufftErr := cufftLine(p)
	backend, backendErr := backendLine(b)
	return [][2]string{
		{"GPU", gpu},
		{"GPU driver", driverLine(p)},
		{"cuFFT", cufftRow},
		{"GPU backend", backend},
	}, firstErr(gpuErr, cufftErr, backendErr)
}

// firstErr is the first non-nil error of errs.
func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// gpuLine names GPU ordinal: name, memory, compute capability, and how
// many GPUs the driver shows.
func gpuLine(ordinal int) (string, error) {
	n, err := cu.NumDevices()
	if err != nil {
		msg := "cannot count devices: " + experiment.OneLine(err.Error())
		return msg, errors.New(msg)
	}
	if n <= ordinal {
		msg := fmt.Sprintf("none: the driver shows %d devices, GPU %d wanted", n, ordinal)
		return msg, errors.New("no GPU: " + msg)
	}
	dev := cu.Device(ordinal)
	name, err := dev.Name()
	if err != nil {
		msg := fmt.Sprintf("device %d: name: %s", ordinal, experiment.OneLine(err.Error()))
		return msg, errors.New(msg)
	}
	mem, err := dev.TotalMem()
	if err != nil {
		msg := fmt.Sprintf("%s: memory: %s", name, experiment.OneLine(err.Error()))
		return msg, errors.New(msg)
	}
	major, err := dev.Attribute(cu.ComputeCapabilityMajor)
	if err != nil {
		msg := fmt.Sprintf("%s: compute capability: %s", name, experiment.OneLine(err.Error()))
		return msg, errors.New(msg)
	}
	minor, err := dev.Attribute(cu.ComputeCapabilityMinor)
	if err != nil {
		msg := fmt.Sprintf("%s: compute capability: %s", name, experiment.OneLine(err.Error()))
		return msg, errors.New(msg)
	}
	return fmt.Sprintf("%s, %.1f GiB, compute capability %d.%d (device %d of %d, the one uhno-cuda uses)",
		name, float64(mem)/(1<<30), major, minor, ordinal, n), nil
}

// driverLine is the kernel driver's version (from the NVIDIA proc file;
// the CUDA driver API does not report it) and the CUDA version of the
// driver API it implements (cuDriverGetVersion, e.g. 13000 = 13.0).
func driverLine(p Probe) string {
	drv := "version unknown (no " + NvidiaProcFile + ")"
	if b, err := p.ReadFile(NvidiaProcFile); err == nil {
		drv = "version unknown (" + NvidiaProcFile + " names none)"
		first, _, _ := strings.Cut(string(b), "\n")
		for _, f := range strings.Fields(first) {
			if isVersion(f) {
				drv = f
				break
			}
		}
	}
	api := "CUDA driver API version unknown"
	if v := cu.Version(); v > 0 {
		api = fmt.Sprintf("CUDA driver API %d.%d", v/1000, v%1000/10)
	}
	return drv + ", " + api
}

// isVersion reports whether s looks like a driver version: digits in two
// or more dot-separated groups (580.65.06).
func isVersion(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, part := range parts {
		if part == "" || strings.Trim(part, "0123456789") != "" {
			return false
		}
	}
	return true
}

// cufftLine loads cuFFT as the backend does (cufft.Load: $UHNO_CUFFT, then
// libcufft.so.12, .11, .10) and names the file the dynamic loader mapped
// (read from /proc/self/maps) and the library's version (cufftGetVersion,
// e.g. 10900 = 10.9.0).
func cufftLine(p Probe) (string, error) {
	lib, err := cufft.Load()
	if err != nil {
		return experiment.OneLine(err.Error()), err
	}
	path := lib.Path()
	if maps, err := p.ReadFile("/proc/self/maps"); err == nil {
		for _, line := range strings.Split(string(maps), "\n") {
			f := strings.Fields(line)
			if len(f) >= 6 && strings.HasPrefix(filepath.Base(f[len(f)-1]), "libcufft.so") {
				path = f[len(f)-1] + " (loaded as " + lib.Path() + ")"
				break
			}
		}
	}
	v, err := lib.Version()
	if err != nil {
		return path + ", version unknown: " + experiment.OneLine(err.Error()), nil
	}
	return fmt.Sprintf("%s, version %d.%d.%d (%d)", path, v/1000, v%1000/100, v%100, v), nil
}

// backendLine opens the CUDA backend as train does (b.NewBackend), runs
// one kernel round trip (roundTrip) and closes it; the error is why the
// backend is unusable.
func backendLine(build Build) (string, error) {
	b, closeB, err := build.NewBackend(0)
	if err != nil {
		return "cannot open: " + experiment.OneLine(err.Error()), err
	}
	dev := b.(*cuda.Backend).Device()
	rtErr := roundTrip(b)
	if err := closeB(); rtErr == nil && err != nil {
		rtErr = err
	}
	if rtErr != nil {
		return "opened on " + dev + ", but " + experiment.OneLine(rtErr.Error()), rtErr
	}
	return fmt.Sprintf("ready on GPU %d (%s): context, stream, embedded PTX kernels and cuFFT loaded; kernel round trip ok", build.Ordinal, dev), nil
}
