package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"uhno/internal/tensor"
)

// TestConvGemmRows checks that reading A in place from its rows gives,
// bit for bit, what packing A into panels and running the same kernel
// gives: at every C level the CPU has and on the portable path (through
// convGemmRows with forceGo), with partial panels both ways, a row stride
// wider than the rows, and store and add modes.
func TestConvGemmRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	for _, c := range []struct{ m, n, l, lda int }{
		{1, 1, 1, 1}, {6, 16, 5, 5}, {7, 17, 3, 8}, {13, 40, 33, 33}, {32, 32, 128, 128}, {5, 3, 2, 9}, {128, 96, 16, 20},
	} {
		a, bm := fill((c.m-1)*c.lda+c.l), fill(c.l*c.n)
		ap := make([]float32, convPackedLen(c.m, c.l, convMR))
		bp := make([]float32, convPackedLen(c.n, c.l, convNR))
		convPackA(ap, a, c.m, c.l, c.lda, 1)
		convPackB(bp, bm, c.l, c.n, c.n)
		const ldc = 140
		c0 := fill(c.m * ldc)
		for _, add := range []bool{false, true} {
			for lv := -1; lv <= 2; lv++ {
				want, got := append([]float32(nil), c0...), append([]float32(nil), c0...)
				if lv < 0 {
					convGemmGo(want, ldc, c.m, c.n, ap, bp, c.l, add)
					b := New(1)
					b.rs.forceGo = true
					b.convGemmRows(got, ldc, c.m, c.n, a, c.lda, bp, c.l, add, make([]float32, len(ap)))
				} else {
					if !convGemmCLevel(lv, want, ldc, c.m, c.n, ap, bp, c.l, add, nil) {
						continue // not built, or not supported by this CPU
					}
					convGemmRowsCLevel(lv, got, ldc, c.m, c.n, a, c.lda, bp, c.l, add)
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%+v add=%v level %d: C[%d] = %g from the rows, %g packed", c, add, lv, i, got[i], want[i])
					}
				}
			}
		}
	}
}

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
				} else if !convGemmCLevel(int(kernel[1]-'0'), got, ldc, c.m, c.n, ap, bp, c.l, add, nil) {
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

// TestConvGemmBias: the bias added as the C kernel stores (every level)
// and the portable fill-then-add path both give exactly the product
// followed by + bias[r] of the same kernel; columns beyond n and rows
// beyond m are untouched.
func TestConvGemmBias(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.Float64()*2 - 1)
		}
		return s
	}
	for _, c := range []struct{ m, n, l int }{{1, 1, 1}, {7, 17, 3}, {13, 40, 33}, {32, 256, 32}} {
		a, bm, bias := fill(c.m*c.l), fill(c.l*c.n), fill(c.m)
		ap := make([]float32, convPackedLen(c.m, c.l, convMR))
		bp := make([]float32, convPackedLen(c.n, c.l, convNR))
		convPackA(ap, a, c.m, c.l, c.l, 1)
		convPackB(bp, bm, c.l, c.n, c.n)
		ldc := c.n + 5
		c0 := fill((c.m + 1) * ldc)
		for _, kernel := range []string{"go", "c0", "c1", "c2"} {
			want := append([]float32(nil), c0...)
			got := append([]float32(nil), c0...)
			if kernel == "go" {
				convGemmGo(want, ldc, c.m, c.n, ap, bp, c.l, false)
				be := New(1)
				be.rs.forceGo = true
				be.convGemmBias(got, ldc, c.m, c.n, ap, bp, c.l, bias)
			} else {
				lv := int(kernel[1] - '0')
				if !convGemmCLevel(lv, want, ldc, c.m, c.n, ap, bp, c.l, false, nil) {
					continue
				}
				convGemmCLevel(lv, got, ldc, c.m, c.n, ap, bp, c.l, false, bias)
			}
			for i := 0; i < c.m; i++ {
				for j := 0; j < c.n; j++ {
					want[i*ldc+j] += bias[i]
				}
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%+v kernel %s: element %d (row %d, col %d) = %g, want %g", c, kernel, i, i/ldc, i%ldc, got[i], want[i])
				}
			}
		}
	}
}

