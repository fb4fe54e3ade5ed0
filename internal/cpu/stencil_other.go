//go:build !(cgo && amd64)

package cpu

// Without cgo on amd64 the stencil's data movement runs the Go loops.

const haveFastStencil = false

func (g *stGeom) im2colC(patch, xb []float32, offs []int32, n int)   { g.im2col(patch, xb, offs, n) }
func (g *stGeom) im2colTC(patchT, xb []float32, offs []int32, n int) { g.im2colT(patchT, xb, offs, n) }
func (g *stGeom) col2imC(dxb, dP []float32, offs []int32, n int)     { g.col2im(dxb, dP, offs, n) }
