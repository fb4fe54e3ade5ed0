package figure

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// driftingSamples returns n records every `every` steps of k samples whose
// mean drifts from 1 to 2 (a contrast sharpening over training).
func driftingSamples(n, every, k int) (steps []float64, vals [][]float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		steps = append(steps, float64((i+1)*every))
		mu := 1 + float64(i)/float64(n)
		v := make([]float64, k)
		for j := range v {
			v[j] = mu + 0.2*rng.NormFloat64()
		}
		vals = append(vals, v)
	}
	return steps, vals
}

func TestHistograms(t *testing.T) {
	steps, vals := driftingSamples(30, 200, 128)
	// Irregular steps (a record missing) and angles on a fixed range.
	gappy := HistPanel{Title: "gappy", Steps: []float64{200, 400, 1000, 1200}, Values: [][]float64{{10, 90}, {45, 91}, {170, 200}, {-5, 95}}, Lo: 0, Hi: 180, Bins: 18, YTicks: []float64{0, 90, 180}}
	withNaN := HistPanel{Title: "nan", Steps: steps[:3], Values: [][]float64{{1, math.NaN()}, {math.Inf(1), 2}, {1.5}}}
	constant := HistPanel{Title: "constant", Steps: []float64{1}, Values: [][]float64{{3, 3, 3}}}
	empty := HistPanel{Title: "no finite", Steps: []float64{1, 2}, Values: [][]float64{{math.NaN()}, nil}}
	many := HistPanel{Title: "many"}
	for i := range 3000 { // more records than columns
		many.Steps = append(many.Steps, float64(i*i+1))
		many.Values = append(many.Values, []float64{float64(i % 7)})
	}
	drift := HistPanel{Title: "c, enc.0", XLabel: "step", YLabel: "c", Steps: steps, Values: vals}

	tests := []struct {
		name    string
		panels  []HistPanel
		w, h    int
		wantErr string
	}{
		{name: "one panel", panels: []HistPanel{drift}, w: 675, h: 60 + 540},
		{name: "seven stages", panels: []HistPanel{drift, drift, drift, drift, drift, drift, drift}, w: 3 * 675, h: 60 + 3*540},
		{name: "odd cases", panels: []HistPanel{gappy, withNaN, constant, empty}, w: 3 * 675, h: 60 + 2*540},
		{name: "more records than columns", panels: []HistPanel{many}, w: 675, h: 600},
		{name: "nothing", wantErr: "panels: none to draw"},
		{name: "no steps", panels: []HistPanel{{Title: "x"}}, wantErr: `panels[0] ("x"): no steps`},
		{name: "unequal", panels: []HistPanel{{Title: "x", Steps: []float64{1, 2}, Values: [][]float64{{1}}}}, wantErr: "2 steps and 1 sample sets, want equal"},
		{name: "steps not increasing", panels: []HistPanel{{Title: "x", Steps: []float64{2, 2}, Values: [][]float64{{1}, {1}}}}, wantErr: "steps 2 then 2, want strictly increasing"},
		{name: "inverted range", panels: []HistPanel{{Title: "x", Steps: []float64{1}, Values: [][]float64{{1}}, Lo: 2, Hi: 1}}, wantErr: "bin range [2, 1] is inverted or not finite"},
		{name: "negative bins", panels: []HistPanel{{Title: "x", Steps: []float64{1}, Values: [][]float64{{1}}, Bins: -1}}, wantErr: "-1 bins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "hist.png")
			err := Histograms(path, "contrast over training", tt.panels)
			checkOutcome(t, err, path, tt.wantErr, tt.w, tt.h)
		})
	}
}

// TestHistogramBins checks the binning: each column is the share of the
// record's finite samples per bin, out-of-range samples in the end bins,
// and records far apart fill the columns between them by nearest step.
func TestHistogramBins(t *testing.T) {
	hp := HistPanel{Steps: []float64{100, 200, 500}, Values: [][]float64{{0.1, 0.1, 0.9, math.NaN()}, {-3, 5}, {0.5}}, Lo: 0, Hi: 1, Bins: 2}
	hm, err := binHist(hp)
	if err != nil {
		t.Fatal(err)
	}
	if hm.s.lo != 0 || hm.s.hi != 1 || hm.bad != 1 || len(hm.means) != 3 || hm.means[1].Y != 1 {
		t.Errorf("colour range [%g, %g], %d non-finite, means %v; want [0, 1] (the largest share), 1, three with 1 at step 200",
			hm.s.lo, hm.s.hi, hm.bad, hm.means)
	}
	g := hm.g
	if g.cols != 5 || g.rows != 2 || g.x0 != 50 || g.x1 != 550 || g.y0 != 0 || g.y1 != 1 {
		t.Fatalf("grid %d×%d over [%g, %g]×[%g, %g], want 5×2 over [50, 550]×[0, 1]", g.cols, g.rows, g.x0, g.x1, g.y0, g.y1)
	}
	want := [][2]float64{
		{2.0 / 3, 1.0 / 3}, // step 100: the NaN is not counted
		{0.5, 0.5},         // step 200: -3 and 5 in the end bins
		{0.5, 0.5},         // 300: nearest is 200 (a tie goes to the earlier)
		{0, 1},             // 400: nearest is 500
		{0, 1},             // 500: 0.5 is in the upper bin
	}
	for c, w := range want {
		for b := range 2 {
			if got := g.at(c, b); math.Abs(got-w[b]) > 1e-6 {
				t.Errorf("column %d bin %d: %g, want %g", c, b, got, w[b])
			}
		}
	}
}
