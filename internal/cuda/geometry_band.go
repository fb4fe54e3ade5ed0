package cuda

// Launch geometry of the band-limited resampling's axis product
// (kernels/band.cu, br_axis).

const (
	// bandTile is the side of br_axis's output tile (BT in kernels/band.cu).
	bandTile = 64
	// bandThreads is br_axis's block size (BTHREADS): 16 x 16 threads,
	// each 4 x 4 outputs.
	bandThreads = 256
)

// BandAxis is the geometry of br_axis for `lines` lines of nin points
// mapped to `rows` points along an axis followed by `post` points: the
// product C [M x N] of each of `problems` problems, M = rows, N = post
// and one problem per line for an inner axis (post > 1); M = lines,
// N = rows and a single problem for the last axis (post = 1). One block
// per 64 x 64 tile of C: column tiles along x (no practical limit), row
// tiles along y and problems along z, y and z capped at 65,535 (the kernel
// strides over both beyond the grid).
func BandAxis(lines, rows, post int) Geometry {
	m, n, problems := rows, post, lines
	if post == 1 {
		m, n, problems = lines, rows, 1
	}
	return Geometry{
		Grid: Dim3{
			max(ceilDiv(n, bandTile), 1),
			min(max(ceilDiv(m, bandTile), 1), maxGridY),
			min(max(problems, 1), maxGridZ),
		},
		Block: Dim3{bandThreads, 1, 1},
	}
}
