package model

import "uhno/internal/tensor"

// hybrid holds what the U-HNO block and the decoder stage share at one
// level of width C: the two branches, the fusion and the residual 1x1
// projection W_R. Which parts exist is the ablation mode: mode A has no
// Gaussian branch, mode B no Fourier branch (neither has a fusion: r is
// the remaining branch), mode F fuses with W_o [z_F; z_G] instead of SPAR,
// every other mode routes with SPAR.
type hybrid struct {
	fourier *fourierBranch  // B_F; nil in mode B
	gauss   *gaussianBranch // B_G; nil in mode A
	gate    *sparGate       // SPAR; nil in modes A, B, F
	concat  *concatFusion   // W_o; mode F only
	wR      pointwise       // W_R
}

func newHybrid(pb *builder, name string, c int, s Spec) hybrid {
	var h hybrid
	if s.Mode != ModeNoGlobal {
		h.fourier = newFourier(pb, name+".fourier", s.Dim, c, c, s.K0)
	}
	if s.Mode != ModeNoLocal {
		h.gauss = newGaussian(pb, name+".gauss", c, s)
	}
	switch s.Mode {
	case ModeNoLocal, ModeNoGlobal:
	case ModeNoSPAR:
		h.concat = newConcatFusion(pb, name+".fuse", c)
	default:
		h.gate = newSPAR(pb, name+".spar", c, s.SPAR)
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
	return &block{newHybrid(pb, name, c, s)}
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
// level l+1 (coarse, C_{l+1} channels) to level l (C_l channels):
//
//	h~  = W_up Up(h)
//	z_F = B_F(h~) + W_R h~
//	z_G = B_G(e)            (mode H, SymDec: B_G(h~))
//	h'  = GELU(SPAR(z_F, z_G))
//
// with e the encoder skip at level l. W_R h~ lives inside z_F, as Eq.
// dec-asym writes it, and is not added a second time outside the gate (the
// yardstick reads it the same way). Without a gate (modes A and B) r is the
// sum z_F + z_G of what is present, so the stage keeps the W_R h~ residual:
// mode A gives GELU(B_F(h~) + W_R h~), mode B GELU(W_R h~ + B_G(e)), the
// same form as the encoder block.
//
// Up is (bi/tri)linear up-sampling by 2 (align_corners = false). Because
// its interpolation weights sum to one, a 1x1 convolution with bias
// commutes with it, W_up Up(h) = Up(W_up h); the stage applies W_up on the
// coarse grid (2^d times fewer points) and up-samples C_l instead of
// C_{l+1} channels. The two orders agree up to float32 rounding.
type decStage struct {
	hybrid
	wUp    pointwise
	symDec bool
}

func newDecStage(pb *builder, name string, cCoarse, c int, s Spec) *decStage {
	wUp := newPointwise(pb, name+".w_up", cCoarse, c)
	return &decStage{wUp: wUp, hybrid: newHybrid(pb, name, c, s), symDec: s.Mode == ModeSymDec}
}

func (d *decStage) forward(tp *tensor.Tape, h, skip *tensor.Tensor, route routeFunc) stageOut {
	ht := tp.Upsample2x(d.wUp.forward(tp, h))
	zF := d.wR.forward(tp, ht)
	if d.fourier != nil {
		zF = tp.Add(d.fourier.forward(tp, ht), zF)
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
	return d.out(tp.GELU(r), zF, zG, hard, stats)
}
