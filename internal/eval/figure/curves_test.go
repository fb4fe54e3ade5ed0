package figure

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
)

// growth is a series of errors growing along a rollout of n steps, with a
// band of ±30%.
func growth(name string, n int, rate float64) Series {
	s := Series{Name: name}
	for k := range n {
		y := 1e-3 * math.Exp(rate*float64(k))
		s.X = append(s.X, float64(k+1))
		s.Y = append(s.Y, y)
		s.Low = append(s.Low, 0.7*y)
		s.High = append(s.High, 1.3*y)
	}
	return s
}

func TestCurves(t *testing.T) {
	uhno, fno := growth("U-HNO", 50, 0.02), growth("FNO", 50, 0.06)
	noBand := Series{Name: "Conv-FNO", X: uhno.X, Y: fno.Y}
	crashed := growth("LogLo-FNO", 50, 0.1)
	for k := 30; k < 50; k++ { // diverged at step 30
		crashed.Y[k] = math.NaN()
		crashed.High[k] = math.Inf(1)
	}
	crashed.Y[10] = math.NaN() // a gap with a lone point after it
	crashed.Y[12] = math.NaN()
	dead := Series{Name: "dead", X: []float64{1, 2, 3}, Y: []float64{math.NaN(), math.Inf(1), math.NaN()}}
	zeros := Series{Name: "exact", X: []float64{0, 1, 2}, Y: []float64{0, 0, 0}}
	single := Series{Name: "one", X: []float64{1}, Y: []float64{0.5}}

	tests := []struct {
		name    string
		logY    bool
		series  []Series
		wantErr string
	}{
		{name: "bands, linear", series: []Series{uhno, fno, noBand}},
		{name: "bands, log", logY: true, series: []Series{uhno, fno, noBand}},
		{name: "crashed rollout, log", logY: true, series: []Series{uhno, crashed}},
		{name: "nothing finite, log", logY: true, series: []Series{dead}},
		{name: "nothing finite, linear", series: []Series{dead}},
		{name: "zeros on a log axis", logY: true, series: []Series{zeros}},
		{name: "a single point, log", logY: true, series: []Series{single}},
		{name: "no series", wantErr: "series: none to draw"},
		{name: "no points", series: []Series{{Name: "empty"}}, wantErr: `series[0] ("empty"): no points`},
		{name: "short Y", series: []Series{uhno, {Name: "bad", X: uhno.X, Y: uhno.Y[1:]}}, wantErr: `series[1] ("bad"): 50 X values and 49 Y values, want equal`},
		{name: "Low without High", series: []Series{{Name: "half", X: uhno.X, Y: uhno.Y, Low: uhno.Low}}, wantErr: "Low and High must be given together"},
		{name: "short band", series: []Series{{Name: "b", X: uhno.X, Y: uhno.Y, Low: uhno.Low, High: uhno.High[2:]}}, wantErr: "Low has 50 values and High 48, want 50 like X"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "curves.png")
			err := Curves(path, "error growth", "step", "relative L2", tt.logY, tt.series)
			checkOutcome(t, err, path, tt.wantErr, 1200, 750)
		})
	}
}

