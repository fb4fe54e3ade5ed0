//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"

	"uhno/internal/tensor"
)

// AdamW implements tensor.Backend: one fused step of torch.optim.AdamW on
// the first n elements of the flat buffers p, g, m, v (kernels/small.cu
// adamw_step, one thread per element, in double like the CPU backend).
// The step's scalars are computed here in float64 exactly as the CPU
// does: decay = 1 - lr wd, stepSize = lr / (1 - b1^t), bc2Sqrt =
// sqrt(1 - b2^t); they are kernel arguments, so a captured CUDA graph
// would replay them unchanged (a captured step must read them from
// device memory instead).
func (b *Backend) AdamW(p, g, m, v tensor.Storage, n int, h tensor.AdamWHyper) {
	P, G, M, V := p.(*Buf), g.(*Buf), m.(*Buf), v.(*Buf)
	if n > P.n || n > G.n || n > M.n || n > V.n {
		panic(fmt.Sprintf("cuda: AdamW: n = %d exceeds a buffer (p %d, g %d, m %d, v %d)", n, P.n, G.n, M.n, V.n))
	}
	if h.Step < 1 {
		panic(fmt.Sprintf("cuda: AdamW: step %d, want >= 1", h.Step))
	}
	if n == 0 {
		return
	}
	decay := 1 - h.LR*h.WeightDecay
	stepSize := h.LR / (1 - math.Pow(h.Beta1, float64(h.Step)))
	bc2Sqrt := math.Sqrt(1 - math.Pow(h.Beta2, float64(h.Step)))
	b.launch("adamw_step", Elementwise(n), P, G, M, V, n, h.Beta1, h.Beta2, decay, stepSize, bc2Sqrt, h.Eps)
}
