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

// budgetTasks are the tasks the budget tests cover at 0.62M: one of each
// kind (1D K0 = 16 and 32, 2D with a 10-frame history, 2D single map).
var budgetTasks = []struct {
	task string
	in   int
}{{"burgers", 1}, {"ks", 1}, {"ns2d", 10}, {"darcy", 1}}

// ipow is b^e for small non-negative e.
func ipow(b, e int) int {
	r := 1
	for range e {
		r *= b
	}
	return r
}

// conv3Count is a kernel-3 convolution with bias in d dimensions.
func conv3Count(d, cin, cout int) int { return cout*cin*ipow(3, d) + cout }

// fixedReLU runs forward once at the base point recording every ReLU's
// pattern x > 0 in call order, then replaces relu, until the returned
// restore is called, by x * mask with the recorded masks: the same value
// at the base point and the same derivative, but no kink for the finite
// differences to cross (at the rescaled point of the checks about one
// pre-activation in ten lies within a probe's step of 0, which gives
// 10-50% errors with ReLU itself). ReLU's own backward is checked
// against finite differences in internal/cpu (TestReLU).
func fixedReLU(b tensor.Backend, forward func(tp *tensor.Tape)) (restore func()) {
	var masks [][]float32
	orig := relu
	relu = func(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor {
		m := host(b, x)
		for i, v := range m {
			if v > 0 {
				m[i] = 1
			} else {
				m[i] = 0
			}
		}
		masks = append(masks, m)
		return tp.ReLU(x)
	}
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	forward(tp)
	call := 0
	relu = func(tp *tensor.Tape, x *tensor.Tensor) *tensor.Tensor {
		m := masks[call%len(masks)]
		call++
		return tp.Mul(x, tp.FromHost(m, x.Shape...))
	}
	return func() { relu = orig }
}

// twice is grid g refined by 2 on every axis.
func twice(g []int) []int {
	out := make([]int, len(g))
	for i, n := range g {
		out[i] = 2 * n
	}
	return out
}
