package cpu_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// TestWaveletFilterBank checks the db4 filters' defining identities: sum
// h = sqrt 2, sum h^2 = 1, double-shift orthogonality of h with itself and
// with g, sum g = 0, and four vanishing moments of g (sum t^p g[t] = 0 for
// p = 0..3), which is what makes it "db4" in PyWavelets' naming (eight
// taps), not the four-tap D4.
func TestWaveletFilterBank(t *testing.T) {
	h, g := tensor.DB4, tensor.DB4High
	dot := func(a, b [8]float64, shift int) float64 {
		var s float64
		for i := 0; i+shift < 8; i++ {
			s += a[i+shift] * b[i]
		}
		return s
	}
	var sum, sumG float64
	for i := range h {
		sum += h[i]
		sumG += g[i]
	}
	if math.Abs(sum-math.Sqrt2) > 1e-14 {
		t.Errorf("sum h = %.17g, want sqrt 2", sum)
	}
	if math.Abs(sumG) > 1e-14 {
		t.Errorf("sum g = %g, want 0", sumG)
	}
	if s := dot(h, h, 0); math.Abs(s-1) > 1e-14 {
		t.Errorf("sum h^2 = %.17g, want 1", s)
	}
	if s := dot(g, g, 0); math.Abs(s-1) > 1e-14 {
		t.Errorf("sum g^2 = %.17g, want 1", s)
	}
	for m := 1; m < 4; m++ {
		if s := dot(h, h, 2*m); math.Abs(s) > 1e-14 {
			t.Errorf("sum h[t] h[t+%d] = %g, want 0", 2*m, s)
		}
		if s := dot(g, g, 2*m); math.Abs(s) > 1e-14 {
			t.Errorf("sum g[t] g[t+%d] = %g, want 0", 2*m, s)
		}
	}
	for m := -3; m < 4; m++ {
		var s float64
		for i := range 8 {
			if j := i + 2*m; j >= 0 && j < 8 {
				s += h[j] * g[i]
			}
		}
		if math.Abs(s) > 1e-14 {
			t.Errorf("sum h[t+%d] g[t] = %g, want 0", 2*m, s)
		}
	}
	for p := 0; p < 4; p++ {
		var s float64
		for i := range 8 {
			s += math.Pow(float64(i), float64(p)) * g[i]
		}
		if math.Abs(s) > 1e-10 {
			t.Errorf("moment %d of g = %g, want 0 (db4 has 4 vanishing moments)", p, s)
		}
	}
	// The fifth moment does not vanish: exactly four.
	var s4 float64
	for i := range 8 {
		s4 += math.Pow(float64(i), 4) * g[i]
	}
	if math.Abs(s4) < 1e-3 {
		t.Errorf("moment 4 of g = %g vanishes: not db4", s4)
	}
}

// waveletRef is the transform written in float64 from its definition:
// level by level on the shrinking corner, axis by axis, each line by the
// matrix of one analysis (or synthesis, its transpose) step.
func waveletRef(x []float32, shape []int, levels int, inverse bool) []float64 {
	sp := shape[2:]
	d, s := len(sp), tensor.Numel(sp)
	planes := shape[0] * shape[1]
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	// analysis matrix A (L x L): row k < L/2 is h shifted by 2k, row
	// L/2 + k is g shifted by 2k, periodised.
	matrix := func(L int) [][]float64 {
		A := make([][]float64, L)
		for r := range A {
			A[r] = make([]float64, L)
		}
		for k := 0; k < L/2; k++ {
			for tt := 0; tt < 8; tt++ {
				A[k][(2*k+tt)%L] += tensor.DB4[tt]
				A[L/2+k][(2*k+tt)%L] += tensor.DB4High[tt]
			}
		}
		return A
	}
	strides := make([]int, d)
	for a := range d {
		strides[a] = tensor.Numel(sp[a+1:])
	}
	step := func(p []float64, l, a int) {
		r := make([]int, d)
		for b := range d {
			r[b] = sp[b] >> (l - 1)
		}
		L := r[a]
		A := matrix(L)
		others := append([]int(nil), r...)
		others[a] = 1
		for q := 0; q < tensor.Numel(others); q++ {
			idx := unflat(q, others)
			base := 0
			for b := range d {
				base += idx[b] * strides[b]
			}
			line := make([]float64, L)
			for j := range L {
				line[j] = p[base+j*strides[a]]
			}
			for i := range L {
				var v float64
				for j := range L {
					if inverse {
						v += A[j][i] * line[j]
					} else {
						v += A[i][j] * line[j]
					}
				}
				p[base+i*strides[a]] = v
			}
		}
	}
	for pl := 0; pl < planes; pl++ {
		p := out[pl*s:][:s]
		if inverse {
			for l := levels; l >= 1; l-- {
				for a := d - 1; a >= 0; a-- {
					step(p, l, a)
				}
			}
		} else {
			for l := 1; l <= levels; l++ {
				for a := range d {
					step(p, l, a)
				}
			}
		}
	}
	return out
}

