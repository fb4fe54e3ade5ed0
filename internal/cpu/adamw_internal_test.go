package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"uhno/internal/tensor"
)

// adamwEdgeValues are float32 inputs the update must carry through exactly:
// zeros of both signs, subnormals, the smallest and largest normals, and
// values around the moments' usual scales.
var adamwEdgeValues = []float32{
	0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 1e-40, -3e-39, 1.1754944e-38,
	1e-20, -1e-12, 1e-8, 3e-4, -0.5, 1, -2, 1e4, -1e15, 1e30, -3.4e38, 3.4028235e38,
}

// adamwInputs returns p, g, m, v of length n: random normals at random
// scales (10^-30 .. 10^10), with one element in eight an edge value; v is
// kept non-negative as the optimizer keeps it.
func adamwInputs(rng *rand.Rand, n int) (p, g, m, v []float32) {
	draw := func(nonneg bool) []float32 {
		x := make([]float32, n)
		for i := range x {
			if rng.IntN(8) == 0 {
				x[i] = adamwEdgeValues[rng.IntN(len(adamwEdgeValues))]
			} else {
				x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(41)-30)))
			}
			if nonneg {
				x[i] = float32(math.Abs(float64(x[i])))
			}
		}
		return x
	}
	return draw(false), draw(false), draw(false), draw(true)
}

// adamwOldLoop is the scalar float64 loop AdamW ran before the C kernel
// (issue 23), verbatim but for the slices: the oracle the kernel must match
// bit for bit, so that checkpoints, exact resume and every golden value
// stay as they were.
func adamwOldLoop(P, G, M, V []float32, h tensor.AdamWHyper) {
	b1, b2 := h.Beta1, h.Beta2
	decay := 1 - h.LR*h.WeightDecay
	stepSize := h.LR / (1 - math.Pow(b1, float64(h.Step)))
	bc2Sqrt := math.Sqrt(1 - math.Pow(b2, float64(h.Step)))
	eps := h.Eps
	for i := range P {
		gi := float64(G[i])
		mi := b1*float64(M[i]) + (1-b1)*gi
		vi := b2*float64(V[i]) + (1-b2)*gi*gi
		M[i], V[i] = float32(mi), float32(vi)
		P[i] = float32(float64(P[i])*decay - stepSize*mi/(math.Sqrt(vi)/bc2Sqrt+eps))
	}
}

// TestAdamWKernelBits checks that the C kernel of every level the CPU has
// (and adamwGo) gives the same bits as the old scalar loop: lengths around the vector
// width of 8 and the parallel chunk, unaligned starts, edge values, and the
// bias corrections of step 1 (largest) and step 10^6 (none left).
func TestAdamWKernelBits(t *testing.T) {
	if !haveFastAdamW {
		t.Skip("no C AdamW in this build (adamwGo runs instead)")
	}
	hypers := []tensor.AdamWHyper{
		{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: 1},
		{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: 2},
		{LR: 3e-4, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: 1_000_000},
		{LR: 0.1, Beta1: 0.5, Beta2: 0.9, Eps: 1e-6, WeightDecay: 0.01, Step: 7},
		{LR: 0, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: 3},
	}
	rng := rand.New(rand.NewPCG(23, 1))
	for level := 0; level <= 2; level++ {
		tested := 0
		for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, adamGrain + 5} {
			for _, off := range []int{0, 1, 3} {
				for hi, h := range hypers {
					k := adamwConstsOf(h)
					p, g, m, v := adamwInputs(rng, n+off)
					wp, wm, wv := clone32(p), clone32(m), clone32(v)
					adamwOldLoop(wp[off:], g[off:], wm[off:], wv[off:], h)
					if level == 0 { // adamwGo, the fallback, is the old loop too
						gp, gm, gv := clone32(p), clone32(m), clone32(v)
						adamwGo(gp[off:], g[off:], gm[off:], gv[off:], &k)
						for i := range gp {
							if math.Float32bits(gp[i]) != math.Float32bits(wp[i]) || math.Float32bits(gm[i]) != math.Float32bits(wm[i]) || math.Float32bits(gv[i]) != math.Float32bits(wv[i]) {
								t.Fatalf("n %d, hyper %d: adamwGo differs from the old loop at %d", n, hi, i)
							}
						}
					}
					if !adamwLevel(level, p[off:], g[off:], m[off:], v[off:], &k) {
						break
					}
					tested++
					for _, c := range []struct {
						name      string
						got, want []float32
					}{{"p", p, wp}, {"m", m, wm}, {"v", v, wv}} {
						for i := range c.want {
							if math.Float32bits(c.got[i]) != math.Float32bits(c.want[i]) {
								t.Fatalf("level %d, n %d, offset %d, hyper %d (step %d): %s[%d] = %g (%#08x), adamwGo %g (%#08x); g %g",
									level, n, off, hi, h.Step, c.name, i, c.got[i], math.Float32bits(c.got[i]), c.want[i], math.Float32bits(c.want[i]), g[i])
							}
						}
					}
				}
			}
		}
		if tested == 0 {
			t.Logf("level %d: not supported by this CPU, skipped", level)
		}
	}
}

// TestAdamWForceGo checks the backend's whole AdamW (chunked over threads)
// against the scalar path it replaces, bit for bit, over several steps.
func TestAdamWForceGo(t *testing.T) {
	const n = 3*adamGrain + 11
	run := func(forceGo bool) []float32 {
		b := New(2)
		b.rs.forceGo = forceGo
		rng := rand.New(rand.NewPCG(5, 6))
		p0, _, _, _ := adamwInputs(rng, n)
		p, g, m, v := b.Alloc(n), b.Alloc(n), b.Alloc(n), b.Alloc(n)
		b.Upload(p, p0)
		for s := 1; s <= 4; s++ {
			_, gs, _, _ := adamwInputs(rng, n)
			b.Upload(g, gs)
			b.AdamW(p, g, m, v, n, tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: s})
		}
		return append(append(append([]float32(nil), p.(Buf)...), m.(Buf)...), v.(Buf)...)
	}
	c, goPath := run(false), run(true)
	for i := range c {
		if math.Float32bits(c[i]) != math.Float32bits(goPath[i]) {
			t.Fatalf("element %d of p|m|v: %g with the C kernel, %g with adamwGo", i, c[i], goPath[i])
		}
	}
}

func clone32(x []float32) []float32 { return append([]float32(nil), x...) }

// BenchmarkAdamW times one AdamW step over the main job's 6.7M parameters
// on the scalar path (go) and the C kernel (c), all cores.
func BenchmarkAdamW(bm *testing.B) {
	const n = 6_697_000
	for _, path := range []struct {
		name    string
		forceGo bool
	}{{"go", true}, {"c", false}} {
		bm.Run(path.name, func(bm *testing.B) {
			b := New(0)
			b.rs.forceGo = path.forceGo
			rng := rand.New(rand.NewPCG(1, 2))
			p, g, m, v := b.Alloc(n), b.Alloc(n), b.Alloc(n), b.Alloc(n)
			host := make([]float32, n)
			for _, s := range []tensor.Storage{p, g} {
				for i := range host {
					host[i] = float32(rng.NormFloat64())
				}
				b.Upload(s, host)
			}
			bm.SetBytes(int64(n) * 4 * 7) // reads p, g, m, v; writes p, m, v
			for i := range bm.N {
				b.AdamW(p, g, m, v, n, tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: i + 1})
			}
		})
	}
}
