package cpu_test

import (
	"math"
	"math/cmplx"
	"runtime"
	"slices"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// first is FNO's list tensor.FirstModes on x's last axis.
func first(x *tensor.Tensor, k0 int) []int {
	return tensor.FirstModes(k0, x.Shape[len(x.Shape)-1])
}

// refSpectralConv is SpectralConv by definition, in float64: the full
// complex DFT of every input field over all axes, the kept modes of
// Eq. mode-cap mixed with the weight of their corner on the full
// frequency grid (corner bit d-2-a set when full axis a is in its negative
// block [N-K:N], as itertools.product in the yardstick), and numpy's
// irfftn of the half spectrum: a complex inverse over the full axes and
// the Hermitian irfft over the last one, y = 1/prod(N) sum c_k Re(Z_k
// exp(+i theta)) over last-axis bins 0 <= k <= N/2 with c_k = 1 for the
// DC and Nyquist bins (only their real parts count) and 2 otherwise.
func refSpectralConv(x []float32, shape []int, w []float32, cout, k0 int) []float64 {
	return refSpectralConvModes(x, shape, w, cout, k0, nil)
}

// refSpectralConvModes is refSpectralConv keeping the last-axis
// frequencies modes (slot j is frequency modes[j]) when modes is not nil:
// SpectralConv's definition for any list.
func refSpectralConvModes(x []float32, shape []int, w []float32, cout, k0 int, modes []int) []float64 {
	nb, cin, ns := shape[0], shape[1], shape[2:]
	d, ntot := len(ns), tensor.Numel(ns)
	// multi[flat] is the per-axis index of a row-major flat grid index.
	multi := make([][]int, ntot)
	for flat := range multi {
		v, rest := make([]int, d), flat
		for a := d - 1; a >= 0; a-- {
			v[a] = rest % ns[a]
			rest /= ns[a]
		}
		multi[flat] = v
	}
	// phase is sum_a k_a n_a / N_a (in turns).
	phase := func(k, n []int) float64 {
		var t float64
		for a := range ns {
			t += float64(k[a]*n[a]) / float64(ns[a])
		}
		return 2 * math.Pi * t
	}

	xf := make([]complex128, nb*cin*ntot)
	for f := 0; f < nb*cin; f++ {
		for kf := 0; kf < ntot; kf++ {
			var s complex128
			for nf := 0; nf < ntot; nf++ {
				s += complex(float64(x[f*ntot+nf]), 0) * cmplx.Exp(complex(0, -phase(multi[kf], multi[nf])))
			}
			xf[f*ntot+kf] = s
		}
	}

	kvol := 1
	for range ns {
		kvol *= k0
	}
	z := make([]complex128, nb*cout*ntot)
	for kf := 0; kf < ntot; kf++ {
		kv := multi[kf]
		corner, off, kept := 0, 0, true
		for a, n := range ns {
			kc := min(k0, n/2)
			j := kv[a]
			switch {
			case a == d-1 && modes != nil:
				slot := slices.Index(modes, j)
				if slot < 0 {
					kept = false
				}
				j = slot
			case j < kc:
			case a < d-1 && j >= n-kc:
				j -= n - kc
				corner |= 1 << (d - 2 - a)
			default:
				kept = false
			}
			off = off*k0 + j
		}
		if !kept {
			continue
		}
		for b := 0; b < nb; b++ {
			for o := 0; o < cout; o++ {
				var s complex128
				for i := 0; i < cin; i++ {
					wi := 2 * (((corner*cin+i)*cout+o)*kvol + off)
					s += xf[(b*cin+i)*ntot+kf] * complex(float64(w[wi]), float64(w[wi+1]))
				}
				z[(b*cout+o)*ntot+kf] = s
			}
		}
	}

	nl := ns[d-1]
	y := make([]float64, nb*cout*ntot)
	for f := 0; f < nb*cout; f++ {
		for nf := 0; nf < ntot; nf++ {
			nv := multi[nf]
			var s float64
			for kf := 0; kf < ntot; kf++ {
				kv := multi[kf]
				kl := kv[d-1]
				if 2*kl > nl {
					continue // not stored in the rfft half spectrum
				}
				c := 2.0
				if kl == 0 || 2*kl == nl {
					c = 1
				}
				s += c * real(z[f*ntot+kf]*cmplx.Exp(complex(0, phase(kv, nv))))
			}
			y[f*ntot+nf] = s / float64(ntot)
		}
	}
	return y
}

// spectralForward runs SpectralConv on b without recording.
func spectralForward(b *cpu.Backend, x []float32, shape []int, w []float32, cout, k0 int) []float32 {
	tp := tensor.NewTape(b)
	defer tp.Release()
	tp.SetGrad(false)
	xl := tensor.NewLeaf(b, "x", x, shape...)
	wl := tensor.NewLeaf(b, "w", w, tensor.SpectralWeightShape(len(shape)-2, shape[1], cout, k0)...)
	return tensor.ToHost(b, tp.SpectralConv(xl, wl, k0, first(xl, k0)))
}

// spectralCases are [batch, Cin, spatial...] shapes with Cout and K0,
// covering 1D to 3D, odd sizes, N = 2 and N = 3, and K0 > N/2 where
// Eq. mode-cap is active (then on a full axis of even N the two blocks
// [0:N/2] and [N/2:N] cover every frequency, Nyquist included).
var spectralCases = []struct {
	name      string
	shape     []int
	cout, k0  int
	capActive bool
}{
	{"1D/N16_K5", []int{2, 3, 16}, 4, 5, false},
	{"1D/N8_K12cap4", []int{2, 3, 8}, 2, 12, true},
	{"1D/N6_K12cap3", []int{2, 2, 6}, 3, 12, true},
	{"1D/N7_K2", []int{2, 2, 7}, 2, 2, false},
	{"1D/N3_K4cap1", []int{2, 2, 3}, 2, 4, true},
	{"1D/N2_K3cap1", []int{1, 2, 2}, 3, 3, true},
	{"1D/N64_K12", []int{3, 9, 64}, 7, 12, false},
	{"2D/8x6_K3", []int{2, 3, 8, 6}, 4, 3, false},
	{"2D/8x8_K12cap4", []int{2, 2, 8, 8}, 3, 12, true},
	{"2D/6x3_K4cap3x1", []int{1, 2, 6, 3}, 2, 4, true},
	{"2D/5x7_K2", []int{1, 2, 5, 7}, 3, 2, false},
	{"2D/2x2_K1", []int{1, 2, 2, 2}, 2, 1, false},
	{"2D/16x16_K8", []int{2, 5, 16, 16}, 7, 8, false},
	{"3D/4x6x4_K2", []int{1, 2, 4, 6, 4}, 3, 2, false},
	{"3D/4x4x4_K12cap2", []int{1, 2, 4, 4, 4}, 2, 12, true},
	{"3D/3x5x6_K2cap1x2x2", []int{2, 2, 3, 5, 6}, 2, 2, true},
}

func TestSpectralConvForward(t *testing.T) {
	b := cpu.New(2)
	for _, c := range spectralCases {
		t.Run(c.name, func(t *testing.T) {
			d := len(c.shape) - 2
			capped := false
			for _, n := range c.shape[2:] {
				capped = capped || tensor.ModeCap(c.k0, n) < c.k0
			}
			if capped != c.capActive {
				t.Fatalf("case table: cap active is %v, marked %v", capped, c.capActive)
			}
			x := gradcheck.Random(11, tensor.Numel(c.shape))
			w := gradcheck.Random(12, tensor.Numel(tensor.SpectralWeightShape(d, c.shape[1], c.cout, c.k0)))
			got := spectralForward(b, x, c.shape, w, c.cout, c.k0)
			want := refSpectralConv(x, c.shape, w, c.cout, c.k0)
			var scale float64
			for _, v := range want {
				scale = math.Max(scale, math.Abs(v))
			}
			if scale == 0 {
				t.Fatal("reference output is zero: the case keeps no mode")
			}
			for j := range want {
				if math.Abs(float64(got[j])-want[j]) > 1e-5*scale {
					t.Fatalf("y[%d] = %.7g, want %.7g (max |y| %.3g)", j, got[j], want[j], scale)
				}
			}
		})
	}
}

// TestSpectralConvCorners gives every corner but one zero weights, so the
// output is the contribution of that corner alone and must differ from
// the others': a swapped corner order would fail the forward check above
// only through this structure.
func TestSpectralConvCorners(t *testing.T) {
	b := cpu.New(2)
	shape, cout, k0 := []int{1, 2, 4, 6, 4}, 2, 2
	x := gradcheck.Random(21, tensor.Numel(shape))
	ws := tensor.SpectralWeightShape(3, shape[1], cout, k0)
	per := tensor.Numel(ws[1:])
	for corner := 0; corner < ws[0]; corner++ {
		w := make([]float32, tensor.Numel(ws))
		copy(w[corner*per:(corner+1)*per], gradcheck.Random(22, per))
		got := spectralForward(b, x, shape, w, cout, k0)
		want := refSpectralConv(x, shape, w, cout, k0)
		var norm float64
		for j := range want {
			norm = math.Max(norm, math.Abs(want[j]))
			if math.Abs(float64(got[j])-want[j]) > 1e-5 {
				t.Fatalf("corner %d: y[%d] = %.7g, want %.7g", corner, j, got[j], want[j])
			}
		}
		if norm < 1e-3 {
			t.Fatalf("corner %d contributes nothing", corner)
		}
	}
}

// TestSpectralConvKnownModes feeds single real Fourier modes through
// identity weights (w[c, i, o] = delta_io): a kept mode comes back
// unchanged, a mode outside the kept set vanishes.
func TestSpectralConvKnownModes(t *testing.T) {
	b := cpu.New(2)
	cases := []struct {
		name string
		grid []int
		k0   int
		freq []int // the input is cos(2 pi sum_a freq_a n_a / N_a + 0.3)
		kept bool
	}{
		{"1D/kept", []int{16}, 4, []int{3}, true},
		{"1D/DC", []int{16}, 4, []int{0}, true},
		{"1D/dropped", []int{16}, 4, []int{5}, false},
		{"1D/cap_Nyquist_dropped", []int{8}, 12, []int{4}, false},
		{"2D/positive", []int{8, 8}, 2, []int{1, 1}, true},
		{"2D/last_axis_DC", []int{8, 8}, 2, []int{1, 0}, true},
		{"2D/negative", []int{8, 8}, 2, []int{-1, 1}, true},
		{"2D/dropped_full_axis", []int{8, 8}, 2, []int{2, 1}, false},
		{"2D/dropped_last_axis", []int{8, 8}, 2, []int{0, 2}, false},
		{"2D/cap_full_axis_Nyquist_kept", []int{4, 8}, 12, []int{2, 1}, true},
		{"2D/cap_last_axis_Nyquist_dropped", []int{8, 8}, 12, []int{1, 4}, false},
		{"3D/kept", []int{4, 6, 4}, 2, []int{-1, 1, 1}, true},
		{"3D/dropped", []int{4, 6, 4}, 2, []int{1, 2, 1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, ch := len(c.grid), 2
			shape := append([]int{1, ch}, c.grid...)
			sp := tensor.Numel(c.grid)
			x := make([]float32, ch*sp)
			for n := 0; n < sp; n++ {
				var turns float64
				rest := n
				for a := d - 1; a >= 0; a-- {
					turns += float64(c.freq[a]*(rest%c.grid[a])) / float64(c.grid[a])
					rest /= c.grid[a]
				}
				v := float32(math.Cos(2*math.Pi*turns + 0.3))
				x[n], x[sp+n] = v, -2*v
			}
			ws := tensor.SpectralWeightShape(d, ch, ch, c.k0)
			w := make([]float32, tensor.Numel(ws))
			kvol := tensor.Numel(ws[3 : 3+d])
			for corner := 0; corner < ws[0]; corner++ {
				for i := 0; i < ch; i++ {
					for m := 0; m < kvol; m++ {
						w[2*(((corner*ch+i)*ch+i)*kvol+m)] = 1
					}
				}
			}
			y := spectralForward(b, x, shape, w, ch, c.k0)
			for j := range y {
				want := float32(0)
				if c.kept {
					want = x[j]
				}
				if math.Abs(float64(y[j]-want)) > 1e-5 {
					t.Fatalf("y[%d] = %.7g, want %.7g", j, y[j], want)
				}
			}
		})
	}
}

func TestSpectralConvGrad(t *testing.T) {
	b := cpu.New(2)
	cases := []struct {
		name     string
		shape    []int
		cout, k0 int
	}{
		{"1D", []int{2, 3, 8}, 2, 3},
		{"1D/cap", []int{2, 2, 6}, 3, 5},
		{"2D", []int{2, 2, 6, 5}, 3, 2},
		{"2D/cap", []int{1, 3, 4, 4}, 2, 3},
		{"3D", []int{1, 2, 4, 3, 4}, 2, 1},
		{"3D/cap", []int{1, 2, 4, 4, 2}, 3, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := len(c.shape) - 2
			x := in("x", 31, c.shape...)
			w := in("w", 32, tensor.SpectralWeightShape(d, c.shape[1], c.cout, c.k0)...)
			gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.SpectralConv(v[0], v[1], c.k0, first(v[0], c.k0))
			}, []gradcheck.Input{x, w}, gradcheck.Options{})
		})
	}
}