// waveletCases: 1D, 2D, 3D with 3 levels, the smallest grids (8 per axis,
// so the last level filters lines of length 2 with the filter wrapped four
// times), unequal axes, and 1 and 2 levels.
var waveletCases = []struct {
	name   string
	shape  []int
	levels int
}{
	{"1D", []int{2, 3, 32}, 3},
	{"1D_N8", []int{1, 2, 8}, 3},
	{"1D_L1", []int{2, 1, 6}, 1},
	{"2D", []int{2, 2, 16, 8}, 3},
	{"2D_L2", []int{1, 3, 12, 4}, 2},
	{"3D", []int{1, 2, 8, 16, 8}, 3},
	{"3D_L1", []int{2, 1, 4, 2, 6}, 1},
}

func dot64(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestWaveletReference compares both directions with the float64 matrix
// reference, checks that IDWT(DWT(x)) = x to float32 precision, that the
// transform keeps the norm, and that <DWT x, y> = <x, IDWT y>.
func TestWaveletReference(t *testing.T) {
	be := cpu.New(2)
	for ci, c := range waveletCases {
		t.Run(c.name, func(t *testing.T) {
			n := tensor.Numel(c.shape)
			xd := gradcheck.Random(uint64(70+ci), n)
			yd := gradcheck.Random(uint64(80+ci), n)
			tp := tensor.NewTape(be)
			tp.SetGrad(false)
			var norm float64
			for _, v := range xd {
				norm += float64(v) * float64(v)
			}
			norm = math.Sqrt(norm)
			for _, inverse := range []bool{false, true} {
				got := tensor.ToHost(be, tp.Wavelet(tp.FromHost(xd, c.shape...), c.levels, inverse))
				want := waveletRef(xd, c.shape, c.levels, inverse)
				for i := range want {
					if math.Abs(float64(got[i])-want[i]) > 2e-6*(1+norm/math.Sqrt(float64(n))) {
						t.Fatalf("inverse=%v: y[%d] = %g, want %g", inverse, i, got[i], want[i])
					}
				}
				// Orthogonality: the norm is kept.
				var gn float64
				for _, v := range got {
					gn += float64(v) * float64(v)
				}
				if math.Abs(math.Sqrt(gn)-norm) > 1e-6*norm {
					t.Errorf("inverse=%v: ||y|| = %.9g, ||x|| = %.9g", inverse, math.Sqrt(gn), norm)
				}
			}
			// Perfect reconstruction, both ways round.
			for _, inverse := range []bool{false, true} {
				back := tensor.ToHost(be, tp.Wavelet(tp.Wavelet(tp.FromHost(xd, c.shape...), c.levels, inverse), c.levels, !inverse))
				for i := range xd {
					if math.Abs(float64(back[i]-xd[i])) > 2e-6*(1+math.Abs(float64(xd[i]))) {
						t.Fatalf("inverse=%v: reconstruction[%d] = %g, want %g", inverse, i, back[i], xd[i])
					}
				}
			}
			// Adjoint: <DWT x, y> = <x, IDWT y>.
			dx := tensor.ToHost(be, tp.Wavelet(tp.FromHost(xd, c.shape...), c.levels, false))
			iy := tensor.ToHost(be, tp.Wavelet(tp.FromHost(yd, c.shape...), c.levels, true))
			if l, r := dot64(dx, yd), dot64(xd, iy); math.Abs(l-r) > 1e-5*float64(n) {
				t.Errorf("<DWT x, y> = %.9g, <x, IDWT y> = %.9g", l, r)
			}
		})
	}
}

// TestWaveletKnownAnswers: a constant field has no detail; its level-J
// approximation is the constant times sqrt(2)^(J d) (each level and axis
// multiplies by sum h = sqrt 2); a single approximation coefficient
// reconstructs to a level-J scaling function, whose samples sum to
// sqrt(2)^(J d) as well (each synthesis step multiplies the sum by sum h).
func TestWaveletKnownAnswers(t *testing.T) {
	be := cpu.New(1)
	tp := tensor.NewTape(be)
	tp.SetGrad(false)
	for _, shape := range [][]int{{1, 1, 16}, {1, 1, 16, 8}, {1, 1, 8, 8, 16}} {
		d := len(shape) - 2
		n := tensor.Numel(shape)
		ones := make([]float32, n)
		for i := range ones {
			ones[i] = 1
		}
		got := tensor.ToHost(be, tp.Wavelet(tp.FromHost(ones, shape...), 3, false))
		want := math.Pow(math.Sqrt2, float64(3*d))
		for p, v := range got {
			idx := unflat(p, shape[2:])
			inCorner := true
			for a, i := range idx {
				if i >= shape[2+a]>>3 {
					inCorner = false
				}
			}
			w := 0.0
			if inCorner {
				w = want
			}
			if math.Abs(float64(v)-w) > 1e-5*want {
				t.Fatalf("%v: coefficient %v = %g, want %g", shape, idx, v, w)
			}
		}
		unit := make([]float32, n)
		unit[0] = 1
		rec := tensor.ToHost(be, tp.Wavelet(tp.FromHost(unit, shape...), 3, true))
		var sum float64
		for _, v := range rec {
			sum += float64(v)
		}
		if w := math.Pow(2, 1.5*float64(d)); math.Abs(sum-w) > 1e-6*w {
			t.Errorf("%v: the level-3 scaling function sums to %g, want %g", shape, sum, w)
		}
	}
}

// TestWaveletGrad checks both directions' gradients against finite
// differences in 1D-3D, alone and in a chain with WaveletMix and GELU.
func TestWaveletGrad(t *testing.T) {
	be := cpu.New(2)
	for _, c := range waveletCases {
		x := in("x", 1, c.shape...)
		for _, inverse := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/inverse=%v", c.name, inverse), func(t *testing.T) {
				gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
					return tp.Wavelet(v[0], c.levels, inverse)
				}, []gradcheck.Input{x}, gradcheck.Options{})
			})
		}
		var corner []int
		for _, s := range c.shape[2:] {
			corner = append(corner, s>>(c.levels-1))
		}
		w := in("w", 2, tensor.WaveletMixShape(c.shape[1], 3, corner)...)
		t.Run(c.name+"/chain", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				k := tp.Wavelet(tp.WaveletMix(tp.Wavelet(v[0], c.levels, false), v[1]), c.levels, true)
				return tp.GELU(k)
			}, []gradcheck.Input{x, w}, gradcheck.Options{})
		})
	}
}

