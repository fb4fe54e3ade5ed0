package cpu_test

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

func TestTopKMask(t *testing.T) {
	b := cpu.New(2)
	tp := tensor.NewTape(b)
	// Two samples of 6 scores; sample 1 has a tie at 0.5 (indices 1 and 4).
	s := tp.FromHost([]float32{
		0.1, 0.9, -2, 0.3, 0.2, 5,
		1, 0.5, -1, 0, 0.5, -3,
	}, 2, 1, 6)
	cases := []struct {
		k    []int
		want []float32
	}{
		{[]int{0, 0}, []float32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{[]int{2, 2}, []float32{0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0}}, // tie: lower index wins
		{[]int{3, 3}, []float32{0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0}},
		{[]int{6, 1}, []float32{1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		got := tensor.ToHost(b, tp.TopKMask(s, c.k))
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("k=%v: mask %v, want %v", c.k, got, c.want)
			}
		}
	}
}

// TestSPARKeep checks Eq. spar-rho against a direct float64 evaluation and
// that the mask keeps exactly k = ceil(rho N) positions, the largest ones.
func TestSPARKeep(t *testing.T) {
	b := cpu.New(2)
	for _, shape := range [][]int{{3, 1, 50}, {2, 1, 8, 8}, {2, 1, 4, 4, 4}} {
		tp := tensor.NewTape(b)
		n := tensor.Numel(shape[2:])
		vals := gradcheck.Random(11, tensor.Numel(shape))
		// Give the samples different contrasts: a constant-ish sample, a
		// spiky one, a plain one.
		for i := 0; i < n; i++ {
			vals[i] = 2 + 0.01*vals[i]
			if i%7 == 0 {
				vals[n+i] *= 10
			}
		}
		s := tp.FromHost(vals, shape...)
		hard, stats := tp.SPARKeep(s, tensor.DefaultSPAR)
		H, ST := tensor.ToHost(b, hard), tensor.ToHost(b, stats)
		p := tensor.DefaultSPAR
		for bi := 0; bi < shape[0]; bi++ {
			v := vals[bi*n : (bi+1)*n]
			var mean, mabs float64
			for _, x := range v {
				mean += float64(x)
				mabs += math.Abs(float64(x))
			}
			mean /= float64(n)
			mabs /= float64(n)
			var q float64
			for _, x := range v {
				q += (float64(x) - mean) * (float64(x) - mean)
			}
			c := math.Sqrt(q/float64(n-1)) / (mabs + 1e-6)
			rho := 0.30 * (1 + 0.25*math.Tanh(c-1))
			rho = math.Min(math.Max(rho, p.RhoMin), p.RhoMax)
			k := cpu.CeilKeep(rho, n)
			if math.Abs(float64(ST[bi*3])-c) > 1e-5*math.Max(1, c) || math.Abs(float64(ST[bi*3+1])-rho) > 1e-6 || int(ST[bi*3+2]) != k {
				t.Fatalf("%v sample %d: stats %v, want c=%g rho=%g k=%d", shape, bi, ST[bi*3:bi*3+3], c, rho, k)
			}
			kept, minKept, maxDropped := 0, math.Inf(1), math.Inf(-1)
			for i, h := range H[bi*n : (bi+1)*n] {
				if h == 1 {
					kept++
					minKept = math.Min(minKept, float64(v[i]))
				} else {
					maxDropped = math.Max(maxDropped, float64(v[i]))
				}
			}
			if kept != k || (kept < n && minKept < maxDropped) {
				t.Fatalf("%v sample %d: kept %d (min kept %g, max dropped %g), want the top %d", shape, bi, kept, minKept, maxDropped, k)
			}
		}
		tp.Release()
	}
}

// TestSPARKeepBiasedStd: with UnbiasedStd false the contrast uses the N
// denominator. Scores +-1 alternating: mean 0, mean|s| = 1, variance N/(N-1)
// unbiased and exactly 1 biased.
func TestSPARKeepBiasedStd(t *testing.T) {
	b := cpu.New(1)
	tp := tensor.NewTape(b)
	s := tp.FromHost([]float32{1, -1, 1, -1, 1, -1, 1, -1, 1, -1}, 1, 1, 10)
	p := tensor.DefaultSPAR
	_, st := tp.SPARKeep(s, p)
	if c := float64(tensor.ToHost(b, st)[0]); math.Abs(c-math.Sqrt(10.0/9)/(1+1e-6)) > 1e-6 {
		t.Fatalf("unbiased contrast %g, want %g", c, math.Sqrt(10.0/9))
	}
	p.UnbiasedStd = false
	_, st = tp.SPARKeep(s, p)
	if c := float64(tensor.ToHost(b, st)[0]); math.Abs(c-1/(1+1e-6)) > 1e-6 {
		t.Fatalf("biased contrast %g, want 1", c)
	}
}

// TestSPARKeepClip checks the clip of Eq. spar-rho at rho_min and rho_max.
func TestSPARKeepClip(t *testing.T) {
	b := cpu.New(1)
	tp := tensor.NewTape(b)
	s := tp.FromHost([]float32{1, -1, 1, -1, 1, -1, 1, -1, 1, -1}, 1, 1, 10) // c = std/mean|s| ~ 1.05
	p := tensor.DefaultSPAR
	p.Rho0, p.RhoMax = 5, 0.9 // rho0 (1 + ...) > 0.9: clipped to rho_max
	_, st := tp.SPARKeep(s, p)
	if got := tensor.ToHost(b, st); got[1] != 0.9 || got[2] != 9 {
		t.Fatalf("rho_max clip: stats %v, want rho 0.9 k 9", got)
	}
	p.Rho0 = 0.01 // clipped to rho_min = 0.1: k = 1
	_, st = tp.SPARKeep(s, p)
	if got := tensor.ToHost(b, st); got[1] != 0.1 || got[2] != 1 {
		t.Fatalf("rho_min clip: stats %v, want rho 0.1 k 1", got)
	}
}

// TestSPARRouteForward: the forward value is the hard MUX, exactly.
func TestSPARRouteForward(t *testing.T) {
	b := cpu.New(2)
	tp := tensor.NewTape(b)
	zF := tp.FromHost([]float32{1, 2, 3, 4, 5, 6}, 1, 2, 3)
	zG := tp.FromHost([]float32{-1, -2, -3, -4, -5, -6}, 1, 2, 3)
	hard := tp.FromHost([]float32{1, 0, 1}, 1, 1, 3)
	got := tensor.ToHost(b, tp.SPARRoute(zF, zG, hard, hard, 0.8, tensor.CentreZero))
	want := []float32{1, -2, 3, 4, -5, 6}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("route %v, want %v", got, want)
		}
	}
}

