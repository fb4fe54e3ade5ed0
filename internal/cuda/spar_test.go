//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// The SPAR tests compare kernels/spar.cu with internal/cpu/spar.go.
//
// Top-k masks must agree exactly (a mask is 0/1 and the tie rule is part
// of the contract). They are checked against two references: the CPU
// backend, and refOrder below, an independent statement of the rule (rank
// by value, larger first, NaN smallest, all NaNs equal, -0 equal to +0,
// ties to the lower flat index; keep the first k). The CPU reference is
// compared only where it is sound: when k exceeds the number of non-NaN
// scores of a sample, internal/cpu topKInto's threshold is NaN, `v > t`
// is false for every v, and it keeps only NaNs (fewer than k ones, no
// real score), contrary to its own doc ("NaN scores ... are kept only
// when k exceeds the number of other scores"). The GPU follows the doc.

// sparScoreShapes are [B, 1, spatial...] score shapes in 1D, 2D and 3D:
// sizes that do not divide the block (256), the minimum chunk (4096), or
// the chunk of a capped plan; one chunk, several chunks, and 256 chunks of
// 4297 (N = 1,100,003).
var sparScoreShapes = [][]int{
	{3, 1, 37}, {2, 1, 70001}, {1, 1, 1100003},
	{2, 1, 10, 13}, {2, 1, 129, 131},
	{2, 1, 6, 5, 7}, {2, 1, 33, 35, 37},
}

// sparValues are the score patterns of the top-k tests.
var sparValues = []struct {
	name string
	gen  func(seed uint64, n int) []float32
}{
	// distinct values: no ties
	{"random", func(seed uint64, n int) []float32 { return random(seed, n, 3) }},
	// seven distinct values: every threshold sits inside a tie group that
	// spans chunks, so the per-chunk prefix counts decide
	{"ties", func(seed uint64, n int) []float32 {
		v := random(seed, n, 1)
		for i := range v {
			v[i] = float32(math.Round(float64(v[i])*3)) / 3
		}
		return v
	}},
	// -0 and +0 (equal), mixed with -1 and 1
	{"signed zeros", func(seed uint64, n int) []float32 {
		r := rand.New(rand.NewPCG(seed, 7))
		choices := []float32{float32(math.Copysign(0, -1)), 0, -1, 1, 0}
		v := make([]float32, n)
		for i := range v {
			v[i] = choices[r.IntN(len(choices))]
		}
		return v
	}},
	// about 5% NaN (two payloads, both signs) and a few infinities
	{"nan inf", func(seed uint64, n int) []float32 {
		r := rand.New(rand.NewPCG(seed, 9))
		v := random(seed, n, 2)
		nans := []float32{float32(math.NaN()), math.Float32frombits(0xFFC00001), math.Float32frombits(0x7F800123)}
		for i := range v {
			switch x := r.IntN(100); {
			case x < 5:
				v[i] = nans[r.IntN(len(nans))]
			case x == 5:
				v[i] = float32(math.Inf(1))
			case x == 6:
				v[i] = float32(math.Inf(-1))
			}
		}
		v[0] = float32(math.NaN()) // a NaN at the first index, where ties would favour it
		return v
	}},
}

// ranksBefore is the order of refOrder: x before y.
func ranksBefore(x, y float32) bool {
	xn, yn := x != x, y != y
	if xn || yn {
		return !xn && yn
	}
	return x > y
}

// refOrder returns the flat indices of one sample's scores in keep order
// (a stable sort, so equal scores stay in index order).
func refOrder(scores []float32) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ranksBefore(scores[idx[a]], scores[idx[b]]) })
	return idx
}

// refMask is the top-k mask from a keep order.
func refMask(order []int, k int) []float32 {
	m := make([]float32, len(order))
	for _, i := range order[:k] {
		m[i] = 1
	}
	return m
}

