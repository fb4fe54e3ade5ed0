//go:build cuda || cudaemu

package cuda

import (
	"fmt"

	"uhno/internal/tensor"
)

// The multi-scale Gaussian branch's depthwise circular convolution (Eq.
// gaussian-kernel, App. C.5) on the GPU, kernels/gaussian.cu: the radii
// and 1D taps are computed on the device from logSigma (gauss_taps), then
// the d-dimensional kernel is applied as d separable passes along the
// axes, last axis first, as the CPU backend does; the backward runs the
// same passes with the derivative taps (see the kernel file's comment for
// the recurrence) and reduces dlogSigma through per-block partials summed
// in a fixed order. The launch geometry depends only on shapes and on
// rmax = min(MaxRadius, (Nmin-1)/2), never on sigma, so no host read is
// needed and a training step stays capturable.
//
// Scratch: gauss_taps (taps and radii), gauss_tmp (the forward's
// intermediate plane set for d >= 2), gauss_u0/u1/w0/w1 (the backward's
// two (u, w) pairs), gauss_partial (per-block sums of <x, K' dy>, double).

// gaussCall is the shape of one GaussianConv call and its tap table.
type gaussCall struct {
	dims                          []int // spatial axes
	batch, ch, scales, groups     int
	perScl, perGrp, pairs, planes int // channels per scale and per group, S*G, B*ch
	rmax                          int // launch halo: the largest possible radius
	taps, rad                     *Buf
}

// gaussSetup reads the shapes and launches gauss_taps, which fills the
// per-(scale, group) radius and taps from logSigma on the device.
func (b *Backend) gaussSetup(x, logSigma *tensor.Tensor, opt tensor.GaussOpts) *gaussCall {
	g := &gaussCall{dims: x.Spatial(), batch: x.Batch(), ch: x.Channels(),
		scales: logSigma.Shape[0], groups: logSigma.Shape[1]}
	if d := len(g.dims); d < 1 || d > 3 {
		panic(fmt.Sprintf("cuda: GaussianConv: %d spatial axes, want 1 to 3", d))
	}
	g.pairs = g.scales * g.groups
	g.perScl = g.ch / g.scales
	g.perGrp = g.perScl / g.groups
	g.planes = g.batch * g.ch
	nmin := g.dims[0]
	for _, n := range g.dims {
		nmin = min(nmin, n)
	}
	g.rmax = GaussMaxRadius(opt.MaxRadius, nmin)
	stride := 2 * (g.rmax + 1)
	tab := b.scratchBuf("gauss_taps", g.pairs*stride+g.pairs)
	g.taps = bufWindow(tab, g.pairs*stride)
	g.rad = &Buf{ptr: tab.ptr + uintptr(4*g.pairs*stride), n: g.pairs, view: true}
	norm := 0
	if opt.Normalize {
		norm = 1
	}
	b.launch("gauss_taps", Elementwise(g.pairs), g.taps, g.rad, buf(logSigma), g.pairs, g.rmax, norm)
	return g
}

// axis is the [outer, n, inner] view of all planes for a pass along
// spatial axis a, and planeOuter, the outer indices per plane.
func (g *gaussCall) axis(a int) (outer, n, inner, planeOuter int) {
	planeOuter, inner = 1, 1
	for i, m := range g.dims {
		switch {
		case i < a:
			planeOuter *= m
		case i > a:
			inner *= m
		}
	}
	return g.planes * planeOuter, g.dims[a], inner, planeOuter
}

// pass launches one pass kernel along axis a staging `arrays` input
// arrays; args are the kernel's leading parameters (outputs and inputs),
// the shared pass parameters are appended. It returns the tile used.
func (b *Backend) gaussPass(kernel string, g *gaussCall, a, arrays int, args ...arg) GaussTile {
	outer, n, inner, po := g.axis(a)
	t, err := GaussPass(outer, n, inner, g.rmax, arrays)
	if err != nil {
		panic(fmt.Sprintf("cuda: GaussianConv: %v", err))
	}
	args = append(args, g.taps, g.rad, n, inner, po, t.InnerTiles, t.TN, g.rmax, g.ch, g.perScl, g.perGrp, g.groups)
	b.launch(kernel, t.Geometry, args...)
	return t
}

