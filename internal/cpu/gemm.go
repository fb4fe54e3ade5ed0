package cpu

import "sync"

// Packed matrix products for Pointwise (pointwise.go) and ConvDown
// (resample.go).
//
// ConvDown is written as three matrix products per spatial tile (forward
// y = W P, backward dW += dY P^T and dP = W^T dY, with P the im2col patch
// matrix). All three go through one routine, convGemm, that multiplies
// operands stored in the "packed panel" layout of BLIS-style GEMMs:
//
//   - A (m x l) is cut into panels of convMR rows; panel q holds
//     A[q*convMR + r, k] at ap[q*l*convMR + k*convMR + r].
//   - B (l x n) is cut into panels of convNR columns; panel q holds
//     B[k, q*convNR + c] at bp[q*l*convNR + k*convNR + c].
//
// With this layout the convMR x convNR register block reads both operands
// contiguously (no cache-set conflicts from large power-of-two row
// strides, which the 64x64 grids would otherwise cause). Rows of the last
// A panel beyond m and columns of the last B panel beyond n may hold any
// finite or non-finite values: they only reach entries of C that are not
// stored.
//
// Every entry of C is a sum over k in increasing order, so the result is
// the same whatever thread runs it. The portable kernel (plain Go, below)
// is the reference; on amd64 with cgo a C kernel vectorised for AVX-512 or
// AVX2/FMA replaces it (gemm_amd64.go, about 15 times faster), and
// tests compare the two.

const (
	convMR = 6  // rows of the register block (A panel height)
	convNR = 16 // columns of the register block (B panel width)
)

// convGemm computes C = A B (add == false) or C += A B (add == true) for
// packed A (m x l) and B (l x n); C[r, c] is c[r*ldc + c].
func (b *Backend) convGemm(c []float32, ldc, m, n int, ap, bp []float32, l int, add bool) {
	if m == 0 || n == 0 {
		return
	}
	mp, np := (m+convMR-1)/convMR, (n+convNR-1)/convNR
	if len(ap) < mp*l*convMR || len(bp) < np*l*convNR || len(c) < (m-1)*ldc+n || ldc < n {
		panic("cpu: convGemm: operand does not fit its slice")
	}
	if convHaveC && !b.rs.forceGo {
		convGemmC(c, ldc, m, n, ap, bp, l, add, nil)
		return
	}
	convGemmGo(c, ldc, m, n, ap, bp, l, add)
}

// convGemmRows is convGemm with A (m x l) read in place from its rows,
// A[r, k] = a[r*lda + k], instead of from packed panels: the C kernels
// broadcast A's entries straight from the rows, so an operand whose rows
// are contiguous in k (the weight gradient's dY) needs no packing. The
// sums are the ones convGemm makes, term for term, so the bits are those
// of packing A and calling convGemm (TestConvGemmRows). The portable path
// packs A into pack (convPackedLen(m, l, convMR) floats) and runs
// convGemmGo.
func (b *Backend) convGemmRows(c []float32, ldc, m, n int, a []float32, lda int, bp []float32, l int, add bool, pack []float32) {
	if m == 0 || n == 0 {
		return
	}
	np := (n + convNR - 1) / convNR
	if len(a) < (m-1)*lda+l || lda < l || len(bp) < np*l*convNR || len(c) < (m-1)*ldc+n || ldc < n {
		panic("cpu: convGemmRows: operand does not fit its slice")
	}
	if convHaveC && !b.rs.forceGo && l > 0 {
		convGemmRowsCLevel(-1, c, ldc, m, n, a, lda, bp, l, add)
		return
	}
	convPackA(pack, a, m, l, lda, 1)
	convGemmGo(c, ldc, m, n, pack, bp, l, add)
}

