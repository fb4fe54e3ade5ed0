//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// SpectralConvModes (LogLo-FNO) and LowRankSpectralConv (F-FNO) have no
// CUDA kernels yet: the CPU backend (internal/cpu/spectral_modes.go) is
// the reference they will be tested against. Until then these methods
// panic with a message saying so; no model the CUDA build trains by
// default calls them.

// SpectralConvModes implements tensor.Backend: not yet on the GPU.
func (b *Backend) SpectralConvModes(y, x, w *tensor.Tensor, k0 int, modes []int) {
	panic("cuda: SpectralConvModes (LogLo-FNO) has no CUDA kernel yet; train loglofno with the CPU build")
}

// SpectralConvModesBackward implements tensor.Backend: not yet on the GPU.
func (b *Backend) SpectralConvModesBackward(dx, dw, dy, x, w *tensor.Tensor, k0 int, modes []int) {
	panic("cuda: SpectralConvModesBackward (LogLo-FNO) has no CUDA kernel yet; train loglofno with the CPU build")
}

// LowRankSpectralConv implements tensor.Backend: not yet on the GPU.
func (b *Backend) LowRankSpectralConv(y, x, u, v *tensor.Tensor, k0 int) {
	panic("cuda: LowRankSpectralConv (F-FNO) has no CUDA kernel yet; train ffno with the CPU build")
}

// LowRankSpectralConvBackward implements tensor.Backend: not yet on the GPU.
func (b *Backend) LowRankSpectralConvBackward(dx, du, dv, dy, x, u, v *tensor.Tensor, k0 int) {
	panic("cuda: LowRankSpectralConvBackward (F-FNO) has no CUDA kernel yet; train ffno with the CPU build")
}
