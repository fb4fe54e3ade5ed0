package cpu

import "uhno/internal/tensor"

// Resampling between the levels of the U (Sec. 3.2): the encoder's strided
// convolution ConvDown halves every spatial axis, the decoder's Upsample2x
// doubles it.
//
// ConvDown is an im2col convolution. The output points of one sample are
// cut into tiles; for each tile the 3^d taps of every input channel are
// gathered into a patch matrix P (K = Cin 3^d rows, one column per output
// point) and the tile of y is the matrix product W P with W viewed as
// [Cout, K]. The backward pass rebuilds P per tile and forms
// dW += dY P^T and dP = W^T dY, then scatters dP back onto the input grid
// (col2im). The three products run in convGemm (gemm.go). Per
// output point the gathers move K values and the products do Cout K
// multiply-adds; with the vectorised kernel the products still take about
// half of the time (2D, Cin 32 -> Cout 64) and the gathers most of the rest.
//
// Cost per call: 3^d Cin Cout multiply-adds per output point forward,
// twice that backward; extra memory is one tile's patch matrix per
// goroutine (about 256 KiB) plus, backward, one Cout x K partial dW per
// sample.

// Scratch slots of rsScratch used here (each role has its own slot so that
// a slot's size settles at the largest request of that role).
const (
	rsSlotWA       = iota // packed W, forward
	rsSlotWT              // packed W^T, backward
	rsSlotDW              // per-sample dW partial sums
	rsSlotPatch           // packed patch matrix of one tile
	rsSlotDYA             // dY tile packed as an A operand
	rsSlotDYB             // dY tile packed as a B operand
	rsSlotDP              // dP = W^T dY of one tile
	rsSlotUpTmp1          // Upsample2x intermediate after one axis
	rsSlotUpTmp2          // Upsample2x intermediate after two axes
	rsSlotStInv           // StencilMessage 1/|N(p)| of every tile of a call
	rsSlotStDY            // StencilMessage scaled dy of one tile
	rsSlotBandA           // BandResample lines packed as an A operand
	rsSlotBandB           // BandResample line packed as a B operand
	rsSlotProjH           // Projection: a tile's hidden pre-activation h
	rsSlotProjG           // Projection backward: a tile's GELU(h)
	rsSlotProjDH          // Projection backward: a tile's dh
	rsSlotProjT           // Projection backward: GELU(h) or x transposed, packed
	rsSlotProjPack        // Projection backward: the portable GEMM's packed A
	rsSlotProjW1T         // Projection backward: packed W1^T
	rsFloatSlots
)

const (
	rsSlotAxis    = iota // ConvDown per-axis tap offsets
	rsSlotOffsAll        // the tap or stencil offsets of every tile of a call
	rsIntSlots
)

// convTileFloats is the target size (floats) of one tile's patch matrix:
// 256 KiB, so the patch and the tile's operands stay in the L2 cache.
const convTileFloats = 1 << 16

// convGeom is the geometry of one ConvDown call. Spatial axes are padded
// in front to three: a padded axis has one point and one (centre) tap.
type convGeom struct {
	nIn, nOut, nTap [3]int
	step            [3]int // stride per axis: 2 (ConvDown) or 1 (Conv3)
	sin, p          int    // points per channel plane, input and output
	taps            int    // 3^d
	cin, cout, k    int    // k = cin*taps rows of the patch matrix
	tile, tiles     int    // output points per tile, tiles per sample
}

func newConvGeom(x, y *tensor.Tensor) convGeom {
	g := convGeom{cin: x.Channels(), cout: y.Channels(), sin: x.SpatialSize(), p: y.SpatialSize(), taps: 1}
	d := x.Dims()
	for a := 0; a < 3; a++ {
		g.nIn[a], g.nOut[a], g.nTap[a], g.step[a] = 1, 1, 1, 1
		if s := a - (3 - d); s >= 0 {
			g.nIn[a], g.nOut[a], g.nTap[a] = x.Spatial()[s], y.Spatial()[s], 3
			g.step[a] = g.nIn[a] / g.nOut[a]
			g.taps *= 3
		}
	}
	g.k = g.cin * g.taps
	maxTile := max(convNR, convTileFloats/g.k/convNR*convNR)
	g.tiles = (g.p + maxTile - 1) / maxTile
	g.tile = ((g.p+g.tiles-1)/g.tiles + convNR - 1) / convNR * convNR
	g.tiles = (g.p + g.tile - 1) / g.tile
	return g
}

