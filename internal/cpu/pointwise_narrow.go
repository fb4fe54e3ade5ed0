package cpu

// Pointwise for few channels. U-HNO at the paper's 0.62M budget in 2D has
// C0 = 3: its 1x1 convolutions mix 1 to 24 channels over 4,096 points a
// sample, and through the packed GEMM (pointwise.go) they ran at 9-12
// GFLOP/s, 54% of an NS-2D step (docs/PERFORMANCE.md): the GEMM packs every
// input tile and fills 6 x 16 register blocks of which a 3-channel product
// uses a few entries, and the weight gradient packs X transposed into
// 16-column panels for three columns. Here, for at most pointwiseNarrowMax
// channels each way, every output row is computed straight from the input
// rows (pwNarrow*), and for at most pointwiseNarrowPairs weights each
// weight-gradient entry is one dot product over the sample's points
// (pwDots*).
//
// Bits. The forward pass and the input gradient make, per point, the
// operations of the GEMM path (a sum from zero over the input channels in
// increasing order, then the bias or the old gradient added), so they are
// the GEMM path's bits at every kernel level (TestPointwiseNarrowBits).
// The weight gradient sums each sample's products in 32 interleaved
// partial sums combined pairwise (pwDotsGo), then adds the samples to dW
// in sample order: the same bits for any thread count, not the GEMM
// path's (which sums the points one after another); at 4,096 points it is
// the more accurate of the two.

// pointwiseNarrowMax is the most channels (in or out) the narrow kernels
// take; the C kernel's stack buffers are sized for it (NARROW_MAX).
const pointwiseNarrowMax = 32

// pointwiseNarrow reports whether a Pointwise of cin -> cout channels
// computes its output and input gradient with the narrow kernels: up to
// pointwiseNarrowMax channels each way, where they were as fast as the
// GEMM or faster at every shape measured (docs/PERFORMANCE.md, "Pointwise
// for few channels"). They keep the GEMM's bits, so the bound is speed
// only.
func (b *Backend) pointwiseNarrow(cin, cout int) bool {
	return !b.rs.noNarrow && cin <= pointwiseNarrowMax && cout <= pointwiseNarrowMax
}

// pointwiseNarrowWeights reports whether the weight gradient of a
// Pointwise of cin -> cout channels is summed by the narrow kernels
// (pointwiseNarrowDW): up to pointwiseNarrowPairs weights.
func (b *Backend) pointwiseNarrowWeights(cin, cout int) bool {
	return b.pointwiseNarrow(cin, cout) && (b.rs.allNarrow || cin*cout <= pointwiseNarrowPairs)
}

// pointwiseNarrowPairs is the most weights (cin x cout) whose gradient
// the narrow kernels sum: up to 12 x 6 they took half the GEMM's time, at
// 12 x 12 they took 1.2x and at 24 x 24 3.3x (BenchmarkPointwiseNarrow,
// the dw pass): one dot product per weight costs more than the GEMM's
// register blocks once there are many weights and few points.
const pointwiseNarrowPairs = 96

// pwNarrow computes out[r*os + s] = sum_k A[r, k] in[k*is + s] (+ bias[r])
// or out[r*os + s] += that sum (add), for r < m, s < n, k < l, with
// A[r, k] = a[r*ars + k*aks]: in C where built, else pwNarrowGo.
func (b *Backend) pwNarrow(out []float32, os, m, n int, a []float32, ars, aks int, in []float32, is, l int, add bool, bias []float32) {
	if m == 0 || n == 0 {
		return
	}
	if m > pointwiseNarrowMax || l > pointwiseNarrowMax || len(out) < (m-1)*os+n || len(in) < (l-1)*is+n ||
		len(a) < (m-1)*ars+(l-1)*aks+1 || (bias != nil && len(bias) < m) || (add && bias != nil) {
		panic("cpu: pwNarrow: operand does not fit its slice")
	}
	if pwNarrowHaveC && !b.rs.forceGo && l > 0 {
		pwNarrowCLevel(-1, out, os, m, n, a, ars, aks, in, is, l, add, bias)
		return
	}
	pwNarrowGo(out, os, m, n, a, ars, aks, in, is, l, add, bias)
}

