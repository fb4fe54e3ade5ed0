package cuda

// Dim3 is a CUDA grid or block shape.
type Dim3 struct{ X, Y, Z int }

// Geometry is how one kernel is launched: grid, block and dynamic shared
// memory in bytes.
type Geometry struct {
	Grid, Block Dim3
	Shared      int
}

// Threads is the total number of threads launched.
func (g Geometry) Threads() int {
	return g.Grid.X * g.Grid.Y * g.Grid.Z * g.Block.X * g.Block.Y * g.Block.Z
}

// Launch limits of every GPU uhno supports (compute capability >= 8.0).
const (
	maxBlockThreads = 1024
	maxGridY        = 65535
	maxGridZ        = 65535
	// elementwiseBlock is the block size of grid-stride elementwise kernels.
	elementwiseBlock = 256
	// maxElementwiseBlocks caps grid-stride grids: enough blocks to fill an
	// H100's 132 SMs many times over, few enough to amortise the launch.
	maxElementwiseBlocks = 132 * 32
)

// ceilDiv is ceil(a / b) for a >= 0, b > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Elementwise is the geometry of a grid-stride loop over n elements: one
// thread per element up to maxElementwiseBlocks blocks of 256, each thread
// looping over i += gridDim.x * blockDim.x beyond that. n = 0 gives one
// block (a launch needs a non-empty grid; the kernel's loop does nothing).
func Elementwise(n int) Geometry {
	blocks := min(max(ceilDiv(n, elementwiseBlock), 1), maxElementwiseBlocks)
	return Geometry{Grid: Dim3{blocks, 1, 1}, Block: Dim3{elementwiseBlock, 1, 1}}
}

// PerRow is one block of `block` threads per row of a [rows, n] problem
// (per-sample reductions such as MeanStd, SPAR's keep-ratio and top-k),
// rows laid out along grid x then y so that more than 65,535 rows fit.
func PerRow(rows, block int) Geometry {
	block = min(max(block, 32), maxBlockThreads)
	x := min(max(rows, 1), 65535)
	y := ceilDiv(max(rows, 1), x)
	return Geometry{Grid: Dim3{x, y, 1}, Block: Dim3{block, 1, 1}}
}

// ReductionBlock is the block size for reducing n values per row: a
// power of two between 32 and 1024, about one thread per four values.
func ReductionBlock(n int) int {
	b := 32
	for b < maxBlockThreads && b*4 < n {
		b *= 2
	}
	return b
}
