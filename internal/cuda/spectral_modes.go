//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"

	"uhno/internal/tensor"
)

// SpectralConvModes (LogLo-FNO) and LowRankSpectralConv (F-FNO) on the
// GPU: SpectralConv's cuFFT transforms and scratch (spectral.go), the
// kernels of kernels/spectral_modes.cu for what differs, and
// kernels/spectral.cu's where the arithmetic is SpectralConv's.
//
// SpectralConvModes is SpectralConv with the last-axis test f2 < K
// replaced by a table of the list (slot of each half-spectrum frequency,
// then the frequency of each slot), uploaded on the first call with that
// list and grid and cached in b.state; nothing else is read from the host.
//
//	forward:  y  = C2R(scale . Mix_W(R2C(x)) on the listed modes)   (spectral_modes_mix_forward)
//	backward: dx += C2R(scale . Mix^H_W(R2C(dy)))                  (spectral_modes_mix_adjoint)
//	          dw += D . sum_b conj(R2C(x)) R2C(dy)                  (spectral_modes_dw)
//
// LowRankSpectralConv goes through the rank-R spectrum (the CPU backend's
// derivation, internal/cpu/spectral_modes.go):
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

// modesTables is the SpectralConvModes state in b.state["spectral_modes"]:
// the device table of each (last-axis length, list) seen.
type modesTables struct {
	tabs map[string]*Buf
}

// modesDims checks a SpectralConvModes call as the CPU backend does
// (1 to 3 axes, K0 >= 0, the list strictly increasing in [0, N/2) with
// at most K0 entries) and returns its layout, the last axis keeping
// len(modes) slots; ok is false when nothing is kept (an empty list, or
// an axis that keeps no mode).
func modesDims(op string, x *tensor.Tensor, k0 int, modes []int) (SpectralDims, bool) {
	s, ok := NewSpectralDims(x.Spatial(), k0)
	nl := s.N[2]
	if len(modes) > k0 {
		panic(fmt.Sprintf("cuda: %s: %d modes for K0=%d", op, len(modes), k0))
	}
	for j, f := range modes {
		if f < 0 || 2*f >= nl || (j > 0 && f <= modes[j-1]) {
			panic(fmt.Sprintf("cuda: %s: modes %v are not increasing in [0, %d/2)", op, modes, nl))
		}
	}
	if len(modes) == 0 {
		ok = false
	}
	if ok {
		s.Box = s.Box / s.K[2] * len(modes)
		s.K[2] = len(modes)
	}
	return s, ok
}

// modesTable returns the device table of the list for a half spectrum of
// `half` bins: [half] slot of each frequency (-1: not kept), then [len]
// frequency of each slot, as int32 (carried bit for bit in float32
// slots). It is uploaded once per (half, list) and kept until Close.
func (b *Backend) modesTable(half int, modes []int) *Buf {
	st, _ := b.state["spectral_modes"].(*modesTables)
	if st == nil {
		st = &modesTables{tabs: map[string]*Buf{}}
		b.state["spectral_modes"] = st
	}
	key := fmt.Sprint(half, modes)
	if t, ok := st.tabs[key]; ok {
		return t
	}
	tab := make([]float32, half+len(modes))
	for f := 0; f < half; f++ {
		tab[f] = math.Float32frombits(uint32(0xffffffff)) // int32 -1
	}
	for j, f := range modes {
		tab[f] = math.Float32frombits(uint32(int32(j)))
		tab[half+j] = math.Float32frombits(uint32(int32(f)))
	}
	t := b.Alloc(len(tab)).(*Buf)
	b.Upload(t, tab)
	st.tabs[key] = t
	return t
}

// SpectralConvModes implements tensor.Backend: SpectralConv keeping the
// last-axis frequencies `modes` (slot j of the weight's last mode axis is
// frequency modes[j]); an empty list gives y = 0.
func (b *Backend) SpectralConvModes(y, x, w *tensor.Tensor, k0 int, modes []int) {
	s, ok := modesDims("SpectralConvModes", x, k0, modes)
	if !ok {
		b.Zero(buf(y))
		return
	}
	nb, cin, cout := x.Batch(), x.Channels(), y.Channels()
	spectralCheck("the input", nb*cin*s.Real)
	spectralCheck("the output", nb*cout*s.Real)
	tab := b.modesTable(s.Half, modes)
	xh := b.scratchBuf("spectral_xh", 2*nb*cin*s.Spec)
	b.spectralR2C(s, nb*cin, buf(x), xh)
	zh := b.scratchBuf("spectral_zh", 2*nb*cout*s.Spec)
	b.modesMix("spectral_modes_mix_forward", s, zh, xh, buf(w), tab, nb, cin, cout, cout)
	b.spectralC2R(s, nb*cout, zh, buf(y))
}

// modesMix launches SpectralConvModes' forward or adjoint mixing from the
// spectra in into out ([B][outChans][Spec], written whole), scaled by
// 1/prod(N).
func (b *Backend) modesMix(kernel string, s SpectralDims, out, in, w, tab *Buf, batch, cin, cout, outChans int) {
	total := batch * outChans * s.Spec
	spectralCheck("the mixed spectrum", 2*total)
	b.launch(kernel, Elementwise(total), out, in, w, tab, cin, cout,
		s.N[0], s.N[1], s.Half, s.K[0], s.K[1], s.K0, s.KVol,
		float32(1/float64(s.Real)), total)
}