// TestPackB: the C packing equals convPackB, partial last panel included.
func TestPackB(t *testing.T) {
	if !convHaveC {
		t.Skip("no C kernel in this build")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct{ l, n, ks int }{{1, 1, 1}, {3, 16, 20}, {32, 256, 4096}, {5, 37, 40}} {
		src := make([]float32, (c.l-1)*c.ks+c.n)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		want := make([]float32, convPackedLen(c.n, c.l, convNR))
		got := make([]float32, len(want))
		for i := range got {
			got[i] = float32(math.NaN()) // every entry must be written
		}
		convPackB(want, src, c.l, c.n, c.ks)
		New(1).packB(got, src, c.l, c.n, c.ks)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: packed[%d] = %g, want %g", c, i, got[i], want[i])
			}
		}
	}
}

// TestPackAAndBT: the C packings equal convPackA and packBT, partial
// panels and k tails included, packBT at every level the CPU has.
func TestPackAAndBT(t *testing.T) {
	if !convHaveC {
		t.Skip("no C kernel in this build")
	}
	r := rand.New(rand.NewPCG(13, 14))
	nan := float32(math.NaN())
	for _, c := range []struct{ m, l, rs, ks int }{{1, 1, 1, 1}, {7, 5, 5, 1}, {32, 4096, 4096, 1}, {13, 9, 1, 13}} {
		src := make([]float32, (c.m-1)*c.rs+(c.l-1)*c.ks+1)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		want := make([]float32, convPackedLen(c.m, c.l, convMR))
		got := make([]float32, len(want))
		for i := range got {
			got[i] = nan
		}
		convPackA(want, src, c.m, c.l, c.rs, c.ks)
		New(1).packA(got, src, c.m, c.l, c.rs, c.ks)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("packA %+v: [%d] = %g, want %g", c, i, got[i], want[i])
			}
		}
	}
	for _, c := range []struct{ l, n, cs int }{{1, 1, 1}, {9, 17, 9}, {4096, 32, 4096}, {5, 3, 8}, {16, 16, 16}, {32, 48, 40}, {37, 35, 37}, {128, 96, 130}, {16, 768, 16}, {1024, 64, 1024}, {48, 33, 50}} {
		src := make([]float32, (c.n-1)*c.cs+c.l)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		want := make([]float32, convPackedLen(c.n, c.l, convNR))
		got := make([]float32, len(want))
		for i := range got {
			got[i] = nan
		}
		packBT(want, src, c.l, c.n, c.cs)
		New(1).packBTransposed(got, src, c.l, c.n, c.cs)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("packBT %+v: [%d] = %g, want %g", c, i, got[i], want[i])
			}
		}
		// Every level the CPU has (2 AVX-512, 1 AVX2, 0 element by
		// element), not only the widest that packBTransposed runs.
		for level := 0; level <= 2; level++ {
			for i := range got {
				got[i] = nan
			}
			if !packBTCLevel(level, got, src, c.l, c.n, c.cs) {
				continue
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("packBT level %d %+v: [%d] = %g, want %g", level, c, i, got[i], want[i])
				}
			}
		}
	}
}

