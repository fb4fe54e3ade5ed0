package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// stencilRef is StencilMessage from its definition in float64:
// y[b,o,p] = (1/|N(p)|) sum_{s in N(p)} sum_i k[s,o,i] x[b,i,p+s].
func stencilRef(x []float32, xs []int, k []float32, cout int, offsets [][]int, periodic bool) []float64 {
	nb, cin, sp := xs[0], xs[1], xs[2:]
	d, n := len(sp), tensor.Numel(sp)
	y := make([]float64, nb*cout*n)
	for bi := 0; bi < nb; bi++ {
		for p := 0; p < n; p++ {
			j := unflat(p, sp)
			sums := make([]float64, cout)
			cnt := 0
			for s, off := range offsets {
				q, ok := 0, true
				for a := 0; a < d; a++ {
					c := j[a] + off[a]
					if periodic {
						c = (c%sp[a] + sp[a]) % sp[a]
					} else if c < 0 || c >= sp[a] {
						ok = false
					}
					q = q*sp[a] + c
				}
				if !ok {
					continue
				}
				cnt++
				for o := 0; o < cout; o++ {
					for i := 0; i < cin; i++ {
						sums[o] += float64(k[(s*cout+o)*cin+i]) * float64(x[(bi*cin+i)*n+q])
					}
				}
			}
			for o := 0; o < cout; o++ {
				if cnt > 0 {
					y[(bi*cout+o)*n+p] = sums[o] / float64(cnt)
				}
			}
		}
	}
	return y
}

// stencilCases: the Moore stencils of 1D-3D, odd and even axes, N = 1 and
// 2 (wrapped offsets read the same point again), longer offsets, Cin !=
// Cout, and a 2D case large enough for several tiles.
var stencilCases = []struct {
	name    string
	shape   []int
	cout    int
	offsets [][]int
}{
	{"1D", []int{2, 3, 9}, 4, tensor.MooreStencil(1)},
	{"1D_long", []int{2, 2, 7}, 3, [][]int{{-3}, {2}, {0}, {6}}},
	{"1D_N1", []int{1, 2, 1}, 3, tensor.MooreStencil(1)},
	{"1D_N2", []int{2, 2, 2}, 1, tensor.MooreStencil(1)},
	{"2D", []int{2, 3, 6, 5}, 2, tensor.MooreStencil(2)},
	{"2D_cross", []int{1, 2, 5, 4}, 3, [][]int{{-2, 0}, {1, 0}, {0, -1}, {0, 3}, {1, 1}}},
	{"2D_N2", []int{1, 2, 2, 3}, 3, tensor.MooreStencil(2)},
	{"2D_tiles", []int{1, 5, 40, 36}, 3, tensor.MooreStencil(2)},
	{"3D", []int{2, 2, 4, 3, 5}, 3, tensor.MooreStencil(3)},
	{"3D_faces", []int{1, 3, 3, 4, 2}, 2, [][]int{{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}}},
}

func stencilKShape(s, cout, cin int) []int { return []int{s, cout * cin, 1} }

func TestMooreStencil(t *testing.T) {
	if got := fmt.Sprint(tensor.MooreStencil(1)); got != "[[-1] [1]]" {
		t.Fatalf("1D: %s", got)
	}
	if got := fmt.Sprint(tensor.MooreStencil(2)); got != "[[-1 -1] [-1 0] [-1 1] [0 -1] [0 1] [1 -1] [1 0] [1 1]]" {
		t.Fatalf("2D: %s", got)
	}
	if n := len(tensor.MooreStencil(3)); n != 26 {
		t.Fatalf("3D: %d offsets", n)
	}
}