// gaussPlanes is the named scratch holding one set of all planes.
func (b *Backend) gaussPlanes(name string, g *gaussCall) *Buf {
	n := g.planes * tensor.Numel(g.dims)
	return bufWindow(b.scratchBuf(name, n), n)
}

// GaussianConv implements tensor.Backend: y = K_0 ... K_{d-1} x per
// channel, the passes alternating between y and scratch so that the last
// (axis 0) lands in y, in the CPU backend's order.
func (b *Backend) GaussianConv(y, x, logSigma *tensor.Tensor, opt tensor.GaussOpts) {
	g := b.gaussSetup(x, logSigma, opt)
	d := len(g.dims)
	var tmp *Buf
	if d > 1 {
		tmp = b.gaussPlanes("gauss_tmp", g)
	}
	src := buf(x)
	for a := d - 1; a >= 0; a-- {
		dst := buf(y)
		if a%2 == 1 {
			dst = tmp
		}
		b.gaussPass("gauss_forward_pass", g, a, 1, dst, src, 0)
		src = dst
	}
}

// GaussianConvBackward implements tensor.Backend: dx += K dy and
// dlogSigma[m, g] += sum over the group's planes of <x, K' dy> (K' =
// dK/dlog sigma, the radius held constant); nil gradients are skipped.
func (b *Backend) GaussianConvBackward(dx, dlogSigma, dy, x, logSigma *tensor.Tensor, opt tensor.GaussOpts) {
	if dx == nil && dlogSigma == nil {
		return
	}
	g := b.gaussSetup(x, logSigma, opt)
	d := len(g.dims)
	if dlogSigma == nil {
		// dx only: the forward's passes on dy, the last one adding.
		u := buf(dy)
		for a := d - 1; a >= 1; a-- {
			nu := b.gaussPlanes(fmt.Sprintf("gauss_u%d", (d-1-a)%2), g)
			b.gaussPass("gauss_forward_pass", g, a, 1, nu, u, 0)
			u = nu
		}
		b.gaussPass("gauss_forward_pass", g, 0, 1, buf(dx), u, 1)
		return
	}
	// (u, w) = (dy, 0), then (K_a u, K'_a u + K_a w) for a = d-1..1 into
	// alternating scratch pairs.
	u, w := buf(dy), (*Buf)(nil)
	for a := d - 1; a >= 1; a-- {
		set := (d - 1 - a) % 2
		nu := b.gaussPlanes(fmt.Sprintf("gauss_u%d", set), g)
		nw := b.gaussPlanes(fmt.Sprintf("gauss_w%d", set), g)
		b.gaussPass("gauss_backward_pass", g, a, 2, nu, nw, u, w)
		u, w = nu, nw
	}
	// Axis 0: dx += K_0 u and the per-block partials of <x, K'_0 u + K_0 w>.
	outer, n, inner, _ := g.axis(0)
	t, err := GaussPass(outer, n, inner, g.rmax, 2)
	if err != nil {
		panic(fmt.Sprintf("cuda: GaussianConv: %v", err))
	}
	nparts := t.Grid.X * t.Grid.Y
	partial := b.scratchBuf("gauss_partial", 2*nparts) // doubles
	b.gaussPass("gauss_backward_last", g, 0, 2, buf(dx), partial, buf(x), u, w)
	b.launch("gauss_dlogsigma", PerRow(g.pairs, gaussBlockThreads), buf(dlogSigma), partial,
		g.pairs, g.batch, g.ch, g.perScl, g.perGrp, g.groups, t.InnerTiles, t.NTiles)
}
