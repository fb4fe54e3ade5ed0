package cpu

import "uhno/internal/tensor"

// The projection head Q of every model (paper Sec. 3.2, "a pointwise
// projection"; uhno's 1x1 -> GELU -> 1x1, model.projection), fused
// (tensor.Projector):
//
//	h = W1 x + b1,  y = W2 GELU(h) + b2          at every point
//
// Composed from Pointwise, GELU and Pointwise, the tape keeps h and
// GELU(h) for the backward: [B, hidden, S...] each, 33.5 MB apiece at
// batch 16, 64x64 and the default hidden width 128, whatever the model's
// own width (U-HNO at 0.62M has 3 channels there). Each of the five
// passes over them went to main memory, and the head took 40% of U-HNO's
// training step at that budget (docs/PERFORMANCE.md). Fused, the work goes
// tile by tile (projTile points): the tile's h and GELU(h) live in
// scratch ([hidden, projTile], 128 KiB) between the two products, the
// backward recomputes them, and nothing of hidden width is stored.
//
// The forward gives the bits of the composed ops (the same GEMM on the
// same tiles, the same GELU kernel), and so does the backward's dx. The
// weight and bias gradients sum each group of projGroupTiles tiles
// into a partial of their own and then the partials in group order (the
// composed path sums each sample's whole spatial axis at once), so they
// differ from the composed ops' in rounding but not with the thread count.

// projTile is the spatial tile of the fused projection, the Pointwise
// tile (the forward's bits depend on it only through the GEMM's blocks,
// which are per entry).
const projTile = pointwiseTile

// projGroupTiles is the number of consecutive tiles of one sample whose
// weight-gradient contributions one worker sums into one partial.
const projGroupTiles = 16

// CanProject implements tensor.Projector.
func (b *Backend) CanProject() bool { return true }

// Projection implements tensor.Projector: y = W2 GELU(W1 x + b1) + b2 at
// every point; w1 is [hidden, Cin], w2 [Cout, hidden], b1 and b2 their
// biases (never nil).
func (b *Backend) Projection(y, x, w1, b1, w2, b2 *tensor.Tensor) {
	Y, X, W1, B1, W2, B2 := data(y), data(x), data(w1), data(b1), data(w2), data(b2)
	cin, hid, cout, sp := x.Channels(), w1.Shape[0], y.Channels(), x.SpatialSize()
	cs := b.getScratch()
	defer b.putScratch(cs)
	wa1 := cs.floats(rsSlotWA, convPackedLen(hid, cin, convMR))
	b.packA(wa1, W1, hid, cin, cin, 1)
	wa2 := cs.floats(rsSlotWT, convPackedLen(cout, hid, convMR))
	b.packA(wa2, W2, cout, hid, hid, 1)
	tiles := (sp + projTile - 1) / projTile
	b.parallel(x.Batch()*tiles, grainFor(hid*(cin+cout)*min(sp, projTile)/16), func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		for j := lo; j < hi; j++ {
			bi, t := j/tiles, j%tiles
			s0, n := t*projTile, min(projTile, sp-t*projTile)
			xp := s.floats(rsSlotPatch, convPackedLen(n, cin, convNR))
			b.packB(xp, X[bi*cin*sp+s0:], cin, n, sp)
			h := s.floats(rsSlotProjH, hid*n)
			b.convGemmBias(h, n, hid, n, wa1, xp, cin, B1)
			geluFast(h, h)
			gp := s.floats(rsSlotDYB, convPackedLen(n, hid, convNR))
			b.packB(gp, h, hid, n, n)
			b.convGemmBias(Y[bi*cout*sp+s0:], sp, cout, n, wa2, gp, hid, B2)
		}
	})
}

