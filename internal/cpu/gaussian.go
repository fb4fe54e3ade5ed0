package cpu

import (
	"math"
	"sync"

	"uhno/internal/tensor"
)

// Depthwise circular Gaussian convolution of the multi-scale Gaussian branch
// (Eq. gaussian-kernel, App. C.5).
//
// Channel c of x [B, S*C, N_0..N_{d-1}] belongs to scale m = c/C and group
// g = (c%C)/(C/G), whose kernel has sigma = exp(logSigma[m, g]) and the box
// support Omega = {Delta : |Delta|_inf <= r}, r = tensor.GaussianRadius.
// On a box the Gaussian factorises,
//
//	K(Delta) = prod_a k(Delta_a),  k(delta) = exp(-delta^2 / (2 sigma^2)) [/ Z],
//
// and the normalised d-dimensional kernel is exactly the product of
// normalised 1D kernels (its sum is Z^d). So y = K_0 K_1 ... K_{d-1} x, where
// K_a is the circular 1D convolution along spatial axis a: d passes of
// (2r+1) taps per point instead of (2r+1)^d. The kernel is symmetric, so
// correlation and convolution coincide and every K_a is self-adjoint.
//
// Backward, with sigma treated through logSigma and r held constant. Every
// K_a is self-adjoint and they commute, so
//
//	dx += K_0 ... K_{d-1} dy
//	dlogSigma[m,g] += sum_{b, c in (m,g)} <dy, K' x> = <K' dy, x>,
//	K' = dK/dlog(sigma) = sum_a K_0 .. K_{a-1} K'_a K_{a+1} .. K_{d-1},
//
// where K'_a convolves along axis a with k' = dk/dlog(sigma):
// k' = k delta^2/sigma^2 unnormalised and k' = k (delta^2 - E_k[delta^2])/sigma^2
// normalised (quotient rule on e/Z; the chain rule through
// sigma = exp(logSigma) turns 1/sigma^3 into 1/sigma^2). K' dy follows the
// dx passes by the product rule: with u_d = dy and w_d = 0,
//
//	u_a = K_a u_{a+1},  w_a = K'_a u_{a+1} + K_a w_{a+1},
//
// u_0 = K dy and w_0 = K' dy. Each backward pass reads u and w once and
// forms both, and the last one adds u_0 into dx and sums x w_0 without
// storing w_0: d passes, as in the forward, with about 2.5 times the
// arithmetic.
//
// Work is split over (sample, scale, group) items; each item's planes are
// processed a stack at a time (at most gaussStack floats: one plane at the
// finest 2D level, many at coarse levels and in 1D) so that a stack and its
// scratch stay in L1/L2. Each
// item writes its own outputs and its own logSigma partial, and the
// partials are summed in sample order, so results do not depend on the
// thread count.

// gaussCache holds the scratch buffers that GaussianConv reuses between
// calls: per-call kernel tables, per-item partial sums and per-chunk plane
// buffers. Buffers are taken and returned under mu, so concurrent calls on
// one Backend are safe.
type gaussCache struct {
	mu   sync.Mutex
	free [][]float32
	part []float64

	// impl selects the pass implementation, for tests that compare them
	// through the whole operation: 0 the C kernel for the best instruction
	// set of this CPU, i > 0 the C kernel at level i-1 (see gaussAxisISA),
	// -1 the plain-Go reference. Set before use; never changed by the
	// backend.
	impl int
}

// gaussPass is the signature of gaussAxisGo and gaussAxis.
type gaussPass func(z, z2, s, s2, e, k, dk []float32, outer, n, inner int, add bool, scratch []float32) float64

// pass returns the pass implementation selected by impl.
func (c *gaussCache) pass() gaussPass {
	switch {
	case c.impl < 0:
		return gaussAxisGo
	case c.impl > 0:
		isa := c.impl - 1
		return func(z, z2, s, s2, e, k, dk []float32, outer, n, inner int, add bool, scratch []float32) float64 {
			return gaussAxisISA(isa, z, z2, s, s2, e, k, dk, outer, n, inner, add, scratch)
		}
	}
	return gaussAxis
}