// mixRef is WaveletMix from its definition in float64.
func mixRef(x []float32, xs []int, w []float32, cout int, corner []int) []float64 {
	nb, cin, sp := xs[0], xs[1], xs[2:]
	s := tensor.Numel(sp)
	mq := tensor.Numel(corner)
	y := make([]float64, nb*cout*s)
	for b := 0; b < nb; b++ {
		for o := 0; o < cout; o++ {
			for q := 0; q < mq; q++ {
				idx := unflat(q, corner)
				p := 0
				for a := range sp {
					p = p*sp[a] + idx[a]
				}
				var v float64
				for i := 0; i < cin; i++ {
					v += float64(w[(i*cout+o)*mq+q]) * float64(x[(b*cin+i)*s+p])
				}
				y[(b*cout+o)*s+p] = v
			}
		}
	}
	return y
}

// TestWaveletMix compares the forward with its definition (output planes
// start as garbage and must be overwritten, zeros outside the corner) and
// the backward's accumulation into pre-filled gradients with the adjoint
// definitions, for every combination of requested gradients.
func TestWaveletMix(t *testing.T) {
	be := cpu.New(2)
	for ci, c := range []struct {
		name  string
		shape []int
		cout  int
		m     []int
	}{
		{"1D", []int{2, 3, 16}, 4, []int{4}},
		{"1D_full", []int{2, 2, 4}, 3, []int{4}},
		{"2D", []int{2, 2, 8, 6}, 3, []int{2, 4}},
		{"3D", []int{2, 2, 4, 6, 4}, 2, []int{2, 3, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cin := c.shape[1]
			ys := append([]int{c.shape[0], c.cout}, c.shape[2:]...)
			ws := tensor.WaveletMixShape(cin, c.cout, c.m)
			xd := gradcheck.Random(uint64(90+ci), tensor.Numel(c.shape))
			wd := gradcheck.Random(uint64(100+ci), tensor.Numel(ws))
			dyd := gradcheck.Random(uint64(110+ci), tensor.Numel(ys))
			y := tensor.NewLeaf(be, "y", gradcheck.Random(5, tensor.Numel(ys)), ys...)
			x := tensor.NewLeaf(be, "x", xd, c.shape...)
			w := tensor.NewLeaf(be, "w", wd, ws...)
			be.WaveletMix(y, x, w)
			got := tensor.ToHost(be, y)
			want := mixRef(xd, c.shape, wd, c.cout, c.m)
			for i := range want {
				if math.Abs(float64(got[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
					t.Fatalf("y[%d] = %g, want %g", i, got[i], want[i])
				}
			}
			// Adjoints: <mix(x), dy> = <x, dx> and = <w, dw>.
			var wantDX, wantDW []float64
			{
				// dx[b,i,p] = sum_o w[i,o,p] dy[b,o,p]: mixRef with the
				// transposed weight.
				wt := make([]float32, len(wd))
				mq := len(wd) / (cin * c.cout)
				for i := 0; i < cin; i++ {
					for o := 0; o < c.cout; o++ {
						copy(wt[(o*cin+i)*mq:][:mq], wd[(i*c.cout+o)*mq:][:mq])
					}
				}
				wantDX = mixRef(dyd, ys, wt, cin, c.m)
				wantDW = make([]float64, len(wd))
				for k := range wd {
					unit := make([]float32, len(wd))
					unit[k] = 1
					yk := mixRef(xd, c.shape, unit, c.cout, c.m)
					for e := range yk {
						wantDW[k] += yk[e] * float64(dyd[e])
					}
				}
			}
			for mask := 1; mask < 4; mask++ {
				leaf := func(seed uint64, on bool, shape ...int) *tensor.Tensor {
					if !on {
						return nil
					}
					return tensor.NewLeaf(be, "g", gradcheck.Random(seed, tensor.Numel(shape)), shape...)
				}
				dx, dw := leaf(1, mask&1 != 0, c.shape...), leaf(2, mask&2 != 0, ws...)
				be.WaveletMixBackward(dx, dw, tensor.NewLeaf(be, "dy", dyd, ys...), x, w)
				check := func(name string, g *tensor.Tensor, seed uint64, want []float64) {
					if g == nil {
						return
					}
					gv, pre := tensor.ToHost(be, g), gradcheck.Random(seed, len(want))
					for i := range want {
						if v := float64(pre[i]) + want[i]; math.Abs(float64(gv[i])-v) > 1e-5*(1+math.Abs(v)) {
							t.Fatalf("mask %d: %s[%d] = %g, want %g", mask, name, i, gv[i], v)
						}
					}
				}
				check("dx", dx, 1, wantDX)
				check("dw", dw, 2, wantDW)
			}
		})
	}
}

// TestWaveletBackwardAccumulates: WaveletBackward adds the other direction
// into a pre-filled dx and skips a nil one.
func TestWaveletBackwardAccumulates(t *testing.T) {
	be := cpu.New(2)
	shape := []int{2, 2, 16, 8}
	dyd := gradcheck.Random(3, tensor.Numel(shape))
	pre := gradcheck.Random(4, tensor.Numel(shape))
	for _, inverse := range []bool{false, true} {
		dx := tensor.NewLeaf(be, "dx", pre, shape...)
		be.WaveletBackward(dx, tensor.NewLeaf(be, "dy", dyd, shape...), 3, inverse)
		be.WaveletBackward(nil, tensor.NewLeaf(be, "dy", dyd, shape...), 3, inverse)
		want := waveletRef(dyd, shape, 3, !inverse)
		got := tensor.ToHost(be, dx)
		for i := range want {
			if w := float64(pre[i]) + want[i]; math.Abs(float64(got[i])-w) > 1e-5*(1+math.Abs(w)) {
				t.Fatalf("inverse=%v: dx[%d] = %g, want %g", inverse, i, got[i], w)
			}
		}
	}
}

// TestWaveletRejectsGrids: an axis that is not a multiple of 2^levels is a
// misuse and panics with a message naming the grid.
func TestWaveletRejectsGrids(t *testing.T) {
	be := cpu.New(1)
	tp := tensor.NewTape(be)
	for _, shape := range [][]int{{1, 1, 12}, {1, 1, 16, 4}, {1, 1, 8, 8, 20}} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), "multiple of 8") {
					t.Errorf("%v: recovered %v, want a panic about multiples of 8", shape, r)
				}
			}()
			tp.Wavelet(tp.FromHost(make([]float32, tensor.Numel(shape)), shape...), 3, false)
		}()
	}
	if err := tensor.CheckWaveletGrid([]int{64, 64}, 3); err != nil {
		t.Error(err)
	}
}

