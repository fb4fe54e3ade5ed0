package cuda

// Launch geometry of the dense and small operations (kernels/dense.cu,
// kernels/resample.cu, kernels/small.cu): the tiled matrix products of
// Pointwise and ConvDown, the split of their weight- and bias-gradient
// reductions, and the two-pass MSE reduction. Everything here depends on the shapes
// only (never on the device), so the partition of every reduction, and
// hence its float rounding, is the same on every run and every GPU.

const (
	// gemmTile is the side of the output tile of one GEMM block; must
	// match GT in kernels/dense.cu.
	gemmTile = 64
	// gemmTileK is the K depth of one shared-memory stage (GK).
	gemmTileK = 16
	// gemmThreads is the block size of the GEMM kernels (GTHREADS): 16 x 16
	// threads, each computing 4 x 4 outputs.
	gemmThreads = 256
	// gemmSharedBytes is the static shared memory of a GEMM block: two
	// stages of GK x (GT+1) floats.
	gemmSharedBytes = 2 * gemmTileK * (gemmTile + 1) * 4

	// splitKMinChunk is the shortest K range worth a block of its own in
	// a split weight-gradient product (a multiple of gemmTileK).
	splitKMinChunk = 512
	// splitKTargetBlocks is how many blocks a split product aims at: two
	// waves of one block per SM on an H100 (132 SMs). It is a constant, not
	// a device query, so the split is a function of the shapes alone.
	splitKTargetBlocks = 2 * 132

	// smallStageK is the K depth of one stage of the small-channel weight
	// gradient (SK in kernels/dense.cu).
	smallStageK = 32
	// smallMaxC is the most channels on either side of the small-channel
	// weight gradient (SMALL_C: its shared slabs are SMALL_C x (SK+1)).
	smallMaxC = 64
	// smallMaxRows is the most output rows one thread of it owns (SMALL_J).
	smallMaxRows = 8
	// smallMinChunk is the shortest K chunk of the small-channel weight
	// gradient (a multiple of smallStageK): four stages. Short chunks make
	// many blocks (Burgers' K = 32 x 1024: 256 blocks of 128), which hide
	// the load latency of the stages; their partials are Cout Cin floats
	// each, small beside the B S (Cout + Cin) floats read.
	smallMinChunk = 4 * smallStageK

	// biasBlock is the block size of the bias-gradient partial sums (the
	// kernel's shared array is GTHREADS = 256 floats).
	biasBlock = 256
	// biasMinChunk is the fewest values one bias-gradient block sums.
	biasMinChunk = 16 * biasBlock
	// biasTargetBlocks is how many blocks a bias gradient aims at (a
	// constant, so the partition depends on the shapes only).
	biasTargetBlocks = 8 * 132

	// mseBlock is the block size of both MSE passes (a power of two).
	mseBlock = 256
	// mseMinChunk is the fewest values one MSE block sums.
	mseMinChunk = 16 * mseBlock
	// maxMSEParts caps the number of pass-1 blocks (the pass-2 block sums
	// them, a few per thread).
	maxMSEParts = 1024
)

// Gemm is the geometry of a tiled product with an m x n output per
// problem and `batch` problems: one 256-thread block per 64 x 64 output
// tile, tiles of columns along grid x (no practical limit), tiles of rows
// along y, problems along z. Kernels loop over z beyond 65,535 problems.
func Gemm(m, n, batch int) Geometry {
	return Geometry{
		Grid:  Dim3{max(ceilDiv(n, gemmTile), 1), max(ceilDiv(m, gemmTile), 1), min(max(batch, 1), maxGridZ)},
		Block: Dim3{gemmThreads, 1, 1},
	}
}

// SplitK splits the K range of an m x n product into `splits` chunks of
// `chunk` values (the last one shorter): enough chunks that the product
// fills about splitKTargetBlocks blocks, none shorter than
// splitKMinChunk, chunk a multiple of the GEMM stage depth. Each chunk
// writes its own partial product and the partials are summed in chunk
// order (dense_splitk_reduce), so the result is deterministic.
func SplitK(m, n, k int) (splits, chunk int) {
	if k <= 0 {
		return 1, gemmTileK
	}
	tiles := max(ceilDiv(m, gemmTile), 1) * max(ceilDiv(n, gemmTile), 1)
	splits = max(min(k/splitKMinChunk, ceilDiv(splitKTargetBlocks, tiles)), 1)
	chunk = ceilDiv(ceilDiv(k, splits), gemmTileK) * gemmTileK
	return ceilDiv(k, chunk), chunk
}