// get returns a float32 buffer of length n, reusing a cached one when it is
// large enough (a too-small one is dropped, so the cache does not grow).
func (c *gaussCache) get(n int) []float32 {
	c.mu.Lock()
	var s []float32
	if l := len(c.free); l > 0 {
		s = c.free[l-1]
		c.free = c.free[:l-1]
	}
	c.mu.Unlock()
	if cap(s) < n {
		s = make([]float32, n)
	}
	return s[:n]
}

func (c *gaussCache) put(s []float32) {
	c.mu.Lock()
	c.free = append(c.free, s)
	c.mu.Unlock()
}

// getPart returns a zeroed float64 buffer of length n for the per-item
// partials of dlogSigma.
func (c *gaussCache) getPart(n int) []float64 {
	c.mu.Lock()
	p := c.part
	c.part = nil
	c.mu.Unlock()
	if cap(p) < n {
		p = make([]float64, n)
	}
	p = p[:n]
	clear(p)
	return p
}

func (c *gaussCache) putPart(p []float64) {
	c.mu.Lock()
	if cap(p) > cap(c.part) {
		c.part = p
	}
	c.mu.Unlock()
}

// gaussStack bounds the floats in a stack of planes processed together
// (32 KiB: a stack and its pass output stay in L1/L2).
const gaussStack = 8192

// gaussGeom is the geometry and the kernels of one GaussianConv call.
type gaussGeom struct {
	dims   []int // spatial axes N_0..N_{d-1}
	sp     int   // points per plane
	ch     int   // channels S*C
	scales int   // S
	groups int   // G
	perScl int   // C = channels per scale
	perGrp int   // C/G = channels per (scale, group)
	count  int   // planes stacked into one pass (divides perGrp)

	rad  []int     // radius per (m, g)
	kern []float32 // per (m, g): k[0..rmax] then dk[0..rmax]
	rmax int

	pass gaussPass // one axis pass (normally gaussAxis)
}

// newGaussGeom reads the shapes, computes the radius of every (scale,
// group) and fills the 1D kernel tables (a buffer from the cache, returned
// by the caller).
func (b *Backend) newGaussGeom(x, logSigma *tensor.Tensor, opt tensor.GaussOpts) *gaussGeom {
	g := &gaussGeom{
		dims:   x.Spatial(),
		sp:     x.SpatialSize(),
		ch:     x.Channels(),
		scales: logSigma.Shape[0],
		groups: logSigma.Shape[1],
		pass:   b.gauss.pass(),
	}
	g.perScl = g.ch / g.scales
	g.perGrp = g.perScl / g.groups
	// The planes of one group are contiguous, so a pass can run over a
	// stack of them at once: as many as fit in gaussStack floats (one cgo
	// call and one offset table per stack instead of per small plane).
	g.count = 1
	for c := g.perGrp; c > 1; c-- {
		if g.perGrp%c == 0 && c*g.sp <= gaussStack {
			g.count = c
			break
		}
	}
	nmin := g.dims[0]
	for _, n := range g.dims {
		nmin = min(nmin, n)
	}
	ls := data(logSigma)
	g.rad = make([]int, len(ls))
	sig := make([]float64, len(ls))
	for i, v := range ls {
		sig[i] = math.Exp(float64(v))
		g.rad[i] = tensor.GaussianRadius(sig[i], opt.MaxRadius, nmin)
		g.rmax = max(g.rmax, g.rad[i])
	}
	g.kern = b.gauss.get(2 * (g.rmax + 1) * len(ls))
	for i := range ls {
		k, dk := g.kernel(i)
		gaussKernel1D(k, dk, sig[i], opt.Normalize)
	}
	return g
}

// kernel returns the half kernels k[0..r] and dk[0..r] of pair i = m*G + g.
func (g *gaussGeom) kernel(i int) (k, dk []float32) {
	r := g.rad[i]
	off := 2 * (g.rmax + 1) * i
	return g.kern[off : off+r+1], g.kern[off+g.rmax+1 : off+g.rmax+2+r]
}

