package cuda

// Launch geometry of GNO's stencil message (kernels/stencil.cu): the tiles
// of the forward and dx products, and the split of the kernel-weight
// gradient sm_backward_dk. It depends on the shapes
// only (never on the device), so the partition of the reduction, and hence
// its float rounding, is the same on every run and every GPU.

const (
	// smTile is the side of a stencil product's output tile (SM_TILE).
	smTile = 64
	// smStage is the K depth of one shared-memory stage (SM_TK).
	smStage = 16
	// smThreads is the block of the stencil products: 16 x 16 threads,
	// 4 x 4 outputs each.
	smThreads = 256
	// smMinChunk is the shortest K range worth a block of its own (a
	// multiple of smStage).
	smMinChunk = 256
	// smTargetBlocks is how many blocks the split aims at: about four
	// resident 256-thread blocks on each of an H100's 132 SMs, one wave
	// whose blocks of one K chunk (every column tile) run side by side
	// and share dy and x through L2. A constant, not a device query.
	smTargetBlocks = 4 * 132
)

// StencilDk is the geometry of sm_backward_dk for S offsets, cout x cin
// kernels and a folded K = B N: the product C (cout x S cin) in 64 x 64
// tiles, column tiles along grid x, row tiles along y, and K split into
// `splits` chunks of `chunk` values (the last shorter, none empty) along
// z, enough to fill about smTargetBlocks blocks, none shorter than
// smMinChunk, chunk a multiple of smStage. Split z's partial is summed
// in split order by sm_dk_reduce, so the result is deterministic.
func StencilDk(s, cout, cin, k int) (g Geometry, splits, chunk int) {
	tiles := max(ceilDiv(s*cin, smTile), 1) * max(ceilDiv(cout, smTile), 1)
	splits = max(min(k/smMinChunk, ceilDiv(smTargetBlocks, tiles), maxGridZ), 1)
	chunk = max(ceilDiv(ceilDiv(max(k, 1), splits), smStage)*smStage, smStage)
	splits = max(ceilDiv(k, chunk), 1)
	g = Geometry{
		Grid:  Dim3{max(ceilDiv(s*cin, smTile), 1), max(ceilDiv(cout, smTile), 1), splits},
		Block: Dim3{smThreads, 1, 1},
	}
	return g, splits, chunk
}

// StencilTiles is the geometry of sm_forward and sm_backward_dx, an
// m x n output per sample (m output channels, n points) for `batch`
// samples: one block of smThreads per 64 x 64 tile, point tiles along
// grid x, channel tiles along y, samples along z (the kernels loop over z
// beyond 65,535 samples).
func StencilTiles(m, n, batch int) Geometry {
	return Geometry{
		Grid:  Dim3{max(ceilDiv(n, smTile), 1), max(ceilDiv(m, smTile), 1), min(max(batch, 1), maxGridZ)},
		Block: Dim3{smThreads, 1, 1},
	}
}
