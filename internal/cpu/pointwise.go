package cpu

import "uhno/internal/tensor"

// pointwiseTile is the spatial tile of one Pointwise work item: a multiple
// of the GEMM register block's 16 columns, small enough that the packed
// input tile of every channel stays in cache.
const pointwiseTile = 256

// Pointwise implements tensor.Backend: the 1x1 channel mixing
// y[b,:,s] = W x[b,:,s] + bias, with x [B, Cin, S...] and W [Cout, Cin].
// Per sample it is the matrix product Y_b = W X_b (Cout x S), computed by
// the packed GEMM of gemm.go over (sample, spatial tile) items, or for few
// channels by the narrow kernels of pointwise_narrow.go.
func (b *Backend) Pointwise(y, x, w, bias *tensor.Tensor) {
	Y, X, W, Bias := data(y), data(x), data(w), data(bias)
	cin, cout, sp := x.Channels(), y.Channels(), x.SpatialSize()
	if b.pointwiseNarrow(cin, cout) {
		b.pointwiseNarrowForward(Y, X, W, Bias, cin, cout, sp, x.Batch())
		return
	}
	cs := b.getScratch()
	defer b.putScratch(cs)
	wa := cs.floats(rsSlotWA, convPackedLen(cout, cin, convMR))
	b.packA(wa, W, cout, cin, cin, 1)
	tiles := (sp + pointwiseTile - 1) / pointwiseTile
	b.parallel(x.Batch()*tiles, grainFor(cin*cout*min(sp, pointwiseTile)/16), func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		for j := lo; j < hi; j++ {
			bi, t := j/tiles, j%tiles
			s0, n := t*pointwiseTile, min(pointwiseTile, sp-t*pointwiseTile)
			xp := s.floats(rsSlotPatch, convPackedLen(n, cin, convNR))
			b.packB(xp, X[bi*cin*sp+s0:], cin, n, sp)
			b.convGemmBias(Y[bi*cout*sp+s0:], sp, cout, n, wa, xp, cin, Bias)
		}
	})
}

// PointwiseBackward implements tensor.Backend:
// dX_b += W^T dY_b, dW += sum_b dY_b X_b^T, dbias[o] += sum_{b,s} dY[b,o,s].
// The weight gradient adds the samples' products to dW in sample order
// (pointwiseWeightGrad; pointwiseNarrowDW for few channels), so the result
// does not depend on the thread count.
func (b *Backend) PointwiseBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	DY, X, W := data(dy), data(x), data(w)
	cin, cout, sp, nb := x.Channels(), dy.Channels(), x.SpatialSize(), x.Batch()
	cs := b.getScratch()
	defer b.putScratch(cs)
	narrow := b.pointwiseNarrow(cin, cout)
	if dx != nil && narrow {
		b.pointwiseNarrowDX(data(dx), DY, W, cin, cout, sp, nb)
	} else if dx != nil {
		DX := data(dx)
		wt := cs.floats(rsSlotWT, convPackedLen(cin, cout, convMR))
		b.packA(wt, W, cin, cout, 1, cin) // A[i, o] = W[o, i]
		tiles := (sp + pointwiseTile - 1) / pointwiseTile
		b.parallel(nb*tiles, grainFor(cin*cout*min(sp, pointwiseTile)/16), func(lo, hi int) {
			s := b.getScratch()
			defer b.putScratch(s)
			for j := lo; j < hi; j++ {
				bi, t := j/tiles, j%tiles
				s0, n := t*pointwiseTile, min(pointwiseTile, sp-t*pointwiseTile)
				dyp := s.floats(rsSlotPatch, convPackedLen(n, cout, convNR))
				b.packB(dyp, DY[bi*cout*sp+s0:], cout, n, sp)
				b.convGemm(DX[bi*cin*sp+s0:], sp, cin, n, wt, dyp, cout, true)
			}
		})
	}
	if dw != nil && b.pointwiseNarrowWeights(cin, cout) {
		b.pointwiseNarrowDW(data(dw), DY, X, cout, cin, sp, nb)
	} else if dw != nil {
		b.pointwiseWeightGrad(data(dw), DY, X, cout, cin, sp, nb)
	}
	if dbias != nil {
		DB := data(dbias)
		b.parallel(cout, grainFor(nb*sp), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				// The samples' rows through one set of eight interleaved
				// partial sums, combined pairwise at the end.
				var p [8]float32
				for bi := 0; bi < nb; bi++ {
					addInterleaved(&p, DY[(bi*cout+o)*sp:][:sp])
				}
				DB[o] += combine8(&p)
			}
		})
	}
}

