package cpu

import "uhno/internal/tensor"

// pointwiseTile is the spatial tile of one Pointwise work item: a multiple
// of the GEMM kernel's 24-column block, small enough that the tile of every
// input channel stays in cache while the output rows are computed.
const pointwiseTile = 192

// Pointwise implements tensor.Backend: the 1x1 channel mixing
// y[b,:,s] = W x[b,:,s] + bias, with x [B, Cin, S...] and W [Cout, Cin].
// Per sample it is the matrix product Y_b = W X_b (Cout x S); work items are
// (sample, spatial tile) pairs.
func (b *Backend) Pointwise(y, x, w, bias *tensor.Tensor) {
	Y, X, W, Bias := data(y), data(x), data(w), data(bias)
	cin, cout, sp := x.Channels(), y.Channels(), x.SpatialSize()
	tiles := (sp + pointwiseTile - 1) / pointwiseTile
	b.parallel(x.Batch()*tiles, grainFor(cin*cout*min(sp, pointwiseTile)/8), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			bi, t := j/tiles, j%tiles
			s0, s1 := t*pointwiseTile, min((t+1)*pointwiseTile, sp)
			yb, xb := Y[bi*cout*sp:], X[bi*cin*sp:]
			if Bias != nil {
				for o := 0; o < cout; o++ {
					row := yb[o*sp+s0 : o*sp+s1]
					for i := range row {
						row[i] = Bias[o]
					}
				}
			}
			gemmNN(cout, s1-s0, cin, W, cin, xb[s0:], sp, yb[s0:], sp, Bias != nil)
		}
	})
}

// PointwiseBackward implements tensor.Backend:
// dX_b += W^T dY_b, dW += sum_b dY_b X_b^T, dbias[o] += sum_{b,s} dY[b,o,s].
// dW rows are split across goroutines and each sums the samples in order,
// so the result does not depend on the thread count.
func (b *Backend) PointwiseBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	DY, X, W := data(dy), data(x), data(w)
	cin, cout, sp, nb := x.Channels(), dy.Channels(), x.SpatialSize(), x.Batch()
	if dx != nil {
		DX := data(dx)
		wt := make([]float32, cin*cout) // W^T, so the product is a plain NN GEMM
		for o := 0; o < cout; o++ {
			for i := 0; i < cin; i++ {
				wt[i*cout+o] = W[o*cin+i]
			}
		}
		tiles := (sp + pointwiseTile - 1) / pointwiseTile
		b.parallel(nb*tiles, grainFor(cin*cout*min(sp, pointwiseTile)/8), func(lo, hi int) {
			for j := lo; j < hi; j++ {
				bi, t := j/tiles, j%tiles
				s0, s1 := t*pointwiseTile, min((t+1)*pointwiseTile, sp)
				gemmNN(cin, s1-s0, cout, wt, cout, DY[bi*cout*sp+s0:], sp, DX[bi*cin*sp+s0:], sp, true)
			}
		})
	}
	if dw != nil {
		DW := data(dw)
		const rows = 4
		b.parallel((cout+rows-1)/rows, grainFor(rows*cin*nb*sp/8), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				o0, o1 := r*rows, min((r+1)*rows, cout)
				for bi := 0; bi < nb; bi++ {
					gemmNT(o1-o0, cin, sp, DY[(bi*cout+o0)*sp:], sp, X[bi*cin*sp:], sp, DW[o0*cin:], cin)
				}
			}
		})
	}
	if dbias != nil {
		DB := data(dbias)
		b.parallel(cout, grainFor(nb*sp), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				var s float32
				for bi := 0; bi < nb; bi++ {
					for _, v := range DY[(bi*cout+o)*sp:][:sp] {
						s += v
					}
				}
				DB[o] += s
			}
		})
	}
}
