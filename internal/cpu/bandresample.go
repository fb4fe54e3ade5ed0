package cpu

import (
	"math"
	"sync"

	"uhno/internal/tensor"
)

// Band-limited (Fourier) resampling, CNO's anti-aliased up- and
// down-sampling (tensor.Backend.BandResample). Along one axis with N_in
// input and N_out output points the operator is a dense N_out x N_in
// matrix,
//
//	A[j, m] = K(j N_in/N_out - m),
//	K(s) = (1/N_in) sum_{k=0}^{floor(M/2)} c_k cos(2 pi k s / N_in),
//
// M = min(N_in, N_out), c_0 = 1, c_k = 2 for 0 < k <= M/2, except
// c_{M/2} = 1 when up-sampling with even M (the input's Nyquist mode split
// in half on +-M/2, so the interpolant is real and symmetric). Down-sampling
// keeps the fine grid's modes +-M/2 whole: on the coarse points they are
// the coarse Nyquist mode. This is scipy.signal.resample (zero-padding or
// truncating the spectrum, the Nyquist bin halved up and doubled down);
// Down(Up(x)) = x exactly, Up(x)[2j] = x[j]. The d-dimensional operator is
// the product of the axes' operators, applied axis by axis (axes whose
// size does not change are the identity and skipped); the backward pass
// applies the transposed matrices in reverse axis order.
//
// A dense matrix costs N_in multiply-adds per output point and axis
// (an FFT would cost O(log N)); at the grids of this project (N <= 256)
// that is a few times a 3x3 convolution with 32 channels, and the matrix
// form is exact, needs no FFT plan, and is the same code on every
// backend. On the CPU it runs as a packed matrix product (the
// convolutions' GEMM): a plain loop was 87% of a CNO training step. Each
// output value is one sum over m in increasing order, so the result does
// not depend on the thread count.

// bandKey names one axis matrix.
type bandKey struct {
	nin, nout int
	transpose bool
}

// bandMatrices caches the float32 matrices, shared by every backend
// (they depend only on the sizes).
var bandMatrices sync.Map // bandKey -> []float32

// BandMatrix returns A [nout, nin] (row-major) for one axis, or its
// transpose [nin, nout] when transpose is set, as float32 rounded from
// float64. Exported for the tests and the CUDA backend's tests.
func BandMatrix(nin, nout int, transpose bool) []float32 {
	key := bandKey{nin, nout, transpose}
	if v, ok := bandMatrices.Load(key); ok {
		return v.([]float32)
	}
	a := make([]float32, nin*nout)
	for j := 0; j < nout; j++ {
		for m := 0; m < nin; m++ {
			v := float32(BandKernel(nin, nout, j, m))
			if transpose {
				a[m*nout+j] = v
			} else {
				a[j*nin+m] = v
			}
		}
	}
	v, _ := bandMatrices.LoadOrStore(key, a)
	return v.([]float32)
}

// BandKernel is A[j, m] in float64. The phase 2 pi k (j N_in - m N_out) /
// (N_in N_out) is reduced modulo the period in integers first, so the
// cosines are accurate for every size; the CUDA kernel br_matrix computes
// the same terms in the same order.
func BandKernel(nin, nout, j, m int) float64 {
	mm := min(nin, nout)
	period := nin * nout
	num := ((j*nin-m*nout)%period + period) % period
	s := 1.0
	for k := 1; 2*k <= mm; k++ {
		c := 2.0
		if 2*k == mm && nout >= nin {
			c = 1 // up-sampling: the Nyquist mode split in half on +-M/2
		}
		s += c * math.Cos(2*math.Pi*float64(k*num%period)/float64(period))
	}
	return s / float64(nin)
}

