//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"

	"uhno/internal/cuda/cufft"
	"uhno/internal/tensor"
)

// The Fourier branch's spectral convolution (Sec. 3.2, App. C.4) on the
// GPU, the one spectral convolution of every FNO-type layer: cuFFT for the
// transforms, kernels/spectral.cu for the mode mixing. The last-axis
// frequency list (tensor.FirstModes for FNO and U-HNO, tensor.LogModes
// for LogLo-FNO) reaches the kernels as a table of slots (modesTable),
// uploaded on the first call with that list and grid and cached in
// b.state; nothing else is read from the host.
//
//	forward:  X = R2C(x)  (batch B*Cin)
//	          Z = scale . Mix_W(X) on the kept modes, 0 elsewhere, made
//	              Hermitian on the last-axis DC plane (spectral_mix_forward)
//	          y = C2R(Z)  (batch B*Cout, straight into y)
//	backward: G = R2C(dy)
//	          dx += C2R(scale . Mix^H_W(G))         (spectral_mix_adjoint,
//	                                                 spectral_accumulate)
//	          dw += D . sum_b conj(R2C(x)) G        (spectral_dw)
//
// with scale = 1/prod(N) (cuFFT's C2R is unnormalised) and D the CPU
// backend's per-bin factor c_k/prod(N). kernels/spectral.cu explains why
// C2R of that spectrum is numpy's irfftn of the kept modes, the contract.
// Nothing is read back to the host; the cuFFT plans are created on the
// first call of each (grid, batch, direction), bound to the backend's
// stream, cached in b.state and destroyed by Close.
//
// Scratch (device, reused across calls): spectral_xh and spectral_gh hold
// the half spectra of x and dy, spectral_zh the mixed spectrum,
// spectral_real the adjoint's C2R output before it is added into dx, and
// spectral_in a copy of an input that is not aligned for cuFFT.
// LowRankSpectralConv (spectral_lowrank.go) shares all of it.

// spectralPlanKey identifies a cuFFT plan.
type spectralPlanKey struct {
	n     [3]int // front-padded grid (SpectralDims.N)
	d     int
	batch int
	typ   cufft.Type
}

// spectralPlans is the SpectralConv state in b.state["spectral"].
type spectralPlans struct {
	plans map[spectralPlanKey]fftPlan
}

// spectralPlan returns the cached cuFFT plan for `batch` transforms of the
// grid s in direction typ, creating it (bound to the stream) on first use.
func (b *Backend) spectralPlan(s SpectralDims, batch int, typ cufft.Type) fftPlan {
	st, _ := b.state["spectral"].(*spectralPlans)
	if st == nil {
		st = &spectralPlans{plans: map[spectralPlanKey]fftPlan{}}
		b.state["spectral"] = st
		b.closers = append(b.closers, func() error {
			var err error
			for k, p := range st.plans {
				if derr := b.drv.FFTDestroy(p); err == nil && derr != nil {
					err = fmt.Errorf("cuda: SpectralConv: %w", derr)
				}
				delete(st.plans, k)
			}
			return err
		})
	}
	key := spectralPlanKey{n: s.N, d: s.D, batch: batch, typ: typ}
	if p, ok := st.plans[key]; ok {
		return p
	}
	p, err := b.drv.FFTPlan(s.Shape(), batch, typ)
	if err != nil {
		panic(fmt.Sprintf("cuda: SpectralConv: %v", err))
	}
	st.plans[key] = p
	return p
}

// fftAligned reports whether a device array may be handed to cuFFT as is:
// cuFFT wants its arrays aligned to a complex element; 16 bytes is asked
// for, which every allocation (512-byte size classes) satisfies and only
// a view at an odd offset can miss.
func fftAligned(p *Buf) bool { return p.ptr%16 == 0 }

// bufWindow is the first n floats of p as a view.
func bufWindow(p *Buf, n int) *Buf { return &Buf{ptr: p.ptr, n: n, view: true} }

// spectralR2C writes the half spectra of the `fields` real fields src
// ([fields][N...]) into dst ([fields][Spec] complex). An unaligned src is
// copied into scratch first.
func (b *Backend) spectralR2C(s SpectralDims, fields int, src, dst *Buf) {
	n := fields * s.Real
	if !fftAligned(src) {
		in := bufWindow(b.scratchBuf("spectral_in", n), n)
		b.Copy(in, bufWindow(src, n))
		src = in
	}
	p := b.spectralPlan(s, fields, cufft.R2C)
	if err := b.drv.FFTExec(p, src.ptr, dst.ptr); err != nil {
		panic(fmt.Sprintf("cuda: SpectralConv: %v", err))
	}
}

// spectralC2R writes the unnormalised inverse of the `fields` half spectra
// src into the real fields dst. cuFFT's out-of-place C2R overwrites its
// input, which is always scratch here. An unaligned dst is written through
// scratch.
func (b *Backend) spectralC2R(s SpectralDims, fields int, src, dst *Buf) {
	n := fields * s.Real
	out := dst
	if !fftAligned(dst) {
		out = b.scratchBuf("spectral_in", n)
	}
	p := b.spectralPlan(s, fields, cufft.C2R)
	if err := b.drv.FFTExec(p, src.ptr, out.ptr); err != nil {
		panic(fmt.Sprintf("cuda: SpectralConv: %v", err))
	}
	if out != dst {
		b.Copy(bufWindow(dst, n), bufWindow(out, n))
	}
}

// spectralCheck panics when an index space does not fit the kernels'
// 32-bit int parameters.
func spectralCheck(what string, n int) {
	if n > math.MaxInt32 {
		panic(fmt.Sprintf("cuda: SpectralConv: %s has %d elements, more than a 32-bit index", what, n))
	}
}