// TestSpectralConvNoModes: an axis of length 1 keeps no mode (K = 0), so the
// output is zero and the backward adds nothing.
func TestSpectralConvNoModes(t *testing.T) {
	b := cpu.New(2)
	shape, cout, k0 := []int{2, 2, 1, 8}, 2, 3
	ws := tensor.SpectralWeightShape(2, 2, cout, k0)
	tp := tensor.NewTape(b)
	defer tp.Release()
	x := tensor.NewLeaf(b, "x", gradcheck.Random(41, tensor.Numel(shape)), shape...)
	w := tensor.NewLeaf(b, "w", gradcheck.Random(42, tensor.Numel(ws)), ws...)
	x.SetRequiresGrad(true)
	w.SetRequiresGrad(true)
	y := tp.SpectralConv(x, w, k0, first(x, k0))
	for j, v := range tensor.ToHost(b, y) {
		if v != 0 {
			t.Fatalf("y[%d] = %g, want 0", j, v)
		}
	}
	tp.BackwardWith(y, tp.FromHost(gradcheck.Random(43, y.Numel()), y.Shape...))
	for _, g := range [][]float32{tensor.ToHost(b, x.Grad), tensor.ToHost(b, w.Grad)} {
		for j, v := range g {
			if v != 0 {
				t.Fatalf("gradient[%d] = %g, want 0", j, v)
			}
		}
	}
}

