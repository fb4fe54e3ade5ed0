package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"uhno/internal/tensor"
)

// narrowShapes are Pointwise shapes for the narrow kernels: U-HNO's at
// C0 = 3 (3 <-> 6 channels, the SPAR score's c -> 1), the limits, and
// point counts that leave a ragged last block (not a multiple of 16 or 32)
// or are shorter than one block.
var narrowShapes = []struct{ cin, cout, sp, nb int }{
	{3, 3, 4096, 2}, {6, 3, 1024, 3}, {3, 1, 256, 4}, {1, 3, 37, 2}, {3, 6, 33, 3},
	{12, 6, 64, 2}, {8, 12, 300, 2}, {5, 7, 7, 3}, {1, 1, 1, 1}, {16, 2, 515, 2}, {1, 32, 40, 2},
	{32, 32, 70, 2}, {24, 12, 33, 3}, // narrow forward and input gradient, the GEMM's weight gradient
}

// TestPointwiseNarrowBits runs Pointwise and PointwiseBackward through the
// narrow kernels (the weight gradient only up to pointwiseNarrowPairs
// weights) and through the packed GEMM, with the C and the portable
// kernels and 1 to 4 threads: the output and the input gradient must be
// the GEMM path's bits, the weight gradient must agree with a float64
// reference and have the same bits for every thread count, and the bias
// gradient (shared code) the same bits. The gradients start non-zero, so
// accumulation is checked too.
func TestPointwiseNarrowBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 4))
	for _, sh := range narrowShapes {
		x := randn32(rng, sh.nb*sh.cin*sh.sp)
		w := randn32(rng, sh.cout*sh.cin)
		bias := randn32(rng, sh.cout)
		dy := randn32(rng, sh.nb*sh.cout*sh.sp)
		dx0, dw0, db0 := randn32(rng, len(x)), randn32(rng, len(w)), randn32(rng, len(bias))
		want := refDW(dw0, dy, x, sh.cout, sh.cin, sh.sp, sh.nb)
		for _, forceGo := range []bool{false, true} {
			var dwFirst []float32
			for threads := 1; threads <= 4; threads++ {
				name := fmt.Sprintf("%+v forceGo %v threads %d", sh, forceGo, threads)
				run := func(noNarrow bool) (y, dx, dw, db []float32) {
					b := New(threads)
					b.rs.forceGo, b.rs.noNarrow = forceGo, noNarrow
					if b.pointwiseNarrow(sh.cin, sh.cout) == noNarrow || b.pointwiseNarrowWeights(sh.cin, sh.cout) != (!noNarrow && sh.cin*sh.cout <= pointwiseNarrowPairs) {
						t.Fatalf("%s: pointwiseNarrow(%d, %d) = %v, pointwiseNarrowWeights %v with noNarrow %v", name, sh.cin, sh.cout,
							b.pointwiseNarrow(sh.cin, sh.cout), b.pointwiseNarrowWeights(sh.cin, sh.cout), noNarrow)
					}
					tx := tensor.NewTensor(Buf(x), sh.nb, sh.cin, sh.sp)
					tw, tb := tensor.NewTensor(Buf(w), sh.cout, sh.cin), tensor.NewTensor(Buf(bias), sh.cout)
					ty := tensor.NewTensor(make(Buf, sh.nb*sh.cout*sh.sp), sh.nb, sh.cout, sh.sp)
					b.Pointwise(ty, tx, tw, tb)
					dx, dw, db = clone32(dx0), clone32(dw0), clone32(db0)
					b.PointwiseBackward(tensor.NewTensor(Buf(dx), sh.nb, sh.cin, sh.sp), tensor.NewTensor(Buf(dw), sh.cout, sh.cin),
						tensor.NewTensor(Buf(db), sh.cout), tensor.NewTensor(Buf(dy), sh.nb, sh.cout, sh.sp), tx, tw)
					return data(ty), dx, dw, db
				}
				gy, gdx, _, gdb := run(true)
				ny, ndx, ndw, ndb := run(false)
				sameBits(t, name+": y", ny, gy)
				sameBits(t, name+": dx", ndx, gdx)
				sameBits(t, name+": dbias", ndb, gdb)
				for i := range want {
					if d := math.Abs(float64(ndw[i]) - want[i].sum); d > 1e-6*want[i].abs+1e-6 {
						t.Fatalf("%s: dW[%d] = %g, float64 reference %g (|terms| %g)", name, i, ndw[i], want[i].sum, want[i].abs)
					}
				}
				if dwFirst == nil {
					dwFirst = ndw
				}
				sameBits(t, name+": dW against 1 thread", ndw, dwFirst)
			}
		}
	}
}