// gaussKernel1D fills k[delta] = exp(-delta^2/(2 sigma^2)) for delta = 0..r
// (r = len(k)-1; the kernel is symmetric), divided by its sum over -r..r
// when normalize, and dk[delta] = dk/dlog(sigma) (see the file comment).
// Evaluated in float64.
func gaussKernel1D(k, dk []float32, sigma float64, normalize bool) {
	r := len(k) - 1
	s2 := sigma * sigma
	e := func(d int) float64 { return math.Exp(-float64(d*d) / (2 * s2)) }
	z, m2 := 1.0, 0.0 // sum of e and of e delta^2 over -r..r
	for d := 1; d <= r; d++ {
		z += 2 * e(d)
		m2 += 2 * e(d) * float64(d*d)
	}
	for d := 0; d <= r; d++ {
		dd := float64(d * d)
		if normalize {
			kd := e(d) / z
			k[d] = float32(kd)
			dk[d] = float32(kd * (dd - m2/z) / s2)
		} else {
			k[d] = float32(e(d))
			dk[d] = float32(e(d) * dd / s2)
		}
	}
}

// axis returns the [outer, n, inner] view of a stack of g.count planes for
// a pass along spatial axis a.
func (g *gaussGeom) axis(a int) (outer, n, inner int) {
	outer, inner = g.count, 1
	for i, m := range g.dims {
		switch {
		case i < a:
			outer *= m
		case i > a:
			inner *= m
		}
	}
	return outer, g.dims[a], inner
}

// scratchLen is the float32 scratch of one worker: nplanes stacks of planes
// plus what one axis pass needs.
func (g *gaussGeom) scratchLen(nplanes int) int {
	s := 0
	for a := range g.dims {
		_, n, inner := g.axis(a)
		s = max(s, gaussAxisScratch(n, inner, g.rmax))
	}
	return nplanes*g.count*g.sp + s
}

// items is the number of (sample, scale, group) work items; item it covers
// channels [first, first+perGrp) of sample bi with kernel pair.
func (g *gaussGeom) items(batch int) int { return batch * g.scales * g.groups }

func (g *gaussGeom) item(it int) (bi, first, pair int) {
	pair = it % (g.scales * g.groups)
	bi = it / (g.scales * g.groups)
	m, gr := pair/g.groups, pair%g.groups
	return bi, m*g.perScl + gr*g.perGrp, pair
}

// grain is the number of items per parallel chunk (sizes only).
func (g *gaussGeom) grain() int {
	return grainFor(g.perGrp * g.sp * len(g.dims) * 8)
}

// GaussianConv implements tensor.Backend: y = K_0 ... K_{d-1} x per channel
// (see the file comment).
func (b *Backend) GaussianConv(y, x, logSigma *tensor.Tensor, opt tensor.GaussOpts) {
	g := b.newGaussGeom(x, logSigma, opt)
	defer b.gauss.put(g.kern)
	Y, X := data(y), data(x)
	span := g.count * g.sp
	nplanes := min(1, len(g.dims)-1) // tmp, unless d = 1
	b.parallel(g.items(x.Batch()), g.grain(), func(lo, hi int) {
		buf := b.gauss.get(g.scratchLen(nplanes))
		defer b.gauss.put(buf)
		tmp, work := buf[:nplanes*span], buf[nplanes*span:]
		for it := lo; it < hi; it++ {
			bi, first, pair := g.item(it)
			k, _ := g.kernel(pair)
			for c := 0; c < g.perGrp; c += g.count {
				off := (bi*g.ch + first + c) * g.sp
				g.forwardPlanes(Y[off:off+span], X[off:off+span], tmp, k, work)
			}
		}
	})
}

// forwardPlanes runs the d passes, last axis first, alternating between y
// and tmp so that the last pass lands in y.
func (g *gaussGeom) forwardPlanes(y, x, tmp, k, work []float32) {
	d := len(g.dims)
	src := x
	for a := d - 1; a >= 0; a-- {
		dst := y
		if a%2 == 1 {
			dst = tmp
		}
		outer, n, inner := g.axis(a)
		g.pass(dst, nil, src, nil, nil, k, nil, outer, n, inner, false, work)
		src = dst
	}
}

