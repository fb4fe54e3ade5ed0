package cpu

import (
	"math"
	"strconv"
	"testing"
)

// addCases returns inputs for the accumulation loops: every pair of edge
// values (signed zeros, subnormals, which must add unflushed, values
// whose sum overflows or cancels, infinities, NaN) and then a long
// smooth tail, so the vector loop runs and not only its remainder.
func addCases(tail int) (y, x []float32) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	special := []float32{0, negZero, 1e-39, -1e-39, 1e-45, 3e-38, inf, -inf, nan, 1, -1, 3.4e38, -3.4e38, 1.0000001, 0.1}
	for _, a := range special {
		for _, c := range special {
			y, x = append(y, a), append(x, c)
		}
	}
	for i := range tail {
		y = append(y, float32(math.Sin(float64(i)*1.3)))
		x = append(x, float32(math.Cos(float64(i)*0.7))/3)
	}
	return y, x
}

// sameFloat reports whether a and b are the same float32, any NaN equal to
// any other (the payload of a NaN is not part of what these loops
// promise).
func sameFloat(a, b float32) bool {
	if a != a && b != b {
		return true
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

// TestAddFastBits compares add_amd64.c's axpy and interleaved sums with
// the Go loops bit for bit, at lengths around the vector widths (every
// remainder) and with the scales the backend uses (1, 0.75, 0.25) and
// others, so a fused multiply-add or a reassociated sum shows.
func TestAddFastBits(t *testing.T) {
	if !haveFastAdd {
		t.Skip("no C accumulation loops in this build (cgo off or not amd64)")
	}
	y0, x := addCases(3000)
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 63, 255, 256, 257, len(y0)} {
		for _, a := range []float32{1, 0.75, 0.25, -1.7, 1.0000001, 3e-39, float32(math.Inf(-1))} {
			got, want := append([]float32(nil), y0[:n]...), append([]float32(nil), y0[:n]...)
			axpyFast(got, x[:n], a)
			axpyGo(want, x[:n], a)
			for i := range want {
				if !sameFloat(got[i], want[i]) {
					t.Fatalf("n %d, a %g: y[%d] = %g + a·%g: C %g (%#08x), Go %g (%#08x)",
						n, a, i, y0[i], x[i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
		for _, off := range []int{0, 1, 3} { // unaligned rows
			if off > n {
				continue
			}
			p0 := [8]float32{0, 1e-39, -2, 3.4e38, 0.1, -0.1, 7, float32(math.Copysign(0, -1))}
			got, want := p0, p0
			addInterleavedFast(&got, x[off:n])
			addInterleavedGo(&want, x[off:n])
			for j := range want {
				if !sameFloat(got[j], want[j]) {
					t.Fatalf("n %d, offset %d: p[%d] C %g (%#08x), Go %g (%#08x)", n, off, j, got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
				}
			}
		}
	}
}

// BenchmarkAxpy times y += a x at a 2D activation's length (64x64), the
// C loop beside the Go one, and at the shortest length axpy hands to C.
func BenchmarkAxpy(b *testing.B) {
	for _, n := range []int{minFastAdd, 4096} {
		y, x := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(i%17) / 17
		}
		for _, c := range []struct {
			name string
			f    func(y, x []float32, a float32)
		}{{"go", axpyGo}, {"c", axpyFast}} {
			b.Run(c.name+"/n="+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					c.f(y, x, 0.5)
				}
			})
		}
	}
}

// BenchmarkAddInterleaved times the bias gradient's row sums at 64x64.
func BenchmarkAddInterleaved(b *testing.B) {
	for _, n := range []int{minFastAdd, 4096} {
		row := make([]float32, n)
		for i := range row {
			row[i] = float32(i%13) / 13
		}
		for _, c := range []struct {
			name string
			f    func(p *[8]float32, row []float32)
		}{{"go", addInterleavedGo}, {"c", addInterleavedFast}} {
			b.Run(c.name+"/n="+strconv.Itoa(n), func(b *testing.B) {
				var p [8]float32
				b.SetBytes(int64(4 * n))
				for b.Loop() {
					c.f(&p, row)
				}
			})
		}
	}
}