// TestSPARRouteBackwardFormulas checks the two backward channels of App.
// A.1 against their closed forms: the direct path (Eq. spar-direct) sends
// dr only to the chosen branch and the score path is
// dL/ds = dr^T (zF - zG) sigmoid'(s/T)/T (Eq. spar-score-grad).
func TestSPARRouteBackwardFormulas(t *testing.T) {
	b := cpu.New(2)
	const T = 0.8
	shape := []int{2, 3, 5}
	n, c := 5, 3
	tp := tensor.NewTape(b)
	zFv, zGv := gradcheck.Random(1, 30), gradcheck.Random(2, 30)
	sv := gradcheck.Random(3, 10)
	drv := gradcheck.Random(4, 30)
	zF := tensor.NewLeaf(b, "zF", zFv, shape...)
	zG := tensor.NewLeaf(b, "zG", zGv, shape...)
	s := tensor.NewLeaf(b, "s", sv, 2, 1, 5)
	for _, l := range []*tensor.Tensor{zF, zG, s} {
		l.SetRequiresGrad(true)
	}
	hard, _ := tp.SPARKeep(s, tensor.DefaultSPAR)
	r := tp.SPARRoute(zF, zG, hard, s, T, tensor.CentreZero)
	tp.BackwardWith(r, tp.FromHost(drv, shape...))
	H := tensor.ToHost(b, hard)
	dF, dG, dS := tensor.ToHost(b, zF.Grad), tensor.ToHost(b, zG.Grad), tensor.ToHost(b, s.Grad)
	for bi := 0; bi < 2; bi++ {
		for x := 0; x < n; x++ {
			g := float64(H[bi*n+x])
			var dot float64
			for ch := 0; ch < c; ch++ {
				i := (bi*c+ch)*n + x
				if float64(dF[i]) != g*float64(drv[i]) || float64(dG[i]) != (1-g)*float64(drv[i]) {
					t.Fatalf("direct path at b=%d x=%d c=%d: dzF %g dzG %g, g=%g dr=%g", bi, x, ch, dF[i], dG[i], g, drv[i])
				}
				dot += float64(drv[i]) * (float64(zFv[i]) - float64(zGv[i]))
			}
			sg := 1 / (1 + math.Exp(-float64(sv[bi*n+x])/T))
			want := dot * sg * (1 - sg) / T
			if math.Abs(float64(dS[bi*n+x])-want) > 1e-6 {
				t.Fatalf("score path at b=%d x=%d: %g, want %g", bi, x, dS[bi*n+x], want)
			}
			if math.Abs(want) > math.Abs(dot)/(4*T)+1e-9 {
				t.Fatalf("score path exceeds its bound sigma'(s/T)/T <= 1/(4T)")
			}
		}
	}
}