// ProjectionBackward implements tensor.Projector. Per tile it recomputes
// h = W1 x + b1 and g = GELU(h), then
//
//	dg = W2^T dy,  dh = dg GELU'(h),  dx += W1^T dh,
//	dW2 += dy g^T,  db2 += sum dy,  dW1 += dh x^T,  db1 += sum dh,
//
// the weight and bias terms into its group's partial (see the file
// comment); any gradient may be nil.
func (b *Backend) ProjectionBackward(dx, dw1, db1, dw2, db2, dy, x, w1, b1, w2 *tensor.Tensor) {
	DY, X, W1, B1, W2 := data(dy), data(x), data(w1), data(b1), data(w2)
	cin, hid, cout, sp, nb := x.Channels(), w1.Shape[0], dy.Channels(), x.SpatialSize(), x.Batch()
	cs := b.getScratch()
	defer b.putScratch(cs)
	wa1 := cs.floats(rsSlotWA, convPackedLen(hid, cin, convMR))
	b.packA(wa1, W1, hid, cin, cin, 1)
	w2t := cs.floats(rsSlotWT, convPackedLen(hid, cout, convMR))
	b.packA(w2t, W2, hid, cout, 1, hid) // A[k, o] = W2[o, k]
	var w1t []float32
	if dx != nil {
		w1t = cs.floats(rsSlotProjW1T, convPackedLen(cin, hid, convMR))
		b.packA(w1t, W1, cin, hid, 1, cin) // A[i, k] = W1[k, i]
	}
	// One partial per group: dW1 [hid, cin], db1 [hid], dW2 [cout, hid],
	// db2 [cout], laid out in that order.
	oW1, oB1, oW2, oB2 := 0, hid*cin, hid*cin+hid, hid*cin+hid+cout*hid
	part := oB2 + cout
	tiles := (sp + projTile - 1) / projTile
	perSample := (tiles + projGroupTiles - 1) / projGroupTiles
	groups := nb * perSample
	wantW := dw1 != nil || db1 != nil || dw2 != nil || db2 != nil
	var parts []float32
	if wantW {
		parts = cs.floats(rsSlotDW, groups*part)
		clear(parts)
	}
	b.parallel(groups, 1, func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		for grp := lo; grp < hi; grp++ {
			bi, g0 := grp/perSample, grp%perSample*projGroupTiles
			var p []float32
			if wantW {
				p = parts[grp*part:][:part]
			}
			for t := g0; t < min(g0+projGroupTiles, tiles); t++ {
				s0, n := t*projTile, min(projTile, sp-t*projTile)
				xb, dyb := X[bi*cin*sp+s0:], DY[bi*cout*sp+s0:]
				xp := s.floats(rsSlotPatch, convPackedLen(n, cin, convNR))
				b.packB(xp, xb, cin, n, sp)
				h := s.floats(rsSlotProjH, hid*n)
				b.convGemmBias(h, n, hid, n, wa1, xp, cin, B1)
				g := s.floats(rsSlotProjG, hid*n)
				geluFast(g, h)
				dyp := s.floats(rsSlotDYB, convPackedLen(n, cout, convNR))
				b.packB(dyp, dyb, cout, n, sp)
				dg := s.floats(rsSlotDP, hid*n)
				clear(dg)
				b.convGemm(dg, n, hid, n, w2t, dyp, cout, true)
				dh := s.floats(rsSlotProjDH, hid*n)
				clear(dh)
				geluBackwardFast(dh, dg, h)
				if dx != nil {
					dhp := s.floats(rsSlotDYA, convPackedLen(n, hid, convNR))
					b.packB(dhp, dh, hid, n, n)
					b.convGemm(data(dx)[bi*cin*sp+s0:], sp, cin, n, w1t, dhp, hid, true)
				}
				pack := s.floats(rsSlotProjPack, convPackedLen(max(hid, cout), n, convMR))
				if dw2 != nil {
					gt := s.floats(rsSlotProjT, convPackedLen(hid, n, convNR))
					b.packBTransposed(gt, g, n, hid, n)
					b.convGemmRows(p[oW2:], hid, cout, hid, dyb, sp, gt, n, true, pack)
				}
				if dw1 != nil {
					xt := s.floats(rsSlotProjT, convPackedLen(cin, n, convNR))
					b.packBTransposed(xt, xb, n, cin, sp)
					b.convGemmRows(p[oW1:], cin, hid, cin, dh, n, xt, n, true, pack)
				}
				if db1 != nil {
					for o := range hid {
						p[oB1+o] += rowSum(dh[o*n:][:n])
					}
				}
				if db2 != nil {
					for o := range cout {
						p[oB2+o] += rowSum(dyb[o*sp:][:n])
					}
				}
			}
		}
	})
	if !wantW {
		return
	}
	// The partials in group order, for every entry (split over entries:
	// the same additions for any split).
	for _, d := range []struct {
		t   *tensor.Tensor
		off int
	}{{dw1, oW1}, {db1, oB1}, {dw2, oW2}, {db2, oB2}} {
		if d.t == nil {
			continue
		}
		D := data(d.t)
		b.parallel(len(D), pointwiseSumGrain, func(lo, hi int) {
			for grp := range groups {
				axpy(D[lo:hi], parts[grp*part+d.off+lo:grp*part+d.off+hi], 1)
			}
		})
	}
}

// rowSum is the sum of v in eight interleaved partial sums combined
// pairwise (a fixed order; PointwiseBackward's bias sum over one row).
func rowSum(v []float32) float32 {
	var p [8]float32
	addInterleaved(&p, v)
	return combine8(&p)
}

var _ tensor.Projector = (*Backend)(nil)
