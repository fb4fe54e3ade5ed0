//go:build !cuda && !cudaemu

package doctor

import "context"

// GPUUsable reports whether this binary can run on a GPU.
const GPUUsable = false

// gpuBuildNote is what `uhno doctor` says about GPUs in this build.
const gpuBuildNote = "not available in this build (build bin/uhno-cuda with `make cuda`)"

// gpuRows are the GPU rows of `uhno doctor`: in the CPU build, one line
// saying how to get a GPU build, and never an error (doctor exits 0).
func gpuRows(context.Context, Build, Probe) ([][2]string, error) {
	return [][2]string{{"GPU", gpuBuildNote}}, nil
}
