package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPointwiseWeightGradBits checks the in-place accumulation of the
// weight gradient (and the schedule pointwiseWeightGrad picks) against the
// partial buffers, PointwiseBackward's only schedule before issue 23, bit
// for bit,
// for row and column splits with ragged register blocks, thread counts 1
// to 5, the C and the portable kernels, and a dW that already holds a
// gradient.
func TestPointwiseWeightGradBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 2))
	for _, sh := range []struct{ cout, cin, sp, nb int }{
		{1, 1, 1, 1}, {7, 3, 40, 3}, {3, 7, 40, 3}, {13, 45, 33, 4}, {64, 32, 128, 5},
		{32, 64, 96, 2}, {50, 50, 17, 3}, {6, 16, 300, 2}, {100, 20, 8, 6},
	} {
		DY := randn32(rng, sh.nb*sh.cout*sh.sp)
		X := randn32(rng, sh.nb*sh.cin*sh.sp)
		DW0 := randn32(rng, sh.cout*sh.cin)
		for _, forceGo := range []bool{false, true} {
			ref := New(1)
			ref.rs.forceGo = forceGo
			want := clone32(DW0)
			ref.pointwiseWeightGradParts(want, DY, X, sh.cout, sh.cin, sh.sp, sh.nb)
			for threads := 1; threads <= 5; threads++ {
				b := New(threads)
				b.rs.forceGo = forceGo
				inPlace, picked := clone32(DW0), clone32(DW0)
				b.pointwiseWeightGradInPlace(inPlace, DY, X, sh.cout, sh.cin, sh.sp, sh.nb)
				b.pointwiseWeightGrad(picked, DY, X, sh.cout, sh.cin, sh.sp, sh.nb)
				for i := range want {
					if math.Float32bits(inPlace[i]) != math.Float32bits(want[i]) || math.Float32bits(picked[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%+v, threads %d, forceGo %v: dW[%d] = %g in place, %g as picked; partial buffers give %g", sh, threads, forceGo, i, inPlace[i], picked[i], want[i])
					}
				}
			}
		}
	}
}

func randn32(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// BenchmarkPointwiseWeightGrad times the weight gradient of a batch of 32
// with partial buffers (parts) and accumulated in place, all cores, at
// fine (few channels, many points) and coarse shapes, the main job's
// levels among them (32x32 on 128 points to 256x768 on 16).
func BenchmarkPointwiseWeightGrad(bm *testing.B) {
	for _, sh := range []struct{ cout, cin, sp int }{{32, 32, 1024}, {64, 64, 512}, {256, 256, 128},
		{32, 32, 128}, {64, 64, 64}, {128, 128, 32}, {256, 256, 16}, {256, 768, 16}} {
		const nb = 32
		rng := rand.New(rand.NewPCG(1, 1))
		DY, X := randn32(rng, nb*sh.cout*sh.sp), randn32(rng, nb*sh.cin*sh.sp)
		DW := make([]float32, sh.cout*sh.cin)
		b := New(0)
		for _, v := range []string{"parts", "inplace"} {
			bm.Run(fmt.Sprintf("%dx%dx%d/%s", sh.cout, sh.cin, sh.sp, v), func(bm *testing.B) {
				for range bm.N {
					if v == "parts" {
						b.pointwiseWeightGradParts(DW, DY, X, sh.cout, sh.cin, sh.sp, nb)
					} else {
						b.pointwiseWeightGradInPlace(DW, DY, X, sh.cout, sh.cin, sh.sp, nb)
					}
				}
				bm.ReportMetric(float64(2*nb*sh.cout*sh.cin*sh.sp)*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkPackBTLevels times packBT (the weight gradient's transposed
// packing of X_b) at each level the CPU has, side by side, on the fine
// levels' shapes: 32 and 64 channels of 128 (1D), 1024 and 4096 points
// (2D 32x32 and 64x64), rows a power-of-two stride apart.
func BenchmarkPackBTLevels(bm *testing.B) {
	if !convHaveC {
		bm.Skip("no C kernel in this build")
	}
	for _, sh := range []struct{ l, n int }{{128, 32}, {1024, 32}, {4096, 32}, {4096, 64}} {
		rng := rand.New(rand.NewPCG(1, 1))
		src := randn32(rng, sh.l*sh.n)
		dst := make([]float32, convPackedLen(sh.n, sh.l, convNR))
		for level := 0; level <= 2; level++ {
			if !packBTCLevel(level, dst, src, sh.l, sh.n, sh.l) {
				continue
			}
			bm.Run(fmt.Sprintf("%dx%d/level%d", sh.n, sh.l, level), func(bm *testing.B) {
				for range bm.N {
					packBTCLevel(level, dst, src, sh.l, sh.n, sh.l)
				}
				bm.ReportMetric(float64(8*sh.l*sh.n)*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}
