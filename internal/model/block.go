package model

import "uhno/internal/tensor"

// hybrid holds what the U-HNO block and the decoder stage share at one
// level of width C: the two branches, the fusion and the residual 1x1
// projection W_R. Which parts exist is the ablation mode: mode A has no
// Gaussian branch, mode B no Fourier branch (neither has a fusion: r is
// the remaining branch), mode F fuses with W_o [z_F; z_G] instead of SPAR,
// every other mode routes with SPAR, except at the stages that
// model.spar_stages takes SPAR away from (Spec.SPARStages), which fuse
// with mode F's W_o.
type hybrid struct {
	fourier *fourierBranch  // B_F; nil in mode B
	gauss   *gaussianBranch // B_G; nil in mode A
	gate    *sparGate       // SPAR; nil in modes A, B, F
	concat  *concatFusion   // W_o; mode F only
	wR      pointwise       // W_R
}

// newHybrid declares one stage's layers; routed says whether this stage
// may route with SPAR (false where Spec.SPARStages takes it away).
func newHybrid(pb *builder, name string, c int, s Spec, routed bool) hybrid {
	var h hybrid
	if s.Mode != ModeNoGlobal {
		h.fourier = newFourier(pb, name+".fourier", s.Dim, c, c, s.K0)
	}
	if s.Mode != ModeNoLocal {
		h.gauss = newGaussian(pb, name+".gauss", c, s)
	}
	switch {
	case s.Mode == ModeNoLocal || s.Mode == ModeNoGlobal:
	case s.Mode == ModeNoSPAR || !routed:
		h.concat = newConcatFusion(pb, name+".fuse", c)
	default:
		h.gate = newSPAR(pb, name+".spar", c, s)
	}
	h.wR = newPointwise(pb, name+".w_r", c, c)
	return h
}

// stageOut is what one routing stage returns: its output features h, the
// branch features z_F and z_G (nil when a branch is ablated), and the SPAR
// mask and statistics (nil without a gate).
type stageOut struct {
	h, zF, zG   *tensor.Tensor
	hard, stats *tensor.Tensor
}

// fuse combines the branch features into r: the SPAR MUX, mode F's W_o
// [z_F; z_G], or, without a fusion (modes A and B), the sum of the
// features present.
func (h *hybrid) fuse(tp *tensor.Tape, zF, zG *tensor.Tensor, route routeFunc) (r, hard, stats *tensor.Tensor) {
	switch {
	case h.gate != nil:
		return h.gate.forward(tp, zF, zG, route)
	case h.concat != nil:
		return h.concat.forward(tp, zF, zG), nil, nil
	case zF == nil:
		return zG, nil, nil
	case zG == nil:
		return zF, nil, nil
	default:
		return tp.Add(zF, zG), nil, nil
	}
}

// out packages a stage's result; the branch features are reported only
// when both branches exist (they feed the CBC term).
func (h *hybrid) out(y, zF, zG, hard, stats *tensor.Tensor) stageOut {
	if h.fourier == nil || h.gauss == nil {
		zF, zG = nil, nil
	}
	return stageOut{h: y, zF: zF, zG: zG, hard: hard, stats: stats}
}

// block is the U-HNO block of Eq. block at one resolution:
//
//	z_F = B_F(h), z_G = B_G(h), r = SPAR(z_F, z_G), h' = GELU(W_R h + r)
//
// It is the encoder block, the bottleneck and mode G's flat block.
type block struct{ hybrid }

func newBlock(pb *builder, name string, c int, s Spec) *block {
	return &block{newHybrid(pb, name, c, s, s.SPARStages != SPARDecoder)}
}

func (b *block) forward(tp *tensor.Tape, h *tensor.Tensor, route routeFunc) stageOut {
	var zF, zG *tensor.Tensor
	if b.fourier != nil {
		zF = b.fourier.forward(tp, h)
	}
	if b.gauss != nil {
		zG = b.gauss.forward(tp, h)
	}
	r, hard, stats := b.fuse(tp, zF, zG, route)
	return b.out(tp.GELU(tp.Add(b.wR.forward(tp, h), r)), zF, zG, hard, stats)
}