// SpectralConvModesBackward implements tensor.Backend: SpectralConv's
// backward on the listed modes. dw entries of slots beyond the list (and
// of capped modes) are left as they are; nil gradients are skipped.
func (b *Backend) SpectralConvModesBackward(dx, dw, dy, x, w *tensor.Tensor, k0 int, modes []int) {
	if dx == nil && dw == nil {
		return
	}
	s, ok := modesDims("SpectralConvModesBackward", x, k0, modes)
	if !ok {
		return
	}
	nb, cin, cout := x.Batch(), x.Channels(), dy.Channels()
	spectralCheck("the input", nb*cin*s.Real)
	spectralCheck("the output", nb*cout*s.Real)
	tab := b.modesTable(s.Half, modes)
	gh := b.scratchBuf("spectral_gh", 2*nb*cout*s.Spec)
	b.spectralR2C(s, nb*cout, buf(dy), gh)
	if dx != nil {
		zh := b.scratchBuf("spectral_zh", 2*nb*cin*s.Spec)
		b.modesMix("spectral_modes_mix_adjoint", s, zh, gh, buf(w), tab, nb, cin, cout, cin)
		n := nb * cin * s.Real
		tmp := b.scratchBuf("spectral_real", n)
		b.spectralC2R(s, nb*cin, zh, tmp)
		b.launch("spectral_accumulate", Elementwise(n), buf(dx), tmp, n)
	}
	if dw != nil {
		xh := b.scratchBuf("spectral_xh", 2*nb*cin*s.Spec)
		b.spectralR2C(s, nb*cin, buf(x), xh)
		total := s.Corners * cin * cout * s.Box
		spectralCheck("the weight", 2*s.Corners*cin*cout*s.KVol)
		ntot := float64(s.Real)
		b.launch("spectral_modes_dw", Elementwise(total), buf(dw), xh, gh, tab, nb, cin, cout,
			s.N[0], s.N[1], s.N[2], s.Half, s.K[0], s.K[1], s.K[2], s.K0, s.KVol,
			float32(1/ntot), float32(2/ntot), total)
	}
}

// lowRankMix launches the unscaled first-stage mixing (lowrank_mix_forward:
// in [B][cin][Spec] -> out [B][cout][Spec] through U; lowrank_mix_adjoint:
// in [B][cout][Spec] -> out [B][cin][Spec] through V^H), written whole.
func (b *Backend) lowRankMix(kernel string, s SpectralDims, out, in, w *Buf, batch, cin, cout, outChans int) {
	total := batch * outChans * s.Spec
	spectralCheck("the rank spectrum", 2*total)
	b.launch(kernel, Elementwise(total), out, in, w, cin, cout,
		s.N[0], s.N[1], s.Half, s.K[0], s.K[1], s.K[2], s.K0, s.KVol, total)
}

// spectralDW launches spectral_dw: dw [corner][cin][cout][K0...] +=
// D sum_b conj(a[b, i]) g[b, o] on the kept modes.
func (b *Backend) spectralDW(s SpectralDims, dw, a, g *Buf, batch, cin, cout int) {
	total := s.Corners * cin * cout * s.Box
	spectralCheck("the weight", 2*s.Corners*cin*cout*s.KVol)
	ntot := float64(s.Real)
	b.launch("spectral_dw", Elementwise(total), dw, a, g, batch, cin, cout,
		s.N[0], s.N[1], s.N[2], s.Half, s.K[0], s.K[1], s.K[2], s.K0, s.KVol,
		float32(1/ntot), float32(2/ntot), total)
}

// LowRankSpectralConv implements tensor.Backend: SpectralConv with the
// weight U V at every kept mode; u is [2^(d-1), Cin, R, K0..., 2], v
// [2^(d-1), R, Cout, K0..., 2]. When some axis keeps no mode, y = 0.
func (b *Backend) LowRankSpectralConv(y, x, u, v *tensor.Tensor, k0 int) {
	s, ok := NewSpectralDims(x.Spatial(), k0)
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
	b.lowRankMix("lowrank_mix_forward", s, rh, xh, buf(u), nb, cin, r, r)
	zh := b.scratchBuf("spectral_zh", 2*nb*cout*s.Spec)
	b.spectralMix("spectral_mix_forward", s, zh, rh, buf(v), nb, r, cout, cout)
	b.spectralC2R(s, nb*cout, zh, buf(y))
}

// LowRankSpectralConvBackward implements tensor.Backend (see the top of
// this file); nil gradients are skipped, and gradient entries beyond the
// capped modes are left as they are.
func (b *Backend) LowRankSpectralConvBackward(dx, du, dv, dy, x, u, v *tensor.Tensor, k0 int) {
	if dx == nil && du == nil && dv == nil {
		return
	}
	s, ok := NewSpectralDims(x.Spatial(), k0)
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
		b.lowRankMix("lowrank_mix_forward", s, rh, xh, buf(u), nb, cin, r, r)
		b.spectralDW(s, buf(dv), rh, gh, nb, r, cout)
	}
	if dx == nil && du == nil {
		return
	}
	dh := b.scratchBuf("spectral_dh", 2*nb*r*s.Spec)
	b.lowRankMix("lowrank_mix_adjoint", s, dh, gh, buf(v), nb, r, cout, r)
	if du != nil {
		b.spectralDW(s, buf(du), xh, dh, nb, cin, r)
	}
	if dx != nil {
		zh := b.scratchBuf("spectral_zh", 2*nb*cin*s.Spec)
		b.spectralMix("spectral_mix_adjoint", s, zh, dh, buf(u), nb, cin, r, cin)
		n := nb * cin * s.Real
		tmp := b.scratchBuf("spectral_real", n)
		b.spectralC2R(s, nb*cin, zh, tmp)
		b.launch("spectral_accumulate", Elementwise(n), buf(dx), tmp, n)
	}
}
