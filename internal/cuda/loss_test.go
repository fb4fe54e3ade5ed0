//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/cpu"
)

// mseShapes: the common shapes, one value, and a field large enough for
// several first-pass blocks (26,880 values, MSEParts gives 7).
var mseShapes = append(append([][]int{}, shapes1to3...), []int{1, 1, 1}, []int{2, 3, 64, 70})

// TestMSE compares MSE and MSEBackward with the CPU. MSE is summed in
// double on both sides (in different orders, with relative error ~1e-16)
// and rounded once to float32, so the results are equal or one float32
// ulp apart: rtol 2^-23. MSEBackward does the CPU's float32 operations
// one by one (k = 2 dout / n, g = k (a-b), da += g, db -= g, no FMA), so it
// is bit-equal; the tolerance allows one ulp. Nil da or db is skipped.
func TestMSE(t *testing.T) {
	ref := cpu.New(1)
	for i, shape := range mseShapes {
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			seed := uint64(10 * i)
			a, c := rnd(ref, seed+1, shape...), rnd(ref, seed+2, shape...)
			out := both(ref, []float32{-3}, 1) // garbage: MSE overwrites
			ref.MSE(out.c, a.c, c.c)
			gpu.MSE(out.g, a.g, c.g)
			agree(t, "MSE", out, 0, 1.0/(1<<23))

			dout := both(ref, []float32{0.7}, 1)
			for _, mask := range []int{3, 1, 2, 0} {
				var da, db *pair
				if mask&1 != 0 {
					p := gradPair(ref, seed+3, shape...)
					da = &p
				}
				if mask&2 != 0 {
					p := gradPair(ref, seed+4, shape...)
					db = &p
				}
				ref.MSEBackward(denseC(da), denseC(db), dout.c, a.c, c.c)
				gpu.MSEBackward(denseG(da), denseG(db), dout.g, a.g, c.g)
				if da != nil {
					agree(t, fmt.Sprintf("MSEBackward da (mask %d)", mask), *da, 1e-9, 1.0/(1<<23))
				}
				if db != nil {
					agree(t, fmt.Sprintf("MSEBackward db (mask %d)", mask), *db, 1e-9, 1.0/(1<<23))
				}
			}
		})
	}
}

// TestMSEDeterministic: the two-pass reduction gives the same bits twice.
func TestMSEDeterministic(t *testing.T) {
	ref := cpu.New(1)
	shape := []int{2, 3, 64, 70}
	a, c := rnd(ref, 1, shape...), rnd(ref, 2, shape...)
	o1, o2 := both(ref, nil, 1), both(ref, nil, 1)
	gpu.MSE(o1.g, a.g, c.g)
	gpu.MSE(o2.g, a.g, c.g)
	denseSame(t, "MSE", denseHost(o1.g), denseHost(o2.g))
}
