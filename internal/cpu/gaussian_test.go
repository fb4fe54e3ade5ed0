package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// gaussLogSigma returns logSigma [S, G] initialised at log(sigmas[m]) plus a
// small per-group offset step*g, as the branch's groups drift apart in
// training.
func gaussLogSigma(sigmas []float64, groups int, step float64) []float32 {
	ls := make([]float32, len(sigmas)*groups)
	for m, s := range sigmas {
		for g := 0; g < groups; g++ {
			ls[m*groups+g] = float32(math.Log(s) + step*float64(g))
		}
	}
	return ls
}

// refRadius is the support radius written out from the contract:
// min(ceil(3 sigma), maxRadius if > 0, (nmin-1)/2).
func refRadius(sigma float64, maxRadius int, dims []int) int {
	r := int(math.Ceil(3 * sigma))
	if maxRadius > 0 {
		r = min(r, maxRadius)
	}
	nmin := dims[0]
	for _, n := range dims {
		nmin = min(nmin, n)
	}
	return min(r, (nmin-1)/2)
}

// refGaussConv evaluates Eq. gaussian-kernel directly in float64: for each
// channel the full d-dimensional kernel exp(-|Delta|^2/(2 sigma^2)) on the
// box |Delta|_inf <= r, divided by its d-dimensional sum when normalize,
// convolved circularly: y[p] = sum_Delta k(Delta) x[(p - Delta) mod N].
func refGaussConv(x []float32, shape []int, logSigma []float32, scales, groups int, opt tensor.GaussOpts) []float64 {
	dims := shape[2:]
	d := len(dims)
	sp := tensor.Numel(dims)
	ch := shape[1]
	perScl := ch / scales
	perGrp := perScl / groups
	y := make([]float64, len(x))
	for c := 0; c < ch; c++ {
		m, g := c/perScl, (c%perScl)/perGrp
		sigma := math.Exp(float64(logSigma[m*groups+g]))
		r := refRadius(sigma, opt.MaxRadius, dims)
		// Kernel on the box, offsets Delta_a in -r..r, flattened.
		side := 2*r + 1
		nk := 1
		for a := 0; a < d; a++ {
			nk *= side
		}
		kern := make([]float64, nk)
		delta := make([][]int, nk)
		var z float64
		for i := range kern {
			delta[i] = make([]int, d)
			q, sq := i, 0.0
			for a := d - 1; a >= 0; a-- {
				delta[i][a] = q%side - r
				q /= side
				sq += float64(delta[i][a] * delta[i][a])
			}
			kern[i] = math.Exp(-sq / (2 * sigma * sigma))
			z += kern[i]
		}
		if opt.Normalize {
			for i := range kern {
				kern[i] /= z
			}
		}
		pos := make([]int, d)
		for bi := 0; bi < shape[0]; bi++ {
			off := (bi*ch + c) * sp
			for p := 0; p < sp; p++ {
				q := p
				for a := d - 1; a >= 0; a-- {
					pos[a] = q % dims[a]
					q /= dims[a]
				}
				var s float64
				for i, kv := range kern {
					src := 0
					for a := 0; a < d; a++ {
						src = src*dims[a] + ((pos[a]-delta[i][a])%dims[a]+dims[a])%dims[a]
					}
					s += kv * float64(x[off+src])
				}
				y[off+p] = s
			}
		}
	}
	return y
}

// gaussCase is one configuration of the forward and gradient tables.
type gaussCase struct {
	name   string
	shape  []int
	scales int
	groups int
	sigmas []float64
	step   float64 // per-group log-sigma offset
	maxRad int
}