// nonNaN counts the non-NaN scores.
func nonNaN(v []float32) int {
	c := 0
	for _, x := range v {
		if x == x {
			c++
		}
	}
	return c
}

// sameMask fails on the first element where got and want differ.
func sameMask(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d of %d is %g, want %g", what, i, len(want), got[i], want[i])
		}
	}
}

// filled returns n copies of v (to pre-fill outputs that must be
// overwritten).
func filled(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// kSets are the per-sample k vectors of a top-k test on N scores: the
// edges k = 1 and k = N, k = 0 beside others, cuts near the middle and
// thirds, k just past the non-NaN scores (the first NaN kept) and a
// random k.
func kSets(r *rand.Rand, vals []float32, batch, n int) [][]int {
	pick := func(f func(b int) int) []int {
		k := make([]int, batch)
		for b := range k {
			k[b] = min(max(f(b), 0), n)
		}
		return k
	}
	return [][]int{
		pick(func(int) int { return 1 }),
		pick(func(int) int { return n }),
		pick(func(b int) int { return []int{0, n/2 + 1, 3}[b%3] }),
		pick(func(b int) int { return []int{n / 3, 2*n/3 + 1, n - 1}[b%3] }),
		pick(func(b int) int { return nonNaN(vals[b*n:][:n]) + 1 }),
		pick(func(int) int { return 1 + r.IntN(n) }),
	}
}

// TestTopKMask checks the top-k mask on 1D, 2D and 3D scores, one and
// many chunks, for distinct values, planted ties, signed zeros, NaN and
// infinities, and k from 0 to N. The mask is pre-filled with 7s, so the
// forward's overwrite of every element is checked too.
func TestTopKMask(t *testing.T) {
	ref := cpu.New(4)
	for si, shape := range sparScoreShapes {
		for vi, vs := range sparValues {
			t.Run(fmt.Sprintf("%v/%s", shape, vs.name), func(t *testing.T) {
				batch, n := shape[0], tensor.Numel(shape[2:])
				vals := vs.gen(uint64(100*si+vi), batch*n)
				s := both(ref, vals, shape...)
				m := both(ref, nil, shape...)
				orders := make([][]int, batch)
				for b := range orders {
					orders[b] = refOrder(vals[b*n:][:n])
				}
				r := rand.New(rand.NewPCG(uint64(si), uint64(vi)))
				for _, k := range kSets(r, vals, batch, n) {
					gpu.Upload(m.g.Data, filled(batch*n, 7))
					gpu.TopKMask(m.g, s.g, k)
					got := tensor.ToHost(gpu, m.g)
					ref.TopKMask(m.c, s.c, k)
					cpuMask := tensor.ToHost(ref, m.c)
					for b := range k {
						what := fmt.Sprintf("sample %d, k=%d of %d", b, k[b], n)
						sameMask(t, what+" vs the rule", got[b*n:][:n], refMask(orders[b], k[b]))
						if k[b] <= nonNaN(vals[b*n:][:n]) {
							sameMask(t, what+" vs the CPU", got[b*n:][:n], cpuMask[b*n:][:n])
						}
					}
				}
			})
		}
	}
}

// TestTopKMaskPlanted pins the tie rule on hand-made samples: the ties of
// the threshold value go to the lowest indices, also across chunk
// boundaries (N = 9000 is three chunks of 3000), and -0 ties with +0.
func TestTopKMaskPlanted(t *testing.T) {
	ref := cpu.New(1)
	const n = 9000
	vals := make([]float32, 2*n)
	// Sample 0: 1 at 100 positions spread over the three chunks, 5 at 10,
	// 0 elsewhere; k = 60 keeps the ten 5s and the first fifty 1s.
	for i := 0; i < 100; i++ {
		vals[i*89+3] = 1
	}
	for i := 0; i < 10; i++ {
		vals[i*797+400] = 5
	}
	// Sample 1: -0 and +0 alternate, one -1; k = n-1 keeps all zeros.
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			vals[n+i] = float32(math.Copysign(0, -1))
		}
	}
	vals[n+4321] = -1
	shape := []int{2, 1, n}
	s, m := both(ref, vals, shape...), both(ref, nil, shape...)
	for _, k := range [][]int{{60, n - 1}, {10, 1}, {11, n}, {110, 4321}} {
		gpu.TopKMask(m.g, s.g, k)
		ref.TopKMask(m.c, s.c, k)
		got, want := tensor.ToHost(gpu, m.g), tensor.ToHost(ref, m.c)
		for b := range k {
			sameMask(t, fmt.Sprintf("k=%v sample %d vs the CPU", k, b), got[b*n:][:n], want[b*n:][:n])
			sameMask(t, fmt.Sprintf("k=%v sample %d vs the rule", k, b), got[b*n:][:n], refMask(refOrder(vals[b*n:][:n]), k[b]))
		}
	}
	// The documented NaN rule where the CPU falls short: scores
	// (1, NaN, 3, NaN, 2), k = 4 keeps 3, 2, 1 and the first NaN.
	nan := float32(math.NaN())
	s5, m5 := both(ref, []float32{1, nan, 3, nan, 2}, 1, 1, 5), both(ref, nil, 1, 1, 5)
	gpu.TopKMask(m5.g, s5.g, []int{4})
	sameMask(t, "NaN, k=4", tensor.ToHost(gpu, m5.g), []float32{1, 1, 1, 0, 1})
	gpu.TopKMask(m5.g, s5.g, []int{5})
	sameMask(t, "NaN, k=5", tensor.ToHost(gpu, m5.g), []float32{1, 1, 1, 1, 1})
}

