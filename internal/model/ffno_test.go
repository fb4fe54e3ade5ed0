package model

import (
	"slices"
	"strconv"
	"testing"

	"uhno/internal/tensor"
)

func ffnoCountFormula(s FFNOSpec) int {
	w, d, r := s.Width, s.Dim, s.Rank
	kvol := 1
	for range d {
		kvol *= s.K0
	}
	block := (1<<(d-1))*kvol*2*(w*r+r*w) + w*w + w
	return s.InChannels*w + w + s.Blocks*block + w*s.ProjHidden + s.ProjHidden + s.ProjHidden*s.OutChannels + s.OutChannels
}

// TestFFNOIsFNOAtIdentityU: with rank = width and every U_k the identity,
// W_k = V_k, so F-FNO is FNO with spectral weights v (other parameters
// shared): the low-rank product is taken per mode and corner, in
// SpectralConv's layout.
func TestFFNOIsFNOAtIdentityU(t *testing.T) {
	for dim := 1; dim <= 2; dim++ {
		b := newBackend()
		w, k0 := 3, 3
		s := FFNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: w, K0: k0, Rank: w, Blocks: 2, ProjHidden: 4}
		m, err := NewFFNO(b, s, 3)
		if err != nil {
			t.Fatal(err)
		}
		f, err := NewFNO(b, FNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: w, K0: k0, Blocks: 2, ProjHidden: 4}, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Params().List() {
			src := p.Name
			if slices.Contains([]string{"block.0.spectral.w", "block.1.spectral.w"}, src) {
				src = src[:len(src)-1] + "v"
			}
			b.Upload(p.Data, host(b, m.Params().Lookup(src)))
		}
		for i := range s.Blocks {
			u := m.Params().Lookup("block." + strconv.Itoa(i) + ".spectral.u")
			ws := u.Shape
			kvol := tensor.Numel(ws[3 : len(ws)-1])
			id := make([]float32, u.Numel())
			for c := range ws[0] {
				for j := range w {
					for k := range kvol {
						id[2*(((c*w+j)*w+j)*kvol+k)] = 1
					}
				}
			}
			b.Upload(u.Data, id)
		}
		tp := tensor.NewTape(b)
		tp.SetGrad(false)
		x := input(tp, 5, 2, 2, []int{16, 12}[:dim])
		y1, _ := m.Forward(tp, x)
		y2, _ := f.Forward(tp, x)
		if !sameBits(host(b, y1), host(b, y2)) {
			t.Errorf("%dD: F-FNO with identity U differs from FNO with W = V", dim)
		}
	}
}
