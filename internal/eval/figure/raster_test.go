package figure

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot/palette/moreland"
)

func TestFieldRange(t *testing.T) {
	inf := float32(math.Inf(1))
	tests := []struct {
		name   string
		zs     [][]float32
		lo, hi float64
	}{
		{"straddles zero: symmetric", [][]float32{{-0.5, 2}}, -2, 2},
		{"union of truth and prediction", [][]float32{{-1, 0.5}, {0.25, 3}}, -3, 3},
		{"positive field keeps its span", [][]float32{{1, 3}, {2}}, 1, 3},
		{"negative field keeps its span", [][]float32{{-4, -1}}, -4, -1},
		{"constant", [][]float32{{2, 2}}, 1, 3},
		{"zero", [][]float32{{0, 0}}, -1, 1},
		{"non-finite left out", [][]float32{{nan(), -inf, 1, 2, inf}}, 1, 2},
		{"nothing finite", [][]float32{{nan(), inf}}, -1, 1},
		{"empty", nil, -1, 1},
	}
	for _, tt := range tests {
		if lo, hi := fieldRange(tt.zs...); lo != tt.lo || hi != tt.hi {
			t.Errorf("%s: fieldRange = [%g, %g], want [%g, %g]", tt.name, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestErrorRange(t *testing.T) {
	tests := []struct {
		name string
		z    []float32
		hi   float64
	}{
		{"largest error", []float32{0, 0.25, 0.125}, 0.25},
		{"perfect prediction", []float32{0, 0}, 1},
		{"non-finite left out", []float32{nan(), 0.5, float32(math.Inf(1))}, 0.5},
		{"nothing finite", []float32{nan()}, 1},
	}
	for _, tt := range tests {
		if lo, hi := errorRange(tt.z); lo != 0 || hi != tt.hi {
			t.Errorf("%s: errorRange = [%g, %g], want [0, %g]", tt.name, lo, hi, tt.hi)
		}
	}
}

func TestScale(t *testing.T) {
	if _, err := newScale(moreland.SmoothBlueRed(), 1, 1); err == nil {
		t.Error("newScale with an empty range: no error")
	}
	s, err := newScale(moreland.BlackBody(), 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		v    float64
		want int // index into s.lut, -1 for the NaN colour
	}{
		{"low end", 0, 0},
		{"high end", 2, lutSize - 1},
		{"middle", 1, lutSize / 2},
		{"below clamps", -5, 0},
		{"above clamps", 7, lutSize - 1},
		{"NaN", math.NaN(), -1},
		{"Inf", math.Inf(-1), -1},
	}
	for _, tt := range tests {
		want := s.nan
		if tt.want >= 0 {
			want = s.lut[tt.want]
		}
		if got := s.colour(tt.v); got != want {
			t.Errorf("%s: colour(%g) = %v, want %v", tt.name, tt.v, got, want)
		}
	}
	if s.lut[0] == s.lut[lutSize-1] {
		t.Error("the scale's ends have one colour")
	}
	for _, c := range s.lut {
		if c == s.nan {
			t.Fatalf("the map uses the NaN colour %v", c)
		}
	}
}

func TestCover(t *testing.T) {
	tests := []struct {
		name     string
		cells, n int
		want     [][2]int
	}{
		{"one to one", 3, 3, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{"coarse grid: nearest cell", 2, 4, [][2]int{{0, 1}, {0, 1}, {1, 2}, {1, 2}}},
		{"fine grid: covered cells", 6, 3, [][2]int{{0, 2}, {2, 4}, {4, 6}}},
		{"uneven", 5, 2, [][2]int{{0, 2}, {2, 5}}},
		{"one pixel", 4, 1, [][2]int{{0, 4}}},
	}
	for _, tt := range tests {
		got := cover(tt.cells, tt.n)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: cover(%d, %d) = %v, want %v", tt.name, tt.cells, tt.n, got, tt.want)
		}
	}
}

// TestGridMean checks the layouts grid indexes (space–time [steps, n] and
// 2D [nx, ny]) and that a pixel covering a non-finite cell shows it.
func TestGridMean(t *testing.T) {
	// [steps=2, n=3]: frame s at point i is s*3 + i.
	st := grid{z: []float32{0, 1, 2, 10, 11, 12}, cols: 3, rows: 2, cs: 1, rs: 3}
	// [nx=3, ny=2]: point (i, j) is i*2 + j.
	xy := grid{z: []float32{0, 1, 10, 11, 20, 21}, cols: 3, rows: 2, cs: 2, rs: 1}
	withNaN := grid{z: []float32{1, nan(), 3, 4}, cols: 4, rows: 1, cs: 1}
	tests := []struct {
		name   string
		g      grid
		cc, rr [2]int
		want   float64
	}{
		{"space-time cell", st, [2]int{2, 3}, [2]int{1, 2}, 12},
		{"2D cell", xy, [2]int{2, 3}, [2]int{1, 2}, 21},
		{"2D block", xy, [2]int{0, 2}, [2]int{0, 2}, 5.5},
		{"finite block", withNaN, [2]int{2, 4}, [2]int{0, 1}, 3.5},
		{"block with NaN", withNaN, [2]int{0, 2}, [2]int{0, 1}, math.NaN()},
	}
	for _, tt := range tests {
		got := tt.g.mean(tt.cc, tt.rr)
		if got != tt.want && !(math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("%s: mean = %g, want %g", tt.name, got, tt.want)
		}
	}
}
