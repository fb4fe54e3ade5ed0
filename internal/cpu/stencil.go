package cpu

import "uhno/internal/tensor"

// The GNO baseline's message passing on a stencil grid graph
// (tensor.Backend.StencilMessage):
//
//	y[b,o,p] = (1/|N(p)|) sum_{s in N(p)} sum_i k[s,o,i] x[b,i,p+s]
//
// It is an im2col product like Conv3 (resample.go), with the stencil's
// offsets instead of the 3^d taps: per (sample, tile of points) the patch
// matrix P[s*Cin + i, pl] = x[i, p0+pl+s] (0 where the offset leaves a
// non-periodic grid) is multiplied by A[o, s*Cin + i] = k[s,o,i], and the
// column of point p is scaled by float32(1/|N(p)|). The backward scales dy
// the same way, forms dA_b = dY' P^T per sample (summed over samples in
// order, then added into dk in [S, Cout, Cin] order) and dP = A^T dY',
// scattered back onto the grid. Every entry is a sum in a fixed order, so
// the result does not depend on the thread count.

// stGeom is the geometry of one StencilMessage call: the spatial axes
// padded in front to three, the offsets padded the same way, and the
// point tiles.
type stGeom struct {
	n           [3]int
	off         [][3]int
	periodic    bool
	s, sp       int // offsets, points per plane
	cin, cout   int
	k           int // s*cin rows of the patch matrix
	tile, tiles int
}

func newSTGeom(x, y *tensor.Tensor, offsets []int, periodic bool) stGeom {
	d := x.Dims()
	g := stGeom{n: [3]int{1, 1, 1}, periodic: periodic, s: len(offsets) / d, sp: x.SpatialSize(),
		cin: x.Channels(), cout: y.Channels()}
	for i, n := range x.Spatial() {
		g.n[3-d+i] = n
	}
	g.off = make([][3]int, g.s)
	for s := range g.s {
		for a := range d {
			g.off[s][3-d+a] = offsets[s*d+a]
		}
	}
	g.k = g.s * g.cin
	maxTile := max(convNR, convTileFloats/max(g.k, 1)/convNR*convNR)
	g.tiles = (g.sp + maxTile - 1) / maxTile
	g.tile = ((g.sp+g.tiles-1)/g.tiles + convNR - 1) / convNR * convNR
	g.tiles = (g.sp + g.tile - 1) / g.tile
	return g
}

// fill writes offs[s*n + pl], the plane offset read by offset s at point
// p0+pl (-1 where the offset leaves a non-periodic grid), and inv[pl] =
// float32(1/|N(p)|) (0 for a point with no neighbour), for the n points of
// a tile.
func (g *stGeom) fill(offs []int32, inv []float32, p0, n int) {
	j2 := p0 % g.n[2]
	j1 := p0 / g.n[2] % g.n[1]
	j0 := p0 / g.n[2] / g.n[1]
	for pl := 0; pl < n; pl++ {
		cnt := 0
		for s, o := range g.off {
			c0, c1, c2 := j0+o[0], j1+o[1], j2+o[2]
			if g.periodic {
				c0, c1, c2 = (c0+g.n[0])%g.n[0], (c1+g.n[1])%g.n[1], (c2+g.n[2])%g.n[2]
			}
			if c0 < 0 || c0 >= g.n[0] || c1 < 0 || c1 >= g.n[1] || c2 < 0 || c2 >= g.n[2] {
				offs[s*n+pl] = -1
				continue
			}
			offs[s*n+pl] = int32((c0*g.n[1]+c1)*g.n[2] + c2)
			cnt++
		}
		inv[pl] = 0
		if cnt > 0 {
			inv[pl] = float32(1 / float64(cnt))
		}
		if j2++; j2 == g.n[2] {
			j2 = 0
			if j1++; j1 == g.n[1] {
				j1 = 0
				j0++
			}
		}
	}
}

// fillAll runs fill for every tile once per call (the offsets are the
// same for every sample): tile ti's offsets at ti*tile*s, its inverse
// counts at ti*tile.
func (g *stGeom) fillAll(s *rsScratch) (offs []int32, inv []float32) {
	offs = s.ints(rsSlotOffsAll, g.tiles*g.tile*g.s)
	inv = s.floats(rsSlotStInv, g.tiles*g.tile)
	for ti := 0; ti < g.tiles; ti++ {
		p0, n, o, v := g.tileFill(offs, inv, ti)
		g.fill(o, v, p0, n)
	}
	return offs, inv
}