// spectralRun returns y, dx and dw of one forward and backward pass.
func spectralRun(b *cpu.Backend, shape []int, cout, k0 int) [3][]float32 {
	d := len(shape) - 2
	ws := tensor.SpectralWeightShape(d, shape[1], cout, k0)
	tp := tensor.NewTape(b)
	defer tp.Release()
	x := tensor.NewLeaf(b, "x", gradcheck.Random(51, tensor.Numel(shape)), shape...)
	w := tensor.NewLeaf(b, "w", gradcheck.Random(52, tensor.Numel(ws)), ws...)
	x.SetRequiresGrad(true)
	w.SetRequiresGrad(true)
	y := tp.SpectralConv(x, w, k0, first(x, k0))
	tp.BackwardWith(y, tp.FromHost(gradcheck.Random(53, y.Numel()), y.Shape...))
	return [3][]float32{tensor.ToHost(b, y), tensor.ToHost(b, x.Grad), tensor.ToHost(b, w.Grad)}
}

// TestSpectralConvDeterministic requires bit-identical outputs and
// gradients with 1 and 4 threads, on shapes large enough to split every
// stage into several chunks.
func TestSpectralConvDeterministic(t *testing.T) {
	cases := []struct {
		name     string
		shape    []int
		cout, k0 int
	}{
		{"1D", []int{8, 8, 128}, 8, 24},
		{"2D", []int{4, 8, 32, 32}, 8, 12},
		{"3D", []int{2, 4, 8, 8, 8}, 6, 12},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			one := spectralRun(cpu.New(1), c.shape, c.cout, c.k0)
			four := spectralRun(cpu.New(4), c.shape, c.cout, c.k0)
			for k, name := range []string{"y", "dx", "dw"} {
				for j := range one[k] {
					if one[k][j] != four[k][j] {
						t.Fatalf("%s[%d]: %g with 1 thread, %g with 4", name, j, one[k][j], four[k][j])
					}
				}
			}
		})
	}
}