// pointwiseWeightGrad computes dW += sum_b dY_b X_b^T, adding the samples'
// products to dW in sample order, each product summed over the spatial
// axis from zero: two schedules give the same bits (every entry sees the
// same operations) and the cheaper one runs.
//
// In place (pointwiseWeightGradInPlace) there are no partial buffers and no
// summing pass, but every block of dW packs the whole of the operand it
// does not split; with partial buffers (pointwiseWeightGradParts) the
// samples run in parallel and their products are summed after. Per sample
// the in-place schedule repacks (blocks-1) min(Cout, Cin) S values and the
// partial buffers cost Cout Cin values written, read and summed on one
// thread: the first wins at the coarse levels (many channels, few points),
// the second at the fine ones.
func (b *Backend) pointwiseWeightGrad(DW, DY, X []float32, cout, cin, sp, nb int) {
	blocks, _, _, _ := pointwiseSplit(cout, cin, b.threads)
	if blocks == 1 || cout*cin*blocks >= (blocks-1)*min(cout, cin)*sp {
		b.pointwiseWeightGradInPlace(DW, DY, X, cout, cin, sp, nb)
		return
	}
	b.pointwiseWeightGradParts(DW, DY, X, cout, cin, sp, nb)
}

// pointwiseSplit splits dW for pointwiseWeightGradInPlace: along its rows
// (in units of convMR) when Cout >= Cin, else along its columns (units of
// convNR), into at most threads blocks.
func pointwiseSplit(cout, cin, threads int) (blocks, units, unit int, byRows bool) {
	byRows = cout >= cin
	unit, size := convMR, cout
	if !byRows {
		unit, size = convNR, cin
	}
	units = (size + unit - 1) / unit
	return max(1, min(threads, units)), units, unit, byRows
}

// pointwiseWeightGradInPlace computes dW += dY_b X_b^T for b = 0, 1, ...,
// nb-1 in that order with the GEMM adding each product to dW as it stores
// it (beta = 1). The work is split over blocks of dW, each running all
// samples in order, so every entry's arithmetic is the same for any split
// and thread count. dY_b is not packed: the GEMM reads its rows in place
// (convGemmRows). Each block packs the columns of X_b^T it needs itself:
// splitting dW's rows repacks the whole of X_b in every block, which
// costs less on this project's machine than sharing one packed copy
// between the cores (measured: docs/PERFORMANCE.md).
func (b *Backend) pointwiseWeightGradInPlace(DW, DY, X []float32, cout, cin, sp, nb int) {
	blocks, units, unit, byRows := pointwiseSplit(cout, cin, b.threads)
	b.parallel(blocks, 1, func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		for blk := lo; blk < hi; blk++ {
			// Block blk covers units [u0, u1) of the split dimension.
			u0, u1 := blk*units/blocks, (blk+1)*units/blocks
			r0, r1, c0, c1 := 0, cout, 0, cin
			if byRows {
				r0, r1 = u0*unit, min(u1*unit, cout)
			} else {
				c0, c1 = u0*unit, min(u1*unit, cin)
			}
			m, n := r1-r0, c1-c0
			pack := s.floats(rsSlotDYA, convPackedLen(m, sp, convMR)) // the portable path's packed dY
			xt := s.floats(rsSlotDYB, convPackedLen(n, sp, convNR))
			for bi := 0; bi < nb; bi++ {
				b.packBTransposed(xt, X[(bi*cin+c0)*sp:], sp, n, sp)
				b.convGemmRows(DW[r0*cin+c0:], cin, m, n, DY[(bi*cout+r0)*sp:], sp, xt, sp, true, pack)
			}
		}
	})
}

