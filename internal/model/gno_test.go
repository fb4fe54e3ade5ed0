package model

import (
	"testing"

	"uhno/internal/tensor"
)

// gnoCountFormula is GNO's parameter count written out by hand (GNO's doc
// comment), with W the width, H the kernel MLP's hidden width, P the
// projection width:
//
//	lift            In W + W
//	per round       d H + H + H W^2 + W^2 (kernel MLP) + W W + W (1x1)
//	projection      W P + P + P Out + Out
func gnoCountFormula(s GNOSpec) int {
	w, h := s.Width, s.KernelHidden
	round := s.Dim*h + h + h*w*w + w*w + w*w + w
	return s.InChannels*w + w + s.Rounds*round + w*s.ProjHidden + s.ProjHidden + s.ProjHidden*s.OutChannels + s.OutChannels
}

// TestGNOPeriodicMatters: a Dirichlet GNO differs from the periodic one
// with the same parameters at the boundary only.
func TestGNOPeriodicMatters(t *testing.T) {
	b := newBackend()
	s := GNOSpec{Dim: 1, InChannels: 1, OutChannels: 1, Width: 3, KernelHidden: 4, Rounds: 1, ProjHidden: 4, Periodic: true}
	mp, _ := NewGNO(b, s, 2)
	s.Periodic = false
	md, _ := NewGNO(b, s, 2)
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	x := input(tp, 1, 1, 1, []int{8})
	yp, _ := mp.Forward(tp, x)
	yd, _ := md.Forward(tp, x)
	p, d := host(b, yp), host(b, yd)
	for i := range p {
		if same := p[i] == d[i]; same != (i > 0 && i < 7) {
			t.Errorf("point %d: periodic %g, Dirichlet %g", i, p[i], d[i])
		}
	}
}
