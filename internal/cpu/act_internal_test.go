package cpu

import (
	"math"
	"testing"
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
