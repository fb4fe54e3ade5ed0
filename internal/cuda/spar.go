//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"

	"uhno/internal/tensor"
)

// SPAR on the GPU (kernels/spar.cu; paper Sec. 3.3, Eq. spar-rho, Alg. 1,
// App. A.1). The keep-ratio, k and the top-k mask are computed per sample
// on the device by a fixed sequence of launches (statistics, four radix
// select passes, mask), so SPARKeep never waits for the device and can be
// captured in a CUDA graph. Scratch buffers (prefix "spar_") are reused
// from call to call and grow with the largest batch seen.

// sparState is the radix-select state kept per sample (int slots; see
// SPAR_STATE in kernels/spar.cu).
const sparState = 4

// TopKMask implements tensor.Backend: per sample, 1 at the k[b] largest
// scores (ties to the lower flat index, NaN smallest), 0 elsewhere. k is
// host data, so the interface forces one host-to-device copy of the B
// values (through Upload, which waits for that copy); the selection itself
// runs on the device like SPARKeep's. k is clamped to [0, N].
func (b *Backend) TopKMask(mask, s *tensor.Tensor, k []int) {
	batch, n := s.Batch(), s.SpatialSize()
	if len(k) != batch {
		panic(fmt.Sprintf("cuda: TopKMask: %d k values for %d samples", len(k), batch))
	}
	if batch == 0 || n == 0 {
		return
	}
	// The ints travel bit for bit in float32 slots (exact for every k,
	// where float32(k) would not be above 2^24).
	bits := make([]float32, batch)
	for i, kk := range k {
		bits[i] = math.Float32frombits(uint32(int32(min(max(kk, 0), n))))
	}
	kv := b.scratchBuf("spar_topk_k", batch)
	b.Upload(kv, bits)
	p := PlanSPAR(batch, n)
	state := b.scratchBuf("spar_state", sparState*batch)
	b.launch("spar_topk_init", Elementwise(batch), state, kv, n, batch)
	b.sparTopK(buf(mask), buf(s), state, p)
}

// SPARKeep implements tensor.Backend (Eq. spar-rho, Alg. 1): per sample,
// the contrast c = std(s) / (mean |s| + eps) in double, rho = clip(rho0
// (1 + beta tanh(c - 1)), rho_min, rho_max), k = ceil(rho N) clamped to
// [1, N] as cpu.CeilKeep, stats[b] = (c, rho, k), and hard = the top-k
// mask. Nothing is read back to the host.
func (b *Backend) SPARKeep(hard, stats, s *tensor.Tensor, p tensor.SPARParams) {
	batch, n := s.Batch(), s.SpatialSize()
	if batch == 0 || n == 0 {
		return
	}
	plan := PlanSPAR(batch, n)
	// Three float64 partials (sum, sum |s|, squared deviations) per chunk.
	part := b.scratchBuf("spar_part", 2*3*batch*plan.Chunks)
	state := b.scratchBuf("spar_state", sparState*batch)
	unbiased := 0
	if p.UnbiasedStd {
		unbiased = 1
	}
	b.launch("spar_stats_partial", plan.Sweep(), part, buf(s), n, plan.Chunks, plan.Chunk)
	b.launch("spar_keep_ratio", plan.PerSample(), buf(stats), state, part, n, plan.Chunks, plan.Chunk,
		p.Rho0, p.Beta, p.RhoMin, p.RhoMax, p.Eps, unbiased, batch)
	b.sparTopK(buf(hard), buf(s), state, plan)
}

// sparTopK writes the top-k mask of scores s into mask for the k held in
// the radix state: sparPasses histogram + select passes, most significant
// digit first, narrow the threshold key down to the k-th largest score;
// the mask kernel then keeps every larger score and the first ties.
func (b *Backend) sparTopK(mask, s, state *Buf, p SPARPlan) {
	hist := b.scratchBuf("spar_hist", p.Batch*p.Chunks*sparBins)
	eqBefore := b.scratchBuf("spar_eqbefore", p.Batch*p.Chunks)
	sweep, per := p.Sweep(), p.PerSample()
	for pass := 0; pass < sparPasses; pass++ {
		shift := 32 - sparRadixBits*(pass+1)
		b.launch("spar_radix_histogram", sweep, hist, state, s, p.N, p.Chunks, p.Chunk, shift)
		b.launch("spar_radix_select", per, state, eqBefore, hist, p.Chunks, shift, p.Batch)
	}
	b.launch("spar_topk_mask", sweep, mask, state, eqBefore, s, p.N, p.Chunks, p.Chunk)
}

// SPARRoute implements tensor.Backend: r = zG + hard (zF - zG), the
// forward value of the straight-through MUX r = g zF + (1-g) zG (Sec. 3.3).
func (b *Backend) SPARRoute(r, zF, zG, hard *tensor.Tensor) {
	batch, c, sp := zF.Batch(), zF.Channels(), zF.SpatialSize()
	n := batch * c * sp
	if n == 0 {
		return
	}
	b.launch("spar_route", Elementwise(n), buf(r), buf(zF), buf(zG), buf(hard), batch, c, sp)
}

// SPARRouteBackward implements tensor.Backend (App. A.1): the direct path
// dzF += g dr, dzG += (1-g) dr (Eq. spar-direct) and the score path
// ds += sum_c dr (zF - zG) sigmoid'((s - tau)/T)/T (Eq. spar-score-grad),
// one thread per pixel summing the channels in order (deterministic).
// tau is 0, or for tensor.CentreThreshold the per-sample threshold tau_k
// that spar_threshold finds on the device first. Nil gradients are
// skipped.
func (b *Backend) SPARRouteBackward(dzF, dzG, ds, dr, zF, zG, hard, s *tensor.Tensor, temperature float32, centre tensor.SurrogateCentre) {
	batch, c, sp := zF.Batch(), zF.Channels(), zF.SpatialSize()
	if batch*c*sp == 0 {
		return
	}
	if dzF != nil || dzG != nil {
		b.launch("spar_route_backward_direct", Elementwise(batch*c*sp), buf(dzF), buf(dzG), buf(dr), buf(hard),
			batch, c, sp)
	}
	if ds != nil {
		if centre == tensor.CentreThreshold {
			tau := b.scratchBuf("spar_tau", batch)
			b.launch("spar_threshold", PerRow(batch, sparBlock), tau, buf(s), buf(hard), batch, sp)
			b.launch("spar_route_backward_score_centred", Elementwise(batch*sp), buf(ds), buf(dr), buf(zF), buf(zG), buf(s),
				tau, batch, c, sp, temperature)
		} else {
			b.launch("spar_route_backward_score", Elementwise(batch*sp), buf(ds), buf(dr), buf(zF), buf(zG), buf(s),
				batch, c, sp, temperature)
		}
	}
}
