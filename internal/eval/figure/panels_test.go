package figure

import (
	"math"
	"path/filepath"
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