// tileRange returns the first output point and the length of tile ti.
func (g *convGeom) tileRange(ti int) (p0, n int) {
	p0 = ti * g.tile
	return p0, min(g.tile, g.p-p0)
}

// axisTables returns, per padded axis, the plane offset of the input point
// read by tap t of output index j: tab[a][j*nTap + t] =
// ((s j + t - 1) mod N) * stride for real axes, s the convolution's
// stride (2 for ConvDown, 1 for Conv3) (the circular padding of
// Sec. 3.2), 0 for padded ones.
func (g *convGeom) axisTables(s *rsScratch) [3][]int32 {
	total := 0
	for a := 0; a < 3; a++ {
		total += g.nOut[a] * g.nTap[a]
	}
	buf := s.ints(rsSlotAxis, total)
	var tab [3][]int32
	stride := g.sin
	for a := 0; a < 3; a++ {
		n := g.nIn[a]
		stride /= n
		tab[a], buf = buf[:g.nOut[a]*g.nTap[a]], buf[g.nOut[a]*g.nTap[a]:]
		for j := 0; j < g.nOut[a]; j++ {
			for t := 0; t < g.nTap[a]; t++ {
				i := g.step[a]*j + t - 1
				if g.nTap[a] == 1 {
					i = 0
				}
				tab[a][j*g.nTap[a]+t] = int32(((i + n) % n) * stride)
			}
		}
	}
	return tab
}

// allOffsets returns the tap offsets of every tile (offsets), tile ti's
// at ti*tile*taps: the same for every sample, so computed once per call
// rather than once per (sample, tile).
func (g *convGeom) allOffsets(s *rsScratch) []int32 {
	tab := g.axisTables(s)
	all := s.ints(rsSlotOffsAll, g.tiles*g.tile*g.taps)
	for ti := 0; ti < g.tiles; ti++ {
		p0, n := g.tileRange(ti)
		g.offsets(all[ti*g.tile*g.taps:][:n*g.taps], tab, p0, n)
	}
	return all
}

// tileOffsets is tile ti's part of allOffsets.
func (g *convGeom) tileOffsets(all []int32, ti int) []int32 {
	_, n := g.tileRange(ti)
	return all[ti*g.tile*g.taps:][:n*g.taps]
}

// offsets fills offs[t*n + pl] with the input plane offset read by tap t
// (row-major over the kernel axes, matching w's [.., 3, 3, 3] layout) of
// output point p0+pl, for the n points of a tile.
func (g *convGeom) offsets(offs []int32, tab [3][]int32, p0, n int) {
	j2 := p0 % g.nOut[2]
	j1 := p0 / g.nOut[2] % g.nOut[1]
	j0 := p0 / g.nOut[2] / g.nOut[1]
	t0, t1, t2 := g.nTap[0], g.nTap[1], g.nTap[2]
	for pl := 0; pl < n; pl++ {
		t := pl
		for _, a0 := range tab[0][j0*t0:][:t0] {
			for _, a1 := range tab[1][j1*t1:][:t1] {
				for _, a2 := range tab[2][j2*t2:][:t2] {
					offs[t] = a0 + a1 + a2
					t += n
				}
			}
		}
		if j2++; j2 == g.nOut[2] {
			j2 = 0
			if j1++; j1 == g.nOut[1] {
				j1 = 0
				j0++
			}
		}
	}
}

