package train

import (
	"math"
	"testing"
)

// TestScheduleKnownPoints checks LR at points worked out by hand for the
// paper's schedule (peak 1e-3, 1,000 warm-up steps, 20,000 steps) and for
// a schedule without warm-up.
func TestScheduleKnownPoints(t *testing.T) {
	paper := Schedule{Peak: 1e-3, Warmup: 1000, Steps: 20000}
	noWarm := Schedule{Peak: 2, Warmup: 0, Steps: 4}
	tests := []struct {
		s    Schedule
		t    int
		want float64
	}{
		{paper, 1, 1e-6},                              // first update: peak / warmup
		{paper, 500, 5e-4},                            // half-way through the warm-up
		{paper, 1000, 1e-3},                           // end of warm-up: the peak
		{paper, 10500, 5e-4},                          // half-way through the cosine: cos(pi/2) = 0
		{paper, 5750, 1e-3 * (1 + math.Sqrt2/2) / 2},  // a quarter: cos(pi/4)
		{paper, 15250, 1e-3 * (1 - math.Sqrt2/2) / 2}, // three quarters
		{paper, 20000, 0},                             // annealed to 0 at the last step
		{noWarm, 1, 2 * (1 + math.Sqrt2/2) / 2},
		{noWarm, 2, 1},
		{noWarm, 4, 0},
	}
	for _, tt := range tests {
		if got := tt.s.LR(tt.t); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("%+v: LR(%d) = %.17g, want %.17g", tt.s, tt.t, got, tt.want)
		}
	}
}

// TestScheduleShape checks that the warm-up rises and the cosine falls
// monotonically, and that out-of-range steps panic.
func TestScheduleShape(t *testing.T) {
	s := Schedule{Peak: 1e-3, Warmup: 10, Steps: 50}
	for step := 2; step <= s.Steps; step++ {
		prev, cur := s.LR(step-1), s.LR(step)
		if step <= s.Warmup && !(cur > prev) {
			t.Fatalf("warm-up not rising at %d: %g after %g", step, cur, prev)
		}
		if step > s.Warmup+1 && !(cur < prev) {
			t.Fatalf("cosine not falling at %d: %g after %g", step, cur, prev)
		}
	}
	for _, bad := range []int{0, 51} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("LR(%d) did not panic", bad)
				}
			}()
			s.LR(bad)
		}()
	}
}

func TestScheduleValidate(t *testing.T) {
	tests := []struct {
		s    Schedule
		want string
	}{
		{Schedule{Peak: 1e-3, Warmup: 1000, Steps: 20000}, ""},
		{Schedule{Peak: 0, Warmup: 0, Steps: 10}, "train: learning rate 0, want a positive finite value"},
		{Schedule{Peak: math.NaN(), Warmup: 0, Steps: 10}, "train: learning rate NaN, want a positive finite value"},
		{Schedule{Peak: 1, Warmup: 0, Steps: 0}, "train: 0 steps, want >= 1"},
		{Schedule{Peak: 1, Warmup: 10, Steps: 10}, "train: 10 warm-up steps, want 0 <= warmup < steps (10)"},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.s, got, tt.want)
		}
	}
}