// statsAgree compares SPARKeep statistics [B, 3] = (c, rho, k): NaN must
// match NaN; c and rho within rtol 1e-6; k exactly. Both backends compute
// c and rho in double from the same float32 scores; they differ only in
// the order of the double sums (the GPU adds per-chunk partials and uses
// the parallel-variance identity), which moves the doubles by about
// N 2^-53 relative (< 1e-9 here), so the float32 results are equal or one
// float32 ulp (6e-8 relative) apart where the double sits on a rounding
// boundary. k = ceil(rho N - 1e-9) can then differ only if rho N is within
// 1e-9 of an integer plus that tolerance, which the clipped cases pin
// (rho = rho_min exactly) and random data does not hit.
func statsAgree(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		ok := (math.IsNaN(g) && math.IsNaN(w)) || g == w
		if !ok && i%3 != 2 {
			ok = math.Abs(g-w) <= 1e-6*math.Abs(w)
		}
		if !ok {
			t.Fatalf("%s: stats[%d][%s] is %g on the GPU, %g on the CPU", what, i/3, []string{"c", "rho", "k"}[i%3], g, w)
		}
	}
}

// TestSPARKeep compares the keep-ratio statistics and the hard mask with
// the CPU in 1D, 2D and 3D, with samples of different contrast in one
// batch, both std denominators, keep-ratios clipped at rho_min and
// rho_max, ties, and a NaN score; the mask must match exactly, hold k
// ones, and two runs must give the same bits.
func TestSPARKeep(t *testing.T) {
	ref := cpu.New(4)
	low := tensor.DefaultSPAR
	low.Beta = 5 // low contrast: rho0 (1 + 5 tanh(c - 1)) < rho_min
	high := tensor.DefaultSPAR
	high.Beta = 20 // zero-mean uniform scores, c = 1.15: rho > rho_max
	params := []struct {
		name string
		p    tensor.SPARParams
	}{
		{"default", tensor.DefaultSPAR},
		{"biased std", func() tensor.SPARParams { p := tensor.DefaultSPAR; p.UnbiasedStd = false; return p }()},
		{"clip low", low},
		{"clip high", high},
	}
	shapes := append([][]int{{3, 1, 370}}, sparScoreShapes...) // 0.1 * 370 = 37: CeilKeep's tolerance
	for si, shape := range shapes {
		batch, n := shape[0], tensor.Numel(shape[2:])
		// Sample 0 zero-mean (c about 1.15), sample 1 offset (c about
		// 0.2), sample 2 ties.
		vals := random(uint64(7+si), batch*n, 1)
		for i := n; i < min(2*n, len(vals)); i++ {
			vals[i] = 3 + vals[i]
		}
		for i := 2 * n; i < len(vals); i++ {
			vals[i] = float32(math.Round(float64(vals[i])*2)) / 2
		}
		for _, pc := range params {
			t.Run(fmt.Sprintf("%v/%s", shape, pc.name), func(t *testing.T) {
				checkSPARKeep(t, ref, shape, vals, pc.p)
			})
		}
	}
	t.Run("NaN", func(t *testing.T) {
		shape := []int{2, 1, 6, 5, 7}
		n := 210
		vals := random(5, 2*n, 1)
		vals[17] = float32(math.NaN()) // sample 0: stats (NaN, NaN, 1), top-1 of the rest
		checkSPARKeep(t, ref, shape, vals, tensor.DefaultSPAR)
	})
}

