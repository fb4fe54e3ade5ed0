//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"testing"
)

// bandAxisRef is br_axis's sum on the host: for each output, acc = 0,
// then acc = acc + A[j, m] src[l, m, p] for m in increasing order, each
// product and sum rounded to float32 (float32(a*b) keeps Go from fusing
// them on any architecture), then dst = acc or dst + acc. a is A
// [rows, nin] row-major.
func bandAxisRef(dst, src, a []float32, lines, nin, rows, post int, accumulate bool) {
	for l := 0; l < lines; l++ {
		for j := 0; j < rows; j++ {
			for p := 0; p < post; p++ {
				var acc float32
				for m := 0; m < nin; m++ {
					acc += float32(a[j*nin+m] * src[(l*nin+m)*post+p])
				}
				e := (l*rows+j)*post + p
				if accumulate {
					dst[e] += acc
				} else {
					dst[e] = acc
				}
			}
		}
	}
}

// TestBandAxisBits runs br_axis directly on a random matrix (any matrix:
// the kernel's arithmetic, not the band filter, is under test) and
// requires the bits of bandAxisRef, the sum of the CPU backend's
// bandApply and of the one-thread-per-output kernel br_axis replaced. The
// shapes cover the last axis (post = 1, the matrix passed transposed) and
// inner axes (post > 1), up- and down-sampling, K below, at and across
// the 16-deep stages with a tail, outputs across several 64 x 64 tiles
// with partial ones, and accumulate on and off. Each shape also runs on a
// grid of one row tile and one problem (y = z = 1), so the kernel's
// strides over row tiles and problems (taken beyond 65,535 of either) are
// exercised, with the same bits.
func TestBandAxisBits(t *testing.T) {
	cases := []struct{ lines, nin, rows, post int }{
		{67, 35, 70, 1},  // last axis, up, 2 x 2 tiles, K tail
		{130, 70, 33, 1}, // last axis, down, 3 row tiles
		{5, 16, 8, 1},    // last axis, one stage exactly
		{3, 21, 66, 5},   // inner axis, up, 2 row tiles, narrow
		{2, 70, 9, 67},   // inner axis, down, 2 column tiles
		{4, 7, 3, 12},    // inner axis, tiny (CNO's coarsest levels)
		{1, 1, 2, 3},     // one point in
	}
	for ci, c := range cases {
		for _, accumulate := range []bool{false, true} {
			for _, capped := range []bool{false, true} {
				name := fmt.Sprintf("lines%d_nin%d_rows%d_post%d_acc%v_capped%v", c.lines, c.nin, c.rows, c.post, accumulate, capped)
				t.Run(name, func(t *testing.T) {
					seed := uint64(100 * ci)
					src := random(seed+1, c.lines*c.nin*c.post, 1)
					a := random(seed+2, c.rows*c.nin, 1)
					init := random(seed+3, c.lines*c.rows*c.post, 1)
					mat := a
					if c.post == 1 { // the kernel reads A^T [nin, rows] on the last axis
						mat = make([]float32, len(a))
						for j := 0; j < c.rows; j++ {
							for m := 0; m < c.nin; m++ {
								mat[m*c.rows+j] = a[j*c.nin+m]
							}
						}
					}
					want := append([]float32(nil), init...)
					bandAxisRef(want, src, a, c.lines, c.nin, c.rows, c.post, accumulate)

					sb, ab, db := gpu.Alloc(len(src)).(*Buf), gpu.Alloc(len(mat)).(*Buf), gpu.Alloc(len(init)).(*Buf)
					defer gpu.Free(sb)
					defer gpu.Free(ab)
					defer gpu.Free(db)
					gpu.Upload(sb, src)
					gpu.Upload(ab, mat)
					gpu.Upload(db, init)
					g := BandAxis(c.lines, c.rows, c.post)
					if capped {
						g.Grid.Y, g.Grid.Z = 1, 1
					}
					gpu.bandAxis(g, db, sb, ab, c.lines, c.nin, c.rows, c.post, accumulate)
					got := make([]float32, len(init))
					gpu.Download(got, db)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("element %d of %d: %g (%#08x) on the GPU, %g (%#08x) on the host",
								i, len(want), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				})
			}
		}
	}
}
