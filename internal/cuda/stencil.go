//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"

	"uhno/internal/tensor"
)

// stencilTables is the StencilMessage state in b.state["stencil"]: the
// device table of each offset list seen.
type stencilTables struct {
	tabs map[string]*Buf
}

// stencilTable returns the device table of the offsets padded to three
// axes, off[3s + a] as int32 carried bit for bit in float32 slots. It is
// uploaded on the first call with that list (and dimension) and kept
// until Close, so a captured step uploads nothing.
func (b *Backend) stencilTable(offsets []int, d int) *Buf {
	st, _ := b.state["stencil"].(*stencilTables)
	if st == nil {
		st = &stencilTables{tabs: map[string]*Buf{}}
		b.state["stencil"] = st
	}
	key := fmt.Sprint(d, offsets)
	if t, ok := st.tabs[key]; ok {
		return t
	}
	s := len(offsets) / d
	tab := make([]float32, 3*s)
	for i := 0; i < s; i++ {
		for a := 0; a < d; a++ {
			tab[3*i+3-d+a] = math.Float32frombits(uint32(int32(offsets[i*d+a])))
		}
	}
	t := b.Alloc(len(tab)).(*Buf)
	b.Upload(t, tab)
	st.tabs[key] = t
	return t
}

// StencilMessage implements tensor.Backend: per sample one tiled product
// of the stacked kernels with the gathered neighbours, each point's column
// then scaled by 1/|N(p)| (kernels/stencil.cu sm_forward, StencilTiles).
func (b *Backend) StencilMessage(y, x, k *tensor.Tensor, offsets []int, periodic bool) {
	if y.Numel() == 0 {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	off := b.stencilTable(offsets, d)
	b.launch("sm_forward", StencilTiles(y.Channels(), x.SpatialSize(), x.Batch()), buf(y), buf(x), buf(k), off, x.Batch(), x.Channels(), y.Channels(),
		len(offsets)/d, boolInt(periodic), n0, n1, n2)
}

// StencilMessageBackward implements tensor.Backend: dx += the gather of
// the edges that read each input point, per sample one tiled product of
// the stacked transposed kernels with the scaled dy gathered at the
// points that read it (sm_backward_dx, StencilTiles); dk += its sums over the batch and the grid, one tiled product
// dk (cout x S cin) = (dy/|N|) X_shifted^T over the folded K = B N
// (sm_backward_dk), split into shape-determined K chunks (StencilDk) whose
// partials go to the "sm_dk_splitk" scratch and are added in chunk order
// by sm_dk_reduce (deterministic, no atomics); unsplit, the product adds
// into dk itself. A nil gradient is skipped.
func (b *Backend) StencilMessageBackward(dx, dk, dy, x, k *tensor.Tensor, offsets []int, periodic bool) {
	if dy.Numel() == 0 || (dx == nil && dk == nil) {
		return
	}
	d, n0, n1, n2 := convArgs(x)
	off := b.stencilTable(offsets, d)
	s, cin, cout := len(offsets)/d, x.Channels(), dy.Channels()
	if dx != nil {
		b.launch("sm_backward_dx", StencilTiles(cin, x.SpatialSize(), x.Batch()), buf(dx), buf(dy), buf(k), off, x.Batch(), cin, cout, s,
			boolInt(periodic), n0, n1, n2)
	}
	if dk != nil {
		n := s * cout * cin
		g, splits, chunk := StencilDk(s, cout, cin, x.Batch()*x.SpatialSize())
		out, acc := buf(dk), 1
		if splits > 1 {
			out, acc = b.scratchBuf("sm_dk_splitk", splits*n), 0
		}
		b.launch("sm_backward_dk", g, out, buf(dy), buf(x), off, x.Batch(), cin, cout, s, boolInt(periodic), n0, n1, n2,
			chunk, splits, acc)
		if splits > 1 {
			b.launch("sm_dk_reduce", Elementwise(n), buf(dk), out, splits, n)
		}
	}
}