// convGemmBias computes C = A B + bias[r] on row r (bias nil: C = A B).
// The C kernel adds the bias as it stores the block; the portable path
// fills C with the bias and adds the product, the same rounding
// (bias + sum) either way.
func (b *Backend) convGemmBias(c []float32, ldc, m, n int, ap, bp []float32, l int, bias []float32) {
	if bias == nil {
		b.convGemm(c, ldc, m, n, ap, bp, l, false)
		return
	}
	if m == 0 || n == 0 {
		return
	}
	if convHaveC && !b.rs.forceGo {
		mp, np := (m+convMR-1)/convMR, (n+convNR-1)/convNR
		if len(ap) < mp*l*convMR || len(bp) < np*l*convNR || len(c) < (m-1)*ldc+n || ldc < n || len(bias) < m {
			panic("cpu: convGemmBias: operand does not fit its slice")
		}
		convGemmC(c, ldc, m, n, ap, bp, l, false, bias)
		return
	}
	for r := 0; r < m; r++ {
		row := c[r*ldc:][:n]
		for j := range row {
			row[j] = bias[r]
		}
	}
	convGemmGo(c, ldc, m, n, ap, bp, l, true)
}

// packA is convPackA, in C where built.
func (b *Backend) packA(dst, src []float32, m, l, rs, ks int) {
	if convHaveC && !b.rs.forceGo && m > 0 && l > 0 {
		if len(dst) < convPackedLen(m, l, convMR) || len(src) < (m-1)*rs+(l-1)*ks+1 {
			panic("cpu: packA: operand does not fit its slice")
		}
		packAC(dst, src, m, l, rs, ks)
		return
	}
	convPackA(dst, src, m, l, rs, ks)
}

// packBTransposed is packBT, in C where built.
func (b *Backend) packBTransposed(dst, src []float32, l, n, cs int) {
	if convHaveC && !b.rs.forceGo && l > 0 && n > 0 {
		if len(dst) < convPackedLen(n, l, convNR) || len(src) < (n-1)*cs+l {
			panic("cpu: packBTransposed: operand does not fit its slice")
		}
		packBTC(dst, src, l, n, cs)
		return
	}
	packBT(dst, src, l, n, cs)
}

// packB is convPackB, in C where built.
func (b *Backend) packB(dst, src []float32, l, n, ks int) {
	if convHaveC && !b.rs.forceGo && l > 0 && n > 0 {
		if len(dst) < convPackedLen(n, l, convNR) || len(src) < (l-1)*ks+n {
			panic("cpu: packB: operand does not fit its slice")
		}
		packBC(dst, src, l, n, ks)
		return
	}
	convPackB(dst, src, l, n, ks)
}

// convGemmGo is the portable kernel: for each B panel (kept in L1) it runs
// over the A panels, computing a convMR x convNR block of C in
// sub-blocks of 3 x 4 scalars held in registers.
func convGemmGo(c []float32, ldc, m, n int, ap, bp []float32, l int, add bool) {
	var blk [convMR * convNR]float32
	for jb := 0; jb < n; jb += convNR {
		bpan := bp[(jb/convNR)*l*convNR:][:l*convNR]
		nr := min(convNR, n-jb)
		for ib := 0; ib < m; ib += convMR {
			apan := ap[(ib/convMR)*l*convMR:][:l*convMR]
			convMicroGo(&blk, apan, bpan, l)
			mr := min(convMR, m-ib)
			for r := 0; r < mr; r++ {
				dst := c[(ib+r)*ldc+jb:][:nr]
				src := blk[r*convNR:][:nr]
				if add {
					for j, v := range src {
						dst[j] += v
					}
				} else {
					copy(dst, src)
				}
			}
		}
	}
}

// convMicroGo computes the convMR x convNR block sum_k a[k, r] b[k, c] into
// blk (row-major), 3 rows by 4 columns at a time so that the twelve
// accumulators stay in registers.
func convMicroGo(blk *[convMR * convNR]float32, apan, bpan []float32, l int) {
	for r0 := 0; r0 < convMR; r0 += 3 {
		for c0 := 0; c0 < convNR; c0 += 4 {
			var s00, s01, s02, s03, s10, s11, s12, s13, s20, s21, s22, s23 float32
			for k := 0; k < l; k++ {
				a := (*[3]float32)(apan[k*convMR+r0:])
				bb := (*[4]float32)(bpan[k*convNR+c0:])
				a0, a1, a2 := a[0], a[1], a[2]
				b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
				s00 += a0 * b0
				s01 += a0 * b1
				s02 += a0 * b2
				s03 += a0 * b3
				s10 += a1 * b0
				s11 += a1 * b1
				s12 += a1 * b2
				s13 += a1 * b3
				s20 += a2 * b0
				s21 += a2 * b1
				s22 += a2 * b2
				s23 += a2 * b3
			}
			o := blk[r0*convNR+c0:]
			o[0], o[1], o[2], o[3] = s00, s01, s02, s03
			o = blk[(r0+1)*convNR+c0:]
			o[0], o[1], o[2], o[3] = s10, s11, s12, s13
			o = blk[(r0+2)*convNR+c0:]
			o[0], o[1], o[2], o[3] = s20, s21, s22, s23
		}
	}
}