func TestStencilMessageForward(t *testing.T) {
	be := cpu.New(2)
	for ci, c := range stencilCases {
		for _, periodic := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/periodic=%v", c.name, periodic), func(t *testing.T) {
				cin := c.shape[1]
				xd := gradcheck.Random(uint64(10+ci), tensor.Numel(c.shape))
				ks := stencilKShape(len(c.offsets), c.cout, cin)
				kd := gradcheck.Random(uint64(20+ci), tensor.Numel(ks))
				tp := tensor.NewTape(be)
				tp.SetGrad(false)
				got := tensor.ToHost(be, tp.StencilMessage(tp.FromHost(xd, c.shape...), tp.FromHost(kd, ks...), c.cout, c.offsets, periodic))
				want := stencilRef(xd, c.shape, kd, c.cout, c.offsets, periodic)
				tol := 1e-5 * float64(cin*len(c.offsets)+1)
				for i := range want {
					if math.Abs(float64(got[i])-want[i]) > tol {
						t.Fatalf("y[%d] = %g, want %g", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// TestStencilMessageKnownAnswers: one offset with an identity kernel
// shifts the field (the offset +1 reads x[j+1]); on a non-periodic grid
// the end point has no neighbour and gets 0, and with offsets {-1, +1}
// the ends average the one neighbour they have.
func TestStencilMessageKnownAnswers(t *testing.T) {
	be := cpu.New(1)
	tp := tensor.NewTape(be)
	tp.SetGrad(false)
	x := []float32{1, 2, 3, 4, 5}
	xt := tp.FromHost(x, 1, 1, 5)
	for _, c := range []struct {
		offsets  [][]int
		k        []float32
		periodic bool
		want     []float32
	}{
		{[][]int{{1}}, []float32{1}, true, []float32{2, 3, 4, 5, 1}},
		{[][]int{{-2}}, []float32{1}, true, []float32{4, 5, 1, 2, 3}},
		{[][]int{{1}}, []float32{1}, false, []float32{2, 3, 4, 5, 0}},
		{[][]int{{-1}, {1}}, []float32{1, 1}, false, []float32{2, 2, 3, 4, 4}},
		{[][]int{{-1}, {1}}, []float32{2, 0}, true, []float32{5, 1, 2, 3, 4}},
	} {
		got := tensor.ToHost(be, tp.StencilMessage(xt, tp.FromHost(c.k, len(c.offsets), 1, 1), 1, c.offsets, c.periodic))
		if !equalBits(got, c.want) {
			t.Fatalf("offsets %v k %v periodic %v: got %v, want %v", c.offsets, c.k, c.periodic, got, c.want)
		}
	}
}

// TestStencilMessageIsConv3: on a periodic grid the Moore stencil is a
// Conv3 whose centre tap is 0 and whose other taps are k[s]/S.
func TestStencilMessageIsConv3(t *testing.T) {
	be := cpu.New(2)
	for _, shape := range [][]int{{2, 3, 11}, {1, 2, 5, 6}, {1, 2, 3, 4, 3}} {
		d, cin, cout := len(shape)-2, shape[1], 4
		off := tensor.MooreStencil(d)
		kd := gradcheck.Random(5, len(off)*cout*cin)
		ws := tensor.Conv3WeightShape(d, cin, cout)
		w := make([]float32, tensor.Numel(ws))
		taps := tensor.Numel(ws) / (cin * cout)
		for s, o := range off {
			t0 := 0
			for _, v := range o {
				t0 = t0*3 + v + 1
			}
			for oc := 0; oc < cout; oc++ {
				for i := 0; i < cin; i++ {
					w[(oc*cin+i)*taps+t0] = kd[(s*cout+oc)*cin+i] / float32(len(off))
				}
			}
		}
		xd := gradcheck.Random(6, tensor.Numel(shape))
		tp := tensor.NewTape(be)
		tp.SetGrad(false)
		x := tp.FromHost(xd, shape...)
		got := tensor.ToHost(be, tp.StencilMessage(x, tp.FromHost(kd, len(off), cout, cin), cout, off, true))
		want := tensor.ToHost(be, tp.Conv3(x, tp.FromHost(w, ws...), nil))
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-5 {
				t.Fatalf("%v: y[%d] = %g, Conv3 %g", shape, i, got[i], want[i])
			}
		}
	}
}

func TestStencilMessageGrad(t *testing.T) {
	be := cpu.New(2)
	for _, c := range stencilCases {
		if c.name == "2D_tiles" {
			continue
		}
		cin := c.shape[1]
		x := in("x", 1, c.shape...)
		k := in("k", 2, stencilKShape(len(c.offsets), c.cout, cin)...)
		for _, periodic := range []bool{true, false} {
			if c.name == "1D_N1" && !periodic {
				continue // no neighbour: y = 0 (TestStencilMessageForward)
			}
			t.Run(fmt.Sprintf("%s/periodic=%v", c.name, periodic), func(t *testing.T) {
				gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
					return tp.StencilMessage(v[0], v[1], c.cout, c.offsets, periodic)
				}, []gradcheck.Input{x, k}, gradcheck.Options{})
			})
		}
		// A chain through a second message passing back to Cin channels,
		// with the kernel produced by a small MLP as GNO does.
		e := gradcheck.Input{Name: "e", Shape: []int{len(c.offsets), len(c.offsets[0]), 1}, NoGrad: true}
		for _, o := range c.offsets {
			for _, v := range o {
				e.Data = append(e.Data, float32(v))
			}
		}
		w1 := in("w1", 3, 5, len(c.offsets[0]))
		w2 := in("w2", 4, cin*c.cout, 5)
		if c.name == "1D_N1" {
			continue
		}
		t.Run(c.name+"/chain", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				k2 := tp.Pointwise(tp.GELU(tp.Pointwise(v[2], v[3], nil)), v[4], nil)
				h := tp.GELU(tp.StencilMessage(v[0], v[1], c.cout, c.offsets, true))
				return tp.StencilMessage(h, k2, cin, c.offsets, false)
			}, []gradcheck.Input{x, k, e, w1, w2}, gradcheck.Options{})
		})
	}
}