func checkSPARKeep(t *testing.T, ref *cpu.Backend, shape []int, vals []float32, p tensor.SPARParams) {
	t.Helper()
	batch, n := shape[0], tensor.Numel(shape[2:])
	s := both(ref, vals, shape...)
	hard := both(ref, nil, shape...)
	stats := both(ref, nil, batch, 3)
	gpu.Upload(hard.g.Data, filled(batch*n, 7))
	gpu.Upload(stats.g.Data, filled(batch*3, 7))
	ref.SPARKeep(hard.c, stats.c, s.c, p)
	gpu.SPARKeep(hard.g, stats.g, s.g, p)
	wantStats, gotStats := tensor.ToHost(ref, stats.c), tensor.ToHost(gpu, stats.g)
	statsAgree(t, "stats", gotStats, wantStats)
	wantMask, gotMask := tensor.ToHost(ref, hard.c), tensor.ToHost(gpu, hard.g)
	for b := 0; b < batch; b++ {
		k := int(gotStats[3*b+2])
		what := fmt.Sprintf("sample %d (c=%g rho=%g k=%d of %d)", b, gotStats[3*b], gotStats[3*b+1], k, n)
		sameMask(t, what, gotMask[b*n:][:n], wantMask[b*n:][:n])
		ones := 0
		for _, v := range gotMask[b*n:][:n] {
			if v == 1 {
				ones++
			}
		}
		if ones != k {
			t.Fatalf("%s: %d ones", what, ones)
		}
	}
	// Run to run: the same bits.
	gpu.SPARKeep(hard.g, stats.g, s.g, p)
	again, againMask := tensor.ToHost(gpu, stats.g), tensor.ToHost(gpu, hard.g)
	for i := range again {
		if math.Float32bits(again[i]) != math.Float32bits(gotStats[i]) {
			t.Fatalf("second run: stats[%d] = %g, first run %g", i, again[i], gotStats[i])
		}
	}
	sameMask(t, "second run", againMask, gotMask)
}

// sparRouteShapes are [B, C, spatial...] feature shapes in 1D, 2D and 3D
// (the harness's uneven shapes) and one with more elements than an
// Elementwise grid has threads (1,444,800 > 4224 x 256), so the
// grid-stride loop runs more than once.
var sparRouteShapes = append(append([][]int{}, shapes1to3...), []int{2, 8, 300, 301})

// randomMask is a 0/1 mask, about half ones.
func randomMask(seed uint64, n int) []float32 {
	v := random(seed, n, 1)
	for i := range v {
		if v[i] > 0 {
			v[i] = 1
		} else {
			v[i] = 0
		}
	}
	return v
}