// im2col writes the patch matrix of one tile, P[i*taps + t, pl] =
// x[i, offs[t*n + pl]], as a packed B operand (panels of convNR columns)
// for the forward product W P: each row of a panel is a gather of convNR
// contiguous destination values (unrolled; the loop is load-bound).
func (g *convGeom) im2col(patch, xb []float32, offs []int32, n int) {
	panel := g.k * convNR
	for i := 0; i < g.cin; i++ {
		xi := xb[i*g.sin:][:g.sin]
		for t := 0; t < g.taps; t++ {
			o := offs[t*n:][:n]
			k := i*g.taps + t
			pb := 0
			for ; pb+convNR <= n; pb += convNR {
				src := (*[convNR]int32)(o[pb:])
				dst := (*[convNR]float32)(patch[(pb/convNR)*panel+k*convNR:])
				for q := 0; q < convNR; q += 4 {
					dst[q] = xi[src[q]]
					dst[q+1] = xi[src[q+1]]
					dst[q+2] = xi[src[q+2]]
					dst[q+3] = xi[src[q+3]]
				}
			}
			if pb < n {
				src := o[pb:]
				dst := patch[(pb/convNR)*panel+k*convNR:][:len(src)]
				for q, off := range src {
					dst[q] = xi[off]
				}
			}
		}
	}
}

// im2colT writes the same patch matrix transposed, P^T[pl, k], as a packed
// B operand (panels of convNR columns along k) for dW += dY P^T.
func (g *convGeom) im2colT(patchT, xb []float32, offs []int32, n int) {
	for i := 0; i < g.cin; i++ {
		xi := xb[i*g.sin:][:g.sin]
		for t := 0; t < g.taps; t++ {
			k := i*g.taps + t
			dst := patchT[(k/convNR)*n*convNR+k%convNR:]
			o := offs[t*n:][:n]
			pl := 0
			for ; pl+4 <= n; pl += 4 {
				src := (*[4]int32)(o[pl:])
				d := dst[pl*convNR:][:3*convNR+1]
				d[0] = xi[src[0]]
				d[convNR] = xi[src[1]]
				d[2*convNR] = xi[src[2]]
				d[3*convNR] = xi[src[3]]
			}
			for ; pl < n; pl++ {
				dst[pl*convNR] = xi[o[pl]]
			}
		}
	}
}

// col2im adds the patch-shaped gradient dP[k, pl] (row-major, n columns)
// back onto the input grid: dx[i, offs[t*n + pl]] += dP[i*taps + t, pl].
func (g *convGeom) col2im(dxb, dP []float32, offs []int32, n int) {
	for i := 0; i < g.cin; i++ {
		dxi := dxb[i*g.sin:][:g.sin]
		for t := 0; t < g.taps; t++ {
			row := dP[(i*g.taps+t)*n:][:n]
			for pl, off := range offs[t*n:][:n] {
				dxi[off] += row[pl]
			}
		}
	}
}

// moves is the geometry of the C moves (patch_amd64.c): patch row
// k = i*taps + t.
func (g *convGeom) moves() patchMoves {
	return patchMoves{t: g.taps, cin: g.cin, sp: g.sin, ki: g.taps, kt: 1}
}

// ConvDown implements tensor.Backend: the encoder's kernel-3, stride-2
// convolution with circular padding 1 (Sec. 3.2),
// y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,(2j+t-1) mod N] + bias[o] per axis,
// the same as PyTorch's Conv{1,2,3}d(kernel_size=3, stride=2, padding=1,
// padding_mode="circular"). Work is split over (sample, tile); each tile
// is one packed product W P (Cout x K times K x tile).
func (b *Backend) ConvDown(y, x, w, bias *tensor.Tensor) { b.conv(y, x, w, bias) }

// Conv3 implements tensor.Backend: the kernel-3, stride-1 circular
// convolution of the Conv-FNO and CNO baselines,
// y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,(j+t-1) mod N] + bias[o]. It is
// ConvDown's im2col product with stride 1 (the stride is read from the
// shapes).
func (b *Backend) Conv3(y, x, w, bias *tensor.Tensor) { b.conv(y, x, w, bias) }

// Conv3Backward implements tensor.Backend, as ConvDownBackward.
func (b *Backend) Conv3Backward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	b.convBackward(dx, dw, dbias, dy, x, w)
}