// pointwiseWeightGradParts computes each sample's dY_b X_b^T into a partial
// buffer of its own, the samples in parallel, then adds the partials to dW
// in sample order, dW's entries in parallel.
func (b *Backend) pointwiseWeightGradParts(DW, DY, X []float32, cout, cin, sp, nb int) {
	cs := b.getScratch()
	defer b.putScratch(cs)
	parts := cs.floats(rsSlotDW, nb*cout*cin)
	b.parallel(nb, 1, func(lo, hi int) {
		s := b.getScratch()
		defer b.putScratch(s)
		for bi := lo; bi < hi; bi++ {
			dya := s.floats(rsSlotDYA, convPackedLen(cout, sp, convMR))
			xt := s.floats(rsSlotDYB, convPackedLen(cin, sp, convNR))
			b.packBTransposed(xt, X[bi*cin*sp:], sp, cin, sp)
			b.convGemmRows(parts[bi*cout*cin:], cin, cout, cin, DY[bi*cout*sp:], sp, xt, sp, false, dya)
		}
	})
	b.addSampleParts(DW, parts, cout*cin, nb)
}

// addSampleParts adds nb partial buffers of n entries (parts[bi*n:]) to
// dst in sample order for every entry, split over the entries: each entry
// sees the same additions for any split, so the bits do not depend on the
// thread count.
func (b *Backend) addSampleParts(dst, parts []float32, n, nb int) {
	b.parallel(n, pointwiseSumGrain, func(lo, hi int) {
		for bi := 0; bi < nb; bi++ {
			axpy(dst[lo:hi], parts[bi*n+lo:bi*n+hi], 1)
		}
	})
}

// pointwiseSumGrain is the chunk of dW entries one worker sums over the
// samples' partial buffers: a few pages of each buffer per hand-off.
const pointwiseSumGrain = 2048

// packBT packs the l x n matrix B[k, c] = src[c*cs + k] (the transpose of
// row-major n x l rows) into panels of convNR columns, like convPackB.
func packBT(dst, src []float32, l, n, cs int) {
	for jb := 0; jb < n; jb += convNR {
		pan := dst[(jb/convNR)*l*convNR:][:l*convNR]
		nr := min(convNR, n-jb)
		for c := 0; c < convNR; c++ {
			if c >= nr {
				for k := 0; k < l; k++ {
					pan[k*convNR+c] = 0
				}
				continue
			}
			col := src[(jb+c)*cs:][:l]
			for k, v := range col {
				pan[k*convNR+c] = v
			}
		}
	}
}

// addInterleaved adds row into eight interleaved partial sums, element i
// into p[i%8]: a fixed order, so a sum built from it does not depend on
// the thread count. Long rows go to add_amd64.c's vector loop (one lane
// per partial sum: the same bits as addInterleavedGo).
func addInterleaved(p *[8]float32, row []float32) {
	if haveFastAdd && len(row) >= minFastAdd {
		addInterleavedFast(p, row)
		return
	}
	addInterleavedGo(p, row)
}

// addInterleavedGo is addInterleaved in Go.
func addInterleavedGo(p *[8]float32, row []float32) {
	i := 0
	for ; i+8 <= len(row); i += 8 {
		q := row[i : i+8 : i+8]
		p[0] += q[0]
		p[1] += q[1]
		p[2] += q[2]
		p[3] += q[3]
		p[4] += q[4]
		p[5] += q[5]
		p[6] += q[6]
		p[7] += q[7]
	}
	for ; i < len(row); i++ {
		p[i%8] += row[i]
	}
}

// combine8 combines addInterleaved's partial sums pairwise.
func combine8(p *[8]float32) float32 {
	return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
}