// TestConvWeightGradBits: ConvDownBackward's sum of the samples' partial
// weight gradients gives, for 1 to 5 threads, the bits of the reference
// sum dW[e] += ((p_0[e] + p_1[e]) + ...) + p_{nb-1}[e] taken entry by
// entry (the loop it replaced), on a dW that already holds values (a
// gradient accumulated over two calls) and 7 samples (so that the order
// of the additions shows in the bits).
func TestConvWeightGradBits(t *testing.T) {
	const nb, cin, cout, n = 7, 5, 6, 32
	r := rand.New(rand.NewPCG(9, 10))
	fill := func(k int) []float32 {
		v := make([]float32, k)
		for i := range v {
			v[i] = float32(r.Float64()*2-1) * float32(math.Pow(10, float64(r.IntN(5)-2)))
		}
		return v
	}
	X, DY, W, DW0 := fill(nb*cin*n), fill(nb*cout*n/2), fill(cout*cin*3), fill(cout*cin*3)
	// The reference: each sample's dW_b by the same kernel (one sample per
	// call, dW from zero), then the entries summed in sample order.
	ref := New(1)
	parts := make([][]float32, nb)
	for bi := range nb {
		x := tensor.NewLeaf(ref, "", X[bi*cin*n:][:cin*n], 1, cin, n)
		dy := tensor.NewLeaf(ref, "", DY[bi*cout*n/2:][:cout*n/2], 1, cout, n/2)
		w := tensor.NewLeaf(ref, "", W, cout, cin, 3)
		dw := tensor.NewLeaf(ref, "", make([]float32, len(W)), cout, cin, 3)
		ref.ConvDownBackward(nil, dw, nil, dy, x, w)
		parts[bi] = tensor.ToHost(ref, dw)
	}
	want := append([]float32(nil), DW0...)
	for e := range want {
		s := parts[0][e]
		for bi := 1; bi < nb; bi++ {
			s += parts[bi][e]
		}
		want[e] += s
	}
	for threads := 1; threads <= 5; threads++ {
		be := New(threads)
		x := tensor.NewLeaf(be, "", X, nb, cin, n)
		dy := tensor.NewLeaf(be, "", DY, nb, cout, n/2)
		w := tensor.NewLeaf(be, "", W, cout, cin, 3)
		dw := tensor.NewLeaf(be, "", append([]float32(nil), DW0...), cout, cin, 3)
		be.ConvDownBackward(nil, dw, nil, dy, x, w)
		got := tensor.ToHost(be, dw)
		for e := range want {
			if math.Float32bits(got[e]) != math.Float32bits(want[e]) {
				t.Fatalf("%d threads: dW[%d] = %g, want %g (the bits of the sample-order sum)", threads, e, got[e], want[e])
			}
		}
	}
}

// TestConvMovesBits checks the C im2col, im2colT and col2im of the
// convolutions against the Go loops bit for bit, on the tap offsets of
// Conv3 (stride 1: most panels consecutive) and ConvDown (stride 2: none)
// in 1D, 2D and 3D, over every tile of the plane (whole and partial
// panels).
func TestConvMovesBits(t *testing.T) {
	if !havePatchC {
		t.Skip("no C moves in this build")
	}
	r := rand.New(rand.NewPCG(23, 24))
	fill := func(n int, nan bool) []float32 { return randFloats(r, n, nan) }
	same := func(name string, got, want []float32) { t.Helper(); requireBits(t, name, got, want) }
	b := New(1)
	s := b.getScratch()
	defer b.putScratch(s)
	for _, c := range []struct {
		in, out []int
		cin     int
	}{
		{[]int{2, 3, 40}, []int{2, 4, 40}, 3}, {[]int{2, 3, 40}, []int{2, 4, 20}, 3},
		{[]int{1, 5, 12, 20}, []int{1, 2, 12, 20}, 5}, {[]int{1, 5, 12, 20}, []int{1, 2, 6, 10}, 5},
		{[]int{1, 2, 6, 8, 10}, []int{1, 2, 6, 8, 10}, 2}, {[]int{1, 2, 6, 8, 10}, []int{1, 2, 3, 4, 5}, 2},
		{[]int{1, 64, 16, 16}, []int{1, 8, 16, 16}, 64}, // many taps x channels: several tiles
	} {
		x := &tensor.Tensor{Shape: c.in}
		y := &tensor.Tensor{Shape: c.out}
		g := newConvGeom(x, y)
		tab := g.axisTables(s)
		xb := fill(g.cin*g.sin, false)
		for ti := 0; ti < g.tiles; ti++ {
			p0, n := g.tileRange(ti)
			offs := make([]int32, g.taps*n)
			g.offsets(offs, tab, p0, n)
			name := fmt.Sprintf("%v -> %v tile %d", c.in, c.out, ti)
			size := convPackedLen(n, g.k, convNR)
			got, want := fill(size, true), fill(size, true)
			g.moves().im2col(got, xb, offs, n)
			g.im2col(want, xb, offs, n)
			same(name+": im2col", got, want)
			size = convPackedLen(g.k, n, convNR)
			got, want = fill(size, true), fill(size, true)
			g.moves().im2colT(got, xb, offs, n)
			g.im2colT(want, xb, offs, n)
			same(name+": im2colT", got, want)
			dP := fill(g.k*n, false)
			want = fill(g.cin*g.sin, false)
			got = append([]float32(nil), want...)
			g.moves().col2im(got, dP, offs, n)
			g.col2im(want, dP, offs, n)
			same(name+": col2im", got, want)
		}
	}
}