// SmallChannels reports whether an m x n (Cout x Cin) pointwise weight
// gradient runs on the small-channel kernel pw_backward_dw_small rather
// than the 64 x 64 tiled product: both sides at most smallMaxC, and a
// lane of rg = min(m, gemmThreads/n) rows by n columns covering the m rows
// in at most smallMaxRows passes (the kernel's per-thread accumulators).
func SmallChannels(m, n int) bool {
	if m < 1 || n < 1 || m > smallMaxC || n > smallMaxC {
		return false
	}
	rg := min(m, gemmThreads/n)
	return ceilDiv(m, rg) <= smallMaxRows
}

// SplitKSmall is the geometry of the small-channel weight gradient over a
// K of k values: grid (splits) of gemmThreads threads, block z reducing
// [z chunk, (z+1) chunk), chunk a multiple of smallStageK. Enough chunks
// for about splitKTargetBlocks blocks, none shorter than smallMinChunk,
// none empty. The output of one block is tiny, so the chunks, not the
// output tiles, fill the GPU.
func SplitKSmall(k int) (g Geometry, splits, chunk int) {
	splits = max(min(k/smallMinChunk, splitKTargetBlocks), 1)
	chunk = max(ceilDiv(ceilDiv(max(k, 1), splits), smallStageK)*smallStageK, smallStageK)
	splits = max(ceilDiv(k, chunk), 1)
	return Geometry{Grid: Dim3{splits, 1, 1}, Block: Dim3{gemmThreads, 1, 1}}, splits, chunk
}

// MSEParts is the first pass of the MSE reduction over n values: `parts`
// blocks of mseBlock threads, block g summing [g chunk, (g+1) chunk).
// No block is empty when n > 0.
func MSEParts(n int) (g Geometry, parts, chunk int) {
	parts = max(min(ceilDiv(n, mseMinChunk), maxMSEParts), 1)
	chunk = max(ceilDiv(n, parts), 1)
	parts = max(ceilDiv(n, chunk), 1)
	return Geometry{Grid: Dim3{parts, 1, 1}, Block: Dim3{mseBlock, 1, 1}}, parts, chunk
}

// MSEFinal is the second pass: one block summing the parts.
func MSEFinal() Geometry {
	return Geometry{Grid: Dim3{1, 1, 1}, Block: Dim3{mseBlock, 1, 1}}
}

// BiasParts is the geometry of a bias gradient over c channels of k
// values each (k = B S): grid (parts, c) of biasBlock threads, block
// (g, o) summing channel o's folded values [g chunk, (g+1) chunk). Enough
// parts to fill about biasTargetBlocks blocks, none shorter than
// biasMinChunk, no part empty.
func BiasParts(c, k int) (g Geometry, parts, chunk int) {
	parts = max(min(k/biasMinChunk, ceilDiv(biasTargetBlocks, max(c, 1))), 1)
	chunk = max(ceilDiv(k, parts), 1)
	parts = max(ceilDiv(k, chunk), 1)
	return Geometry{Grid: Dim3{parts, max(c, 1), 1}, Block: Dim3{biasBlock, 1, 1}}, parts, chunk
}

// RowReduce is one block per row of a [rows, n] reduction (MeanStd) with a power-of-two block of about n/4 threads (the
// kernels' tree reductions need a power of two).
func RowReduce(rows, n int) Geometry { return PerRow(rows, ReductionBlock(n)) }

// padSpatial pads spatial axes in front to three (a padded axis has one
// point), the layout of the ConvDown and Upsample2x kernels.
func padSpatial(sp []int) (n0, n1, n2 int) {
	p := [3]int{1, 1, 1}
	copy(p[3-len(sp):], sp)
	return p[0], p[1], p[2]
}
