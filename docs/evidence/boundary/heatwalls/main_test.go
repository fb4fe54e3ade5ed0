package main

import (
	"math"
	"testing"
)

// TestExactSolution checks the formula against the PDE: the walls hold a
// and b, and u_t - nu u_xx, by centred differences of step
// h = 1e-3 (truncation O(h^2): about 1e-4 relative here), vanishes inside.
func TestExactSolution(t *testing.T) {
	s := Default
	for i := range 5 {
		tr := s.Draw(i)
		for _, tm := range []float64{0.05, 0.1, 0.5} {
			if a, b := s.At(tr, 0, tm), s.At(tr, 1, tm); math.Abs(a-tr.A) > 1e-12 || math.Abs(b-tr.B) > 1e-12 {
				t.Fatalf("trajectory %d, t %g: walls %g, %g, want %g, %g", i, tm, a, b, tr.A, tr.B)
			}
			const h = 1e-3
			for _, x := range []float64{0.05, 0.3, 0.71, 0.95} {
				ut := (s.At(tr, x, tm+h) - s.At(tr, x, tm-h)) / (2 * h)
				uxx := (s.At(tr, x+h, tm) - 2*s.At(tr, x, tm) + s.At(tr, x-h, tm)) / (h * h)
				if r := math.Abs(ut - s.Nu*uxx); r > 1e-3*(math.Abs(ut)+1e-2) {
					t.Errorf("trajectory %d, x %g, t %g: u_t %g, nu u_xx %g", i, x, tm, ut, s.Nu*uxx)
				}
			}
		}
	}
}

// TestArrayLayout checks the array's order: trajectory, frame, point.
func TestArrayLayout(t *testing.T) {
	s := Default
	s.Trajectories = 2
	a := s.Array()
	if len(a) != 2*s.Frames*s.Grid {
		t.Fatalf("%d values", len(a))
	}
	tr := s.Draw(1)
	j, p := 7, 100
	want := s.At(tr, float64(p)/float64(s.Grid-1), float64(j)*s.Dt)
	if got := a[(s.Frames+j)*s.Grid+p]; math.Abs(float64(got)-want) > 1e-6 {
		t.Fatalf("[1, %d, %d] = %g, want %g", j, p, got, want)
	}
}
