package figure

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
)

func TestLinePanels(t *testing.T) {
	x := []float64{200, 400, 600, 800, 1000}
	falling := Line{Name: "Full", X: x, Y: []float64{1, 0.5, 0.3, 0.2, 0.15}}
	raw := Line{X: x, Y: []float64{1.1, 0.4, 0.35, 0.18, 0.16}, Faint: true}
	modeE := Line{Name: "mode E", X: x, Y: []float64{1, 0.7, 0.6, 0.55, 0.5}, Colour: 1, Dashed: true}
	gaps := Line{Name: "crashed early", X: x, Y: []float64{math.NaN(), math.Inf(1), 0.3, math.NaN(), 0.2}, Colour: 2}
	zeros := Line{Name: "zero CBC", X: x, Y: []float64{0, 0, 0, 0, 0}, Colour: 3}
	band := [2]float64{0.1, 0.9}
	zeroBand := [2]float64{0, 0.9}

	tests := []struct {
		name    string
		cols    int
		panels  []LinePanel
		w, h    int
		wantErr string
	}{
		{name: "one panel", panels: []LinePanel{{Title: "E_b low", LogY: true, Lines: []Line{raw, falling, modeE}}}, w: 750, h: 600},
		{name: "four in a row", cols: 4, panels: []LinePanel{
			{Title: "low", LogY: true, Lines: []Line{raw, falling}},
			{Title: "mid", LogY: true, Lines: []Line{gaps}},
			{Title: "high", LogY: true, Lines: []Line{zeros}},
			{Title: "relL2", Lines: []Line{modeE}},
		}, w: 4 * 750, h: 600},
		{name: "two columns, a band", cols: 2, panels: []LinePanel{
			{Title: "rho", Lines: []Line{falling, modeE}, Band: &band, BandName: "[rho_min, rho_max]"},
			{Title: "rho, log, band from 0", LogY: true, Lines: []Line{falling}, Band: &zeroBand},
			{Title: "band only", Band: &band},
		}, w: 2 * 750, h: 60 + 2*540},
		{name: "empty panel", panels: []LinePanel{{Title: "nothing"}}, w: 750, h: 600},
		{name: "cols beyond panels", cols: 9, panels: []LinePanel{{Title: "a"}, {Title: "b"}}, w: 1500, h: 600},
		{name: "no panels", wantErr: "panels: none to draw"},
		{name: "short Y", panels: []LinePanel{{Title: "p", Lines: []Line{{Name: "l", X: x, Y: x[1:]}}}},
			wantErr: `panels[0] ("p"): lines[0] ("l"): 5 X values and 4 Y values, want equal`},
		{name: "bad colour", panels: []LinePanel{{Title: "p", Lines: []Line{{Name: "l", Colour: -1}}}}, wantErr: "colour -1, want >= 0"},
		{name: "inverted band", panels: []LinePanel{{Title: "p", Band: &[2]float64{0.9, 0.1}}}, wantErr: "band [0.9, 0.1] is inverted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "panels.png")
			err := LinePanels(path, "training dynamics", tt.cols, tt.panels)
			checkOutcome(t, err, path, tt.wantErr, tt.w, tt.h)
		})
	}
}

// TestLogTicker checks the log axis' labels: powers of ten over two
// decades or more, the 1-2-5 multiples within about a decade (where
// plot.LogTicks labels one tick: the NS-2D error curves of 0.002-0.02),
// linear ticks on a narrower range; always at least two labels, every
// tick positive and every label inside the range.
func TestLogTicker(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string // the labels, in order
	}{
		{1e-6, 1e-2, []string{"1e-06", "1e-05", "0.0001", "0.001", "0.01"}},
		{0.0022, 0.021, []string{"0.005", "0.01", "0.02"}},
		{0.0018, 0.021, []string{"0.002", "0.005", "0.01", "0.02"}},
		{3, 40, []string{"5", "10", "20"}},
	} {
		var got []string
		for _, tk := range (logTicker{}).Ticks(c.lo, c.hi) {
			if tk.Value <= 0 {
				t.Errorf("[%g, %g]: tick at %g on a log axis", c.lo, c.hi, tk.Value)
			}
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("[%g, %g]: labels %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
	// Narrower than a factor of 2.5: gonum's linear ticks, at least two labels.
	n := 0
	for _, tk := range (logTicker{}).Ticks(0.51, 0.74) {
		if tk.Value <= 0 || (tk.Label != "" && (tk.Value < 0.51 || tk.Value > 0.74)) {
			t.Errorf("[0.51, 0.74]: tick %+v outside the range or not positive", tk)
		}
		if tk.Label != "" {
			n++
		}
	}
	if n < 2 {
		t.Errorf("[0.51, 0.74]: %d labels, want at least 2", n)
	}
}