// TestNewCurve checks what is drawn of a series: one line per run of
// placeable points, a dot for a lone point, one band per run of two or
// more placeable band points, and a legend entry marked when nothing of
// the line can be drawn.
func TestNewCurve(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name               string
		logY               bool
		s                  Series
		lines, dots, bands int
		legend             string
		ylo, yhi           float64 // range covered; ylo > yhi when empty
	}{
		{name: "whole", s: Series{Name: "m", X: []float64{1, 2, 3}, Y: []float64{1, 2, 3}},
			lines: 1, legend: "m", ylo: 1, yhi: 3},
		// Y runs {1,2}, {4}, {6,7}; the band runs {1..4}, {6,7}.
		{name: "gaps, linear", s: Series{Name: "m",
			X:    []float64{1, 2, 3, 4, 5, 6, 7},
			Y:    []float64{1, 2, nan, 3, nan, 4, 0},
			Low:  []float64{0.5, 1, 1, 1, 1, 1, 0},
			High: []float64{2, 2, 2, 2, inf, 5, 5}},
			lines: 2, dots: 1, bands: 2, legend: "m", ylo: 0, yhi: 5},
		// On a log axis 0 cannot be placed: Y runs {1,2}, {4}, {6}; band runs {1..4}, {6}.
		{name: "gaps, log", logY: true, s: Series{Name: "m",
			X:    []float64{1, 2, 3, 4, 5, 6, 7},
			Y:    []float64{1, 2, nan, 3, nan, 4, 0},
			Low:  []float64{0.5, 1, 1, 1, 1, 1, 0},
			High: []float64{2, 2, 2, 2, inf, 5, 5}},
			lines: 1, dots: 2, bands: 1, legend: "m", ylo: 0.5, yhi: 4},
		{name: "non-finite X", s: Series{Name: "m", X: []float64{1, nan, 3, 4}, Y: []float64{1, 2, 3, 4}},
			lines: 1, dots: 1, legend: "m", ylo: 1, yhi: 4},
		{name: "crashed at once", s: Series{Name: "d", X: []float64{1, 2}, Y: []float64{nan, -inf}},
			legend: "d (no finite values)", ylo: inf, yhi: -inf},
		{name: "zeros on a log axis", logY: true, s: Series{Name: "z", X: []float64{1, 2}, Y: []float64{0, -1}},
			legend: "z (no positive values)", ylo: inf, yhi: -inf},
		{name: "NaN on a log axis", logY: true, s: Series{Name: "z", X: []float64{1}, Y: []float64{nan}},
			legend: "z (no finite values)", ylo: inf, yhi: -inf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newCurve(0, tt.s, tt.logY)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.lines) != tt.lines || len(c.dots) != tt.dots || len(c.bands) != tt.bands {
				t.Errorf("%d lines, %d dots, %d bands; want %d, %d, %d",
					len(c.lines), len(c.dots), len(c.bands), tt.lines, tt.dots, tt.bands)
			}
			if c.legend != tt.legend {
				t.Errorf("legend %q, want %q", c.legend, tt.legend)
			}
			if c.y.lo != tt.ylo || c.y.hi != tt.yhi {
				t.Errorf("Y range [%g, %g], want [%g, %g]", c.y.lo, c.y.hi, tt.ylo, tt.yhi)
			}
		})
	}
}

// TestCurvesPlotLogRange checks the Y ranges set where gonum's own would
// be wrong on a log axis: nothing drawn, or a single value.
func TestCurvesPlotLogRange(t *testing.T) {
	tests := []struct {
		name   string
		series []Series
		lo, hi float64
	}{
		{"nothing drawn", []Series{{Name: "d", X: []float64{1}, Y: []float64{math.NaN()}}}, 1, 10},
		{"one value", []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{0.5, 0.5}}}, 0.25, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := curvesPlot("t", "x", "y", true, tt.series)
			if err != nil {
				t.Fatal(err)
			}
			if p.Y.Min != tt.lo || p.Y.Max != tt.hi {
				t.Errorf("Y axis [%g, %g], want [%g, %g]", p.Y.Min, p.Y.Max, tt.lo, tt.hi)
			}
		})
	}
}

func TestRuns(t *testing.T) {
	tests := []struct {
		ok   string // 'x' where ok holds
		want [][2]int
	}{
		{"", nil},
		{"...", nil},
		{"xxx", [][2]int{{0, 3}}},
		{"x.xx.", [][2]int{{0, 1}, {2, 4}}},
		{".x..xx", [][2]int{{1, 2}, {4, 6}}},
	}
	for _, tt := range tests {
		got := runs(len(tt.ok), func(i int) bool { return tt.ok[i] == 'x' })
		if !slices.Equal(got, tt.want) {
			t.Errorf("runs(%q) = %v, want %v", tt.ok, got, tt.want)
		}
	}
}
