package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// bandDFTRef resamples one line by its definition, through a float64
// DFT: X = DFT_N(x); keep |k| <= M/2 (M = min(N, Nout)), the mode M/2
// halved on both signs when up-sampling with even M; evaluate the
// trigonometric polynomial at the output points t_j = j N / Nout.
func bandDFTRef(x []float64, nout int) []float64 {
	n := len(x)
	m := min(n, nout)
	y := make([]float64, nout)
	for j := range y {
		t := float64(j) * float64(n) / float64(nout)
		var s float64
		for k := -m / 2; k <= m/2; k++ {
			w := 1.0
			if m%2 == 0 && nout > n && (k == m/2 || k == -m/2) {
				w = 0.5
			}
			var re, im float64
			for q, v := range x {
				a := -2 * math.Pi * float64(k*q) / float64(n)
				re += v * math.Cos(a)
				im += v * math.Sin(a)
			}
			a := 2 * math.Pi * float64(k) * t / float64(n)
			s += w * (re*math.Cos(a) - im*math.Sin(a))
		}
		y[j] = s / float64(n)
	}
	return y
}

func TestBandResample1DMatchesDFT(t *testing.T) {
	be := cpu.New(2)
	tp := tensor.NewTape(be)
	tp.SetGrad(false)
	for _, c := range [][2]int{{8, 16}, {16, 8}, {7, 14}, {12, 6}, {6, 3}, {5, 9}, {2, 1}, {1, 2}, {9, 9}} {
		xd := gradcheck.Random(uint64(c[0]*31+c[1]), c[0])
		got := tensor.ToHost(be, tp.BandResample(tp.FromHost(xd, 1, 1, c[0]), c[1]))
		x64 := make([]float64, len(xd))
		for i, v := range xd {
			x64[i] = float64(v)
		}
		want := bandDFTRef(x64, c[1])
		for j := range want {
			if math.Abs(float64(got[j])-want[j]) > 1e-5 {
				t.Fatalf("%d -> %d: y[%d] = %g, want %g", c[0], c[1], j, got[j], want[j])
			}
		}
	}
}

// TestBandResampleProperties: up-sampling interpolates (y[2j] = x[j]),
// down(up(x)) = x, up(down(x)) = x for a band-limited x, and a cosine
// above the coarse grid's band is removed by down-sampling; in 1D, 2D, 3D.
func TestBandResampleProperties(t *testing.T) {
	be := cpu.New(2)
	tp := tensor.NewTape(be)
	tp.SetGrad(false)
	for _, sp := range [][]int{{16}, {8, 12}, {4, 6, 8}} {
		shape := append([]int{2, 3}, sp...)
		up, down := make([]int, len(sp)), make([]int, len(sp))
		for i, n := range sp {
			up[i], down[i] = 2*n, n/2
		}
		xd := gradcheck.Random(7, tensor.Numel(shape))
		x := tp.FromHost(xd, shape...)
		u := tp.BandResample(x, up...)
		back := tensor.ToHost(be, tp.BandResample(u, sp...))
		for i := range xd {
			if math.Abs(float64(back[i]-xd[i])) > 2e-5 {
				t.Fatalf("%v: down(up(x))[%d] = %g, want %g", sp, i, back[i], xd[i])
			}
		}
		uh := tensor.ToHost(be, u)
		// Interpolation: the even points of every axis are the input.
		us := u.Spatial()
		for p := 0; p < tensor.Numel(sp); p++ {
			j := unflat(p, sp)
			q := 0
			for a := range j {
				q = q*us[a] + 2*j[a]
			}
			for pl := 0; pl < 6; pl++ {
				if got, want := uh[pl*tensor.Numel(us)+q], xd[pl*tensor.Numel(sp)+p]; math.Abs(float64(got-want)) > 2e-5 {
					t.Fatalf("%v: up(x) at 2j = %g, want x[j] = %g", sp, got, want)
				}
			}
		}
		// A band-limited field survives down then up: the down-sampled
		// coarse field, up-sampled, down-sampled again, is unchanged.
		dn := tp.BandResample(x, down...)
		dd := tensor.ToHost(be, dn)
		again := tensor.ToHost(be, tp.BandResample(tp.BandResample(dn, sp...), down...))
		for i := range dd {
			if math.Abs(float64(again[i]-dd[i])) > 2e-5 {
				t.Fatalf("%v: down(up(down x)) != down x at %d: %g vs %g", sp, i, again[i], dd[i])
			}
		}
	}
	// Anti-aliasing: cos(2 pi 5 j / 16) is above the band of an 8-point
	// grid (|k| <= 4), so down-sampling 16 -> 8 removes it entirely; plain
	// decimation would alias it to k = 3.
	hi := make([]float32, 16)
	for j := range hi {
		hi[j] = float32(math.Cos(2 * math.Pi * 5 * float64(j) / 16))
	}
	for j, v := range tensor.ToHost(be, tp.BandResample(tp.FromHost(hi, 1, 1, 16), 8)) {
		if math.Abs(float64(v)) > 1e-6 {
			t.Fatalf("aliased mode survives: y[%d] = %g", j, v)
		}
	}
}

