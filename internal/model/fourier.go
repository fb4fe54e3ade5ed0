package model

import "uhno/internal/tensor"

// fourierBranch is the global branch B_F: z_F = irfft(R . rfft(h)) (Sec.
// 3.2, App. C "Fourier Branch Implementation"). R is stored at the nominal
// K0 modes per axis, one complex weight per kept corner (2^(d-1) of them,
// as in the original FNO code), as a real tensor
// [2^(d-1), C, C, K0, ..., K0, 2]; the backend slices it to
// K_eff = min(K0, floor(N_l/2)) on a grid with N_l points (Eq. mode-cap).
// On the last (rfft) axis it keeps the frequencies modes(K0, N):
// tensor.FirstModes (0..K_eff-1) for U-HNO and FNO, tensor.LogModes for
// LogLo-FNO (FNOSpec.Frequencies). The spectral weights have no bias.
type fourierBranch struct {
	w     *tensor.Tensor
	k0    int
	modes func(k0, n int) []int
}

func newFourier(pb *builder, name string, dim, cin, cout, k0 int) *fourierBranch {
	bound := 1 / float64(cin*cout)
	return &fourierBranch{w: pb.param(name+".w", tensor.SpectralWeightShape(dim, cin, cout, k0), initSpectral, bound, nil),
		k0: k0, modes: tensor.FirstModes}
}

func (f *fourierBranch) forward(tp *tensor.Tape, h *tensor.Tensor) *tensor.Tensor {
	return tp.SpectralConv(h, f.w, f.k0, f.modes(f.k0, h.Shape[len(h.Shape)-1]))
}