// decStage is one stage of the asymmetric decoder (Eq. dec-asym), from
// level l+1 (coarse, C_{l+1} channels) to level l (C_l channels). Where
// the residual W_R h~ goes is model.decoder_residual (Spec.DecoderResidual,
// issue 20); the paper can be read both ways, and the residual is counted
// once in each:
//
//	inside (the default; Eq. dec-asym as written, and the yardstick):
//	  h~  = W_up Up(h)
//	  z_F = B_F(h~) + W_R h~
//	  z_G = B_G(e)            (mode H, SymDec: B_G(h~))
//	  h'  = GELU(SPAR(z_F, z_G))
//
//	outside (Eq. block applied to the decoder stage, Sec. 3.1 (ii): "the
//	same hybrid runs at every resolution"):
//	  z_F = B_F(h~)
//	  h'  = GELU(W_R h~ + SPAR(z_F, z_G))
//
// with e the encoder skip at level l. Inside, a pixel the gate sends to
// z_G never sees W_R h~; outside, every pixel does. Aux.ZF (the CBC
// term's z_F) is the z_F fed to the fusion: B_F(h~) + W_R h~ inside,
// B_F(h~) outside.
//
// Without a gate (modes A and B) r is the sum of what is present, and
// both readings give the encoder block's form, the same value: mode A
// GELU(B_F(h~) + W_R h~), mode B GELU(W_R h~ + B_G(e)) (inside, z_F is
// W_R h~ alone and r = z_F + z_G; outside, r = z_G and W_R h~ is added
// after). Mode F differs: inside GELU(W_o [B_F(h~) + W_R h~; B_G(e)]),
// outside GELU(W_R h~ + W_o [B_F(h~); B_G(e)]); so do the stages that
// model.spar_stages fuses with W_o.
//
// Up is (bi/tri)linear up-sampling by 2 (align_corners = false). Because
// its interpolation weights sum to one, a 1x1 convolution with bias
// commutes with it, W_up Up(h) = Up(W_up h); the stage applies W_up on the
// coarse grid (2^d times fewer points) and up-samples C_l instead of
// C_{l+1} channels. The two orders agree up to float32 rounding. With
// model.upsample: periodic (Spec.Upsample) Up wraps around the boundary
// instead of clamping; its weights still sum to one.
type decStage struct {
	hybrid
	wUp      pointwise
	symDec   bool
	outside  bool // Spec.DecoderResidual == DecoderOutside
	periodic bool // Spec.Upsample == UpsamplePeriodic
}

func newDecStage(pb *builder, name string, cCoarse, c int, s Spec) *decStage {
	wUp := newPointwise(pb, name+".w_up", cCoarse, c)
	return &decStage{wUp: wUp, hybrid: newHybrid(pb, name, c, s, s.SPARStages != SPAREncoder), symDec: s.Mode == ModeSymDec,
		outside: s.DecoderResidual == DecoderOutside, periodic: s.Upsample == UpsamplePeriodic}
}

func (d *decStage) forward(tp *tensor.Tape, h, skip *tensor.Tensor, route routeFunc) stageOut {
	ht := tp.Upsample2x(d.wUp.forward(tp, h), d.periodic)
	var zF, res *tensor.Tensor
	if d.outside {
		res = d.wR.forward(tp, ht) // added after the fusion (Eq. block)
		if d.fourier != nil {
			zF = d.fourier.forward(tp, ht)
		}
	} else {
		zF = d.wR.forward(tp, ht) // inside z_F (Eq. dec-asym)
		if d.fourier != nil {
			zF = tp.Add(d.fourier.forward(tp, ht), zF)
		}
	}
	var zG *tensor.Tensor
	if d.gauss != nil {
		src := skip
		if d.symDec {
			src = ht
		}
		zG = d.gauss.forward(tp, src)
	}
	r, hard, stats := d.fuse(tp, zF, zG, route)
	if res != nil {
		r = tp.Add(res, r)
	}
	return d.out(tp.GELU(r), zF, zG, hard, stats)
}
