package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// adamwRef is AdamW in float64 exactly as written in torch's documentation:
// p -= lr wd p; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
// p -= lr mhat / (sqrt(vhat) + eps). The state is stored in float32 between
// steps, as the backend's buffers are, so that rounding of a cancelling
// moment (m shrinking from 1e-4 to 1e-9) is not mistaken for a wrong
// formula; within a step everything is float64.
func adamwRef(p, g, m, v []float64, h tensor.AdamWHyper) {
	defer func() {
		for i := range p {
			p[i], m[i], v[i] = float64(float32(p[i])), float64(float32(m[i])), float64(float32(v[i]))
		}
	}()
	t := float64(h.Step)
	for i := range p {
		p[i] -= h.LR * h.WeightDecay * p[i]
		m[i] = h.Beta1*m[i] + (1-h.Beta1)*g[i]
		v[i] = h.Beta2*v[i] + (1-h.Beta2)*g[i]*g[i]
		mhat := m[i] / (1 - math.Pow(h.Beta1, t))
		vhat := v[i] / (1 - math.Pow(h.Beta2, t))
		p[i] -= h.LR * mhat / (math.Sqrt(vhat) + h.Eps)
	}
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

func closeRel(t *testing.T, what string, step int, got []float32, want []float64, rel, abs float64) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > abs+rel*math.Abs(want[i]) {
			t.Fatalf("step %d: %s[%d] = %.9g, want %.9g (|diff| %.3g)", step, what, i, got[i], want[i], d)
		}
	}
}

// TestAdamWTorch checks two steps against values printed by
// torch.optim.AdamW (PyTorch 1.13, float32, lr 0.1, betas (0.9, 0.999),
// eps 1e-8, weight_decay 0.01). Element 2 has a zero gradient (pure decay,
// denominator eps), element 4 a gradient near eps's scale.
func TestAdamWTorch(t *testing.T) {
	p0 := []float32{0.5, -1.25, 2.0, 0.0, 3.0e-3, -0.75, 1.5}
	grads := [][]float32{
		{0.1, -0.2, 0.0, 1.5, -3.0e-4, 2.5, -0.05},
		{-0.3, 0.4, 0.0, 0.25, 1.0e-3, -1.0, 0.07},
	}
	want := []struct{ p, m, v []float64 }{
		{
			p: []float64{0.3995000123977661, -1.1487499475479126, 1.9980000257492065, -0.10000000149011612, 0.10299365222454071, -0.8492499589920044, 1.5985000133514404},
			m: []float64{0.010000000707805157, -0.020000001415610313, 0.0, 0.15000000596046448, -3.000000106112566e-05, 0.25, -0.005000000353902578},
			v: []float64{1.0000000656873453e-05, 4.0000002627493814e-05, 0.0, 0.0022499999031424522, 9.00000143855273e-11, 0.006250000558793545, 2.5000001642183634e-06},
		},
		{
			p: []float64{0.4485194981098175, -1.1842116117477417, 1.9960020780563354, -0.17823274433612823, 0.05085819587111473, -0.8829612731933594, 1.5752718448638916},
			m: []float64{-0.021000001579523087, 0.02199999988079071, 0.0, 0.1600000113248825, 7.300000288523734e-05, 0.1249999925494194, 0.0024999999441206455},
			v: []float64{9.999000758398324e-05, 0.00019996000628452748, 0.0, 0.0023102497216314077, 1.0899101621220098e-09, 0.007243750616908073, 7.397500212391606e-06},
		},
	}
	b := cpu.New(2)
	n := len(p0)
	p, g, m, v := b.Alloc(n), b.Alloc(n), b.Alloc(n), b.Alloc(n)
	b.Upload(p, p0)
	for s, gs := range grads {
		b.Upload(g, gs)
		b.AdamW(p, g, m, v, n, tensor.AdamWHyper{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Step: s + 1})
		// float32 rounding of PyTorch's op-by-op arithmetic against our
		// float64-per-element update: a few ulps (float32 ulp is 6e-8
		// relative).
		closeRel(t, "p", s+1, p.(cpu.Buf), want[s].p, 5e-7, 1e-9)
		closeRel(t, "m", s+1, m.(cpu.Buf), want[s].m, 5e-7, 1e-12)
		closeRel(t, "v", s+1, v.(cpu.Buf), want[s].v, 5e-7, 1e-15)
	}
}

// TestAdamWReference runs five steps with changing learning rates on
// random data of several sizes (below, at and above the chunk size) against
// the float64 reference. Only the order of float64 operations (the backend
// folds the bias corrections into the step size) separates the two, so the
// stored float32 values agree to an ulp.
func TestAdamWReference(t *testing.T) {
	b := cpu.New(2)
	for _, n := range []int{1, 13, 8192, 20001} {
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		p0 := make([]float32, n)
		for i := range p0 {
			p0[i] = float32(rng.NormFloat64())
		}
		p, g, m, v := b.Alloc(n), b.Alloc(n), b.Alloc(n), b.Alloc(n)
		b.Upload(p, p0)
		rp, rm, rv := to64(p0), make([]float64, n), make([]float64, n)
		for s := 1; s <= 5; s++ {
			gs := make([]float32, n)
			for i := range gs {
				gs[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(5)-3)))
			}
			b.Upload(g, gs)
			h := tensor.AdamWHyper{LR: 1e-3 * float64(s), Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: s}
			b.AdamW(p, g, m, v, n, h)
			adamwRef(rp, to64(gs), rm, rv, h)
			closeRel(t, "p", s, p.(cpu.Buf), rp, 1.2e-7, 0)
			closeRel(t, "m", s, m.(cpu.Buf), rm, 1.2e-7, 0)
			closeRel(t, "v", s, v.(cpu.Buf), rv, 1.2e-7, 0)
		}
	}
}

// TestAdamWPrefixAndThreads checks that only the first n elements change
// and that the update is bit-identical for 1 and 4 threads.
func TestAdamWPrefixAndThreads(t *testing.T) {
	const total, n = 30000, 25000
	run := func(threads int) []float32 {
		b := cpu.New(threads)
		rng := rand.New(rand.NewPCG(3, 4))
		host := make([]float32, total)
		p, g, m, v := b.Alloc(total), b.Alloc(total), b.Alloc(total), b.Alloc(total)
		for _, s := range []tensor.Storage{p, g} {
			for i := range host {
				host[i] = float32(rng.NormFloat64())
			}
			b.Upload(s, host)
		}
		for s := 1; s <= 3; s++ {
			b.AdamW(p, g, m, v, n, tensor.AdamWHyper{LR: 1e-2, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-2, Step: s})
		}
		for i := n; i < total; i++ {
			if m.(cpu.Buf)[i] != 0 || v.(cpu.Buf)[i] != 0 {
				t.Fatalf("threads %d: element %d beyond n = %d was updated", threads, i, n)
			}
		}
		return append([]float32(nil), p.(cpu.Buf)...)
	}
	one, four := run(1), run(4)
	for i := range one {
		if math.Float32bits(one[i]) != math.Float32bits(four[i]) {
			t.Fatalf("element %d: %v with 1 thread, %v with 4", i, one[i], four[i])
		}
	}
}