// TestSPARRouteGrad checks the direct path by finite differences in
// 1D/2D/3D: with the mask fixed, r is linear in zF and zG. (The score path
// has no finite-difference counterpart, since the forward value does not
// depend on s; TestSPARRouteBackwardFormulas checks it against App. A.1.)
func TestSPARRouteGrad(t *testing.T) {
	b := cpu.New(2)
	for _, fs := range fieldShapes {
		t.Run(fs.name, func(t *testing.T) {
			sshape := withChannels(fs.shape, 1)
			hardv := make([]float32, tensor.Numel(sshape))
			for i := range hardv {
				if i%3 != 1 {
					hardv[i] = 1
				}
			}
			s := in("s", 3, sshape...)
			s.NoGrad = true
			gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.SPARRoute(v[0], v[1], v[3], v[2], 0.8, tensor.CentreZero)
			}, []gradcheck.Input{in("zF", 1, fs.shape...), in("zG", 2, fs.shape...), s,
				{Name: "hard", Shape: sshape, Data: hardv, NoGrad: true}}, gradcheck.Options{})
		})
	}
}

// TestTopKNaN: NaN scores count as the smallest; when k reaches into them,
// every number is kept and NaNs fill up in index order, so exactly k
// positions are kept whatever the NaNs.
func TestTopKNaN(t *testing.T) {
	nan := float32(math.NaN())
	b := cpu.New(1)
	s := tensor.NewLeaf(b, "s", []float32{1, nan, 3, nan, 2}, 1, 1, 5)
	mask := tensor.NewLeaf(b, "mask", make([]float32, 5), 1, 1, 5)
	cases := []struct {
		k    int
		want []float32
	}{
		{1, []float32{0, 0, 1, 0, 0}},
		{3, []float32{1, 0, 1, 0, 1}},
		{4, []float32{1, 1, 1, 0, 1}},
		{5, []float32{1, 1, 1, 1, 1}},
	}
	for _, c := range cases {
		b.TopKMask(mask, s, []int{c.k})
		got := tensor.ToHost(b, mask)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("k=%d: mask %v, want %v", c.k, got, c.want)
				break
			}
		}
	}
}

// kthLargest is the threshold tau_k of the threshold centre from its
// definition: the k-th largest of v (sorting, independent of the
// backend's minimum over the kept pixels).
func kthLargest(v []float32, k int) float64 {
	s := slices.Clone(v)
	slices.SortFunc(s, func(a, b float32) int { return cmp.Compare(b, a) })
	return float64(s[k-1])
}

