package model

import (
	"fmt"
	"slices"
	"testing"

	"uhno/internal/tensor"
)

// additiveCountFormula is the flat additive hybrid's parameter count
// written out by hand from its architecture (Additive's doc comment), with
// W the width, P the projection width, d the dimension:
//
//	lift                In W + W
//	per Fourier block   2^(d-1) W W K0^d 2 (spectral) + W W + W (1x1)
//	per local block     W 3^d + W (depthwise with bias) + W W + W (1x1)
//	projection          W P + P + P Out + Out
func additiveCountFormula(s AdditiveSpec) int {
	w, d := s.Width, s.Dim
	pow := func(b, e int) int {
		n := 1
		for range e {
			n *= b
		}
		return n
	}
	fourier := pow(2, d-1)*w*w*pow(s.K0, d)*2 + w*w + w
	local := w*pow(3, d) + w + w*w + w
	return s.InChannels*w + w + s.Blocks*(fourier+local) + w*s.ProjHidden + s.ProjHidden + s.ProjHidden*s.OutChannels + s.OutChannels
}

// TestAdditiveTrace checks the weight accessors and the trace of the
// matched pairs, in 1D, 2D and 3D: ForwardTrace gives Forward's output
// and each block's inputs, and both stacks start from the lifted field.
func TestAdditiveTrace(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			b := newBackend()
			s := AdditiveSpec{Dim: dim, InChannels: 2, OutChannels: 3, Width: 4, K0: 3, Blocks: 3, ProjHidden: 5}
			m, err := NewAdditive(b, s, 7)
			if err != nil {
				t.Fatal(err)
			}
			for l, p := range m.SpectralWeights() {
				if p != m.Params().Lookup(fmt.Sprintf("fourier.%d.spectral.w", l)) {
					t.Errorf("SpectralWeights()[%d] is %s", l, p.Name)
				}
			}
			for l, p := range m.DepthwiseWeights() {
				if p != m.Params().Lookup(fmt.Sprintf("local.%d.depthwise.w", l)) {
					t.Errorf("DepthwiseWeights()[%d] is %s", l, p.Name)
				}
			}
			tp := tensor.NewTape(b)
			tp.SetGrad(false)
			grid := tinyGrid(dim)
			x := input(tp, 3, 2, 2, grid)
			y, tr := m.ForwardTrace(tp, x)
			if len(tr.InF) != s.Blocks || len(tr.InG) != s.Blocks {
				t.Fatalf("trace has %d and %d inputs, want %d", len(tr.InF), len(tr.InG), s.Blocks)
			}
			for l := range s.Blocks {
				for _, in := range []*tensor.Tensor{tr.InF[l], tr.InG[l]} {
					if !slices.Equal(in.Shape, append([]int{2, 4}, grid...)) {
						t.Fatalf("layer %d input %v", l, in.Shape)
					}
				}
			}
			if !sameBits(host(b, tr.InF[0]), host(b, tr.InG[0])) {
				t.Error("the two stacks start from different fields")
			}
			if y2, _ := m.Forward(tp, x); !sameBits(host(b, y), host(b, y2)) {
				t.Error("Forward and ForwardTrace differ")
			}
		})
	}
}
