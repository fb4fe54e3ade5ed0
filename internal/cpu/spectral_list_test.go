package cpu_test

import (
	"fmt"
	"math"
	"testing"
	"uhno/internal/testutil"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// modesCases are SpectralConv calls with chosen last-axis frequency
// lists: [batch, Cin, spatial...], Cout, K0 and the list (nil: LogModes of
// the grid). TestSpectralConvForward covers FirstModes' 0..K-1.
var modesCases = []struct {
	name     string
	shape    []int
	cout, k0 int
	modes    []int
}{
	{"1D/N16_log", []int{2, 3, 16}, 4, 5, nil},
	{"1D/N16_list", []int{2, 2, 16}, 3, 4, []int{0, 3, 5, 7}},
	{"1D/N16_noDC", []int{1, 2, 16}, 2, 4, []int{1, 6}},
	{"1D/N7_odd", []int{2, 2, 7}, 2, 3, []int{0, 2, 3}},
	{"1D/N64_log", []int{2, 3, 64}, 2, 8, nil},
	{"2D/8x12_log", []int{2, 2, 8, 12}, 3, 3, nil},
	{"2D/6x10_list", []int{1, 3, 6, 10}, 2, 4, []int{0, 1, 4}},
	{"3D/4x4x10_log", []int{1, 2, 4, 4, 10}, 2, 2, nil},
	{"3D/4x6x8_list", []int{1, 2, 4, 6, 8}, 2, 3, []int{0, 3}},
}

func TestSpectralConvListForward(t *testing.T) {
	b := cpu.New(2)
	for ci, c := range modesCases {
		t.Run(c.name, func(t *testing.T) {
			d := len(c.shape) - 2
			modes := testutil.ModesOr(c.modes, c.shape, c.k0)
			x := gradcheck.Random(uint64(100+ci), tensor.Numel(c.shape))
			ws := tensor.SpectralWeightShape(d, c.shape[1], c.cout, c.k0)
			w := gradcheck.Random(uint64(200+ci), tensor.Numel(ws))
			tp := tensor.NewTape(b)
			defer tp.Release()
			tp.SetGrad(false)
			xl, wl := tp.FromHost(x, c.shape...), tp.FromHost(w, ws...)
			got := tensor.ToHost(b, tp.SpectralConv(xl, wl, c.k0, modes))
			want := refSpectralConvModes(x, c.shape, w, c.cout, c.k0, modes)
			checkClose(t, got, want)
		})
	}
}

// checkClose compares with a tolerance relative to the largest output.
func checkClose(t *testing.T, got []float32, want []float64) {
	t.Helper()
	var scale float64
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	if scale == 0 {
		t.Fatal("reference output is zero")
	}
	for j := range want {
		if math.Abs(float64(got[j])-want[j]) > 1e-5*scale {
			t.Fatalf("y[%d] = %.7g, want %.7g (max |y| %.3g)", j, got[j], want[j], scale)
		}
	}
}

func TestSpectralConvListGrad(t *testing.T) {
	b := cpu.New(2)
	for ci, c := range modesCases {
		if c.shape[len(c.shape)-1] > 16 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			d := len(c.shape) - 2
			modes := testutil.ModesOr(c.modes, c.shape, c.k0)
			x := in("x", uint64(300+ci), c.shape...)
			w := in("w", uint64(400+ci), tensor.SpectralWeightShape(d, c.shape[1], c.cout, c.k0)...)
			gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.SpectralConv(v[0], v[1], c.k0, modes)
			}, []gradcheck.Input{x, w}, gradcheck.Options{})
		})
	}
}

// TestSpectralConvEmptyList: an empty list keeps nothing.
func TestSpectralConvEmptyList(t *testing.T) {
	b := cpu.New(1)
	tp := tensor.NewTape(b)
	defer tp.Release()
	ws := tensor.SpectralWeightShape(1, 2, 2, 3)
	x := tensor.NewLeaf(b, "x", gradcheck.Random(1, 16), 1, 2, 8)
	w := tensor.NewLeaf(b, "w", gradcheck.Random(2, tensor.Numel(ws)), ws...)
	x.SetRequiresGrad(true)
	y := tp.SpectralConv(x, w, 3, []int{})
	tp.BackwardWith(y, tp.FromHost(gradcheck.Random(3, y.Numel()), y.Shape...))
	for _, v := range append(tensor.ToHost(b, y), tensor.ToHost(b, x.Grad)...) {
		if v != 0 {
			t.Fatalf("got %g, want 0", v)
		}
	}
}

