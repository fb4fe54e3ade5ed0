package model

import "uhno/internal/tensor"

// sparGate is Sparse-Point Adaptive Routing (Sec. 3.3, App. C Alg. spar):
//
//	s = W_2 GELU(W_1 [z_F; z_G])                  Eq. spar-score, [B, 1, ...]
//	c = Std_x(s) / (mean_x |s| + eps)             per sample
//	rho = clip(rho0 (1 + beta tanh(c - 1)), rho_min, rho_max)   Eq. spar-rho
//	g_hard = 1[x in TopK(s, ceil(rho N))]
//	r = g z_F + (1 - g) z_G,  g = g_hard + g_soft - sg(g_soft)
//	g_soft = sigmoid(s/T)                  spar.surrogate_centre: zero (default)
//	g_soft = sigmoid((s - tau_k)/T)        spar.surrogate_centre: threshold
//
// W_1 is a 1x1 convolution 2C -> C and W_2 one C -> 1, both with bias. The
// keep-ratio and mask come from tensor.Tape.SPARKeep (no gradient) and the
// straight-through MUX from tensor.Tape.SPARRoute, whose backward sends the
// direct path g dr to z_F and (1-g) dr to z_G (Eq. spar-direct) and the
// score path sum_c dr (z_F - z_G) g_soft'/T to s (Eq. spar-score-grad),
// which then flows through W_2, W_1 back into z_F and z_G as well. The
// forward value is g_hard either way (straight-through). The paper
// centres g_soft at s = 0 while the hard decision sits at tau_k, the k-th
// largest score of the sample; the threshold centre (issue 20) takes the
// surrogate's gradient at the decision boundary instead, with tau_k held
// constant in the backward pass.
type sparGate struct {
	w1, w2 pointwise
	p      tensor.SPARParams
	centre tensor.SurrogateCentre
}

func newSPAR(pb *builder, name string, c int, s Spec) *sparGate {
	return &sparGate{w1: newPointwise(pb, name+".w1", 2*c, c), w2: newPointwise(pb, name+".w2", c, 1), p: s.SPAR,
		centre: s.surrogateCentre()}
}

// routeFunc stands in for the MUX of one stage: it receives the branch
// features, the scores s and the top-k mask and returns r. Only tests set
// one (UHNO.testRoute), to hold the routing fixed for gradient checks; nil
// means tensor.Tape.SPARRoute.
type routeFunc func(tp *tensor.Tape, zF, zG, s, hard *tensor.Tensor, centre tensor.SurrogateCentre) *tensor.Tensor

// forward returns r, the hard mask and the per-sample (c, rho, k).
func (g *sparGate) forward(tp *tensor.Tape, zF, zG *tensor.Tensor, route routeFunc) (r, hard, stats *tensor.Tensor) {
	s := g.w2.forward(tp, tp.GELU(g.w1.forward(tp, tp.Concat(zF, zG))))
	hard, stats = tp.SPARKeep(s, g.p)
	if route != nil {
		return route(tp, zF, zG, s, hard, g.centre), hard, stats
	}
	return tp.SPARRoute(zF, zG, hard, s, float32(g.p.Temperature), g.centre), hard, stats
}

// concatFusion is mode F (NoSPAR): r = W_o [z_F; z_G], a 1x1 convolution
// 2C -> C with bias in place of the per-pixel MUX.
type concatFusion struct{ wo pointwise }

func newConcatFusion(pb *builder, name string, c int) *concatFusion {
	return &concatFusion{wo: newPointwise(pb, name+".w_o", 2*c, c)}
}

func (f *concatFusion) forward(tp *tensor.Tape, zF, zG *tensor.Tensor) *tensor.Tensor {
	return f.wo.forward(tp, tp.Concat(zF, zG))
}
