//go:build !cuda

package main

// compiledBackends lists the compute backends linked into this binary. The
// default build has only the plain-Go CPU backend, so that it starts on any
// machine (a CUDA binary cannot start without a GPU).
func compiledBackends() []string { return []string{"cpu"} }

// gpuUsable reports whether this binary can run on a GPU.
const gpuUsable = false

// gpuBuildNote is what `uhno doctor` says about GPUs in this build.
const gpuBuildNote = "not available in this build (build bin/uhno-cuda with `make cuda`)"
