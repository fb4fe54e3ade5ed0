//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// meanStdShapes: the common 1D-3D shapes, one spatial point (std = 0 and
// no std gradient), and rows longer than a 1024-thread block.
var meanStdShapes = append(append([][]int{}, shapes1to3...), []int{4, 1, 1}, []int{2, 3, 70, 80})

// TestMeanStd compares MeanStd and MeanStdBackward with the CPU.
//
// MeanStd sums in double on both sides (in different orders: relative
// differences ~1e-16 of sum |x|) and rounds once to float32, so mean and
// std are equal or one ulp apart: rtol 2^-23, plus 1e-12 absolute for a
// mean that cancels to nearly zero.
//
// MeanStdBackward gets the same mean and std on both sides (the CPU's,
// uploaded to the GPU, so that the check isolates the backward) and does
// the CPU's float32 operations one by one without FMA: bit-equal; one ulp
// of tolerance, and 1e-9 absolute where dx cancels to nearly zero. It is
// run with dmean and dstd both, each alone, and neither.
func TestMeanStd(t *testing.T) {
	ref := cpu.New(1)
	for i, shape := range meanStdShapes {
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			seed := uint64(10 * i)
			vals := random(seed+1, tensor.Numel(shape), 1)
			for j := range vals {
				vals[j] += 0.3 // a mean away from zero
			}
			x := both(ref, vals, shape...)
			rows := shape[:2]
			mean := both(ref, random(seed+2, tensor.Numel(rows), 5), rows...) // garbage: overwritten
			std := both(ref, random(seed+3, tensor.Numel(rows), 5), rows...)
			ref.MeanStd(mean.c, std.c, x.c)
			gpu.MeanStd(mean.g, std.g, x.g)
			agree(t, "MeanStd mean", mean, 1e-12, 1.0/(1<<23))
			agree(t, "MeanStd std", std, 1e-12, 1.0/(1<<23))

			// The same statistics on both sides for the backward.
			m := both(ref, tensor.ToHost(ref, mean.c), rows...)
			s := both(ref, tensor.ToHost(ref, std.c), rows...)
			dmean, dstd := rnd(ref, seed+4, rows...), rnd(ref, seed+5, rows...)
			for _, mask := range []int{3, 1, 2, 0} {
				var dm, ds *pair
				if mask&1 != 0 {
					dm = &dmean
				}
				if mask&2 != 0 {
					ds = &dstd
				}
				dx := gradPair(ref, seed+6, shape...)
				ref.MeanStdBackward(dx.c, denseC(dm), denseC(ds), x.c, m.c, s.c)
				gpu.MeanStdBackward(dx.g, denseG(dm), denseG(ds), x.g, m.g, s.g)
				agree(t, fmt.Sprintf("MeanStdBackward (mask %d)", mask), dx, 1e-9, 1.0/(1<<23))
			}
		})
	}
}

// TestMeanStdDeterministic: the per-row tree reductions give the same
// bits twice.
func TestMeanStdDeterministic(t *testing.T) {
	ref := cpu.New(1)
	shape := []int{2, 3, 70, 80}
	x := rnd(ref, 1, shape...)
	var runs [2][2][]float32
	for r := range runs {
		mean, std := both(ref, nil, 2, 3), both(ref, nil, 2, 3)
		gpu.MeanStd(mean.g, std.g, x.g)
		runs[r] = [2][]float32{denseHost(mean.g), denseHost(std.g)}
	}
	denseSame(t, "MeanStd mean", runs[0][0], runs[1][0])
	denseSame(t, "MeanStd std", runs[0][1], runs[1][1])
}
