package model

import (
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// tinySigmas keep 3 sigma away from an integer (1.8, 3.3, 6.6) so that a
// 1% perturbation of log sigma in a gradient check cannot change the
// support radius ceil(3 sigma), which is piecewise constant.
var tinySigmas = []float64{0.55, 1.2, 2.5}

// tiny is a small U-HNO spec per dimension: L = 2, C0 = 4, grids 16, 8x8,
// 8x8x8 (tinyGrid), K0 chosen so that the mode cap bites at some levels.
// Mode G gets an explicit flat width of 8: at this size no multiple of the
// 2 sigma groups lands within 10% of Full's count (8 and 10 miss on either
// side); TestModeGMatchesFull checks the automatic width on the paper's
// configurations.
func tiny(dim int, mode string) Spec {
	k0 := 5
	if dim > 1 {
		k0 = 3
	}
	flat := 0
	if mode == ModeNoUShape {
		flat = 8
	}
	return Spec{FlatWidth: flat, Dim: dim, InChannels: 2, OutChannels: 1, Levels: 2, C0: 4, WidthMult: 2, K0: k0,
		M: 3, Sigmas: tinySigmas, Groups: 2, MaxRadius: 16, ProjHidden: 8, Mode: mode, SPAR: tensor.DefaultSPAR}
}

func tinyGrid(dim int) []int {
	return map[int][]int{1: {16}, 2: {8, 8}, 3: {8, 8, 8}}[dim]
}

func newBackend() *cpu.Backend { return cpu.New(2) }

func mustUHNO(t testing.TB, b tensor.Backend, s Spec, seed uint64) *UHNO {
	t.Helper()
	m, err := NewUHNO(b, s, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// input returns a seeded random field [batch, c, grid...] on tp.
func input(tp *tensor.Tape, seed uint64, batch, c int, grid []int) *tensor.Tensor {
	shape := append([]int{batch, c}, grid...)
	return tp.FromHost(gradcheck.Random(seed, tensor.Numel(shape)), shape...)
}

func host(b tensor.Backend, t *tensor.Tensor) []float32 { return tensor.ToHost(b, t) }

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