func TestBandResampleGrad(t *testing.T) {
	be := cpu.New(2)
	for _, c := range []struct {
		in, out []int
	}{{[]int{8}, []int{16}}, {[]int{8}, []int{4}}, {[]int{7}, []int{3}}, {[]int{4, 6}, []int{8, 12}}, {[]int{8, 4}, []int{4, 2}},
		{[]int{4, 6}, []int{4, 3}}, {[]int{2, 4, 4}, []int{4, 8, 8}}, {[]int{4, 4, 2}, []int{2, 2, 1}}, {[]int{5}, []int{5}}} {
		shape := append([]int{2, 2}, c.in...)
		t.Run(fmt.Sprint(c.in, "->", c.out), func(t *testing.T) {
			x := in("x", 1, shape...)
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.BandResample(v[0], c.out...)
			}, []gradcheck.Input{x}, gradcheck.Options{})
		})
	}
}

// TestBandResampleBackwardAccumulates: dx starts non-zero and receives
// A^T dy on top (checked against <A x, dy> = <x, A^T dy>).
func TestBandResampleBackwardAccumulates(t *testing.T) {
	be := cpu.New(2)
	xs, ys := []int{2, 3, 6, 8}, []int{2, 3, 12, 4}
	xd, dyd, pre := gradcheck.Random(1, tensor.Numel(xs)), gradcheck.Random(2, tensor.Numel(ys)), gradcheck.Random(3, tensor.Numel(xs))
	x := tensor.NewLeaf(be, "x", xd, xs...)
	y := tensor.NewLeaf(be, "y", make([]float32, tensor.Numel(ys)), ys...)
	dy := tensor.NewLeaf(be, "dy", dyd, ys...)
	dx := tensor.NewLeaf(be, "dx", pre, xs...)
	be.BandResample(y, x)
	be.BandResampleBackward(dx, dy)
	var lhs, rhs float64
	for i, v := range tensor.ToHost(be, y) {
		lhs += float64(v) * float64(dyd[i])
	}
	for i, v := range tensor.ToHost(be, dx) {
		rhs += float64(xd[i]) * (float64(v) - float64(pre[i]))
	}
	if math.Abs(lhs-rhs) > 1e-4*(1+math.Abs(lhs)) {
		t.Fatalf("<A x, dy> = %g but <x, dx - pre> = %g", lhs, rhs)
	}
}

func TestBandResampleThreadDeterminism(t *testing.T) {
	for _, c := range []struct{ in, out []int }{{[]int{256}, []int{512}}, {[]int{32, 48}, []int{16, 24}}, {[]int{8, 10, 12}, []int{16, 20, 24}}} {
		shape := append([]int{3, 5}, c.in...)
		run := func(threads int) [][]float32 {
			b := cpu.New(threads)
			tp := tensor.NewTape(b)
			x := tensor.NewLeaf(b, "x", gradcheck.Random(1, tensor.Numel(shape)), shape...)
			x.SetRequiresGrad(true)
			y := tp.BandResample(tp.GELU(x), c.out...)
			tp.Backward(tp.MSE(y, tp.Scale(y, 0.5)))
			return [][]float32{tensor.ToHost(b, y), tensor.ToHost(b, x.Grad)}
		}
		one, four := run(1), run(4)
		for i := range one {
			sameBits(t, fmt.Sprintf("%v output %d", c.in, i), one[i], four[i])
		}
	}
}