// TestSPARRouteBackwardThreshold checks the score path of the threshold
// centre (spar.surrogate_centre: threshold, issue 20) against its closed
// form dL/ds = dr^T (zF - zG) sigmoid'((s - tau_k)/T)/T with tau_k the
// k-th largest score of the sample (k from SPARKeep's statistics), and
// that the direct path and the forward value do not depend on the centre.
func TestSPARRouteBackwardThreshold(t *testing.T) {
	b := cpu.New(2)
	const T = 0.8
	shape := []int{3, 2, 7}
	n, c := 7, 2
	zFv, zGv := gradcheck.Random(11, 42), gradcheck.Random(12, 42)
	sv := gradcheck.Random(13, 21)
	for i := range sv {
		sv[i] += 1.5 // every score positive: the two centres differ everywhere
	}
	drv := gradcheck.Random(14, 42)
	run := func(centre tensor.SurrogateCentre) (r, dF, dG, dS, H, stats []float32) {
		tp := tensor.NewTape(b)
		zF := tensor.NewLeaf(b, "zF", zFv, shape...)
		zG := tensor.NewLeaf(b, "zG", zGv, shape...)
		s := tensor.NewLeaf(b, "s", sv, 3, 1, n)
		for _, l := range []*tensor.Tensor{zF, zG, s} {
			l.SetRequiresGrad(true)
		}
		hard, st := tp.SPARKeep(s, tensor.DefaultSPAR)
		out := tp.SPARRoute(zF, zG, hard, s, T, centre)
		tp.BackwardWith(out, tp.FromHost(drv, shape...))
		return tensor.ToHost(b, out), tensor.ToHost(b, zF.Grad), tensor.ToHost(b, zG.Grad), tensor.ToHost(b, s.Grad),
			tensor.ToHost(b, hard), tensor.ToHost(b, st)
	}
	r0, dF0, dG0, dS0, _, _ := run(tensor.CentreZero)
	r, dF, dG, dS, H, stats := run(tensor.CentreThreshold)
	for i := range r {
		if r[i] != r0[i] || dF[i] != dF0[i] || dG[i] != dG0[i] {
			t.Fatalf("forward value or direct path depends on the centre at %d", i)
		}
	}
	differ := 0
	for bi := 0; bi < 3; bi++ {
		k := int(stats[3*bi+2])
		tau := kthLargest(sv[bi*n:(bi+1)*n], k)
		kept := 0
		for x := 0; x < n; x++ {
			kept += int(H[bi*n+x])
		}
		if kept != k {
			t.Fatalf("sample %d: %d kept, k = %d", bi, kept, k)
		}
		for x := 0; x < n; x++ {
			var dot float64
			for ch := 0; ch < c; ch++ {
				i := (bi*c+ch)*n + x
				dot += float64(drv[i]) * (float64(zFv[i]) - float64(zGv[i]))
			}
			sg := 1 / (1 + math.Exp(-(float64(sv[bi*n+x])-tau)/T))
			want := dot * sg * (1 - sg) / T
			if math.Abs(float64(dS[bi*n+x])-want) > 1e-6 {
				t.Fatalf("threshold score path at b=%d x=%d: %g, want %g (tau_k = %g)", bi, x, dS[bi*n+x], want, tau)
			}
			if dS[bi*n+x] != dS0[bi*n+x] {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Fatal("the threshold centre gave the zero centre's score gradient everywhere")
	}
}

// TestSPARRouteScoreGrad checks the whole backward of SPARRoute, score
// path included, against finite differences in 1D, 2D and 3D for both
// centres. The forward value does not depend on s (straight-through), so
// the finite differences are taken of the surrogate with the same value
// at the base point and the STE's derivative, the mask g0 and the centre
// tau0 (0, or the k-th largest base score per sample) held fixed:
//
//	r~ = g0 zF + (1 - g0) zG + (sigmoid((s - tau0)/T) - sigmoid((s0 - tau0)/T)) (zF - zG)
//
// The gradient pass runs tensor.Tape.SPARRoute; only the finite-difference
// passes (gradients off) evaluate r~ on the host.
func TestSPARRouteScoreGrad(t *testing.T) {
	b := cpu.New(2)
	const T = 0.8
	for _, centre := range []tensor.SurrogateCentre{tensor.CentreZero, tensor.CentreThreshold} {
		for _, fs := range fieldShapes {
			t.Run(fmt.Sprintf("centre%d/%s", centre, fs.name), func(t *testing.T) {
				sshape := withChannels(fs.shape, 1)
				s := in("s", 3, sshape...)
				for i := range s.Data {
					s.Data[i] += 1 // away from 0, so that the centres differ
				}
				n, batch := tensor.Numel(sshape[2:]), sshape[0]
				// The base point's mask and centres.
				sl := tensor.NewLeaf(b, "s", s.Data, sshape...)
				tp := tensor.NewTape(b)
				hard, stats := tp.SPARKeep(sl, tensor.DefaultSPAR)
				g0, st := tensor.ToHost(b, hard), tensor.ToHost(b, stats)
				tau0 := make([]float64, batch)
				if centre == tensor.CentreThreshold {
					for bi := range tau0 {
						tau0[bi] = kthLargest(s.Data[bi*n:(bi+1)*n], int(st[3*bi+2]))
					}
				}
				s0 := slices.Clone(s.Data)
				gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
					if tp.GradEnabled() {
						return tp.SPARRoute(v[0], v[1], v[3], v[2], T, centre)
					}
					zf, zg, sv := tensor.ToHost(b, v[0]), tensor.ToHost(b, v[1]), tensor.ToHost(b, v[2])
					c := v[0].Channels()
					r := make([]float32, len(zf))
					for i := range r {
						bi := i / (c * n)
						j := bi*n + i%n
						g, tau := float64(g0[j]), tau0[bi]
						ds := 1/(1+math.Exp(-(float64(sv[j])-tau)/T)) - 1/(1+math.Exp(-(float64(s0[j])-tau)/T))
						f, gg := float64(zf[i]), float64(zg[i])
						r[i] = float32(g*f + (1-g)*gg + ds*(f-gg))
					}
					return tp.FromHost(r, v[0].Shape...)
				}, []gradcheck.Input{in("zF", 1, fs.shape...), in("zG", 2, fs.shape...), s,
					{Name: "hard", Shape: sshape, Data: g0, NoGrad: true}}, gradcheck.Options{})
			})
		}
	}
}