// tileFill returns tile ti's first point and length and its parts of
// fillAll's tables.
func (g *stGeom) tileFill(offs []int32, inv []float32, ti int) (p0, n int, o []int32, v []float32) {
	p0 = ti * g.tile
	n = min(g.tile, g.sp-p0)
	return p0, n, offs[ti*g.tile*g.s:][:n*g.s], inv[ti*g.tile:][:n]
}

// im2col writes P[s*cin + i, pl] = x[i, offs[s*n + pl]] (0 for -1) as a
// packed B operand (panels of convNR columns).
func (g *stGeom) im2col(patch, xb []float32, offs []int32, n int) {
	panel := g.k * convNR
	for s := 0; s < g.s; s++ {
		o := offs[s*n:][:n]
		for i := 0; i < g.cin; i++ {
			xi := xb[i*g.sp:][:g.sp]
			k := s*g.cin + i
			// Whole panels through fixed-size views (no index arithmetic
			// or bounds check per value), then the partial last panel.
			pb := 0
			for ; pb+convNR <= n; pb += convNR {
				src := (*[convNR]int32)(o[pb:])
				dst := (*[convNR]float32)(patch[(pb/convNR)*panel+k*convNR:])
				for q, off := range src {
					v := float32(0)
					if off >= 0 {
						v = xi[off]
					}
					dst[q] = v
				}
			}
			if pb < n {
				dst := patch[(pb/convNR)*panel+k*convNR:][:n-pb]
				for q, off := range o[pb:] {
					v := float32(0)
					if off >= 0 {
						v = xi[off]
					}
					dst[q] = v
				}
			}
		}
	}
}

// im2colT writes P^T[pl, k] as a packed B operand (panels of convNR
// columns along k) for dA += dY' P^T.
func (g *stGeom) im2colT(patchT, xb []float32, offs []int32, n int) {
	for s := 0; s < g.s; s++ {
		o := offs[s*n:][:n]
		for i := 0; i < g.cin; i++ {
			xi := xb[i*g.sp:][:g.sp]
			k := s*g.cin + i
			dst := patchT[(k/convNR)*n*convNR+k%convNR:]
			for pl, off := range o {
				v := float32(0)
				if off >= 0 {
					v = xi[off]
				}
				dst[pl*convNR] = v
			}
		}
	}
}

// col2im adds dP[s*cin + i, pl] (row-major, n columns) into
// dx[i, offs[s*n + pl]], skipping dropped edges.
func (g *stGeom) col2im(dxb, dP []float32, offs []int32, n int) {
	for s := 0; s < g.s; s++ {
		o := offs[s*n:][:n]
		for i := 0; i < g.cin; i++ {
			dxi := dxb[i*g.sp:][:g.sp]
			row := dP[(s*g.cin+i)*n:][:n]
			for pl, off := range o {
				if off >= 0 {
					dxi[off] += row[pl]
				}
			}
		}
	}
}

// moves is the geometry of the C moves (patch_amd64.c): patch row
// k = s*cin + i.
func (g *stGeom) moves() patchMoves {
	return patchMoves{t: g.s, cin: g.cin, sp: g.sp, ki: 1, kt: g.cin}
}

// stencilA rearranges k [S, Cout, Cin] into A [Cout, S*Cin].
func (g *stGeom) stencilA(dst, k []float32) {
	for s := 0; s < g.s; s++ {
		for o := 0; o < g.cout; o++ {
			copy(dst[o*g.k+s*g.cin:][:g.cin], k[(s*g.cout+o)*g.cin:][:g.cin])
		}
	}
}