// lowRankCases are LowRankSpectralConv calls: shape, rank, Cout, K0.
var lowRankCases = []struct {
	name        string
	shape       []int
	r, cout, k0 int
}{
	{"1D/N16", []int{2, 3, 16}, 2, 4, 5},
	{"1D/N6_cap", []int{2, 2, 6}, 3, 3, 12},
	{"2D/8x6", []int{2, 3, 8, 6}, 2, 2, 3},
	{"2D/5x7", []int{1, 2, 5, 7}, 4, 3, 2},
	{"3D/4x6x4", []int{1, 2, 4, 6, 4}, 2, 3, 2},
	{"3D/4x4x4_cap", []int{1, 3, 4, 4, 4}, 1, 2, 12},
}

// productWeight is W = U V per corner and mode, in SpectralConv's layout.
func productWeight(u, v []float32, d, cin, r, cout, k0 int) []float32 {
	kvol := 1
	for range d {
		kvol *= k0
	}
	corners := 1 << (d - 1)
	w := make([]float32, corners*cin*cout*kvol*2)
	for c := 0; c < corners; c++ {
		for i := 0; i < cin; i++ {
			for o := 0; o < cout; o++ {
				for m := 0; m < kvol; m++ {
					var s complex128
					for j := 0; j < r; j++ {
						ui := 2 * (((c*cin+i)*r+j)*kvol + m)
						vi := 2 * (((c*r+j)*cout+o)*kvol + m)
						s += complex(float64(u[ui]), float64(u[ui+1])) * complex(float64(v[vi]), float64(v[vi+1]))
					}
					wi := 2 * (((c*cin+i)*cout+o)*kvol + m)
					w[wi], w[wi+1] = float32(real(s)), float32(imag(s))
				}
			}
		}
	}
	return w
}

func TestLowRankSpectralConvForward(t *testing.T) {
	b := cpu.New(2)
	for ci, c := range lowRankCases {
		t.Run(c.name, func(t *testing.T) {
			d, cin := len(c.shape)-2, c.shape[1]
			us, vs := tensor.SpectralWeightShape(d, cin, c.r, c.k0), tensor.SpectralWeightShape(d, c.r, c.cout, c.k0)
			x := gradcheck.Random(uint64(500+ci), tensor.Numel(c.shape))
			u := gradcheck.Random(uint64(600+ci), tensor.Numel(us))
			v := gradcheck.Random(uint64(700+ci), tensor.Numel(vs))
			tp := tensor.NewTape(b)
			defer tp.Release()
			tp.SetGrad(false)
			got := tensor.ToHost(b, tp.LowRankSpectralConv(tp.FromHost(x, c.shape...), tp.FromHost(u, us...), tp.FromHost(v, vs...), c.k0))
			want := refSpectralConv(x, c.shape, productWeight(u, v, d, cin, c.r, c.cout, c.k0), c.cout, c.k0)
			checkClose(t, got, want)
		})
	}
}

func TestLowRankSpectralConvGrad(t *testing.T) {
	b := cpu.New(2)
	for ci, c := range lowRankCases {
		t.Run(c.name, func(t *testing.T) {
			d, cin := len(c.shape)-2, c.shape[1]
			x := in("x", uint64(800+ci), c.shape...)
			u := in("u", uint64(900+ci), tensor.SpectralWeightShape(d, cin, c.r, c.k0)...)
			v := in("v", uint64(1000+ci), tensor.SpectralWeightShape(d, c.r, c.cout, c.k0)...)
			gradcheck.Check(t, b, func(tp *tensor.Tape, in []*tensor.Tensor) *tensor.Tensor {
				return tp.LowRankSpectralConv(in[0], in[1], in[2], c.k0)
			}, []gradcheck.Input{x, u, v}, gradcheck.Options{})
		})
	}
}