// convPackA writes the m x l matrix A[r, k] = src[r*rs + k*ks] into packed
// panels of convMR rows (rows beyond m are set to zero).
func convPackA(dst, src []float32, m, l, rs, ks int) {
	for ib := 0; ib < m; ib += convMR {
		pan := dst[(ib/convMR)*l*convMR:][:l*convMR]
		mr := min(convMR, m-ib)
		for k := 0; k < l; k++ {
			row := pan[k*convMR:][:convMR]
			for r := 0; r < mr; r++ {
				row[r] = src[(ib+r)*rs+k*ks]
			}
			clear(row[mr:])
		}
	}
}

// convPackB writes the l x n matrix B[k, c] = src[k*ks + c] (rows of length n
// contiguous in src) into packed panels of convNR columns (columns beyond
// n are set to zero).
func convPackB(dst, src []float32, l, n, ks int) {
	for jb := 0; jb < n; jb += convNR {
		pan := dst[(jb/convNR)*l*convNR:][:l*convNR]
		nr := min(convNR, n-jb)
		for k := 0; k < l; k++ {
			row := pan[k*convNR:][:convNR]
			copy(row, src[k*ks+jb:][:nr])
			clear(row[nr:])
		}
	}
}

// convPackedLen is the length of the packed form of a matrix whose panel axis
// has n entries (rounded up to whole panels of width w) and whose other
// axis has l.
func convPackedLen(n, l, w int) int { return (n + w - 1) / w * w * l }

// resampleState is the Backend's cache for resample.go: a free list of
// scratch areas, so that repeated calls (training steps) allocate nothing
// once every area has grown to the largest shape seen.
type resampleState struct {
	mu   sync.Mutex
	free []*rsScratch
	// forceGo makes convGemm use the portable kernel even when the C kernel
	// is available (tests compare the two).
	forceGo bool
	// noNarrow makes Pointwise use the packed GEMM for every channel count
	// (tests and benchmarks compare it with the narrow kernels).
	noNarrow bool
	// allNarrow raises the narrow kernels' bound to pointwiseNarrowMax
	// (benchmarks measure where they stop winning).
	allNarrow bool
}

// rsScratch is one goroutine's working memory: float and int32 slots that
// grow on demand and are reused.
type rsScratch struct {
	f [rsFloatSlots][]float32
	i [rsIntSlots][]int32
}

// floats returns slot k resized to n elements (contents unspecified).
func (s *rsScratch) floats(k, n int) []float32 {
	if cap(s.f[k]) < n {
		s.f[k] = make([]float32, n)
	}
	return s.f[k][:n]
}

// ints returns int32 slot k resized to n elements (contents unspecified).
func (s *rsScratch) ints(k, n int) []int32 {
	if cap(s.i[k]) < n {
		s.i[k] = make([]int32, n)
	}
	return s.i[k][:n]
}

// getScratch takes a scratch area from the free list (or makes one).
func (b *Backend) getScratch() *rsScratch {
	b.rs.mu.Lock()
	defer b.rs.mu.Unlock()
	if n := len(b.rs.free); n > 0 {
		s := b.rs.free[n-1]
		b.rs.free = b.rs.free[:n-1]
		return s
	}
	return new(rsScratch)
}

// putScratch returns a scratch area to the free list.
func (b *Backend) putScratch(s *rsScratch) {
	b.rs.mu.Lock()
	b.rs.free = append(b.rs.free, s)
	b.rs.mu.Unlock()
}
