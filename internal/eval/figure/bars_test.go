package figure

import (
	"image/color"
	"math"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/plotutil"
)

func TestBars(t *testing.T) {
	modes := []string{"A", "B", "C", "D", "E", "F", "G", "H", "I"}
	l2 := []float64{3.6, 3.4, 2.2, 1.5, 1.18, 1.35, 1.56, 1.97, 1.29}
	h1 := []float64{4.1, 3.2, 2.2, 2.0, 1.2, 1.34, 1.53, 2.0, 1.29}
	gap := append([]float64(nil), l2...)
	gap[2] = math.NaN()
	tests := []struct {
		name    string
		groups  []string
		series  []BarSeries
		ref     float64
		wantErr string
	}{
		{name: "degradation factors", groups: modes, series: []BarSeries{{"relL2", l2}, {"relH1", h1}}, ref: 1},
		{name: "one series, a missing bar", groups: modes, series: []BarSeries{{"relL2", gap}}},
		{name: "no groups", series: []BarSeries{{"x", nil}}, wantErr: "groups: none to draw"},
		{name: "no series", groups: modes, wantErr: "series: none to draw"},
		{name: "short series", groups: modes, series: []BarSeries{{"relL2", l2[1:]}}, wantErr: `series[0] ("relL2"): 8 values for 9 groups`},
		{name: "negative", groups: []string{"a"}, series: []BarSeries{{"x", []float64{-1}}}, wantErr: `value -1 for group "a" is negative`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "bars.png")
			err := Bars(path, "degradation", "factor vs Full", tt.groups, tt.series, tt.ref)
			checkOutcome(t, err, path, tt.wantErr, 1200, 750)
		})
	}
}

// TestBarHeights checks that bar areas follow the values: a series twice
// as high as another covers about twice the pixels of its colour.
func TestBarHeights(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bars.png")
	err := Bars(path, "", "", []string{"a", "b"}, []BarSeries{{"one", []float64{1, 1}}, {"two", []float64{2, 2}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rgba := func(c color.Color) color.RGBA {
		r, g, b, a := c.RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
	}
	one, two := countColour(t, path, rgba(plotutil.Color(0))), countColour(t, path, rgba(plotutil.Color(1)))
	if one == 0 || math.Abs(float64(two)/float64(one)-2) > 0.1 {
		t.Errorf("pixels of the bars: %d and %d, want a ratio of 2", one, two)
	}
}