// TestPwNarrowLevels compares every C kernel level the CPU has with the
// portable Go loops and with the packed GEMM of the same level: the
// narrow forward is the GEMM's bits at each level and level 0 is the Go
// loop's bits, for both the product and the dot products.
func TestPwNarrowLevels(t *testing.T) {
	if !pwNarrowHaveC {
		t.Skip("no C kernels in this build")
	}
	rng := rand.New(rand.NewPCG(32, 5))
	for _, sh := range narrowShapes {
		m, l, n := sh.cout, sh.cin, sh.sp
		a, in, bias := randn32(rng, m*l), randn32(rng, l*n), randn32(rng, m)
		dy, x := randn32(rng, m*n), randn32(rng, l*n)
		goOut := make([]float32, m*n)
		pwNarrowGo(goOut, n, m, n, a, l, 1, in, n, l, false, bias)
		goDots := make([]float32, m*l)
		pwDotsGo(goDots, dy, m, x, l, n)
		ap, bp := make([]float32, convPackedLen(m, l, convMR)), make([]float32, convPackedLen(n, l, convNR))
		convPackA(ap, a, m, l, l, 1)
		convPackB(bp, in, l, n, n)
		for level := 0; level <= 2; level++ {
			name := fmt.Sprintf("%+v level %d", sh, level)
			out, gemm, dots := make([]float32, m*n), make([]float32, m*n), make([]float32, m*l)
			if !pwNarrowCLevel(level, out, n, m, n, a, l, 1, in, n, l, false, bias) {
				continue // the CPU lacks this level
			}
			if !convGemmCLevel(level, gemm, n, m, n, ap, bp, l, false, bias) || !pwDotsCLevel(level, dots, dy, m, x, l, n) {
				t.Fatalf("%s: the GEMM or the dot kernel lacks a level the product has", name)
			}
			sameBits(t, name+": narrow against the GEMM", out, gemm)
			if level == 0 {
				sameBits(t, name+": narrow against Go", out, goOut)
				sameBits(t, name+": dots against Go", dots, goDots)
			}
			for i := range dots {
				if d := math.Abs(float64(dots[i] - goDots[i])); d > 1e-5*(1+math.Abs(float64(goDots[i]))) {
					t.Fatalf("%s: dot %d = %g, Go %g", name, i, dots[i], goDots[i])
				}
			}
		}
	}
}

type refSum struct{ sum, abs float64 }

// refDW is dw0 + sum_b dY_b X_b^T in float64, with the sum of the terms'
// magnitudes for a tolerance.
func refDW(dw0, dy, x []float32, cout, cin, sp, nb int) []refSum {
	out := make([]refSum, cout*cin)
	for o := 0; o < cout; o++ {
		for i := 0; i < cin; i++ {
			r := refSum{sum: float64(dw0[o*cin+i]), abs: math.Abs(float64(dw0[o*cin+i]))}
			for bi := 0; bi < nb; bi++ {
				for s := 0; s < sp; s++ {
					v := float64(dy[(bi*cout+o)*sp+s]) * float64(x[(bi*cin+i)*sp+s])
					r.sum += v
					r.abs += math.Abs(v)
				}
			}
			out[o*cin+i] = r
		}
	}
	return out
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d is %g (bits %08x), want %g (bits %08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

// BenchmarkPointwiseNarrow times Pointwise forward and backward (all
// three gradients: bwd; the input gradient alone: dx; the weight gradient
// alone: dw) at U-HNO's C0 = 3 shapes on 64x64 (NS-2D), batch
// 16, all cores, through the narrow kernels (up to pointwiseNarrowMax
// channels, past the bound Pointwise picks them at: this measures the
// bound) and through the packed GEMM, one after the other in each shape.
func BenchmarkPointwiseNarrow(bm *testing.B) {
	const nb = 16
	for _, sh := range []struct{ cin, cout, sp int }{{3, 3, 4096}, {6, 3, 4096}, {3, 1, 4096}, {6, 6, 1024},
		{12, 6, 1024}, {12, 1, 256}, {24, 1, 64}, {12, 12, 256}, {16, 16, 256}, {24, 12, 256}, {24, 24, 64}, {32, 32, 64}} {
		rng := rand.New(rand.NewPCG(1, 1))
		x, dy := randn32(rng, nb*sh.cin*sh.sp), randn32(rng, nb*sh.cout*sh.sp)
		w, bias := randn32(rng, sh.cout*sh.cin), randn32(rng, sh.cout)
		tx, ty := tensor.NewTensor(Buf(x), nb, sh.cin, sh.sp), tensor.NewTensor(make(Buf, nb*sh.cout*sh.sp), nb, sh.cout, sh.sp)
		tw, tb, tdy := tensor.NewTensor(Buf(w), sh.cout, sh.cin), tensor.NewTensor(Buf(bias), sh.cout), tensor.NewTensor(Buf(dy), nb, sh.cout, sh.sp)
		tdx := tensor.NewTensor(make(Buf, len(x)), nb, sh.cin, sh.sp)
		tdw, tdb := tensor.NewTensor(make(Buf, len(w)), sh.cout, sh.cin), tensor.NewTensor(make(Buf, len(bias)), sh.cout)
		for _, path := range []string{"narrow", "gemm"} {
			b := New(0)
			b.rs.noNarrow, b.rs.allNarrow = path == "gemm", path == "narrow"
			bm.Run(fmt.Sprintf("%dto%d_%d/%s/fwd", sh.cin, sh.cout, sh.sp, path), func(bm *testing.B) {
				for range bm.N {
					b.Pointwise(ty, tx, tw, tb)
				}
			})
			for _, pass := range []string{"bwd", "dx", "dw"} {
				dx, dw, db := tdx, tdw, tdb
				switch pass {
				case "dx":
					dw, db = nil, nil
				case "dw":
					dx, db = nil, nil
				}
				bm.Run(fmt.Sprintf("%dto%d_%d/%s/%s", sh.cin, sh.cout, sh.sp, path, pass), func(bm *testing.B) {
					for range bm.N {
						b.PointwiseBackward(dx, dw, db, tdy, tx, tw)
					}
				})
			}
		}
	}
}