// StencilMessage implements tensor.Backend (see the file comment).
func (b *Backend) StencilMessage(y, x, k *tensor.Tensor, offsets []int, periodic bool) {
	if y.Numel() == 0 {
		return
	}
	X, Y, K := data(x), data(y), data(k)
	g := newSTGeom(x, y, offsets, periodic)
	cs := b.getScratch()
	defer b.putScratch(cs)
	a := cs.floats(rsSlotDP, g.cout*g.k)
	g.stencilA(a, K)
	wa := cs.floats(rsSlotWA, convPackedLen(g.cout, g.k, convMR))
	b.packA(wa, a, g.cout, g.k, g.k, 1)
	allOffs, allInv := g.fillAll(cs)
	b.parallel(x.Batch()*g.tiles, 1, func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		for c := lo; c < hi; c++ {
			bi, ti := c/g.tiles, c%g.tiles
			p0, n, offs, inv := g.tileFill(allOffs, allInv, ti)
			patch := s.floats(rsSlotPatch, convPackedLen(n, g.k, convNR))
			b.patchIm2col(&g, patch, X[bi*g.cin*g.sp:][:g.cin*g.sp], offs, n)
			yt := Y[bi*g.cout*g.sp+p0:]
			b.convGemm(yt, g.sp, g.cout, n, wa, patch, g.k, false)
			for o := 0; o < g.cout; o++ {
				row := yt[o*g.sp:][:n]
				for pl := range row {
					row[pl] *= inv[pl]
				}
			}
		}
	})
}

// StencilMessageBackward implements tensor.Backend: with dY' = dy scaled
// by 1/|N(p)| per point, dx += col2im(A^T dY') and dk[s,o,i] += sum_b
// (dY'_b P_b^T)[o, s*Cin+i]; a nil gradient is skipped. Work is split
// over samples (one sample's tiles in order, so the scatter needs no
// locks), and the per-sample dA are added in sample order.
func (b *Backend) StencilMessageBackward(dx, dk, dy, x, k *tensor.Tensor, offsets []int, periodic bool) {
	if dy.Numel() == 0 || (dx == nil && dk == nil) {
		return
	}
	DY, X, K := data(dy), data(x), data(k)
	g := newSTGeom(x, dy, offsets, periodic)
	nb := x.Batch()
	cs := b.getScratch()
	defer b.putScratch(cs)
	var wt, parts []float32
	if dx != nil {
		a := cs.floats(rsSlotDYA, g.cout*g.k)
		g.stencilA(a, K)
		wt = cs.floats(rsSlotWT, convPackedLen(g.k, g.cout, convMR))
		b.packA(wt, a, g.k, g.cout, 1, g.k) // A^T[k, o] = A[o, k]
	}
	if dk != nil {
		parts = cs.floats(rsSlotDW, nb*g.cout*g.k)
	}
	allOffs, allInv := g.fillAll(cs)
	b.parallel(nb, 1, func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		for bi := lo; bi < hi; bi++ {
			xb := X[bi*g.cin*g.sp:][:g.cin*g.sp]
			dyb := DY[bi*g.cout*g.sp:][:g.cout*g.sp]
			for ti := 0; ti < g.tiles; ti++ {
				p0, n, offs, inv := g.tileFill(allOffs, allInv, ti)
				// dY' (Cout x n), the tile of dy scaled per point.
				dys := s.floats(rsSlotStDY, g.cout*n)
				for o := 0; o < g.cout; o++ {
					src, dst := dyb[o*g.sp+p0:][:n], dys[o*n:][:n]
					for pl, v := range src {
						dst[pl] = v * inv[pl]
					}
				}
				if dk != nil {
					patchT := s.floats(rsSlotPatch, convPackedLen(g.k, n, convNR))
					b.patchIm2colT(&g, patchT, xb, offs, n)
					dya := s.floats(rsSlotDYA, convPackedLen(g.cout, n, convMR))
					b.packA(dya, dys, g.cout, n, n, 1)
					part := parts[bi*g.cout*g.k:][:g.cout*g.k]
					b.convGemm(part, g.k, g.cout, g.k, dya, patchT, n, ti > 0)
				}
				if dx != nil {
					dyp := s.floats(rsSlotDYB, convPackedLen(n, g.cout, convNR))
					convPackB(dyp, dys, g.cout, n, n)
					dP := s.floats(rsSlotDP, g.k*n)
					b.convGemm(dP, n, g.k, n, wt, dyp, g.cout, false)
					b.patchCol2im(&g, data(dx)[bi*g.cin*g.sp:][:g.cin*g.sp], dP, offs, n)
				}
			}
		}
	})
	if dk != nil {
		DK := data(dk)
		ck := g.cout * g.k
		b.parallel(ck, grainFor(nb), func(lo, hi int) {
			for e := lo; e < hi; e++ {
				v := parts[e]
				for bi := 1; bi < nb; bi++ {
					v += parts[bi*ck+e]
				}
				o, r := e/g.k, e%g.k
				sIdx, i := r/g.cin, r%g.cin
				DK[(sIdx*g.cout+o)*g.cin+i] += v
			}
		})
	}
}
