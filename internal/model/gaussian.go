package model

import (
	"math"
	"strconv"

	"uhno/internal/tensor"
)

// gaussianBranch is the local branch B_G (Sec. 3.2, Eq. gaussian-kernel,
// App. C "Multi-scale Gaussian Branch Implementation"):
//
//	z_m = W_m^post( k_m *circ (W_m^pre h) ),  m = 1..M
//	B_G(h) = GELU( W_fuse [z_1; ...; z_M] )
//
// Shapes for h [B, C, spatial...]: the M pre-mixers are stored as one 1x1
// weight [M*C, C] (rows m*C..(m+1)*C are W_m^pre; same count and
// initialisation as M separate C -> C convolutions), the depthwise Gaussian
// convolution of all M scales is one tensor.Tape.GaussianConv call on the
// [B, M*C, ...] pre-mixed field with logSigma [M, G] (one sigma per scale
// and channel group, initialised to log Spec.Sigmas), the post-mixers are M
// separate C -> C 1x1 convolutions applied to the scale slices, and the
// fusion is a 1x1 convolution M*C -> C followed by GELU. The kernels are
// normalised to sum 1 (mode I: not), their support radius is
// min(ceil(3 sigma), MaxRadius, (N_min-1)/2). In 3D the backend applies the
// box-supported kernel axis by axis (it is an outer product of 1D
// kernels), as the paper's App. C "3D-CFD Configuration" does.
type gaussianBranch struct {
	c        int
	pre      pointwise
	logSigma *tensor.Tensor
	post     []pointwise
	fuse     pointwise
	opt      tensor.GaussOpts
}

func newGaussian(pb *builder, name string, c int, s Spec) *gaussianBranch {
	g := &gaussianBranch{c: c, opt: tensor.GaussOpts{Normalize: s.Mode != ModeNoNorm, MaxRadius: s.MaxRadius}}
	g.pre = newPointwise(pb, name+".pre", c, s.M*c)
	ls := make([]float32, 0, s.M*s.Groups)
	for _, sg := range s.Sigmas {
		for range s.Groups {
			ls = append(ls, float32(math.Log(sg)))
		}
	}
	g.logSigma = pb.param(name+".log_sigma", []int{s.M, s.Groups}, initValues, 0, ls)
	for m := range s.M {
		g.post = append(g.post, newPointwise(pb, name+".post."+strconv.Itoa(m), c, c))
	}
	g.fuse = newPointwise(pb, name+".fuse", s.M*c, c)
	return g
}

func (g *gaussianBranch) forward(tp *tensor.Tape, h *tensor.Tensor) *tensor.Tensor {
	v := tp.GaussianConv(g.pre.forward(tp, h), g.logSigma, g.opt)
	zs := make([]*tensor.Tensor, len(g.post))
	for m, post := range g.post {
		zs[m] = post.forward(tp, tp.Slice(v, m*g.c, g.c))
	}
	cat := zs[0]
	if len(zs) > 1 {
		cat = tp.Concat(zs...)
	}
	return tp.GELU(g.fuse.forward(tp, cat))
}
