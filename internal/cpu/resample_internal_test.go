package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"uhno/internal/tensor"
)

// TestConvGemm compares every kernel (the portable Go one, and each C
// level the CPU supports) with a float64 product of the unpacked matrices,
// on sizes that leave partial panels in both directions, in store and add
// modes.
func TestConvGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.Float64()*2 - 1)
		}
		return s
	}
	for _, c := range []struct{ m, n, l int }{
		{1, 1, 1}, {6, 16, 5}, {7, 17, 3}, {13, 40, 33}, {64, 224, 288}, {5, 3, 2},
	} {
		a, bm := fill(c.m*c.l), fill(c.l*c.n) // row-major A (m x l), B (l x n)
		ap := make([]float32, convPackedLen(c.m, c.l, convMR))
		bp := make([]float32, convPackedLen(c.n, c.l, convNR))
		convPackA(ap, a, c.m, c.l, c.l, 1)
		convPackB(bp, bm, c.l, c.n, c.n)
		const ldc = 50 + 224 // wider than n: untouched columns must stay
		c0 := fill(c.m * ldc)
		for _, add := range []bool{false, true} {
			for _, kernel := range []string{"go", "c0", "c1", "c2"} {
				got := append([]float32(nil), c0...)
				if kernel == "go" {
					convGemmGo(got, ldc, c.m, c.n, ap, bp, c.l, add)
				} else if !convGemmCLevel(int(kernel[1]-'0'), got, ldc, c.m, c.n, ap, bp, c.l, add) {
					continue // not built, or not supported by this CPU
				}
				for i := 0; i < c.m; i++ {
					for j := 0; j < ldc; j++ {
						want := float64(c0[i*ldc+j])
						if j < c.n {
							if !add {
								want = 0
							}
							for k := 0; k < c.l; k++ {
								want += float64(a[i*c.l+k]) * float64(bm[k*c.n+j])
							}
						}
						if g := float64(got[i*ldc+j]); math.Abs(g-want) > 1e-6*float64(c.l+1) {
							t.Fatalf("%+v add=%v kernel %s: C[%d,%d] = %g, want %g", c, add, kernel, i, j, g, want)
						}
					}
				}
			}
		}
	}
}

// TestConvDownKernelsAgree runs ConvDown and its backward once with the
// portable Go kernel and once with the default (C where built) and
// requires agreement to float32 rounding.
func TestConvDownKernelsAgree(t *testing.T) {
	if !convHaveC {
		t.Skip("no C kernel in this build")
	}
	shape, cout := []int{3, 32, 32, 32}, 10
	ws := []int{cout, shape[1], 3, 3}
	run := func(forceGo bool) [][]float32 {
		be := New(2)
		be.rs.forceGo = forceGo
		r := rand.New(rand.NewPCG(5, 6))
		leaf := func(shape ...int) *tensor.Tensor {
			v := make([]float32, tensor.Numel(shape))
			for i := range v {
				v[i] = float32(r.Float64()*2 - 1)
			}
			l := tensor.NewLeaf(be, "", v, shape...)
			l.SetRequiresGrad(true)
			return l
		}
		x, w, bias := leaf(shape...), leaf(ws...), leaf(cout)
		tp := tensor.NewTape(be)
		y := tp.ConvDown(x, w, bias)
		tp.BackwardWith(y, leaf(y.Shape...))
		return [][]float32{tensor.ToHost(be, y), tensor.ToHost(be, x.Grad), tensor.ToHost(be, w.Grad), tensor.ToHost(be, bias.Grad)}
	}
	fast, plain := run(false), run(true)
	for k, name := range []string{"y", "dx", "dw", "dbias"} {
		var scale float64
		for _, v := range plain[k] {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		for i := range plain[k] {
			if math.Abs(float64(fast[k][i]-plain[k][i])) > 1e-5*scale {
				t.Fatalf("%s[%d]: C kernel %g, Go kernel %g", name, i, fast[k][i], plain[k][i])
			}
		}
	}
}

// BenchmarkConvDownKernel compares the portable Go kernel with the C one on
// the paper's 2D encoder level (B16, C32 -> 64, 64x64), two threads.
func BenchmarkConvDownKernel(b *testing.B) {
	shape, ws := []int{16, 32, 64, 64}, []int{64, 32, 3, 3}
	for _, forceGo := range []bool{true, false} {
		name := "C"
		if forceGo {
			name = "Go"
		} else if !convHaveC {
			continue
		}
		be := New(2)
		be.rs.forceGo = forceGo
		x := tensor.NewLeaf(be, "x", make([]float32, tensor.Numel(shape)), shape...)
		w := tensor.NewLeaf(be, "w", make([]float32, tensor.Numel(ws)), ws...)
		x.SetRequiresGrad(true)
		w.SetRequiresGrad(true)
		b.Run(name+"/fwd", func(b *testing.B) {
			tp := tensor.NewTape(be)
			tp.SetGrad(false)
			for i := 0; i < b.N; i++ {
				tp.ConvDown(x, w, nil)
				tp.Reset()
			}
		})
		b.Run(name+"/fwd+bwd", func(b *testing.B) {
			tp := tensor.NewTape(be)
			for i := 0; i < b.N; i++ {
				y := tp.ConvDown(x, w, nil)
				tp.BackwardWith(y, tp.New(y.Shape...))
				tp.Reset()
			}
		})
	}
}