// TestSPARRoute compares the routing forward and backward with the CPU.
// Forward and the direct path must agree exactly: hard is 0 or 1, so
// h (zF - zG), h dr and (1 - h) dr are exact and each result is one
// correctly rounded float32 subtraction or addition, the same on both
// (the kernels use __f*_rn, so no FMA contraction changes the rounding).
// The score path sums the C channel products in channel order with the
// same float32 operations as the CPU; the only difference is sigmoid(s/T),
// evaluated in double and rounded to float32 on both sides, which can
// differ by one float32 ulp (2^-24) when the double exp values (each
// within an ulp of double) straddle a float32 rounding boundary. That
// changes ds by at most |acc| 2^-24 (1 + 2)/T with |acc| <= C max|dr|
// max|zF - zG| <= 8 * 1 * 2 = 16 here: 16 * 3 * 6e-8 / 0.8 = 3.6e-6, so
// atol 4e-6 (rtol 1e-6 for the pre-filled 0.1-scale gradient).
//
// Both surrogate centres are checked (spar.surrogate_centre, issue 20).
// The threshold centre's tau_k is a minimum (exact in any order, so the
// same float32 on both) and s - tau_k one correctly rounded subtraction,
// so the bound above holds for it too. Sample 0 of the last shape has no
// kept pixel (tau = 0 by the contract), and that shape's 90,300 pixels
// per sample exercise the kernel's strided block reduction.
func TestSPARRoute(t *testing.T) {
	ref := cpu.New(4)
	const temperature = 0.8
	for si, shape := range sparRouteShapes {
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			batch, sp := shape[0], tensor.Numel(shape[2:])
			sshape := append([]int{batch, 1}, shape[2:]...)
			seed := uint64(1000 * (si + 1))
			zF, zG, dr := rnd(ref, seed+1, shape...), rnd(ref, seed+2, shape...), rnd(ref, seed+3, shape...)
			s := both(ref, random(seed+4, batch*sp, 4), sshape...)
			hv := randomMask(seed+5, batch*sp)
			if si == len(sparRouteShapes)-1 {
				clear(hv[:sp])
			}
			hard := both(ref, hv, sshape...)

			r := both(ref, nil, shape...)
			gpu.Upload(r.g.Data, filled(r.g.Numel(), 7))
			ref.SPARRoute(r.c, zF.c, zG.c, hard.c)
			gpu.SPARRoute(r.g, zF.g, zG.g, hard.g)
			agree(t, "SPARRoute", r, 0, 0)

			// Every subset of gradients, nil ones skipped; the tensors of
			// the skipped ones must keep their pre-filled values.
			for _, centre := range []tensor.SurrogateCentre{tensor.CentreZero, tensor.CentreThreshold} {
				for mask := 1; mask < 8; mask++ {
					dzF, dzG := gradPair(ref, seed+6, shape...), gradPair(ref, seed+7, shape...)
					ds := gradPair(ref, seed+8, sshape...)
					pick := func(p pair, bit int, cpuSide bool) *tensor.Tensor {
						if mask&bit == 0 {
							return nil
						}
						if cpuSide {
							return p.c
						}
						return p.g
					}
					ref.SPARRouteBackward(pick(dzF, 1, true), pick(dzG, 2, true), pick(ds, 4, true), dr.c, zF.c, zG.c, hard.c, s.c, temperature, centre)
					gpu.SPARRouteBackward(pick(dzF, 1, false), pick(dzG, 2, false), pick(ds, 4, false), dr.g, zF.g, zG.g, hard.g, s.g, temperature, centre)
					what := fmt.Sprintf("centre %d, gradients %03b", centre, mask)
					agree(t, what+": dzF", dzF, 0, 0)
					agree(t, what+": dzG", dzG, 0, 0)
					agree(t, what+": ds", ds, 4e-6, 1e-6)
				}
			}
		})
	}
}