// TestGaussianConvForward checks the separable implementation against the
// full d-dimensional kernel of Eq. gaussian-kernel, normalised and not,
// with the radius capped by MaxRadius, by the grid, and down to r = 0.
func TestGaussianConvForward(t *testing.T) {
	paper := []float64{0.5, 1.0, 2.5} // the paper's init (Sec. 3.2)
	cases := []gaussCase{
		{"1D", []int{2, 12, 37}, 3, 2, paper, 0.07, 0},
		{"2D", []int{2, 12, 19, 18}, 3, 2, paper, 0.07, 0},
		{"2D_groups4", []int{1, 24, 20, 22}, 3, 4, paper, -0.05, 0},
		{"3D", []int{1, 6, 9, 12, 10}, 3, 2, paper, 0.07, 0},
		{"2D_maxradius3", []int{2, 6, 18, 20}, 3, 1, paper, 0, 3},             // 2.5 -> r=3 instead of 8
		{"3D_maxradius2", []int{1, 6, 8, 8, 8}, 3, 2, paper, 0.1, 2},          // 1.0 and 2.5 capped at 2
		{"2D_gridcap_N4", []int{2, 6, 4, 4}, 3, 2, paper, 0.05, 0},            // r = (4-1)/2 = 1 for every sigma
		{"2D_gridcap_4x9", []int{1, 6, 4, 9}, 3, 1, paper, 0, 0},              // the smaller axis caps both
		{"1D_gridcap_N6", []int{2, 3, 6}, 3, 1, []float64{0.2, 1, 2.5}, 0, 0}, // r = 1, 2, 2
		{"2D_r0_N2", []int{2, 3, 2, 8}, 3, 1, paper, 0, 0},                    // r = 0: identity
	}
	b := cpu.New(2)
	for _, tc := range cases {
		for _, norm := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/normalize=%v", tc.name, norm), func(t *testing.T) {
				opt := tensor.GaussOpts{Normalize: norm, MaxRadius: tc.maxRad}
				xs := gradcheck.Random(3, tensor.Numel(tc.shape))
				ls := gaussLogSigma(tc.sigmas, tc.groups, tc.step)
				tp := tensor.NewTape(b)
				defer tp.Release()
				x := tp.FromHost(xs, tc.shape...)
				lsig := tp.FromHost(ls, tc.scales, tc.groups)
				got := tensor.ToHost(b, tp.GaussianConv(x, lsig, opt))
				want := refGaussConv(xs, tc.shape, ls, tc.scales, tc.groups, opt)
				var scale float64
				for _, v := range want {
					scale = math.Max(scale, math.Abs(v))
				}
				// float32 rounding over d passes of at most 2r+1 terms each.
				tol := 2e-6 * scale
				for i := range got {
					if math.Abs(float64(got[i])-want[i]) > tol {
						t.Fatalf("y[%d] = %.7g, want %.7g (tol %.2g)", i, got[i], want[i], tol)
					}
				}
				if tc.name == "2D_r0_N2" {
					for i := range got {
						if got[i] != xs[i] {
							t.Fatalf("r = 0 must be the identity: y[%d] = %v, x = %v", i, got[i], xs[i])
						}
					}
				}
			})
		}
	}
}

// TestGaussianConvConstant checks the kernel normalisation: a constant
// field is unchanged when Normalize and multiplied by the kernel's
// d-dimensional sum when not.
func TestGaussianConvConstant(t *testing.T) {
	b := cpu.New(2)
	for _, fs := range []struct {
		name  string
		shape []int
	}{
		{"1D", []int{2, 6, 40}},
		{"2D", []int{2, 6, 20, 24}},
		{"3D", []int{1, 6, 8, 10, 12}},
	} {
		for _, norm := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/normalize=%v", fs.name, norm), func(t *testing.T) {
				const v = 1.7
				opt := tensor.GaussOpts{Normalize: norm, MaxRadius: 16}
				xs := make([]float32, tensor.Numel(fs.shape))
				for i := range xs {
					xs[i] = v
				}
				ls := gaussLogSigma([]float64{0.5, 1.0, 2.5}, 2, 0.1)
				tp := tensor.NewTape(b)
				defer tp.Release()
				y := tensor.ToHost(b, tp.GaussianConv(tp.FromHost(xs, fs.shape...), tp.FromHost(ls, 3, 2), opt))
				dims := fs.shape[2:]
				sp := tensor.Numel(dims)
				perGrp := fs.shape[1] / 6
				for c := 0; c < fs.shape[1]; c++ {
					want := v
					if !norm {
						sigma := math.Exp(float64(ls[c/perGrp]))
						r := refRadius(sigma, opt.MaxRadius, dims)
						var z1 float64
						for d := -r; d <= r; d++ {
							z1 += math.Exp(-float64(d*d) / (2 * sigma * sigma))
						}
						want = v * math.Pow(z1, float64(len(dims)))
					}
					for bi := 0; bi < fs.shape[0]; bi++ {
						for p := 0; p < sp; p++ {
							got := float64(y[(bi*fs.shape[1]+c)*sp+p])
							if math.Abs(got-want) > 1e-6*want {
								t.Fatalf("channel %d: y = %.8g, want %.8g", c, got, want)
							}
						}
					}
				}
			})
		}
	}
}