// TestWaveletThreadDeterminism requires bit-identical outputs and
// gradients with 1 and 4 threads on shapes split into many chunks.
func TestWaveletThreadDeterminism(t *testing.T) {
	for _, shape := range [][]int{{4, 8, 1024}, {3, 6, 32, 48}, {2, 4, 16, 8, 16}} {
		run := func(threads int) [][]float32 {
			b := cpu.New(threads)
			tp := tensor.NewTape(b)
			d, ch := len(shape)-2, shape[1]
			x := tensor.NewLeaf(b, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
			ws := tensor.WaveletMixShape(ch, ch, WaveletCorner(d, 4))
			w := tensor.NewLeaf(b, "w", gradcheck.Random(2, tensor.Numel(ws)), ws...)
			x.SetRequiresGrad(true)
			w.SetRequiresGrad(true)
			c := tp.Wavelet(x, 3, false)
			y := tp.Wavelet(tp.WaveletMix(c, w), 3, true)
			tp.Backward(tp.MSE(y, tp.GELU(x)))
			return [][]float32{tensor.ToHost(b, c), tensor.ToHost(b, y), tensor.ToHost(b, x.Grad), tensor.ToHost(b, w.Grad)}
		}
		one, four := run(1), run(4)
		for i := range one {
			sameBits(t, fmt.Sprintf("%v output %d", shape, i), one[i], four[i])
		}
	}
}

// WaveletCorner is [m (d times)].
func WaveletCorner(d, m int) []int {
	s := make([]int, d)
	for i := range s {
		s[i] = m
	}
	return s
}
