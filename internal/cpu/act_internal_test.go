package cpu

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	cpuid "golang.org/x/sys/cpu"
)

// TestGELUFast compares the vectorised GELU with the float64 reference on
// a dense grid over [-12, 12] (both tails, the clamp at |x/sqrt2| = 4 and
// the exp underflow region included).
func TestGELUFast(t *testing.T) {
	if !haveFastGELU {
		t.Skip("no fast GELU in this build (the reference runs instead)")
	}
	const n = 24001
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(-12 + 24*float64(i)/(n-1))
	}
	x = append(x, 0, 1e-30, -1e-30)
	got, want := make([]float32, len(x)), make([]float32, len(x))
	geluFast(got, x)
	geluGo(want, x)
	for i := range x {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= 2e-6*math.Max(1, math.Abs(float64(want[i])))) {
			t.Fatalf("gelu(%g) = %g, reference %g", x[i], got[i], want[i])
		}
	}
	x = x[:n]
	dy := make([]float32, n)
	for i := range dy {
		dy[i] = 1
	}
	gotD, wantD := make([]float32, n), make([]float32, n)
	geluBackwardFast(gotD, dy, x)
	geluBackwardGo(wantD, dy, x)
	for i := range x {
		if d := math.Abs(float64(gotD[i] - wantD[i])); d > 2e-6 {
			t.Fatalf("gelu'(%g) = %g, reference %g", x[i], gotD[i], wantD[i])
		}
	}
}

// TestFlushToZeroIsScoped: the C kernels flush subnormals (ftz_amd64.h)
// but restore the caller's MXCSR, so Go arithmetic afterwards still keeps
// subnormals.
func TestFlushToZeroIsScoped(t *testing.T) {
	if !haveFastGELU {
		t.Skip("no C kernels in this build")
	}
	sub := []float32{1e-39, 3e-39} // float32 subnormals
	y := make([]float32, 2)
	geluFast(y, sub)
	if y[0] != 0 || y[1] != 0 {
		t.Fatalf("gelu of subnormals inside the kernel = %v, want flushed to 0", y)
	}
	if p := sub[0] + sub[1]; p == 0 { // 4e-39, subnormal
		t.Fatalf("Go arithmetic after a kernel call flushed a subnormal: MXCSR was not restored")
	}
}

