package cpu

import "uhno/internal/tensor"

// pointwiseTile is the spatial tile of one Pointwise work item: a multiple
// of the GEMM register block's 16 columns, small enough that the packed
// input tile of every channel stays in cache.
const pointwiseTile = 256

// Pointwise implements tensor.Backend: the 1x1 channel mixing
// y[b,:,s] = W x[b,:,s] + bias, with x [B, Cin, S...] and W [Cout, Cin].
// Per sample it is the matrix product Y_b = W X_b (Cout x S), computed by
// the packed GEMM of gemm.go over (sample, spatial tile) items.
func (b *Backend) Pointwise(y, x, w, bias *tensor.Tensor) {
	Y, X, W, Bias := data(y), data(x), data(w), data(bias)
	cin, cout, sp := x.Channels(), y.Channels(), x.SpatialSize()
	cs := b.getScratch()
	defer b.putScratch(cs)
	wa := cs.floats(rsSlotWA, convPackedLen(cout, cin, convMR))
	convPackA(wa, W, cout, cin, cin, 1)
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
// The weight gradient is computed per sample and the samples are summed in
// order, so the result does not depend on the thread count.
func (b *Backend) PointwiseBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	DY, X, W := data(dy), data(x), data(w)
	cin, cout, sp, nb := x.Channels(), dy.Channels(), x.SpatialSize(), x.Batch()
	cs := b.getScratch()
	defer b.putScratch(cs)
	if dx != nil {
		DX := data(dx)
		wt := cs.floats(rsSlotWT, convPackedLen(cin, cout, convMR))
		convPackA(wt, W, cin, cout, 1, cin) // A[i, o] = W[o, i]
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
	if dw != nil {
		DW := data(dw)
		parts := cs.floats(rsSlotDW, nb*cout*cin)
		b.parallel(nb, 1, func(lo, hi int) {
			s := b.getScratch()
			defer b.putScratch(s)
			for bi := lo; bi < hi; bi++ {
				dya := s.floats(rsSlotDYA, convPackedLen(cout, sp, convMR))
				b.packA(dya, DY[bi*cout*sp:], cout, sp, sp, 1)
				xt := s.floats(rsSlotDYB, convPackedLen(cin, sp, convNR))
				b.packBTransposed(xt, X[bi*cin*sp:], sp, cin, sp)
				b.convGemm(parts[bi*cout*cin:], cin, cout, cin, dya, xt, sp, false)
			}
		})
		for bi := 0; bi < nb; bi++ {
			axpy(DW[:cout*cin], parts[bi*cout*cin:][:cout*cin], 1)
		}
	}
	if dbias != nil {
		DB := data(dbias)
		b.parallel(cout, grainFor(nb*sp), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				// Eight interleaved partial sums (a fixed order, so the
				// result does not depend on the thread count), combined
				// pairwise at the end.
				var p [8]float32
				for bi := 0; bi < nb; bi++ {
					row := DY[(bi*cout+o)*sp:][:sp]
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
				DB[o] += ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))
			}
		})
	}
}

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