// GaussianConvBackward implements tensor.Backend: dx += K dy and
// dlogSigma += sum_a <u_{a+1}, K'_a v_a> (see the file comment).
func (b *Backend) GaussianConvBackward(dx, dlogSigma, dy, x, logSigma *tensor.Tensor, opt tensor.GaussOpts) {
	if dx == nil && dlogSigma == nil {
		return
	}
	g := b.newGaussGeom(x, logSigma, opt)
	defer b.gauss.put(g.kern)
	DX, DY, X := data(dx), data(dy), data(x)
	span := g.count * g.sp
	d := len(g.dims)
	nitems := g.items(x.Batch())
	var part []float64
	if dlogSigma != nil {
		part = b.gauss.getPart(nitems)
		defer b.gauss.putPart(part)
	}
	// Planes: two (u, w) pairs, one for d = 2, none for d = 1.
	nplanes := 2 * min(2, d-1)
	b.parallel(nitems, g.grain(), func(lo, hi int) {
		buf := b.gauss.get(g.scratchLen(nplanes))
		defer b.gauss.put(buf)
		planes, work := buf[:nplanes*span], buf[nplanes*span:]
		for it := lo; it < hi; it++ {
			bi, first, pair := g.item(it)
			k, dk := g.kernel(pair)
			if part == nil {
				dk = nil
			}
			var sum float64
			for c := 0; c < g.perGrp; c += g.count {
				off := (bi*g.ch + first + c) * g.sp
				var dxp []float32
				if DX != nil {
					dxp = DX[off : off+span]
				}
				sum += g.backwardPlanes(dxp, DY[off:off+span], X[off:off+span], k, dk, planes, work)
			}
			if part != nil {
				part[it] = sum
			}
		}
	})
	if dlogSigma != nil {
		DL := data(dlogSigma)
		pairs := g.scales * g.groups
		for pair := range DL {
			var s float64
			for bi := 0; bi < x.Batch(); bi++ {
				s += part[bi*pairs+pair]
			}
			DL[pair] += float32(s)
		}
	}
}

// backwardPlanes adds K dy into dx (when dx != nil) and, when dk != nil,
// returns <x, K' dy> for one stack of planes (see the file comment).
func (g *gaussGeom) backwardPlanes(dx, dy, x, k, dk, planes, work []float32) float64 {
	d := len(g.dims)
	span := g.count * g.sp
	plane := func(i int) []float32 { return planes[i*span : (i+1)*span] }

	// Passes a = d-1 .. 1 map (u_{a+1}, w_{a+1}) to (u_a, w_a), alternating
	// between two pairs of planes; u_d = dy, w_d = 0.
	u, w := dy, []float32(nil)
	for a := d - 1; a >= 1; a-- {
		set := (d - 1 - a) % 2
		outer, n, inner := g.axis(a)
		nu := plane(2 * set)
		if dk == nil {
			g.pass(nu, nil, u, nil, nil, k, nil, outer, n, inner, false, work)
			u = nu
			continue
		}
		nw := plane(2*set + 1)
		g.pass(nu, nw, u, w, nil, k, dk, outer, n, inner, false, work)
		u, w = nu, nw
	}
	// Last pass: dx += K_0 u_1 and <x, K'_0 u_1 + K_0 w_1>.
	outer, n, inner := g.axis(0)
	if dk == nil {
		g.pass(dx, nil, u, nil, nil, k, nil, outer, n, inner, true, work)
		return 0
	}
	return g.pass(dx, nil, u, w, x, k, dk, outer, n, inner, true, work)
}

// gaussAxisScratch is the float32 scratch that a pass along an axis of n
// points with the given inner size and radius r needs: circularly padded
// lines of s and s2 (inner = 1; the C kernel pads four lines of each at a
// time, by max(r, 16) points each side, from a cache-line boundary) and
// two runs of w points (w = inner, or n for lines).
func gaussAxisScratch(n, inner, r int) int {
	w := inner
	if inner == 1 {
		w = n
	}
	return 8*(n+2*max(r, 16)) + 2*w + 16
}