// conv is the im2col convolution behind ConvDown and Conv3; the stride of
// each axis is N_in / N_out.
func (b *Backend) conv(y, x, w, bias *tensor.Tensor) {
	X, Y, W, Bias := data(x), data(y), data(w), data(bias)
	g := newConvGeom(x, y)
	cs := b.getScratch()
	defer b.putScratch(cs)
	all := g.allOffsets(cs)
	wa := cs.floats(rsSlotWA, convPackedLen(g.cout, g.k, convMR))
	b.packA(wa, W, g.cout, g.k, g.k, 1) // A[o, k] = w[o, k]
	b.parallel(x.Batch()*g.tiles, 1, func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		for c := lo; c < hi; c++ {
			bi, ti := c/g.tiles, c%g.tiles
			p0, n := g.tileRange(ti)
			offs := g.tileOffsets(all, ti)
			patch := s.floats(rsSlotPatch, convPackedLen(n, g.k, convNR))
			b.patchIm2col(&g, patch, X[bi*g.cin*g.sin:][:g.cin*g.sin], offs, n)
			yt := Y[bi*g.cout*g.p+p0:]
			b.convGemmBias(yt, g.p, g.cout, n, wa, patch, g.k, Bias)
		}
	})
}

// ConvDownBackward implements tensor.Backend:
// dx += col2im(W^T dY), dw += sum_b dY_b P_b^T, dbias += sum_{b,j} dy.
// Work is split over samples: one sample's tiles run in order, so the
// col2im scatter needs no locking, and the dW contributions are summed per
// sample and then over samples in sample order (deterministic).
func (b *Backend) ConvDownBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	b.convBackward(dx, dw, dbias, dy, x, w)
}

// convBackward is the backward of conv (ConvDown and Conv3).
func (b *Backend) convBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	DY, X, W := data(dy), data(x), data(w)
	g := newConvGeom(x, dy)
	nb := x.Batch()
	if dbias != nil {
		DB := data(dbias)
		b.parallel(g.cout, grainFor(nb*g.p), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				var s float32
				for bi := 0; bi < nb; bi++ {
					s += convSum(DY[(bi*g.cout+o)*g.p:][:g.p])
				}
				DB[o] += s
			}
		})
	}
	if dx == nil && dw == nil {
		return
	}
	cs := b.getScratch()
	defer b.putScratch(cs)
	all := g.allOffsets(cs)
	var wt, parts []float32
	if dx != nil {
		wt = cs.floats(rsSlotWT, convPackedLen(g.k, g.cout, convMR))
		b.packA(wt, W, g.k, g.cout, 1, g.k) // A[k, o] = w[o, k]
	}
	if dw != nil {
		parts = cs.floats(rsSlotDW, nb*g.cout*g.k)
	}
	b.parallel(nb, 1, func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		for bi := lo; bi < hi; bi++ {
			xb := X[bi*g.cin*g.sin:][:g.cin*g.sin]
			dyb := DY[bi*g.cout*g.p:][:g.cout*g.p]
			for ti := 0; ti < g.tiles; ti++ {
				p0, n := g.tileRange(ti)
				offs := g.tileOffsets(all, ti)
				dyt := dyb[p0:]
				if dw != nil {
					// dW_b (Cout x K) += dY (Cout x n) P^T (n x K).
					patchT := s.floats(rsSlotPatch, convPackedLen(g.k, n, convNR))
					b.patchIm2colT(&g, patchT, xb, offs, n)
					dya := s.floats(rsSlotDYA, convPackedLen(g.cout, n, convMR))
					b.packA(dya, dyt, g.cout, n, g.p, 1)
					part := parts[bi*g.cout*g.k:][:g.cout*g.k]
					b.convGemm(part, g.k, g.cout, g.k, dya, patchT, n, ti > 0)
				}
				if dx != nil {
					// dP (K x n) = W^T (K x Cout) dY (Cout x n), then col2im.
					dyp := s.floats(rsSlotDYB, convPackedLen(n, g.cout, convNR))
					convPackB(dyp, dyt, g.cout, n, g.p)
					dP := s.floats(rsSlotDP, g.k*n)
					b.convGemm(dP, n, g.k, n, wt, dyp, g.cout, false)
					b.patchCol2im(&g, data(dx)[bi*g.cin*g.sin:][:g.cin*g.sin], dP, offs, n)
				}
			}
		}
	})
	if dw != nil {
		// dW[e] += ((p_0[e] + p_1[e]) + ...) + p_{nb-1}[e]: the samples'
		// partials summed in sample order into sample 0's buffer, row by
		// row over a block of entries (streaming, not one strided column
		// per entry), then added to dW; every entry sees the same
		// additions in the same order for any split over the threads.
		DW := data(dw)
		ck := g.cout * g.k
		b.parallel(ck, pointwiseSumGrain, func(lo, hi int) {
			acc := parts[lo:hi]
			for bi := 1; bi < nb; bi++ {
				axpy(acc, parts[bi*ck+lo:bi*ck+hi], 1)
			}
			axpy(DW[lo:hi], acc, 1)
		})
	}
}

