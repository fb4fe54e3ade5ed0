package cpu

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"testing"

	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// gemmShapes cover the vector blocks of the C kernels (24, 16, 8 columns
// for sgemm; 8 and 4 complex columns for cgemm), their scalar tails, row
// counts that are not multiples of 4, and padded strides.
var gemmShapes = []struct{ m, n, k, pad int }{
	{1, 1, 1, 0}, {3, 2, 5, 1}, {4, 8, 3, 0}, {5, 24, 64, 3}, {7, 12, 9, 2},
	{9, 40, 17, 0}, {16, 64, 24, 1}, {6, 5, 130, 2}, {13, 31, 7, 1}, {4, 4, 1, 0},
}

// closeTo fails unless got matches want to float32 rounding of sums of k
// products of O(1) values.
func closeTo(t *testing.T, what string, got, want []float32, k int) {
	t.Helper()
	tol := 1e-6 * float64(k+4)
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > tol*math.Max(1, math.Abs(float64(want[i]))) {
			t.Fatalf("%s[%d] = %.8g, want %.8g", what, i, got[i], want[i])
		}
	}
}

// rowmixFixture is a strided channel-mixing problem for the kernel tests:
// a is [u][r] with row padding, bm is [v][r] read as [r][v], out is
// [v][u], each element 2L floats plus 2 of padding.
type rowmixFixture struct {
	P, Q, R, L             int
	au, ar, bv, br, ou, ov int
	a, bm, scale, out      []float32
}

func newRowmixFixture(P, Q, R, L int) rowmixFixture {
	el := 2*L + 2
	f := rowmixFixture{P: P, Q: Q, R: R, L: L, au: (R + 1) * el, ar: el, bv: R * el, br: el, ou: el, ov: P * el}
	f.a = gradcheck.Random(7, P*f.au)
	f.bm = gradcheck.Random(8, Q*f.bv)
	f.scale = gradcheck.Random(9, L)
	f.out = gradcheck.Random(10, Q*f.ov)
	return f
}

// call runs kern on the fixture, into a copy of its initial output.
func (f rowmixFixture) call(conja, conjb, acc bool, kern func(P, Q, R, L int, a []float32, au, ar int, conja bool,
	b []float32, br, bv int, conjb bool, out []float32, ou, ov int, scale []float32, acc bool)) []float32 {
	out := append([]float32(nil), f.out...)
	kern(f.P, f.Q, f.R, f.L, f.a, f.au, f.ar, conja, f.bm, f.br, f.bv, conjb, out, f.ou, f.ov, f.scale, acc)
	return out
}