// TestLowRankSpectralConvBackwardAccumulates: every subset of gradients,
// pre-filled, must come out as the pre-filled value plus the full pass's
// gradient (within rounding), and nil ones are skipped.
func TestLowRankSpectralConvBackwardAccumulates(t *testing.T) {
	b := cpu.New(2)
	shape, r, cout, k0 := []int{2, 3, 6, 8}, 2, 2, 3
	us, vs := tensor.SpectralWeightShape(2, 3, r, k0), tensor.SpectralWeightShape(2, r, cout, k0)
	x := tensor.NewLeaf(b, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
	u := tensor.NewLeaf(b, "u", gradcheck.Random(2, tensor.Numel(us)), us...)
	v := tensor.NewLeaf(b, "v", gradcheck.Random(3, tensor.Numel(vs)), vs...)
	ys := []int{2, cout, 6, 8}
	dy := tensor.NewLeaf(b, "dy", gradcheck.Random(4, tensor.Numel(ys)), ys...)
	zero := func(shape []int) *tensor.Tensor {
		return tensor.NewLeaf(b, "g", make([]float32, tensor.Numel(shape)), shape...)
	}
	full := [3]*tensor.Tensor{zero(shape), zero(us), zero(vs)}
	b.LowRankSpectralConvBackward(full[0], full[1], full[2], dy, x, u, v, k0)
	shapes := [3][]int{shape, us, vs}
	for mask := 1; mask < 8; mask++ {
		var g [3]*tensor.Tensor
		for k := range g {
			if mask&(1<<k) != 0 {
				g[k] = tensor.NewLeaf(b, "g", gradcheck.Random(uint64(10+k), tensor.Numel(shapes[k])), shapes[k]...)
			}
		}
		b.LowRankSpectralConvBackward(g[0], g[1], g[2], dy, x, u, v, k0)
		for k := range g {
			if g[k] == nil {
				continue
			}
			got, pre, want := tensor.ToHost(b, g[k]), gradcheck.Random(uint64(10+k), tensor.Numel(shapes[k])), tensor.ToHost(b, full[k])
			for i := range got {
				if w := pre[i] + want[i]; math.Abs(float64(got[i]-w)) > 1e-5*(1+math.Abs(float64(w))) {
					t.Fatalf("mask %d gradient %d [%d] = %g, want %g", mask, k, i, got[i], w)
				}
			}
		}
	}
}

// TestSpectralListOpsThreadDeterminism requires bit-identical outputs and
// gradients of SpectralConv on a chosen list and LowRankSpectralConv with
// 1 and 4 threads.
func TestSpectralListOpsThreadDeterminism(t *testing.T) {
	for _, shape := range [][]int{{8, 8, 128}, {4, 8, 32, 32}, {2, 4, 8, 8, 8}} {
		d := len(shape) - 2
		run := func(threads int) [][]float32 {
			b := cpu.New(threads)
			tp := tensor.NewTape(b)
			defer tp.Release()
			k0, r := 6, 3
			ws := tensor.SpectralWeightShape(d, shape[1], shape[1], k0)
			us, vs := tensor.SpectralWeightShape(d, shape[1], r, k0), tensor.SpectralWeightShape(d, r, shape[1], k0)
			x := tensor.NewLeaf(b, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
			w := tensor.NewLeaf(b, "w", gradcheck.Random(2, tensor.Numel(ws)), ws...)
			u := tensor.NewLeaf(b, "u", gradcheck.Random(3, tensor.Numel(us)), us...)
			v := tensor.NewLeaf(b, "v", gradcheck.Random(4, tensor.Numel(vs)), vs...)
			for _, l := range []*tensor.Tensor{x, w, u, v} {
				l.SetRequiresGrad(true)
			}
			y := tp.Add(tp.SpectralConv(x, w, k0, tensor.LogModes(k0, shape[len(shape)-1])), tp.LowRankSpectralConv(x, u, v, k0))
			tp.Backward(tp.MSE(y, tp.GELU(x)))
			return [][]float32{tensor.ToHost(b, y), tensor.ToHost(b, x.Grad), tensor.ToHost(b, w.Grad), tensor.ToHost(b, u.Grad), tensor.ToHost(b, v.Grad)}
		}
		one, four := run(1), run(4)
		for i := range one {
			sameBits(t, fmt.Sprintf("%v output %d", shape, i), one[i], four[i])
		}
	}
}
