//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"

	"uhno/internal/cuda/cufft"
	"uhno/internal/tensor"
)

// The Fourier branch's spectral convolution (Sec. 3.2, App. C.4) on the
// GPU: cuFFT for the transforms, kernels/spectral.cu for the mode mixing.
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

// spectralMix launches the forward or adjoint mixing (kernels/spectral.cu)
// from the spectra in ([B][Cin or Cout][Spec]) into out ([B][Cout or
// Cin][Spec]), the whole output spectrum written, scaled by 1/prod(N).
func (b *Backend) spectralMix(kernel string, s SpectralDims, out, in, w *Buf, batch, cin, cout, outChans int) {
	total := batch * outChans * s.Spec
	spectralCheck("the mixed spectrum", 2*total)
	b.launch(kernel, Elementwise(total), out, in, w, cin, cout,
		s.N[0], s.N[1], s.Half, s.K[0], s.K[1], s.K[2], s.K0, s.KVol,
		float32(1/float64(s.Real)), total)
}

// SpectralConv implements tensor.Backend: y = irfftn(R . rfftn(x)) on the
// modes of Eq. mode-cap; w is [2^(d-1), Cin, Cout, K0..., 2]. When some
// axis keeps no mode, y = 0.
func (b *Backend) SpectralConv(y, x, w *tensor.Tensor, k0 int) {
	s, ok := NewSpectralDims(x.Spatial(), k0)
	if !ok {
		b.Zero(buf(y))
		return
	}
	nb, cin, cout := x.Batch(), x.Channels(), y.Channels()
	spectralCheck("the input", nb*cin*s.Real)
	spectralCheck("the output", nb*cout*s.Real)
	xh := b.scratchBuf("spectral_xh", 2*nb*cin*s.Spec)
	b.spectralR2C(s, nb*cin, buf(x), xh)
	zh := b.scratchBuf("spectral_zh", 2*nb*cout*s.Spec)
	b.spectralMix("spectral_mix_forward", s, zh, xh, buf(w), nb, cin, cout, cout)
	b.spectralC2R(s, nb*cout, zh, buf(y))
}

// SpectralConvBackward implements tensor.Backend: with G = rfftn(dy) on
// the kept modes, dx += irfftn(sum_o G[o] conj W[., o]) and
// dw[corner, i, o, mode] += D sum_b conj(rfftn(x)[b, i]) G[b, o], D the
// CPU backend's 1/prod(N) on the last-axis DC bin and 2/prod(N) elsewhere.
// dw entries beyond the capped modes are left as they are; nil gradients
// are skipped.
func (b *Backend) SpectralConvBackward(dx, dw, dy, x, w *tensor.Tensor, k0 int) {
	if dx == nil && dw == nil {
		return
	}
	s, ok := NewSpectralDims(x.Spatial(), k0)
	if !ok {
		return
	}
	nb, cin, cout := x.Batch(), x.Channels(), dy.Channels()
	spectralCheck("the input", nb*cin*s.Real)
	spectralCheck("the output", nb*cout*s.Real)
	gh := b.scratchBuf("spectral_gh", 2*nb*cout*s.Spec)
	b.spectralR2C(s, nb*cout, buf(dy), gh)
	if dx != nil {
		zh := b.scratchBuf("spectral_zh", 2*nb*cin*s.Spec)
		b.spectralMix("spectral_mix_adjoint", s, zh, gh, buf(w), nb, cin, cout, cin)
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
		b.launch("spectral_dw", Elementwise(total), buf(dw), xh, gh, nb, cin, cout,
			s.N[0], s.N[1], s.N[2], s.Half, s.K[0], s.K[1], s.K[2], s.K0, s.KVol,
			float32(1/ntot), float32(2/ntot), total)
	}
}