// TestStencilMessageBackwardAccumulates: the backward adds into
// pre-filled gradients, for every subset of (dx, dk).
func TestStencilMessageBackwardAccumulates(t *testing.T) {
	be := cpu.New(2)
	shape, cout := []int{2, 3, 5, 4}, 2
	off := tensor.MooreStencil(2)
	ks := stencilKShape(len(off), cout, shape[1])
	field := func(seed uint64, s ...int) *tensor.Tensor {
		t := tensor.NewTensor(be.Alloc(tensor.Numel(s)), s...)
		be.Upload(t.Data, gradcheck.Random(seed, tensor.Numel(s)))
		return t
	}
	x, k, dy := field(1, shape...), field(2, ks...), field(3, shape[0], cout, 5, 4)
	zero := func(s ...int) *tensor.Tensor { return tensor.NewTensor(be.Alloc(tensor.Numel(s)), s...) }
	dx0, dk0 := zero(shape...), zero(ks...)
	be.StencilMessageBackward(dx0, dk0, dy, x, k, []int{-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1}, false)
	for _, sub := range [][2]bool{{true, true}, {true, false}, {false, true}} {
		var dx, dk *tensor.Tensor
		if sub[0] {
			dx = field(7, shape...)
		}
		if sub[1] {
			dk = field(8, ks...)
		}
		be.StencilMessageBackward(dx, dk, dy, x, k, []int{-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1}, false)
		for _, c := range []struct {
			g, g0 *tensor.Tensor
			seed  uint64
		}{{dx, dx0, 7}, {dk, dk0, 8}} {
			if c.g == nil {
				continue
			}
			got, base, pre := tensor.ToHost(be, c.g), tensor.ToHost(be, c.g0), gradcheck.Random(c.seed, c.g.Numel())
			for i := range got {
				if math.Abs(float64(got[i]-(pre[i]+base[i]))) > 1e-5 {
					t.Fatalf("subset %v seed %d [%d]: %g, want %g + %g", sub, c.seed, i, got[i], pre[i], base[i])
				}
			}
		}
	}
}

// TestStencilMessageThreadDeterminism requires bit-identical outputs and
// gradients with 1 and 4 threads on shapes split into many chunks.
func TestStencilMessageThreadDeterminism(t *testing.T) {
	for _, shape := range [][]int{{4, 6, 3000}, {3, 5, 40, 48}, {2, 4, 12, 10, 14}} {
		for _, periodic := range []bool{true, false} {
			run := func(threads int) [][]float32 {
				b := cpu.New(threads)
				tp := tensor.NewTape(b)
				d, cin := len(shape)-2, shape[1]
				off := tensor.MooreStencil(d)
				ks := stencilKShape(len(off), cin, cin)
				x := tensor.NewLeaf(b, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
				k := tensor.NewLeaf(b, "k", gradcheck.Random(2, tensor.Numel(ks)), ks...)
				x.SetRequiresGrad(true)
				k.SetRequiresGrad(true)
				y := tp.GELU(tp.StencilMessage(x, k, cin, off, periodic))
				tp.Backward(tp.MSE(y, tp.GELU(x)))
				return [][]float32{tensor.ToHost(b, y), tensor.ToHost(b, x.Grad), tensor.ToHost(b, k.Grad)}
			}
			one, four := run(1), run(4)
			for i := range one {
				sameBits(t, fmt.Sprintf("%v periodic=%v output %d", shape, periodic, i), one[i], four[i])
			}
		}
	}
}
