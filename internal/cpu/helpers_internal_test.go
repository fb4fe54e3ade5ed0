package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randFloats returns n standard-normal values from r, or, with nan, n
// NaNs: poison for an output a kernel must overwrite.
func randFloats(r *rand.Rand, n int, nan bool) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
		if nan {
			v[i] = float32(math.NaN())
		}
	}
	return v
}

// requireBits fails t at the first element of got whose bits differ from
// want's.
func requireBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: [%d] = %g, Go %g", name, i, got[i], want[i])
		}
	}
}