// convSum returns the sum of v over four float32 lanes.
func convSum(v []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(v); i += 4 {
		q := (*[4]float32)(v[i:])
		s0 += q[0]
		s1 += q[1]
		s2 += q[2]
		s3 += q[3]
	}
	for ; i < len(v); i++ {
		s0 += v[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Upsample2x along one axis of n points follows PyTorch's F.interpolate
// with align_corners=false: output j reads the source coordinate
// s = (j+0.5)/2 - 0.5, clamped below at 0, and is (1-lambda) x[i0] +
// lambda x[i1] with i0 = floor(s), i1 = min(i0+1, n-1), lambda = s - i0.
// Edges are clamped, not wrapped periodically: this is what the paper's
// "bilinear upsampling" is in a PyTorch implementation. For j = 2m >= 2,
// s = m - 1/4 (i0 = m-1, lambda = 3/4); for j = 2m+1, s = m + 1/4 (i0 = m,
// lambda = 1/4). So, with weights exact in float32,
//
//	y[0]    = x[0]                      (s clamped to 0, lambda = 0)
//	y[2m-1] = 3/4 x[m-1] + 1/4 x[m]     (1 <= m <= n-1)
//	y[2m]   = 1/4 x[m-1] + 3/4 x[m]     (1 <= m <= n-1)
//	y[2n-1] = 1/4 x[n-1] + 3/4 x[n-1]   (i1 clamped to i0 = n-1)
//
// and the adjoint (the backward pass) gathers the same weights:
//
//	g[0]   = y[0] + 3/4 y[1] + 1/4 y[2]
//	g[m]   = 1/4 y[2m-1] + 3/4 y[2m] + 3/4 y[2m+1] + 1/4 y[2m+2]
//	g[n-1] = 1/4 y[2n-3] + 3/4 y[2n-2] + y[2n-1]
//
// (g[0] = y[0] + y[1] when n = 1). The tests check both against the
// formula itself.
//
// With periodic set (model.upsample: periodic, issue 20), the source
// coordinate is not clamped but wraps around the periodic axis: the two
// edge outputs read x[n-1] and x[0] like every interior pair,
//
//	y[0]    = 1/4 x[n-1] + 3/4 x[0]
//	y[2n-1] = 3/4 x[n-1] + 1/4 x[0]
//
// and the adjoint is the interior rule with indices taken mod 2n,
// g[m] = 1/4 y[2m-1] + 3/4 y[2m] + 3/4 y[2m+1] + 1/4 y[2m+2], for every m
// (n = 1 included).

// upLine interpolates one contiguous line: len(y) = 2 len(x).
func upLine(y, x []float32, periodic bool) {
	n := len(x)
	y = y[:2*n]
	q, h := float32(0.25), float32(0.75) // variables: kept in registers
	a := x[0]
	if periodic {
		y[0] = q*x[n-1] + h*a
	} else {
		y[0] = a
	}
	for m := 1; m < n; m++ {
		b := x[m]
		p := (*[2]float32)(y[2*m-1:])
		p[0] = h*a + q*b
		p[1] = q*a + h*b
		a = b
	}
	if periodic {
		y[2*n-1] = h*a + q*x[0]
	} else {
		y[2*n-1] = q*a + h*a
	}
}

// upLineT is the adjoint of upLine: g = A^T y (add false) or g += A^T y.
func upLineT(g, y []float32, add, periodic bool) {
	n := len(g)
	y = y[:2*n]
	put := func(m int, v float32) {
		if add {
			g[m] += v
		} else {
			g[m] = v
		}
	}
	if periodic {
		wrap := func(m int) { // the interior rule, indices mod 2n
			put(m, 0.25*y[(2*m-1+2*n)%(2*n)]+0.75*y[2*m]+0.75*y[2*m+1]+0.25*y[(2*m+2)%(2*n)])
		}
		wrap(0)
		for m := 1; m < n-1; m++ {
			q := (*[4]float32)(y[2*m-1:])
			put(m, 0.25*q[0]+0.75*q[1]+0.75*q[2]+0.25*q[3])
		}
		if n > 1 {
			wrap(n - 1)
		}
		return
	}
	if n == 1 {
		put(0, y[0]+y[1])
		return
	}
	put(0, y[0]+0.75*y[1]+0.25*y[2])
	for m := 1; m < n-1; m++ {
		q := (*[4]float32)(y[2*m-1:])
		put(m, 0.25*q[0]+0.75*q[1]+0.75*q[2]+0.25*q[3])
	}
	put(n-1, 0.25*y[2*n-3]+0.75*y[2*n-2]+y[2*n-1])
}

// upRows interpolates along the middle axis of [n, inner] (inner > 1):
// y is [2n, inner], each row a weighted sum of two rows of x.
func upRows(y, x []float32, n, inner int, periodic bool) {
	row := func(s []float32, i int) []float32 { return s[i*inner:][:inner] }
	if periodic {
		upLerp2(row(y, 0), row(x, n-1), row(x, 0), 0.25, 0.75)
	} else {
		copy(row(y, 0), row(x, 0))
	}
	for m := 1; m < n; m++ {
		upLerp2(row(y, 2*m-1), row(x, m-1), row(x, m), 0.75, 0.25)
		upLerp2(row(y, 2*m), row(x, m-1), row(x, m), 0.25, 0.75)
	}
	if periodic {
		upLerp2(row(y, 2*n-1), row(x, n-1), row(x, 0), 0.75, 0.25)
	} else {
		upLerp2(row(y, 2*n-1), row(x, n-1), row(x, n-1), 0.25, 0.75)
	}
}

// upRowsT is the adjoint of upRows: g [n, inner] = (or +=) A^T y.
func upRowsT(g, y []float32, n, inner int, add, periodic bool) {
	row := func(s []float32, i int) []float32 { return s[i*inner:][:inner] }
	if !add {
		clear(g[:n*inner])
	}
	if periodic {
		wrap := func(m int) { // the interior rule, rows mod 2n
			upGather4(row(g, m), row(y, (2*m-1+2*n)%(2*n)), row(y, 2*m), row(y, 2*m+1), row(y, (2*m+2)%(2*n)))
		}
		wrap(0)
		for m := 1; m < n-1; m++ {
			upGather4(row(g, m), row(y, 2*m-1), row(y, 2*m), row(y, 2*m+1), row(y, 2*m+2))
		}
		if n > 1 {
			wrap(n - 1)
		}
		return
	}
	if n == 1 {
		axpy(row(g, 0), row(y, 0), 1)
		axpy(row(g, 0), row(y, 1), 1)
		return
	}
	axpy(row(g, 0), row(y, 0), 1)
	axpy(row(g, 0), row(y, 1), 0.75)
	axpy(row(g, 0), row(y, 2), 0.25)
	for m := 1; m < n-1; m++ {
		upGather4(row(g, m), row(y, 2*m-1), row(y, 2*m), row(y, 2*m+1), row(y, 2*m+2))
	}
	axpy(row(g, n-1), row(y, 2*n-3), 0.25)
	axpy(row(g, n-1), row(y, 2*n-2), 0.75)
	axpy(row(g, n-1), row(y, 2*n-1), 1)
}

// upLerp2 sets d = wa a + wb b (unrolled by four).
func upLerp2(d, a, b []float32, wa, wb float32) {
	n := len(d)
	a, b = a[:n], b[:n]
	k := 0
	for ; k+4 <= n; k += 4 {
		d4, a4, b4 := (*[4]float32)(d[k:]), (*[4]float32)(a[k:]), (*[4]float32)(b[k:])
		d4[0] = wa*a4[0] + wb*b4[0]
		d4[1] = wa*a4[1] + wb*b4[1]
		d4[2] = wa*a4[2] + wb*b4[2]
		d4[3] = wa*a4[3] + wb*b4[3]
	}
	for ; k < n; k++ {
		d[k] = wa*a[k] + wb*b[k]
	}
}

// upGather4 adds 1/4 a + 3/4 b + 3/4 c + 1/4 e to d.
func upGather4(d, a, b, c, e []float32) {
	a, b, c, e = a[:len(d)], b[:len(d)], c[:len(d)], e[:len(d)]
	for k := range d {
		d[k] += 0.25*a[k] + 0.75*b[k] + 0.75*c[k] + 0.25*e[k]
	}
}

// upPass interpolates along one axis: in is [outer, n, inner], out is
// [outer, 2n, inner].
func upPass(out, in []float32, outer, n, inner int, periodic bool) {
	for o := 0; o < outer; o++ {
		src, dst := in[o*n*inner:][:n*inner], out[o*2*n*inner:][:2*n*inner]
		if inner == 1 {
			upLine(dst, src, periodic)
		} else {
			upRows(dst, src, n, inner, periodic)
		}
	}
}

// upPassT is the adjoint of upPass: in is [outer, 2n, inner], out
// [outer, n, inner] is overwritten (add false) or added to.
func upPassT(out, in []float32, outer, n, inner int, add, periodic bool) {
	for o := 0; o < outer; o++ {
		src, dst := in[o*2*n*inner:][:2*n*inner], out[o*n*inner:][:n*inner]
		if inner == 1 {
			upLineT(dst, src, add, periodic)
		} else {
			upRowsT(dst, src, n, inner, add, periodic)
		}
	}
}

// Upsample2x implements tensor.Backend: linear, bilinear or trilinear
// interpolation to twice the resolution with align_corners=false (see
// upLine; periodic wraps instead of clamping at the edges). The
// interpolation is a tensor product, so it is applied one axis at a time,
// last axis first (on the smallest data); each (sample, channel) plane is
// done by one goroutine.
func (b *Backend) Upsample2x(y, x *tensor.Tensor, periodic bool) {
	X, Y := data(x), data(y)
	sp := x.Spatial()
	d, sin := len(sp), x.SpatialSize()
	sout := sin << d
	b.parallel(x.Batch()*x.Channels(), grainFor(3*sout), func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		bufs := [2][]float32{s.floats(rsSlotUpTmp1, 2*sin), s.floats(rsSlotUpTmp2, 4*sin)}
		for pl := lo; pl < hi; pl++ {
			in := X[pl*sin:][:sin]
			outer, inner := sin, 1 // points of the axes before / after axis a
			for a := d - 1; a >= 0; a-- {
				outer /= sp[a]
				out := Y[pl*sout:][:sout]
				if a > 0 {
					out = bufs[d-1-a]
				}
				upPass(out, in, outer, sp[a], inner, periodic)
				in, inner = out, inner*2*sp[a]
			}
		}
	})
}

// Upsample2xBackward implements tensor.Backend: dx += A^T dy with A the
// interpolation of Upsample2x, applied as the adjoint of each axis pass,
// first axis first (so the data shrink as early as possible).
func (b *Backend) Upsample2xBackward(dx, dy *tensor.Tensor, periodic bool) {
	DX, DY := data(dx), data(dy)
	sp := dx.Spatial()
	d, sin := len(sp), dx.SpatialSize()
	sout := sin << d
	b.parallel(dx.Batch()*dx.Channels(), grainFor(3*sout), func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		bufs := [2][]float32{s.floats(rsSlotUpTmp2, 4*sin), s.floats(rsSlotUpTmp1, 2*sin)}
		for pl := lo; pl < hi; pl++ {
			in := DY[pl*sout:][:sout]
			outer, inner := 1, sout // points of the axes before / after axis a
			for a := 0; a < d; a++ {
				inner /= 2 * sp[a]
				out := DX[pl*sin:][:sin]
				if a < d-1 {
					out = bufs[a]
				}
				upPassT(out, in, outer, sp[a], inner, a == d-1, periodic)
				in, outer = out, outer*sp[a]
			}
		}
	})
}
