package cuda

import "fmt"

// Launch geometry of the SPAR kernels (kernels/spar.cu). The constants
// mirror the kernels' #defines (SPAR_BLOCK, SPAR_RADIX_BITS, SPAR_BINS),
// which TestSPARDefinesMatch checks against the .cu source.
const (
	// sparBlock is the block size of every SPAR top-k and statistics
	// kernel. The radix-select kernel gives one thread to each of the
	// sparBins digits and to each of at most sparMaxChunks chunks, so all
	// three are equal.
	sparBlock     = 256
	sparRadixBits = 8
	sparBins      = 1 << sparRadixBits
	// sparPasses is the number of radix passes over a 32-bit key.
	sparPasses = 32 / sparRadixBits
	// sparMinChunk is the fewest scores a block of a sweep reads (16 per
	// thread), so that a block's fixed costs (zeroing and writing 256
	// histogram counters) stay small next to its reads.
	sparMinChunk = 16 * sparBlock
	// sparMaxChunks bounds the chunks of one sample: one thread per chunk
	// in spar_keep_ratio and spar_radix_select.
	sparMaxChunks = sparBlock
	// sparMaxGridX is the grid x limit of compute capability >= 3.0.
	sparMaxGridX = 1<<31 - 1
)

// SPARPlan is how one SPAR top-k (or keep-ratio) splits its work: each of
// the Batch samples' N scores is cut into Chunks consecutive chunks of
// Chunk scores (the last one possibly shorter, none empty). A sweep kernel
// has one block per (sample, chunk); the per-sample kernels one block per
// sample. A 128^3 sample (N = 2,097,152) gets 256 chunks of 8,192 scores,
// so even one sample spreads over every SM of an H100.
type SPARPlan struct {
	Batch, N, Chunks, Chunk int
}

// PlanSPAR returns the plan for batch samples of n scores each (n >= 1):
// about one chunk per sparMinChunk scores, at most sparMaxChunks, and the
// chunk length then chosen so that no chunk is empty.
func PlanSPAR(batch, n int) SPARPlan {
	if batch < 1 || n < 1 {
		panic(fmt.Sprintf("cuda: SPAR plan for %d samples of %d scores", batch, n))
	}
	g := min(ceilDiv(n, sparMinChunk), sparMaxChunks)
	chunk := ceilDiv(n, g)
	g = ceilDiv(n, chunk)
	if batch > sparMaxGridX/g {
		panic(fmt.Sprintf("cuda: SPAR plan: %d samples x %d chunks exceed the grid", batch, g))
	}
	return SPARPlan{Batch: batch, N: n, Chunks: g, Chunk: chunk}
}

// Range is the half-open index range [lo, hi) of chunk g within a sample,
// as the kernels compute it.
func (p SPARPlan) Range(g int) (lo, hi int) {
	lo = g * p.Chunk
	return lo, min(lo+p.Chunk, p.N)
}

// Sweep is the geometry of the kernels that read every score (statistics
// partials, radix histograms, mask): one block of sparBlock threads per
// (sample, chunk), block index = sample * Chunks + chunk.
func (p SPARPlan) Sweep() Geometry {
	return Geometry{Grid: Dim3{p.Batch * p.Chunks, 1, 1}, Block: Dim3{sparBlock, 1, 1}}
}

// PerSample is the geometry of the per-sample kernels (keep-ratio, radix
// select): one block of sparBlock threads per sample, laid out by PerRow.
func (p SPARPlan) PerSample() Geometry { return PerRow(p.Batch, sparBlock) }

// Static shared memory of the SPAR kernels in bytes (fixed arrays in
// kernels/spar.cu; no dynamic shared memory is requested).
const (
	sparSharedStats  = 8 * sparBlock        // spar_stats_partial, spar_keep_ratio: one double per thread
	sparSharedHist   = 4 * sparBins         // spar_radix_histogram
	sparSharedSelect = 4*sparBlock + 2*4    // spar_radix_select: scan + the picked digit
	sparSharedMask   = 4 * (sparBlock / 32) // spar_topk_mask: one count per warp
	// spar_threshold: a float and an int flag per thread
	sparSharedThreshold = 8 * sparBlock
)
