//go:build !(cgo && amd64)

package cpu

// Without cgo on amd64 there are no C moves: the callers run their Go
// loops (havePatchC is false, so these are never called).

const havePatchC = false

type patchMoves struct{ t, cin, sp, ki, kt int }

func (m patchMoves) im2col(patch, xb []float32, offs []int32, n int) {
	panic("cpu: no C patch moves in this build")
}

func (m patchMoves) im2colT(patchT, xb []float32, offs []int32, n int) {
	panic("cpu: no C patch moves in this build")
}

func (m patchMoves) col2im(dxb, dP []float32, offs []int32, n int) {
	panic("cpu: no C patch moves in this build")
}
