package cpu_test

import (
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

func TestTmpFwd3D(t *testing.T) {
	shape := []int{1, 6, 7, 6, 8}
	for _, norm := range []bool{true, false} {
		opt := tensor.GaussOpts{Normalize: norm}
		xs := gradcheck.Random(5, tensor.Numel(shape))
		ls := gaussLogSigma([]float64{0.5, 1.15, 2.5}, 2, 0.03)
		b := cpu.New(2)
		tp := tensor.NewTape(b)
		got := tensor.ToHost(b, tp.GaussianConv(tp.FromHost(xs, shape...), tp.FromHost(ls, 3, 2), opt))
		want := refGaussConv(xs, shape, ls, 3, 2, opt)
		for i := range got {
			if math.Abs(float64(got[i])-want[i]) > 1e-4 {
				t.Fatalf("norm %v y[%d] = %v want %v", norm, i, got[i], want[i])
			}
		}
	}
}
