package eval

import (
	"math"
	"testing"
)

// sines is sum_i amp[i] sin(2 pi k[i] j/n), j = 0..n-1, in float32.
func sines(n int, k []int, amp []float64) []float32 {
	f := make([]float32, n)
	for j := range f {
		v := 0.0
		for i := range k {
			v += amp[i] * math.Sin(2*math.Pi*float64(k[i]*j)/float64(n))
		}
		f[j] = float32(v)
	}
	return f
}

// sineJump is the largest |u_{j+1} - u_j| / (max u - min u) of
// sin(2 pi k j/n), wrapped, computed in float64.
func sineJump(n, k int) float64 {
	u := func(j int) float64 { return math.Sin(2 * math.Pi * float64(k*j) / float64(n)) }
	jump, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for j := range n {
		jump = math.Max(jump, math.Abs(u(j+1)-u(j)))
		lo, hi = math.Min(lo, u(j)), math.Max(hi, u(j))
	}
	return jump / (hi - lo)
}

// TestSharpnessKnownAnswers: on N = 128 (K = 64, bands k < 21.3, < 42.7,
// the rest) a sine of wavenumber 3 is all low, 30 all mid, 50 all high; a
// mix with amplitudes 1 and 0.5 splits 0.8 : 0.2 (energy goes as the
// square; float32 rounding of the samples moves a share by about 1e-8). A
// step's largest one-cell jump over its range is 1; a sine's is checked
// against the samples' own differences in float64.
func TestSharpnessKnownAnswers(t *testing.T) {
	const n = 128
	g := Grid{Channels: 1, Shape: []int{n}, Spacing: []float64{1.0 / n}, Periodic: true}
	step := make([]float32, n)
	for j := n / 2; j < n; j++ {
		step[j] = 1
	}
	cases := []struct {
		name  string
		frame []float32
		share [3]float64
		tol   float64
		jump  float64
	}{
		{"low sine", sines(n, []int{3}, []float64{1}), [3]float64{1, 0, 0}, 1e-12, sineJump(n, 3)},
		{"mid sine", sines(n, []int{30}, []float64{1}), [3]float64{0, 1, 0}, 1e-12, sineJump(n, 30)},
		{"high sine", sines(n, []int{50}, []float64{1}), [3]float64{0, 0, 1}, 1e-12, sineJump(n, 50)},
		{"low and high", sines(n, []int{3, 50}, []float64{1, 0.5}), [3]float64{0.8, 0, 0.2}, 1e-7, math.NaN()},
		{"step", step, [3]float64{math.NaN(), math.NaN(), math.NaN()}, 0, 1},
	}
	for _, tc := range cases {
		s := NewSharpnessMeter(g).Add(tc.frame)
		for b, want := range tc.share {
			if !math.IsNaN(want) && math.Abs(s.Share[b]-want) > tc.tol {
				t.Errorf("%s: shares %.3g, want %.3g", tc.name, s.Share, tc.share)
				break
			}
		}
		if sum := s.Share[0] + s.Share[1] + s.Share[2]; math.Abs(sum-1) > 1e-12 {
			t.Errorf("%s: shares sum to %v", tc.name, sum)
		}
		if !math.IsNaN(tc.jump) && math.Abs(s.Jump-tc.jump) > 1e-6 {
			t.Errorf("%s: jump %.6g, want %.6g", tc.name, s.Jump, tc.jump)
		}
	}
}

// TestSharpnessMeanAndAxes: the meter averages frames and keeps the
// largest jump; jumps are found along every axis, wrapped only on a
// periodic grid.
func TestSharpnessMeanAndAxes(t *testing.T) {
	g := Grid{Channels: 1, Shape: []int{128}, Spacing: []float64{1.0 / 128}, Periodic: true}
	m := NewSharpnessMeter(g)
	m.Add(sines(128, []int{3}, []float64{1}))
	m.Add(sines(128, []int{50}, []float64{1}))
	mean, frames, maxJump := m.Mean()
	if frames != 2 || math.Abs(mean.Share[0]-0.5) > 1e-12 || math.Abs(mean.Share[2]-0.5) > 1e-12 || mean.Share[1] > 1e-12 {
		t.Errorf("mean of a low and a high sine: %+v over %d frames, want shares [0.5 0 0.5]", mean, frames)
	}
	if want := sineJump(128, 50); math.Abs(maxJump-want) > 1e-6 || math.Abs(mean.Jump-(want+sineJump(128, 3))/2) > 1e-6 {
		t.Errorf("jumps: mean %.6g, largest %.6g (want %.6g)", mean.Jump, maxJump, want)
	}

	// 4 x 4, a ramp 0, 1, 2, 3 along axis 0: one-cell jump 1, wrapped 3.
	f := make([]float32, 16)
	for i := range 4 {
		for j := range 4 {
			f[4*i+j] = float32(i)
		}
	}
	for _, periodic := range []bool{false, true} {
		g2 := Grid{Channels: 1, Shape: []int{4, 4}, Spacing: []float64{1, 1}, Periodic: periodic}
		want := 1.0 / 3
		if periodic {
			want = 1
		}
		if s := NewSharpnessMeter(g2).Add(f); math.Abs(s.Jump-want) > 1e-12 {
			t.Errorf("2D ramp, periodic %v: jump %v, want %v", periodic, s.Jump, want)
		}
	}
}