// BenchmarkSpectralConv times the paper's sizes (Sec. 4.1) with K0 = 12,
// the U-levels' coarser grids (where Eq. mode-cap lowers K) and 3D. Run
// with -cpu 1,2 for the thread counts.
func BenchmarkSpectralConv(b *testing.B) {
	cases := []struct {
		name     string
		shape    []int
		cout, k0 int
	}{
		{"1D_B32_C32_N128_K24", []int{32, 32, 128}, 32, 24},
		{"2D_B16_C32_64x64_K12", []int{16, 32, 64, 64}, 32, 12},
		{"2D_B16_C64_32x32_K12", []int{16, 64, 32, 32}, 64, 12},
		{"2D_B16_C128_16x16_K12cap8", []int{16, 128, 16, 16}, 128, 12},
		{"2D_B16_C256_8x8_K12cap4", []int{16, 256, 8, 8}, 256, 12},
		{"3D_B2_C24_16^3_K12cap8", []int{2, 24, 16, 16, 16}, 24, 12},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			be := cpu.New(runtime.GOMAXPROCS(0))
			d := len(c.shape) - 2
			ws := tensor.SpectralWeightShape(d, c.shape[1], c.cout, c.k0)
			x := tensor.NewLeaf(be, "x", gradcheck.Random(1, tensor.Numel(c.shape)), c.shape...)
			w := tensor.NewLeaf(be, "w", gradcheck.Random(2, tensor.Numel(ws)), ws...)
			x.SetRequiresGrad(true)
			w.SetRequiresGrad(true)
			for _, bwd := range []bool{false, true} {
				name := "fwd"
				if bwd {
					name = "fwd+bwd"
				}
				b.Run(name, func(b *testing.B) {
					tp := tensor.NewTape(be)
					defer tp.Release()
					tp.SetGrad(bwd)
					var seed []float32
					for i := 0; i < b.N; i++ {
						tp.Reset()
						y := tp.SpectralConv(x, w, c.k0, first(x, c.k0))
						if bwd {
							if seed == nil {
								seed = gradcheck.Random(3, y.Numel())
							}
							tp.BackwardWith(y, tp.FromHost(seed, y.Shape...))
						}
					}
				})
			}
		})
	}
}
