package cpu

import (
	"fmt"
	"math"

	"uhno/internal/tensor"
)

// adamGrain is the chunk size of the AdamW update: one pass over 16 bytes
// of state per element, so 16384 elements (256 KiB) per goroutine
// hand-off.
const adamGrain = 16384

// adamwConsts are the per-step constants of the update (the C struct
// uhno_adamw_consts has the same fields in the same order).
type adamwConsts struct {
	b1, c1, b2, c2 float64 // beta1, 1-beta1, beta2, 1-beta2
	decay          float64 // 1 - lr wd
	step           float64 // lr / (1 - beta1^t)
	bc2            float64 // sqrt(1 - beta2^t)
	eps            float64
}

// AdamW implements tensor.Backend: one step of torch.optim.AdamW on the
// flat buffers (paper Sec. 4.1 "Implementation": AdamW, weight decay 1e-4).
//
// The order of operations is PyTorch's single-tensor implementation
// (torch/optim/adamw.py): the decoupled decay p *= 1 - lr wd first, then the
// moment updates, then
//
//	p -= (lr / (1-b1^t)) m / (sqrt(v) / sqrt(1-b2^t) + eps),
//
// which is p -= lr mhat / (sqrt(vhat) + eps) written without dividing the
// whole moment buffers. Each element is computed in float64 from its
// float32 values and rounded once per stored buffer, so the update is within
// an ulp or two of PyTorch's float32 arithmetic. Elements are independent:
// the result is the same for any thread count.
//
// On amd64 with cgo the pass runs in the vectorised C loop of
// adamw_amd64.c, which does the same float64 operations in the same order
// as adamwGo and so gives the same bits (TestAdamWKernelBits); elsewhere
// adamwGo itself.
func (b *Backend) AdamW(p, g, m, v tensor.Storage, n int, h tensor.AdamWHyper) {
	P, G, M, V := p.(Buf), g.(Buf), m.(Buf), v.(Buf)
	if n > len(P) || n > len(G) || n > len(M) || n > len(V) {
		panic(fmt.Sprintf("cpu: AdamW: n = %d exceeds a buffer (p %d, g %d, m %d, v %d)", n, len(P), len(G), len(M), len(V)))
	}
	if h.Step < 1 {
		panic(fmt.Sprintf("cpu: AdamW: step %d, want >= 1", h.Step))
	}
	k := adamwConstsOf(h)
	fast := haveFastAdamW && !b.rs.forceGo
	b.parallel(n, adamGrain, func(lo, hi int) {
		if fast {
			adamwFast(P[lo:hi], G[lo:hi], M[lo:hi], V[lo:hi], &k)
		} else {
			adamwGo(P[lo:hi], G[lo:hi], M[lo:hi], V[lo:hi], &k)
		}
	})
}

// adamwConstsOf folds the step's hyperparameters into the constants of the
// per-element update.
func adamwConstsOf(h tensor.AdamWHyper) adamwConsts {
	return adamwConsts{
		b1: h.Beta1, c1: 1 - h.Beta1, b2: h.Beta2, c2: 1 - h.Beta2,
		decay: 1 - h.LR*h.WeightDecay,
		step:  h.LR / (1 - math.Pow(h.Beta1, float64(h.Step))),
		bc2:   math.Sqrt(1 - math.Pow(h.Beta2, float64(h.Step))),
		eps:   h.Eps,
	}
}

// adamwGo is the scalar update of equal-length slices, the reference for
// the C kernel: the float64 operations of each element, in order.
func adamwGo(p, g, m, v []float32, k *adamwConsts) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i := range p {
		gi := float64(g[i])
		mi := k.b1*float64(m[i]) + k.c1*gi
		vi := k.b2*float64(v[i]) + k.c2*gi*gi
		m[i], v[i] = float32(mi), float32(vi)
		p[i] = float32(float64(p[i])*k.decay - k.step*mi/(math.Sqrt(vi)/k.bc2+k.eps))
	}
}
