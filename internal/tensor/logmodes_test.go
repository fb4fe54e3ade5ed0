package tensor

import (
	"slices"
	"testing"
)

func TestLogModes(t *testing.T) {
	for _, c := range []struct {
		k0, n int
		want  []int
	}{
		{4, 1, nil},
		{4, 2, []int{0}},
		{1, 64, []int{0}},
		{12, 8, []int{0, 1, 2, 3}}, // K = N/2: the whole axis below Nyquist
		{12, 7, []int{0, 1, 2}},    // odd N: K = min(12, 3)
		{4, 10, []int{0, 1, 2, 4}}, // K < kmax+1
		{12, 64, []int{0, 1, 2, 3, 6, 8, 11, 14, 18, 21, 25, 29}},
	} {
		if got := LogModes(c.k0, c.n); !slices.Equal(got, c.want) {
			t.Errorf("LogModes(%d, %d) = %v, want %v", c.k0, c.n, got, c.want)
		}
	}
	// Properties over many sizes: K = min(k0, n/2) distinct increasing
	// frequencies from 0, below Nyquist, and gaps that do not shrink by
	// more than one (the density 1/log(1+k) decreases).
	for n := 2; n <= 300; n++ {
		for _, k0 := range []int{1, 2, 5, 12, 16, 32} {
			m := LogModes(k0, n)
			if len(m) != ModeCap(k0, n) || m[0] != 0 {
				t.Fatalf("LogModes(%d, %d) = %v", k0, n, m)
			}
			for j := 1; j < len(m); j++ {
				if m[j] <= m[j-1] || 2*m[j] >= n {
					t.Fatalf("LogModes(%d, %d) = %v: not increasing below n/2", k0, n, m)
				}
			}
		}
	}
}
