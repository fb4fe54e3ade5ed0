package model

import (
	"testing"

	"uhno/internal/tensor"
)

// cnoCountFormula is the parameter count written out from CNO's comment.
func cnoCountFormula(s CNOSpec) int {
	d, L := s.Dim, s.Levels
	c := func(l int) int { f := ipow(2, L-l); return (s.Width + f - 1) / f }
	n := conv3Count(d, s.InChannels, c(0))
	for l := 0; l < L; l++ {
		n += conv3Count(d, c(l), c(l+1))
	}
	n += 2 * s.NeckBlocks * conv3Count(d, c(L), c(L))
	n += conv3Count(d, c(L), c(L-1))
	for l := 0; l < L-1; l++ {
		n += conv3Count(d, 2*c(l+1), c(l))
	}
	return n + conv3Count(d, 2*c(0), s.OutChannels)
}

// cnoNames is the parameter layout of a CNO with 2 levels and 2 neck
// blocks.
var cnoNames = []string{"lift.w", "lift.b", "enc.0.w", "enc.0.b", "enc.1.w", "enc.1.b",
	"neck.0.0.w", "neck.0.0.b", "neck.0.1.w", "neck.0.1.b", "neck.1.0.w", "neck.1.0.b", "neck.1.1.w", "neck.1.1.b",
	"dec.1.w", "dec.1.b", "dec.0.w", "dec.0.b", "proj.w", "proj.b"}

// TestCNOActivationIsBandLimited: the anti-aliased ReLU's output is
// band-limited on its grid: up-sampling it and resampling back gives it
// unchanged (a plain ReLU's would not be).
func TestCNOActivationIsBandLimited(t *testing.T) {
	b := newBackend()
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	z := input(tp, 4, 2, 3, []int{16, 8})
	out := cnoAct(tp, z, []int{8, 4})
	again := tp.BandResample(tp.BandResample(out, 32, 16), 8, 4)
	a, g := host(b, out), host(b, again)
	for i := range a {
		if d := a[i] - g[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("activation output is not band-limited: %g vs %g", a[i], g[i])
		}
	}
}
