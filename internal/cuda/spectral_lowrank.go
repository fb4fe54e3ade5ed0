//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// LowRankSpectralConv (F-FNO) on the GPU: SpectralConv's cuFFT
// transforms, scratch, table of the list tensor.FirstModes and kernels
// (spectral.go, kernels/spectral.cu), through the rank-R spectrum (the CPU
// backend's derivation, internal/cpu/spectral_lowrank.go):
//
//	forward:  Zr = Mix_U(X)                         (lowrank_mix_forward, unscaled)
//	          y  = C2R(scale . Mix_V(Zr))           (spectral_mix_forward)
//	backward: dZr = Mix^H_V(G)                      (lowrank_mix_adjoint, unscaled)
//	          dv += D . sum_b conj(Zr) G            (spectral_dw, Zr recomputed)
//	          du += D . sum_b conj(X) dZr           (spectral_dw)
//	          dx += C2R(scale . Mix^H_U(dZr))       (spectral_mix_adjoint)
//
// with X = R2C(x), G = R2C(dy), scale = 1/prod(N) and D the irfftn factor
// (1/prod(N) on the last-axis DC bin, 2/prod(N) elsewhere). Scratch:
// SpectralConv's spectral_xh, spectral_gh, spectral_zh and spectral_real,
// and spectral_rh (Zr) and spectral_dh (dZr), [B][R][Spec] complex.

// lowRankMix launches the unscaled first-stage mixing (lowrank_mix_forward:
// in [B][cin][Spec] -> out [B][cout][Spec] through U; lowrank_mix_adjoint:
// in [B][cout][Spec] -> out [B][cin][Spec] through V^H), written whole.
func (b *Backend) lowRankMix(kernel string, s SpectralDims, out, in, w, tab *Buf, batch, cin, cout, outChans int) {
	total := batch * outChans * s.Spec
	spectralCheck("the rank spectrum", 2*total)
	b.launch(kernel, Elementwise(total), out, in, w, tab, cin, cout,
		s.N[0], s.N[1], s.Half, s.K[0], s.K[1], s.K0, s.KVol, total)
}

// lowRankDims is the layout of a LowRankSpectralConv call on x (the list
// tensor.FirstModes), with its table.
func (b *Backend) lowRankDims(op string, x *tensor.Tensor, k0 int) (SpectralDims, *Buf, bool) {
	modes := tensor.FirstModes(k0, x.Shape[len(x.Shape)-1])
	s, ok := modesDims(op, x, k0, modes)
	if !ok {
		return s, nil, false
	}
	return s, b.modesTable(s.Half, modes), true
}

// LowRankSpectralConv implements tensor.Backend: SpectralConv with the
// weight U V at every kept mode; u is [2^(d-1), Cin, R, K0..., 2], v
// [2^(d-1), R, Cout, K0..., 2]. When some axis keeps no mode, y = 0.
func (b *Backend) LowRankSpectralConv(y, x, u, v *tensor.Tensor, k0 int) {
	s, tab, ok := b.lowRankDims("LowRankSpectralConv", x, k0)
	if !ok {
		b.Zero(buf(y))
		return
	}
	nb, cin, r, cout := x.Batch(), x.Channels(), u.Shape[2], y.Channels()
	spectralCheck("the input", nb*cin*s.Real)
	spectralCheck("the output", nb*cout*s.Real)
	xh := b.scratchBuf("spectral_xh", 2*nb*cin*s.Spec)
	b.spectralR2C(s, nb*cin, buf(x), xh)
	rh := b.scratchBuf("spectral_rh", 2*nb*r*s.Spec)
	b.lowRankMix("lowrank_mix_forward", s, rh, xh, buf(u), tab, nb, cin, r, r)
	zh := b.scratchBuf("spectral_zh", 2*nb*cout*s.Spec)
	b.spectralMix("spectral_mix_forward", s, zh, rh, buf(v), tab, nb, r, cout, cout)
	b.spectralC2R(s, nb*cout, zh, buf(y))
}

// LowRankSpectralConvBackward implements tensor.Backend (see the top of
// this file); nil gradients are skipped, and gradient entries beyond the
// capped modes are left as they are.
func (b *Backend) LowRankSpectralConvBackward(dx, du, dv, dy, x, u, v *tensor.Tensor, k0 int) {
	if dx == nil && du == nil && dv == nil {
		return
	}
	s, tab, ok := b.lowRankDims("LowRankSpectralConvBackward", x, k0)
	if !ok {
		return
	}
	nb, cin, r, cout := x.Batch(), x.Channels(), u.Shape[2], dy.Channels()
	spectralCheck("the input", nb*cin*s.Real)
	spectralCheck("the output", nb*cout*s.Real)
	gh := b.scratchBuf("spectral_gh", 2*nb*cout*s.Spec)
	b.spectralR2C(s, nb*cout, buf(dy), gh)
	var xh *Buf
	if dv != nil || du != nil {
		xh = b.scratchBuf("spectral_xh", 2*nb*cin*s.Spec)
		b.spectralR2C(s, nb*cin, buf(x), xh)
	}
	if dv != nil {
		rh := b.scratchBuf("spectral_rh", 2*nb*r*s.Spec)
		b.lowRankMix("lowrank_mix_forward", s, rh, xh, buf(u), tab, nb, cin, r, r)
		b.spectralDW(s, buf(dv), rh, gh, tab, nb, r, cout)
	}
	if dx == nil && du == nil {
		return
	}
	dh := b.scratchBuf("spectral_dh", 2*nb*r*s.Spec)
	b.lowRankMix("lowrank_mix_adjoint", s, dh, gh, buf(v), tab, nb, r, cout, r)
	if du != nil {
		b.spectralDW(s, buf(du), xh, dh, tab, nb, cin, r)
	}
	if dx != nil {
		zh := b.scratchBuf("spectral_zh", 2*nb*cin*s.Spec)
		b.spectralMix("spectral_mix_adjoint", s, zh, dh, buf(u), tab, nb, cin, r, cin)
		b.spectralAccumulate(s, buf(dx), zh, nb*cin)
	}
}