// modesTables is the state in b.state["spectral_tables"]: the device table
// of each (half spectrum, list) seen.
type modesTables struct {
	tabs map[string]*Buf
}

// modesDims checks a call as the CPU backend does (1 to 3 axes, K0 >= 0,
// tensor.CheckModes) and returns its layout, the last axis keeping
// len(modes) slots; ok is false when nothing is kept (an empty list, or an
// axis that keeps no mode).
func modesDims(op string, x *tensor.Tensor, k0 int, modes []int) (SpectralDims, bool) {
	s, ok := NewSpectralDims(x.Spatial(), k0)
	if err := tensor.CheckModes(modes, k0, s.N[2]); err != nil {
		panic(fmt.Sprintf("cuda: %s: %v", op, err))
	}
	if !ok || len(modes) == 0 {
		return s, false
	}
	s.Box = s.Box / s.K[2] * len(modes)
	s.K[2] = len(modes)
	return s, true
}

// modesTable returns the device table of the list for a half spectrum of
// `half` bins (kernels/spectral.cu): [half] slot of each frequency (-1:
// not kept), then [len] frequency of each slot, as int32 (carried bit for
// bit in float32 slots). It is uploaded once per (half, list) and kept
// until Close; a training step's first (uncaptured) call uploads it.
func (b *Backend) modesTable(half int, modes []int) *Buf {
	st, _ := b.state["spectral_tables"].(*modesTables)
	if st == nil {
		st = &modesTables{tabs: map[string]*Buf{}}
		b.state["spectral_tables"] = st
	}
	key := modesKey(half, modes)
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

// modesKey encodes (half, list) for modesTable's map.
func modesKey(half int, modes []int) string {
	k := make([]byte, 0, 4*(len(modes)+1))
	for _, v := range append([]int{half}, modes...) {
		k = append(k, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return string(k)
}

// spectralMix launches the forward or adjoint mixing (kernels/spectral.cu)
// from the spectra in ([B][Cin or Cout][Spec]) into out ([B][Cout or
// Cin][Spec]), the whole output spectrum written, scaled by 1/prod(N).
func (b *Backend) spectralMix(kernel string, s SpectralDims, out, in, w, tab *Buf, batch, cin, cout, outChans int) {
	total := batch * outChans * s.Spec
	spectralCheck("the mixed spectrum", 2*total)
	b.launch(kernel, Elementwise(total), out, in, w, tab, cin, cout,
		s.N[0], s.N[1], s.Half, s.K[0], s.K[1], s.K0, s.KVol,
		float32(1/float64(s.Real)), total)
}

// spectralDW launches spectral_dw: dw [corner][cin][cout][K0...] +=
// D sum_b conj(a[b, i]) g[b, o] on the kept modes.
func (b *Backend) spectralDW(s SpectralDims, dw, a, g, tab *Buf, batch, cin, cout int) {
	total := s.Corners * cin * cout * s.Box
	spectralCheck("the weight", 2*s.Corners*cin*cout*s.KVol)
	ntot := float64(s.Real)
	b.launch("spectral_dw", Elementwise(total), dw, a, g, tab, batch, cin, cout,
		s.N[0], s.N[1], s.N[2], s.Half, s.K[0], s.K[1], s.K[2], s.K0, s.KVol,
		float32(1/ntot), float32(2/ntot), total)
}

// SpectralConv implements tensor.Backend: y = irfftn(R . rfftn(x)) on the
// modes of Eq. mode-cap, the last axis keeping the listed frequencies
// (slot j of w's last mode axis is frequency modes[j]); w is
// [2^(d-1), Cin, Cout, K0..., 2]. When nothing is kept, y = 0.
func (b *Backend) SpectralConv(y, x, w *tensor.Tensor, k0 int, modes []int) {
	s, ok := modesDims("SpectralConv", x, k0, modes)
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
	b.spectralMix("spectral_mix_forward", s, zh, xh, buf(w), tab, nb, cin, cout, cout)
	b.spectralC2R(s, nb*cout, zh, buf(y))
}

// SpectralConvBackward implements tensor.Backend: with G = rfftn(dy) on
// the kept modes, dx += irfftn(sum_o G[o] conj W[., o]) and
// dw[corner, i, o, mode] += D sum_b conj(rfftn(x)[b, i]) G[b, o], D the
// CPU backend's 1/prod(N) on the last-axis DC bin and 2/prod(N) elsewhere.
// dw entries beyond the kept modes are left as they are; nil gradients
// are skipped.
func (b *Backend) SpectralConvBackward(dx, dw, dy, x, w *tensor.Tensor, k0 int, modes []int) {
	if dx == nil && dw == nil {
		return
	}
	s, ok := modesDims("SpectralConvBackward", x, k0, modes)
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
		b.spectralMix("spectral_mix_adjoint", s, zh, gh, buf(w), tab, nb, cin, cout, cin)
		b.spectralAccumulate(s, buf(dx), zh, nb*cin)
	}
	if dw != nil {
		xh := b.scratchBuf("spectral_xh", 2*nb*cin*s.Spec)
		b.spectralR2C(s, nb*cin, buf(x), xh)
		b.spectralDW(s, buf(dw), xh, gh, tab, nb, cin, cout)
	}
}

// spectralAccumulate adds the inverse transform of the `fields` spectra zh
// into dx: cuFFT cannot accumulate, so C2R goes to scratch and
// spectral_accumulate adds it.
func (b *Backend) spectralAccumulate(s SpectralDims, dx, zh *Buf, fields int) {
	n := fields * s.Real
	tmp := b.scratchBuf("spectral_real", n)
	b.spectralC2R(s, fields, zh, tmp)
	b.launch("spectral_accumulate", Elementwise(n), dx, tmp, n)
}