// TestGaussianConvGrad checks dx and dlogSigma by finite differences. The
// radius ceil(3 sigma) is piecewise constant in sigma and the gradient
// treats it as constant, so a finite difference that crossed a jump would
// compare against a different kernel support. A probe moves log sigma by
// eps = 1e-2, i.e. 3 sigma by 0.03 * sigma (0.08 at sigma = 2.6), so the
// sigmas are chosen with 3 sigma at least 0.2 from an integer: 0.5 -> 1.5,
// 1.15 -> 3.45, 2.5 -> 7.5, and with the group offset 0.03: 1.55, 3.55,
// 7.73. (The paper's 1.0 would sit exactly on the jump 3 sigma = 3.)
func TestGaussianConvGrad(t *testing.T) {
	sigmas := []float64{0.5, 1.15, 2.5}
	cases := []gaussCase{
		{"1D", []int{2, 12, 40}, 3, 2, sigmas, 0.03, 0},
		{"2D", []int{1, 6, 18, 17}, 3, 2, sigmas, 0.03, 0},
		{"2D_maxradius2", []int{1, 6, 9, 10}, 3, 1, sigmas, 0, 2},
		{"3D", []int{1, 6, 7, 6, 8}, 3, 2, sigmas, 0.03, 0},
	}
	b := cpu.New(2)
	for _, tc := range cases {
		for _, norm := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/normalize=%v", tc.name, norm), func(t *testing.T) {
				opt := tensor.GaussOpts{Normalize: norm, MaxRadius: tc.maxRad}
				x := in("x", 5, tc.shape...)
				ls := gradcheck.Input{Name: "logSigma", Shape: []int{tc.scales, tc.groups},
					Data: gaussLogSigma(tc.sigmas, tc.groups, tc.step)}
				gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
					return tp.GaussianConv(v[0], v[1], opt)
				}, []gradcheck.Input{x, ls}, gradcheck.Options{})
			})
		}
	}
}

// gaussRun runs forward and backward with a fixed seed gradient and returns
// y, dx and dlogSigma (nil where the input did not require a gradient).
func gaussRun(b tensor.Backend, shape []int, ls []float32, scales, groups int, opt tensor.GaussOpts, gradX, gradLS bool) (y, dx, dls []float32) {
	tp := tensor.NewTape(b)
	defer tp.Release()
	x := tensor.NewLeaf(b, "x", gradcheck.Random(7, tensor.Numel(shape)), shape...)
	x.SetRequiresGrad(gradX)
	lsig := tensor.NewLeaf(b, "logSigma", ls, scales, groups)
	lsig.SetRequiresGrad(gradLS)
	out := tp.GaussianConv(x, lsig, opt)
	tp.BackwardWith(out, tp.FromHost(gradcheck.Random(8, out.Numel()), out.Shape...))
	y = tensor.ToHost(b, out)
	if gradX {
		dx = tensor.ToHost(b, x.Grad)
	}
	if gradLS {
		dls = tensor.ToHost(b, lsig.Grad)
	}
	return y, dx, dls
}

func sameBits(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: lengths %d and %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s[%d]: %v vs %v", what, i, a[i], b[i])
		}
	}
}