// pwNarrowGo is the portable pwNarrow, the C kernel's level 0 bit for bit:
// per point the sum from zero over k in increasing order, then the bias
// or the old value added.
func pwNarrowGo(out []float32, os, m, n int, a []float32, ars, aks int, in []float32, is, l int, add bool, bias []float32) {
	for r := 0; r < m; r++ {
		row := out[r*os:][:n]
		ar := a[r*ars:]
		for s := range row {
			var acc float32
			for k := 0; k < l; k++ {
				acc += ar[k*aks] * in[k*is+s]
			}
			switch {
			case add:
				row[s] += acc
			case bias != nil:
				row[s] = acc + bias[r]
			default:
				row[s] = acc
			}
		}
	}
}

// pwDots computes p[o*cin + i] = sum_s dy[o*sp + s] x[i*sp + s] for one
// sample (pwDotsGo's order): in C where built.
func (b *Backend) pwDots(p, dy []float32, cout int, x []float32, cin, sp int) {
	if cout == 0 || cin == 0 {
		return
	}
	if len(p) < cout*cin || len(dy) < cout*sp || len(x) < cin*sp {
		panic("cpu: pwDots: operand does not fit its slice")
	}
	if pwNarrowHaveC && !b.rs.forceGo && sp > 0 {
		pwDotsCLevel(-1, p, dy, cout, x, cin, sp)
		return
	}
	pwDotsGo(p, dy, cout, x, cin, sp)
}

// pwDotsGo is the portable pwDots, the C kernel's level 0 bit for bit:
// 32 interleaved partial sums (lane j takes the points s with s mod 32 =
// j, in increasing s), combined pairwise by halving: lane j + 16 into lane
// j, then j + 8, 4, 2, 1 (whole vectors in C).
func pwDotsGo(p, dy []float32, cout int, x []float32, cin, sp int) {
	for o := 0; o < cout; o++ {
		d := dy[o*sp:][:sp]
		for i := 0; i < cin; i++ {
			xi := x[i*sp:][:sp]
			var t [32]float32
			for s, v := range d {
				t[s%32] += v * xi[s]
			}
			for w := 16; w >= 1; w /= 2 {
				for j := 0; j < w; j++ {
					t[j] += t[j+w]
				}
			}
			p[o*cin+i] = t[0]
		}
	}
}

// pointwiseNarrowForward is Pointwise for few channels: Y_b = W X_b + bias
// over (sample, spatial tile) items.
func (b *Backend) pointwiseNarrowForward(Y, X, W, Bias []float32, cin, cout, sp, nb int) {
	tiles := (sp + pointwiseTile - 1) / pointwiseTile
	b.parallel(nb*tiles, grainFor(cin*cout*min(sp, pointwiseTile)/16), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			bi, t := j/tiles, j%tiles
			s0, n := t*pointwiseTile, min(pointwiseTile, sp-t*pointwiseTile)
			b.pwNarrow(Y[bi*cout*sp+s0:], sp, cout, n, W, cin, 1, X[bi*cin*sp+s0:], sp, cin, false, Bias)
		}
	})
}

// pointwiseNarrowDX adds dX_b += W^T dY_b over (sample, spatial tile)
// items, reading W transposed in place (A[i, o] = W[o, i]).
func (b *Backend) pointwiseNarrowDX(DX, DY, W []float32, cin, cout, sp, nb int) {
	tiles := (sp + pointwiseTile - 1) / pointwiseTile
	b.parallel(nb*tiles, grainFor(cin*cout*min(sp, pointwiseTile)/16), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			bi, t := j/tiles, j%tiles
			s0, n := t*pointwiseTile, min(pointwiseTile, sp-t*pointwiseTile)
			b.pwNarrow(DX[bi*cin*sp+s0:], sp, cin, n, W, 1, cin, DY[bi*cout*sp+s0:], sp, cout, true, nil)
		}
	})
}

// pointwiseNarrowDW adds dW += sum_b dY_b X_b^T: each sample's products
// (pwDots) into a buffer of its own, the samples in parallel, then added
// to dW in sample order, dW's entries in parallel; the bits do not depend
// on the thread count.
func (b *Backend) pointwiseNarrowDW(DW, DY, X []float32, cout, cin, sp, nb int) {
	cs := b.getScratch()
	defer b.putScratch(cs)
	n := cout * cin
	parts := cs.floats(rsSlotDW, nb*n)
	b.parallel(nb, grainFor(n*sp/16), func(lo, hi int) {
		for bi := lo; bi < hi; bi++ {
			b.pwDots(parts[bi*n:], DY[bi*cout*sp:], cout, X[bi*cin*sp:], cin, sp)
		}
	})
	b.addSampleParts(DW, parts, n, nb)
}