// bandApply computes dst = A src along padded axis a for planes planes of
// shape cur (dst has cur with axis a set to rows), A [rows, cur[a]]
// row-major; accumulate adds into dst instead.
//
// Both cases are packed matrix products (convGemm, gemm.go), so every
// output is one sum over m in increasing order whatever the thread count:
//   - the last axis (post == 1): all lines at once, D[lines x rows] =
//     S[lines x nin] A^T, split over blocks of lines;
//   - an inner axis: per line, D_l[rows x post] = A S_l[nin x post], A
//     packed once and the lines split over the threads.
func (b *Backend) bandApply(dst, src, A []float32, planes int, cur [3]int, a, rows int, accumulate bool) {
	pre, post := 1, 1
	for i := 0; i < a; i++ {
		pre *= cur[i]
	}
	for i := a + 1; i < 3; i++ {
		post *= cur[i]
	}
	nin := cur[a]
	lines := planes * pre
	if post == 1 {
		bp := make([]float32, convPackedLen(rows, nin, convNR))
		b.packBTransposed(bp, A, nin, rows, nin)
		grain := max(convMR, (grainFor(2*rows*nin)+convMR-1)/convMR*convMR)
		b.parallel(lines, grain, func(lo, hi int) {
			sc := b.getScratch()
			defer b.putScratch(sc)
			ap := sc.floats(rsSlotBandA, convPackedLen(hi-lo, nin, convMR))
			b.packA(ap, src[lo*nin:], hi-lo, nin, nin, 1)
			b.convGemm(dst[lo*rows:], rows, hi-lo, rows, ap, bp, nin, accumulate)
		})
		return
	}
	ap := make([]float32, convPackedLen(rows, nin, convMR))
	b.packA(ap, A, rows, nin, nin, 1)
	b.parallel(lines, grainFor(2*rows*nin*post), func(lo, hi int) {
		sc := b.getScratch()
		defer b.putScratch(sc)
		bp := sc.floats(rsSlotBandB, convPackedLen(post, nin, convNR))
		for l := lo; l < hi; l++ {
			b.packB(bp, src[l*nin*post:], nin, post, post)
			b.convGemm(dst[l*rows*post:], post, rows, post, ap, bp, nin, accumulate)
		}
	})
}

// bandRun applies the axes' matrices to x (shape cur) and writes or adds
// the result into out; transpose selects the backward pass (transposed
// matrices, reverse axis order, from the output sizes to the input sizes).
func (b *Backend) bandRun(out, x []float32, planes int, from, to [3]int, axes []int, transpose, accumulate bool) {
	if len(axes) == 0 {
		if accumulate {
			for i := range out {
				out[i] += x[i]
			}
		} else {
			copy(out, x)
		}
		return
	}
	cur := from
	src := x
	for n, a := range axes {
		rows := to[a]
		next := cur
		next[a] = rows
		var dst []float32
		last := n == len(axes)-1
		if last {
			dst = out
		} else {
			dst = make([]float32, planes*next[0]*next[1]*next[2])
		}
		A := BandMatrix(cur[a], rows, false)
		if transpose { // the forward matrix maps rows -> cur[a]; use its transpose
			A = BandMatrix(rows, cur[a], true)
		}
		b.bandApply(dst, src, A, planes, cur, a, rows, last && accumulate)
		src, cur = dst, next
	}
}

// BandResample implements tensor.Backend (bandresample.go's comment).
func (b *Backend) BandResample(y, x *tensor.Tensor) {
	if y.Numel() == 0 {
		return
	}
	nin, nout, axes := tensor.BandAxes(x.Spatial(), y.Spatial())
	b.bandRun(data(y), data(x), x.Batch()*x.Channels(), nin, nout, axes, false, false)
}

// BandResampleBackward implements tensor.Backend: dx += A^T dy per axis,
// in reverse axis order.
func (b *Backend) BandResampleBackward(dx, dy *tensor.Tensor) {
	if dx == nil || dy.Numel() == 0 {
		return
	}
	nin, nout, axes := tensor.BandAxes(dx.Spatial(), dy.Spatial())
	rev := make([]int, len(axes))
	for i, a := range axes {
		rev[len(axes)-1-i] = a
	}
	b.bandRun(data(dx), data(dy), dy.Batch()*dy.Channels(), nout, nin, rev, true, true)
}
