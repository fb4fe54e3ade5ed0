package cpu

// patchGeom is a product whose im2col data movement has a Go definition
// (its im2col, im2colT and col2im methods) and a C twin in
// patch_amd64.c (moves): GNO's stencil (stGeom) and the convolutions
// (convGeom).
type patchGeom interface {
	moves() patchMoves
	im2col(patch, xb []float32, offs []int32, n int)
	im2colT(patchT, xb []float32, offs []int32, n int)
	col2im(dxb, dP []float32, offs []int32, n int)
}

// patchIm2col, patchIm2colT and patchCol2im run the C moves where they
// are built (the same bits; a 16-point panel of consecutive offsets moves
// as one block), else the Go loops, which define them.
func (b *Backend) patchIm2col(g patchGeom, patch, xb []float32, offs []int32, n int) {
	if havePatchC && !b.rs.forceGo {
		g.moves().im2col(patch, xb, offs, n)
		return
	}
	g.im2col(patch, xb, offs, n)
}

func (b *Backend) patchIm2colT(g patchGeom, patchT, xb []float32, offs []int32, n int) {
	if havePatchC && !b.rs.forceGo {
		g.moves().im2colT(patchT, xb, offs, n)
		return
	}
	g.im2colT(patchT, xb, offs, n)
}

func (b *Backend) patchCol2im(g patchGeom, dxb, dP []float32, offs []int32, n int) {
	if havePatchC && !b.rs.forceGo {
		g.moves().col2im(dxb, dP, offs, n)
		return
	}
	g.col2im(dxb, dP, offs, n)
}
