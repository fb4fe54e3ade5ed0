// Package doctor is what `uhno doctor` reports: the build (version and
// what the Go toolchain recorded of it), the machine (OS, CPU, the NVIDIA
// driver and GPUs it shows) and whether this build's GPU backend opens and
// computes. cmd/uhno holds the command and prints the rows Report returns.
//
// # Build
//
// The GPU rows depend on the build tag, as cmd/uhno's backends do:
//
//   - no tag (gpu_cpu.go): one row saying how to get a GPU build, never an
//     error;
//   - `cudaemu` (gpu_emu.go): the emulated CUDA backend (internal/cuda
//     under internal/cuda/emu) opens and computes one kernel round trip;
//   - `cuda` (gpu_cuda.go): the GPU, driver and cuFFT library found, and
//     whether the CUDA backend opens on the build's GPU and computes one
//     kernel round trip (roundtrip.go).
//
// Everything that looks at the machine goes through a Probe, which tests
// replace.
package doctor