// TestSpectralKernelsC checks the C kernels against the plain-Go ones
// they replace, overwriting and accumulating.
func TestSpectralKernelsC(t *testing.T) {
	if !specHaveC {
		t.Skip("cgo disabled: only the plain-Go kernels are built")
	}
	for _, s := range gemmShapes {
		for _, acc := range []bool{false, true} {
			t.Run(fmt.Sprintf("gemm/%dx%dx%d_acc=%v", s.m, s.n, s.k, acc), func(t *testing.T) {
				lda, ldb, ldc := s.k+s.pad, s.n+s.pad, s.n+2*s.pad
				a := gradcheck.Random(1, s.m*lda)
				bm := gradcheck.Random(2, s.k*ldb)
				want := gradcheck.Random(3, s.m*ldc)
				got := append([]float32(nil), want...)
				sgemmGo(s.m, s.n, s.k, a, lda, bm, ldb, want, ldc, acc)
				sgemmC(s.m, s.n, s.k, a, lda, bm, ldb, got, ldc, acc)
				closeTo(t, "sgemm", got, want, s.k)

				// complex: g [m x k], in [k x n], out [m x n]
				g := gradcheck.Random(4, 2*s.m*lda)
				x := gradcheck.Random(5, 2*s.k*ldb)
				cwant := gradcheck.Random(6, 2*s.m*ldc)
				cgot := append([]float32(nil), cwant...)
				cgemmGo(s.m, s.k, s.n, g, lda, x, ldb, cwant, ldc, acc)
				cgemmC(s.m, s.k, s.n, g, lda, x, ldb, cgot, ldc, acc)
				closeTo(t, "cgemm", cgot, cwant, 2*s.k)
			})
		}
	}
	// rowmix: tiles of 3 u x 2 v with tails, lane counts that are not
	// multiples of 4, both conjugations, strided operands.
	for _, s := range []struct{ P, Q, R, L int }{
		{1, 1, 1, 1}, {3, 2, 5, 4}, {7, 5, 3, 12}, {16, 9, 32, 6}, {4, 3, 17, 3}, {2, 8, 16, 24}, {5, 1, 2, 2},
	} {
		for _, v := range []struct{ conja, conjb, acc bool }{{false, false, false}, {true, false, true}, {false, true, false}, {true, true, true}} {
			t.Run(fmt.Sprintf("rowmix/%dx%dx%d_L%d_%v", s.P, s.Q, s.R, s.L, v), func(t *testing.T) {
				f := newRowmixFixture(s.P, s.Q, s.R, s.L)
				want := f.call(v.conja, v.conjb, v.acc, rowmixGo)
				scratch := make([]float32, rowmixScratch(s.P, s.Q, s.R, s.L))
				got := f.call(v.conja, v.conjb, v.acc, func(P, Q, R, L int, a []float32, au, ar int, conja bool, b []float32, br, bv int, conjb bool,
					out []float32, ou, ov int, scale []float32, acc bool) {
					rowmixC(P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc, scratch)
				})
				closeTo(t, "rowmix", got, want, 2*s.R)
			})
		}
	}
}

// rowmixLevelShapes cover the AVX-512 4 x 2 and AVX2 3 x 2 tiles and
// their tails, lane counts that are and are not multiples of 8 and of 4
// (the 1D models' 24, 16 and 8; tails of 1-7) and the main job's shapes.
var rowmixLevelShapes = []struct{ P, Q, R, L int }{
	{1, 1, 1, 1}, {4, 2, 5, 8}, {7, 5, 3, 12}, {32, 8, 64, 24}, {32, 4, 32, 24}, {64, 8, 32, 24},
	{32, 16, 128, 16}, {128, 16, 32, 16}, {32, 32, 256, 8}, {5, 3, 17, 13}, {6, 1, 2, 3}, {9, 7, 11, 31},
	{3, 5, 300, 24}, {5, 9, 700, 5}, // long sums on r, odd Q
}

// rowmixVariants are both conjugations and accumulation.
var rowmixVariants = []struct{ conja, conjb, acc bool }{{false, false, false}, {true, false, true}, {false, true, false}, {true, true, true}}

