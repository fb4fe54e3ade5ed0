//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// TestAdamW compares one AdamW step with the CPU on flat buffers, at the
// first step and a later one, with n below the buffer length (the tail
// must stay untouched) and n not a multiple of the block size. Both sides
// compute every element in float64 with the same operations in the same
// order (the GPU without FMA contraction), from the same float64 step
// scalars, and round once per stored value, so p, m and v are bit-equal;
// the tolerance allows one float32 ulp (rtol 2^-23).
func TestAdamW(t *testing.T) {
	ref := cpu.New(1)
	cases := []struct{ n, size, step int }{{1000, 1005, 1}, {300, 300, 7}, {1, 1, 1}, {70000, 70001, 1000}}
	for i, c := range cases {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			seed := uint64(10 * i)
			vs := random(seed+4, c.size, 0.01)
			for j := range vs {
				vs[j] = float32(math.Abs(float64(vs[j]))) // second moments are >= 0
			}
			p, g := rnd(ref, seed+1, c.size), rnd(ref, seed+2, c.size)
			m, v := both(ref, random(seed+3, c.size, 0.1), c.size), both(ref, vs, c.size)
			h := tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: c.step}
			ref.AdamW(p.c.Data, g.c.Data, m.c.Data, v.c.Data, c.n, h)
			gpu.AdamW(p.g.Data, g.g.Data, m.g.Data, v.g.Data, c.n, h)
			agree(t, "AdamW p", p, 0, 1.0/(1<<23))
			agree(t, "AdamW m", m, 0, 1.0/(1<<23))
			agree(t, "AdamW v", v, 0, 1.0/(1<<23))
		})
	}
}