// TestReLUFast compares the branch-free ReLU loops with the Go loops bit
// for bit on values that test each edge: signed zeros, subnormals (which
// must pass unflushed), NaNs, infinities, and dx holding -0 where x <= 0
// (left as -0, not turned into +0 by adding a zero).
func TestReLUFast(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	special := []float32{0, negZero, 1e-39, -1e-39, 1e-45, nan, -nan, inf, -inf, 1, -1, 3.4e38, -3.4e38}
	var x, dy, dx0 []float32
	for i, a := range special {
		for j, c := range special {
			x = append(x, a)
			dy = append(dy, c)
			dx0 = append(dx0, special[(i+j)%len(special)])
		}
	}
	// A long tail so the vector loop runs, not only its remainder.
	for i := range 1000 {
		v := float32(math.Sin(float64(i) * 1.7))
		x, dy, dx0 = append(x, v), append(dy, -v/3), append(dx0, negZero)
	}
	n := len(x)
	got, want := make([]float32, n), make([]float32, n)
	reluFast(got, x)
	reluGo(want, x)
	for i := range x {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("relu(%g) = %g (%#08x), Go %g (%#08x)", x[i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	gotD, wantD := append([]float32(nil), dx0...), append([]float32(nil), dx0...)
	reluBackwardFast(gotD, dy, x)
	reluBackwardGo(wantD, dy, x)
	for i := range x {
		if math.Float32bits(gotD[i]) != math.Float32bits(wantD[i]) {
			t.Fatalf("relu backward at x %g, dy %g, dx %g: %g (%#08x), Go %g (%#08x)",
				x[i], dy[i], dx0[i], gotD[i], math.Float32bits(gotD[i]), wantD[i], math.Float32bits(wantD[i]))
		}
	}
}

// BenchmarkReLU times ReLU and its backward over 4M random-sign values:
// the Go loops against the C loops.
func BenchmarkReLU(bm *testing.B) {
	const n = 1 << 22
	x, dy, dx := make([]float32, n), make([]float32, n), make([]float32, n)
	s := uint32(1)
	for i := range x {
		s = s*1664525 + 1013904223
		x[i] = float32(int32(s)) / (1 << 31)
		dy[i] = x[i] / 2
	}
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"forward/go", func() { reluGo(dx, x) }},
		{"forward/c", func() { reluFast(dx, x) }},
		{"backward/go", func() { reluBackwardGo(dx, dy, x) }},
		{"backward/c", func() { reluBackwardFast(dx, dy, x) }},
	} {
		bm.Run(c.name, func(bm *testing.B) {
			bm.SetBytes(3 * 4 * n)
			for bm.Loop() {
				c.f()
			}
		})
	}
}

// BenchmarkGELUKernels times the GELU loops alone on one thread over 4M
// standard-normal values (activations' typical range): forward and
// backward.
func BenchmarkGELUKernels(bm *testing.B) {
	const n = 1 << 22
	x, dy, y := make([]float32, n), make([]float32, n), make([]float32, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(r.NormFloat64())
		dy[i] = float32(r.NormFloat64())
	}
	bm.Run("forward", func(bm *testing.B) {
		bm.SetBytes(2 * 4 * n)
		for bm.Loop() {
			geluFast(y, x)
		}
	})
	bm.Run("backward", func(bm *testing.B) {
		bm.SetBytes(3 * 4 * n)
		for bm.Loop() {
			geluBackwardFast(y, dy, x)
		}
	})
}

// geluDigests hashes the bits of geluFast and geluBackwardFast over a fixed
// input: the dense grid of TestGELUFast, standard normals and the special
// values, at lengths that leave every vector tail (n mod 16 = 0..15).
func geluDigests() (fwd, bwd string) {
	r := rand.New(rand.NewPCG(7, 11))
	var x []float32
	for i := range 24001 {
		x = append(x, float32(-12+24*float64(i)/24000))
	}
	for range 1 << 18 {
		x = append(x, float32(3*r.NormFloat64()))
	}
	x = append(x, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 4*math.Sqrt2, -4*math.Sqrt2, 200, -200,
		float32(math.Inf(1)), float32(math.Inf(-1)))
	hf, hb := sha256.New(), sha256.New()
	for tail := range 16 {
		n := len(x) - tail
		y, dx, dy := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range dy {
			dy[i] = float32(r.NormFloat64())
			dx[i] = float32(i%7) - 3
		}
		geluFast(y, x[:n])
		geluBackwardFast(dx, dy, x[:n])
		binary.Write(hf, binary.LittleEndian, y)
		binary.Write(hb, binary.LittleEndian, dx)
	}
	return hex.EncodeToString(hf.Sum(nil))[:16], hex.EncodeToString(hb.Sum(nil))[:16]
}

// TestGELUFastBits pins the bits of the AVX2 GELU kernels (act_amd64.c,
// gelu_avx2): the forward's digest is the one the scalar AVX2 clone gave
// before (1faf506), the backward's the vectorised loop's own (it differs
// from the scalar one by at most one ulp near 1 on about 4% of elements:
// D-gelu-avx2). It runs where that variant runs (x86-64-v3 without v4);
// elsewhere the clones run, compiled as before.
func TestGELUFastBits(t *testing.T) {
	if !haveFastGELU {
		t.Skip("no fast GELU in this build")
	}
	if !cpuid.X86.HasAVX2 || !cpuid.X86.HasFMA || !cpuid.X86.HasBMI2 || cpuid.X86.HasAVX512F {
		t.Skip("the digests are of the x86-64-v3 variant (AVX2, FMA, BMI2; no AVX-512F)")
	}
	fwd, bwd := geluDigests()
	if os.Getenv("UHNO_PRINT_GOLDEN") != "" {
		t.Logf("forward %s backward %s", fwd, bwd)
	}
	if want := "d7df805eb6dc3895"; fwd != want {
		t.Errorf("forward digest %s, want %s: the AVX2 GELU's bits changed", fwd, want)
	}
	if want := "1f4eaf12a1d78be6"; bwd != want {
		t.Errorf("backward digest %s, want %s: the AVX2 GELU backward's bits changed", bwd, want)
	}
}
