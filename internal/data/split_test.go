package data

import (
	"slices"
	"strings"
	"testing"
)

// TestSplit checks both split modes: sizes, disjointness, sorting,
// determinism by seed, and PDEBench's first-10% convention.
func TestSplit(t *testing.T) {
	s1, err := NewSplit(100, 70, 20, SplitSeeded, 5)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := NewSplit(100, 70, 20, SplitSeeded, 5)
	s3, _ := NewSplit(100, 70, 20, SplitSeeded, 6)
	if len(s1.Train) != 70 || len(s1.Test) != 20 {
		t.Fatalf("sizes %d/%d", len(s1.Train), len(s1.Test))
	}
	if !slices.IsSorted(s1.Train) || !slices.IsSorted(s1.Test) {
		t.Error("split lists are not sorted")
	}
	for _, i := range s1.Test {
		if slices.Contains(s1.Train, i) {
			t.Fatalf("trajectory %d is in both sets", i)
		}
	}
	if !slices.Equal(s1.Train, s2.Train) || !slices.Equal(s1.Test, s2.Test) {
		t.Error("same seed, different split")
	}
	if slices.Equal(s1.Test, s3.Test) {
		t.Error("another seed gives the same test set")
	}
	if slices.Equal(s1.Test, seq(0, 20)) {
		t.Error("the seeded split held out the first trajectories")
	}

	n := 10000
	f, err := NewSplit(n, 800, PDEBenchTestCount(n), SplitFirst, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Test, seq(0, 1000)) || !slices.Equal(f.Train, seq(1000, 1800)) {
		t.Errorf("first split: test %v..., train %v...", f.Test[:3], f.Train[:3])
	}

	for _, tc := range []struct {
		n, train, test int
		want           string
	}{
		{10, 8, 3, "want 8 train + 3 test trajectories, but the file holds 10"},
		{10, 0, 3, "0 train and 3 test"},
	} {
		if _, err := NewSplit(tc.n, tc.train, tc.test, SplitSeeded, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewSplit(%d, %d, %d): %v, want %q", tc.n, tc.train, tc.test, err, tc.want)
		}
	}
	for s, want := range map[string]SplitMode{"seeded": SplitSeeded, "first": SplitFirst, "pdebench": SplitFirst} {
		if got, err := ParseSplitMode(s); err != nil || got != want {
			t.Errorf("ParseSplitMode(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseSplitMode("random"); err == nil {
		t.Error("ParseSplitMode accepted random")
	}
}

func seq(lo, hi int) []int {
	s := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}