// TestRowmixLevels checks that the AVX-512 channel mixing (8 complex lanes
// a vector, b split into real and imaginary parts when packed) gives the
// AVX2 kernel's bits exactly: each lane sees the same FMAs in the same
// order. Shapes cover the 4 x 2 tile and its tails, lane counts that are
// and are not multiples of 8 (the 1D models' 24, 16 and 8; tails of 1-7),
// both conjugations and accumulation. Skipped where the CPU lacks AVX-512.
func TestRowmixLevels(t *testing.T) {
	if !specHaveC {
		t.Skip("cgo disabled: only the plain-Go kernels are built")
	}
	probe := make([]float32, rowmixScratch(1, 1, 1, 1))
	one := []float32{1, 0}
	if !rowmixLevel(2, 1, 1, 1, 1, one, 2, 2, false, one, 2, 2, false, make([]float32, 2), 2, 2, []float32{1}, false, probe) {
		t.Skip("no AVX-512 on this CPU: level 2 cannot run")
	}
	for _, s := range rowmixLevelShapes {
		for _, v := range rowmixVariants {
			t.Run(fmt.Sprintf("%dx%dx%d_L%d_%v", s.P, s.Q, s.R, s.L, v), func(t *testing.T) {
				f := newRowmixFixture(s.P, s.Q, s.R, s.L)
				scratch := make([]float32, rowmixScratch(s.P, s.Q, s.R, s.L))
				level := func(lv int) func(P, Q, R, L int, a []float32, au, ar int, conja bool, b []float32, br, bv int, conjb bool,
					out []float32, ou, ov int, scale []float32, acc bool) {
					return func(P, Q, R, L int, a []float32, au, ar int, conja bool, b []float32, br, bv int, conjb bool,
						out []float32, ou, ov int, scale []float32, acc bool) {
						if !rowmixLevel(lv, P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc, scratch) {
							t.Fatalf("level %d refused on a CPU with level 2", lv)
						}
					}
				}
				want := f.call(v.conja, v.conjb, v.acc, level(1))
				got := f.call(v.conja, v.conjb, v.acc, level(2))
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("out[%d]: AVX-512 %.9g, AVX2 %.9g", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// TestSpectralConvPortable runs the whole operation, forward and backward,
// with the C kernels and with the plain-Go ones.
func TestSpectralConvPortable(t *testing.T) {
	if !specHaveC {
		t.Skip("cgo disabled: only the plain-Go kernels are built")
	}
	cases := []struct {
		shape    []int
		cout, k0 int
	}{
		{[]int{3, 5, 40}, 6, 13},
		{[]int{2, 5, 16, 12}, 7, 5},
		{[]int{2, 3, 6, 8, 10}, 4, 3},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.shape), func(t *testing.T) {
			ws := tensor.SpectralWeightShape(len(c.shape)-2, c.shape[1], c.cout, c.k0)
			x := gradcheck.Random(7, tensor.Numel(c.shape))
			w := gradcheck.Random(8, tensor.Numel(ws))
			var res [2][3][]float32
			for v, portable := range []bool{false, true} {
				b := New(2)
				b.spec.portable = portable
				tp := tensor.NewTape(b)
				xl := tensor.NewLeaf(b, "x", x, c.shape...)
				wl := tensor.NewLeaf(b, "w", w, ws...)
				xl.SetRequiresGrad(true)
				wl.SetRequiresGrad(true)
				y := tp.SpectralConv(xl, wl, c.k0, tensor.FirstModes(c.k0, xl.Shape[len(xl.Shape)-1]))
				tp.BackwardWith(y, tp.FromHost(gradcheck.Random(9, y.Numel()), y.Shape...))
				res[v] = [3][]float32{tensor.ToHost(b, y), tensor.ToHost(b, xl.Grad), tensor.ToHost(b, wl.Grad)}
				tp.Release()
			}
			for k, name := range []string{"y", "dx", "dw"} {
				var scale float64
				for _, v := range res[1][k] {
					scale = math.Max(scale, math.Abs(float64(v)))
				}
				for j := range res[1][k] {
					if math.Abs(float64(res[0][k][j]-res[1][k][j])) > 1e-5*scale {
						t.Fatalf("%s[%d]: C %.7g, Go %.7g", name, j, res[0][k][j], res[1][k][j])
					}
				}
			}
		})
	}
}

// BenchmarkSpectralKernels times the kernels, plain Go against C, at the
// shapes of the 2D 64x64, K=12, B16 C32 case: the last-axis transform
// (rows x 64 -> 24 and back), a full-axis transform (24 x 64 complex
// times 64 x 12) and one mode row's channel mixing.
func BenchmarkSpectralKernels(b *testing.B) {
	a := gradcheck.Random(1, 1024*64)
	f := gradcheck.Random(2, 64*24)
	c := make([]float32, 1024*64)
	g := gradcheck.Random(3, 2*24*64)
	x := gradcheck.Random(4, 2*64*32)
	o := make([]float32, 2*64*32)
	xs := gradcheck.Random(5, 16*32*24)
	ws := gradcheck.Random(6, 32*32*24)
	zs := make([]float32, 16*32*24)
	sc := gradcheck.Random(7, 12)
	scratch := make([]float32, rowmixScratch(16, 32, 32, 12))
	ks := []struct {
		name  string
		goRun func()
		cRun  func()
		macs  int
	}{
		{"sgemm_1024x64x24",
			func() { sgemmGo(1024, 24, 64, a, 64, f, 24, c, 24, false) },
			func() { sgemmC(1024, 24, 64, a, 64, f, 24, c, 24, false) }, 1024 * 64 * 24},
		{"sgemm_1024x24x64",
			func() { sgemmGo(1024, 64, 24, a, 24, f, 64, c, 64, false) },
			func() { sgemmC(1024, 64, 24, a, 24, f, 64, c, 64, false) }, 1024 * 64 * 24},
		{"cgemm_24x64x12",
			func() { cgemmGo(24, 64, 12, g, 64, x, 12, o, 12, false) },
			func() { cgemmC(24, 64, 12, g, 64, x, 12, o, 12, false) }, 4 * 24 * 64 * 12},
		{"rowmix_16x32x32_L12",
			func() { rowmixGo(16, 32, 32, 12, xs, 32*24, 24, false, ws, 32*24, 24, false, zs, 32*24, 24, sc, false) },
			func() {
				rowmixC(16, 32, 32, 12, xs, 32*24, 24, false, ws, 32*24, 24, false, zs, 32*24, 24, sc, false, scratch)
			}, 4 * 16 * 32 * 32 * 12},
	}
	for _, k := range ks {
		for _, fast := range []bool{false, true} {
			name, run := k.name+"/go", k.goRun
			if fast {
				name, run = k.name+"/c", k.cRun
			}
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					run()
				}
				b.ReportMetric(float64(k.macs)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}

// BenchmarkSpectralConvMixLevels times SpectralConv forward and backward at
// the main job's four levels (U-HNO C0 = 32 on Burgers, batch 32: channels
// 32 to 256 on 128 to 16 points, the modes min(24, N/2)) with the channel
// mixing capped at AVX2 and at AVX-512, in one process, so that the two
// see the same machine state (run with -count to interleave).
func BenchmarkSpectralConvMixLevels(bm *testing.B) {
	for _, sh := range []struct{ c, n, k0 int }{{32, 128, 24}, {64, 64, 24}, {128, 32, 16}, {256, 16, 8}} {
		shape := []int{32, sh.c, sh.n}
		ws := tensor.SpectralWeightShape(1, sh.c, sh.c, sh.k0)
		x := gradcheck.Random(1, tensor.Numel(shape))
		w := gradcheck.Random(2, tensor.Numel(ws))
		for _, cap := range []int{2, 3} {
			b := New(0)
			b.spec.mixCap = cap
			if cap == 3 && !rowmixLevel(2, 1, 1, 1, 1, []float32{1, 0}, 2, 2, false, []float32{1, 0}, 2, 2, false, make([]float32, 2), 2, 2, []float32{1}, false, make([]float32, rowmixScratch(1, 1, 1, 1))) {
				continue // no AVX-512: the AVX2 rows only
			}
			tp := tensor.NewTape(b)
			xl := tensor.NewLeaf(b, "x", x, shape...)
			wl := tensor.NewLeaf(b, "w", w, ws...)
			xl.SetRequiresGrad(true)
			wl.SetRequiresGrad(true)
			seed := gradcheck.Random(3, tensor.Numel(shape))
			bm.Run(fmt.Sprintf("C%d_N%d_K%d/level%d", sh.c, sh.n, sh.k0, cap-1), func(bm *testing.B) {
				for range bm.N {
					y := tp.SpectralConv(xl, wl, sh.k0, tensor.FirstModes(sh.k0, sh.n))
					tp.BackwardWith(y, tp.FromHost(seed, y.Shape...))
					tp.Reset()
				}
			})
			tp.Release()
		}
	}
}

// BenchmarkRowmixLevels times the channel mixing kernel alone, AVX2
// (level 1) against AVX-512 (level 2), at the shapes of one call in the
// main job (U-HNO C0 = 32 on Burgers, batch 32): forward P = batch, R =
// Cin, Q = a block of Cout; the weight gradient P = Cin, R = batch; L the
// level's modes), and the two of FNO at the text's size on NS-2D (width
// 167, batch 16, 12 modes a row). GFLOP/s counts 8 per complex
// multiply-add.
func BenchmarkRowmixLevels(bm *testing.B) {
	for _, s := range []struct{ P, Q, R, L int }{
		{32, 8, 64, 24}, {32, 4, 32, 24}, {32, 16, 128, 16}, {64, 8, 32, 24}, {128, 16, 32, 16}, {32, 32, 256, 8}, {256, 32, 32, 8},
		{16, 167, 167, 12}, {167, 167, 16, 12},
	} {
		el := 2 * s.L
		au, ar := s.R*el, el
		bv, br := el, s.Q*el
		ou, ov := s.Q*el, el
		a := gradcheck.Random(1, s.P*au)
		b := gradcheck.Random(2, s.R*br)
		out := make([]float32, s.P*ou)
		scale := gradcheck.Random(3, s.L)
		scratch := make([]float32, rowmixScratch(s.P, s.Q, s.R, s.L))
		for _, lv := range []int{1, 2} {
			bm.Run(fmt.Sprintf("%dx%dx%d_L%d/level%d", s.P, s.Q, s.R, s.L, lv), func(bm *testing.B) {
				if !rowmixLevel(lv, s.P, s.Q, s.R, s.L, a, au, ar, false, b, br, bv, false, out, ou, ov, scale, false, scratch) {
					bm.Skip("level not supported by this CPU")
				}
				for range bm.N {
					rowmixLevel(lv, s.P, s.Q, s.R, s.L, a, au, ar, false, b, br, bv, false, out, ou, ov, scale, false, scratch)
				}
				bm.ReportMetric(float64(8*s.P*s.Q*s.R*s.L)*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// rowmixDigest hashes the bits of the channel mixing at ISA level lv over
// TestRowmixLevels' shapes and variants (false: the CPU lacks the level).
func rowmixDigest(lv int) (string, bool) {
	h := sha256.New()
	for _, s := range rowmixLevelShapes {
		for _, v := range rowmixVariants {
			f := newRowmixFixture(s.P, s.Q, s.R, s.L)
			scratch := make([]float32, rowmixScratch(s.P, s.Q, s.R, s.L))
			ok := true
			out := f.call(v.conja, v.conjb, v.acc, func(P, Q, R, L int, a []float32, au, ar int, conja bool, b []float32, br, bv int, conjb bool,
				out []float32, ou, ov int, scale []float32, acc bool) {
				ok = rowmixLevel(lv, P, Q, R, L, a, au, ar, conja, b, br, bv, conjb, out, ou, ov, scale, acc, scratch)
			})
			if !ok {
				return "", false
			}
			binary.Write(h, binary.LittleEndian, out)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], true
}

// TestRowmixAVX2Bits pins the bits of the AVX2 channel mixing (level 1,
// rowmix8_v3) over TestRowmixLevels' cases (the digest taken at 5d5da05,
// and again at 88c91a2 when two shapes were added).
// TestRowmixLevels ties AVX-512's bits to AVX2's but skips on a CPU
// without AVX-512, where this one still runs: any CPU with AVX2 and FMA
// (level 1 is selectable on AVX-512 ones too). A change to the kernel
// that keeps its FMAs and their order keeps the digest.
func TestRowmixAVX2Bits(t *testing.T) {
	if !specHaveC {
		t.Skip("cgo disabled: only the plain-Go kernels are built")
	}
	got, ok := rowmixDigest(1)
	if !ok {
		t.Skip("no AVX2 and FMA on this CPU: level 1 cannot run")
	}
	if os.Getenv("UHNO_PRINT_GOLDEN") != "" {
		t.Logf("digest %s", got)
	}
	if want := "9ccdd9274c3011b1"; got != want {
		t.Errorf("AVX2 channel mixing digest %s, want %s: its bits changed", got, want)
	}
}
