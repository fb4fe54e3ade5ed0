package cpu

import (
	"fmt"
	"math"

	"uhno/internal/tensor"
)

// adamGrain is the chunk size of the AdamW update: about 20 flops per
// element, so 8192 elements are ~160k flops per goroutine hand-off.
const adamGrain = 8192

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
func (b *Backend) AdamW(p, g, m, v tensor.Storage, n int, h tensor.AdamWHyper) {
	P, G, M, V := p.(Buf), g.(Buf), m.(Buf), v.(Buf)
	if n > len(P) || n > len(G) || n > len(M) || n > len(V) {
		panic(fmt.Sprintf("cpu: AdamW: n = %d exceeds a buffer (p %d, g %d, m %d, v %d)", n, len(P), len(G), len(M), len(V)))
	}
	if h.Step < 1 {
		panic(fmt.Sprintf("cpu: AdamW: step %d, want >= 1", h.Step))
	}
	b1, b2 := h.Beta1, h.Beta2
	decay := 1 - h.LR*h.WeightDecay
	stepSize := h.LR / (1 - math.Pow(b1, float64(h.Step)))
	bc2Sqrt := math.Sqrt(1 - math.Pow(b2, float64(h.Step)))
	eps := h.Eps
	b.parallel(n, adamGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			gi := float64(G[i])
			mi := b1*float64(M[i]) + (1-b1)*gi
			vi := b2*float64(V[i]) + (1-b2)*gi*gi
			M[i], V[i] = float32(mi), float32(vi)
			P[i] = float32(float64(P[i])*decay - stepSize*mi/(math.Sqrt(vi)/bc2Sqrt+eps))
		}
	})
}
