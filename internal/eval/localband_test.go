package eval

import (
	"math"
	"testing"
)

// TestLocalBandEnergy: a smooth sine has its local energy in the low band
// everywhere; a field that is smooth except for one jump has its mid and
// high band energy within a window of the jump and none far from it.
func TestLocalBandEnergy(t *testing.T) {
	const n, w = 128, 32
	sine := make([]float32, n)
	for i := range sine {
		sine[i] = float32(math.Sin(2 * math.Pi * float64(i) / n))
	}
	e := LocalBandEnergy(sine, w)
	for x := range n {
		if e[0][x] <= 0 || e[1][x] > 1e-3*e[0][x] || e[2][x] > 1e-3*e[0][x] {
			t.Fatalf("sine at x=%d: bands %g %g %g, want the energy in the low band", x, e[0][x], e[1][x], e[2][x])
		}
	}

	// A smooth bump with a shock at x = 64: u = 1 left of it, -1 right of
	// it, joined smoothly through the periodic boundary far away.
	shock := make([]float32, n)
	for i := range shock {
		shock[i] = float32(math.Cos(math.Pi * float64(i-64) / n)) // smooth, sign change at the boundary only
		if i >= 64 {
			shock[i] = -shock[i]
		}
	}
	e = LocalBandEnergy(shock, w)
	peak := 0
	for x := range n {
		if e[2][x] > e[2][peak] {
			peak = x
		}
	}
	if peak < 64-2 || peak > 64+2 {
		t.Errorf("high-band energy peaks at x=%d, want at the jump (64)", peak)
	}
	for x := range n {
		d := min((x-64+n)%n, (64-x+n)%n)
		if d > w/2+1 && (e[1][x] > 1e-3*e[1][64] || e[2][x] > 1e-3*e[2][64]) {
			t.Errorf("x=%d, %d points from the jump: mid %g, high %g (jump: %g, %g), want none", x, d, e[1][x], e[2][x], e[1][64], e[2][64])
		}
	}
}