// TestGaussianConvDeterminism requires bit-identical outputs and gradients
// with 1 and 4 threads, and that computing one gradient alone gives the
// same bits as computing both.
func TestGaussianConvDeterminism(t *testing.T) {
	ls := gaussLogSigma([]float64{0.5, 1.0, 2.5}, 4, 0.02)
	for _, fs := range []struct {
		name  string
		shape []int
	}{
		{"1D", []int{6, 24, 64}},
		{"2D", []int{4, 24, 24, 20}},
		{"3D", []int{2, 24, 8, 10, 12}},
	} {
		t.Run(fs.name, func(t *testing.T) {
			opt := tensor.GaussOpts{Normalize: true, MaxRadius: 16}
			y1, dx1, dl1 := gaussRun(cpu.New(1), fs.shape, ls, 3, 4, opt, true, true)
			y4, dx4, dl4 := gaussRun(cpu.New(4), fs.shape, ls, 3, 4, opt, true, true)
			sameBits(t, "y", y1, y4)
			sameBits(t, "dx", dx1, dx4)
			sameBits(t, "dlogSigma", dl1, dl4)
			_, dxOnly, _ := gaussRun(cpu.New(4), fs.shape, ls, 3, 4, opt, true, false)
			_, _, dlOnly := gaussRun(cpu.New(4), fs.shape, ls, 3, 4, opt, false, true)
			sameBits(t, "dx alone", dx1, dxOnly)
			sameBits(t, "dlogSigma alone", dl1, dlOnly)
		})
	}
}

// BenchmarkGaussianConv times the depthwise Gaussian convolution at the
// paper's sizes: S = 3 scales (sigma 0.5, 1, 2.5), G = 4 groups, radius cap
// 16, normalised, with 1 and 2 threads. fwd and fwd+bwd call the backend
// directly (the operation alone: y, then dx and dlogSigma); tape_fwd+bwd
// goes through the tape as the model does, which adds allocating, zeroing
// and seeding the gradient of y.
func BenchmarkGaussianConv(b *testing.B) {
	shapes := []struct {
		name  string
		shape []int
	}{
		{"1D_B32_96ch_N128", []int{32, 96, 128}},
		{"2D_B16_96ch_64x64", []int{16, 96, 64, 64}},
		{"2D_B16_192ch_32x32", []int{16, 192, 32, 32}},
		{"2D_B16_384ch_16x16", []int{16, 384, 16, 16}},
		{"3D_B2_72ch_16^3", []int{2, 72, 16, 16, 16}},
	}
	opt := tensor.GaussOpts{Normalize: true, MaxRadius: 16}
	ls := gaussLogSigma([]float64{0.5, 1.0, 2.5}, 4, 0)
	for _, s := range shapes {
		for _, threads := range []int{1, 2} {
			be := cpu.New(threads)
			leaf := func(name string, seed uint64, shape ...int) *tensor.Tensor {
				return tensor.NewLeaf(be, name, gradcheck.Random(seed, tensor.Numel(shape)), shape...)
			}
			x, y, dy, dx := leaf("x", 1, s.shape...), leaf("y", 2, s.shape...), leaf("dy", 3, s.shape...), leaf("dx", 4, s.shape...)
			lsig, dls := tensor.NewLeaf(be, "logSigma", ls, 3, 4), leaf("dlogSigma", 5, 3, 4)
			b.Run(fmt.Sprintf("%s/T%d/fwd", s.name, threads), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					be.GaussianConv(y, x, lsig, opt)
				}
			})
			b.Run(fmt.Sprintf("%s/T%d/fwd+bwd", s.name, threads), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					be.GaussianConv(y, x, lsig, opt)
					be.GaussianConvBackward(dx, dls, dy, x, lsig, opt)
				}
			})
			b.Run(fmt.Sprintf("%s/T%d/tape_fwd+bwd", s.name, threads), func(b *testing.B) {
				x.SetRequiresGrad(true)
				lsig.SetRequiresGrad(true)
				tp := tensor.NewTape(be)
				for i := 0; i < b.N; i++ {
					tp.BackwardWith(tp.GaussianConv(x, lsig, opt), dy)
					tp.Reset()
				}
			})
		}
	}
}