// gaussAxisGo is the plain-Go reference of one pass along the middle axis
// of a block viewed as [outer, n, inner]. With the symmetric kernel k[0..r]
// (r = len(k)-1) and indices taken mod n,
//
//	(K s)[o,i,j] = k[0] s[o,i,j] + sum_{d=1..r} k[d] (s[o,i-d,j] + s[o,i+d,j]),
//
// and K' the same with dk. It forms A = K s and, when dk != nil,
// B = K' s + K s2 (B = K' s when s2 is nil). A goes into z (added when
// add) unless z is nil. B goes into z2 when z2 != nil; otherwise, when
// e != nil, the result is sum e B, summed per position of a run (the n
// points of a line when inner = 1, else inner points) in float32 and then
// over positions in float64. scratch has gaussAxisScratch(n, inner, r)
// elements.
//
// The backward uses the modes: the forward and dx-only passes (z), the
// passes a = d-1..1 ((u, w) -> (K u, K' u + K w) into z, z2) and the last
// pass (dx += K u, sum x (K' u + K w) with e = x).
func gaussAxisGo(z, z2, s, s2, e, k, dk []float32, outer, n, inner int, add bool, scratch []float32) float64 {
	r := len(k) - 1
	line := inner == 1
	w, rows := inner, n
	if line {
		w, rows = n, 1
	}
	pad := scratch[:n+2*r]
	pad2 := scratch[n+2*r : 2*(n+2*r)]
	scratch = scratch[2*(n+2*r):]
	bRow, acc := scratch[:w], scratch[w:2*w]
	clear(acc)
	wantB := dk != nil && (z2 != nil || e != nil)

	// tap returns the run of src (or of its padded line) at offset delta
	// (-r..r) from output row i of block o.
	tap := func(src, padded []float32, o, i, delta int) []float32 {
		if line {
			return padded[r+delta : r+delta+n]
		}
		j := (i + delta + n) % n
		return src[(o*n+j)*inner:][:inner]
	}
	// conv adds kern applied to src around row i into out.
	conv := func(out, src, padded, kern []float32, o, i int) {
		gaussTap(out, tap(src, padded, o, i, 0), nil, kern[0])
		for d := 1; d <= r; d++ {
			gaussTap(out, tap(src, padded, o, i, -d), tap(src, padded, o, i, d), kern[d])
		}
	}
	padLine := func(padded, src []float32) {
		copy(padded[r:], src)
		copy(padded[:r], src[n-r:])
		copy(padded[r+n:], src[:r])
	}

	for o := 0; o < outer; o++ {
		if line {
			padLine(pad, s[o*n:(o+1)*n])
			if s2 != nil {
				padLine(pad2, s2[o*n:(o+1)*n])
			}
		}
		for i := 0; i < rows; i++ {
			at := (o*rows + i) * w
			if z != nil {
				zr := z[at : at+w]
				if !add {
					clear(zr)
				}
				conv(zr, s, pad, k, o, i)
			}
			if !wantB {
				continue
			}
			b := bRow
			if z2 != nil {
				b = z2[at : at+w]
			}
			clear(b)
			conv(b, s, pad, dk, o, i)
			if s2 != nil {
				conv(b, s2, pad2, k, o, i)
			}
			if z2 == nil {
				er := e[at : at+w]
				for j := range acc {
					acc[j] += er[j] * b[j]
				}
			}
		}
	}
	var sum float64
	if wantB && z2 == nil {
		for _, v := range acc {
			sum += float64(v)
		}
	}
	return sum
}

// gaussTap adds c (lo + hi) into z, or c lo when hi is nil.
func gaussTap(z, lo, hi []float32, c float32) {
	lo = lo[:len(z)]
	if hi == nil {
		for j := range z {
			z[j] += c * lo[j]
		}
		return
	}
	hi = hi[:len(z)]
	for j := range z {
		z[j] += c * (lo[j] + hi[j])
	}
}
