package figure

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Line is one curve of a LinePanel.
type Line struct {
	// Name is the legend entry; empty leaves the line out of the legend
	// (e.g. the raw curve under its smoothed one).
	Name string
	// X and Y are the points, of equal length. Non-finite points (and
	// values <= 0 on a log axis) break the line, as in Curves.
	X, Y []float64
	// Colour indexes plotutil's palette, so that a raw and a smoothed
	// curve of one run share a colour.
	Colour int
	// Faint draws a thin, translucent line (the raw values under a
	// smoothed curve); otherwise the line is bold.
	Faint bool
	// Dashed draws the line dashed.
	Dashed bool
}

// LinePanel is one plot of LinePanels.
type LinePanel struct {
	Title, XLabel, YLabel string
	LogY                  bool
	Lines                 []Line
	// Band, when not nil, shades the horizontal band Band[0] <= y <=
	// Band[1] across the panel (e.g. the clip range [rho_min, rho_max]),
	// named BandName in the legend.
	Band     *[2]float64
	BandName string
}

// LinePanels sizes in inches: one panel is 750×540 pixels.
const (
	linePanelWIn = 5
	linePanelHIn = 3.6
)

// LinePanels draws panels of line plots, cols to a row (cols <= 0: all
// in one row), under a title: the training-dynamics curves (per-band
// error, keep-ratio, loss terms against the step). A line with nothing to
// draw keeps its legend entry, marked as in Curves; a panel without lines
// is drawn empty with "(no data)" in its title. The figure is
// 750·cols × (60 + 540·rows) pixels.
func LinePanels(path, title string, cols int, panels []LinePanel) error {
	if err := checkLinePanels(panels); err != nil {
		return wrap(path, err)
	}
	if cols <= 0 || cols > len(panels) {
		cols = len(panels)
	}
	rows := (len(panels) + cols - 1) / cols
	plots := make([]*plot.Plot, len(panels))
	for i, lp := range panels {
		p, err := linePlot(lp)
		if err != nil {
			return wrap(path, fmt.Errorf("panels[%d] (%q): %w", i, lp.Title, err))
		}
		plots[i] = p
	}
	w, h := inch(float64(cols)*linePanelWIn), inch(titleIn+float64(rows)*linePanelHIn)
	return wrap(path, render(path, w, h, func(c draw.Canvas) {
		c = drawTitle(c, title)
		for i, p := range plots {
			cell := tile(c, cols, rows, i%cols, i/cols)
			drawPlot(p, draw.Crop(cell, inch(0.05), -inch(0.1), inch(0.05), -inch(panelGapIn)), legendBackdrop)
		}
	}))
}

// checkLinePanels validates LinePanels' arguments.
func checkLinePanels(panels []LinePanel) error {
	if len(panels) == 0 {
		return errors.New("panels: none to draw")
	}
	for i, lp := range panels {
		for j, l := range lp.Lines {
			if len(l.X) != len(l.Y) {
				return fmt.Errorf("panels[%d] (%q): lines[%d] (%q): %d X values and %d Y values, want equal", i, lp.Title, j, l.Name, len(l.X), len(l.Y))
			}
			if l.Colour < 0 {
				return fmt.Errorf("panels[%d] (%q): lines[%d] (%q): colour %d, want >= 0", i, lp.Title, j, l.Name, l.Colour)
			}
		}
		if lp.Band != nil && !(lp.Band[0] <= lp.Band[1]) {
			return fmt.Errorf("panels[%d] (%q): band [%g, %g] is inverted or not a number", i, lp.Title, lp.Band[0], lp.Band[1])
		}
	}
	return nil
}

// linePlot builds one panel's plot.
func linePlot(lp LinePanel) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = lp.Title
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text = lp.XLabel
	p.Y.Label.Text = lp.YLabel
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = 8
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(4), -vg.Points(4)
	p.Add(plotter.NewGrid())
	if lp.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicker{}
	}
	xr, yr := newInterval(), newInterval()
	var curves []curve
	var named []bool
	for j, l := range lp.Lines {
		c, err := newCurve(l.Colour, Series{Name: l.Name, X: l.X, Y: l.Y}, lp.LogY)
		if err != nil {
			return nil, fmt.Errorf("lines[%d] (%q): %w", j, l.Name, err)
		}
		style := c.style
		style.Dashes = nil
		if l.Dashed {
			style.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		if l.Faint {
			col := color.NRGBAModel.Convert(plotutil.Color(l.Colour)).(color.NRGBA)
			col.A = 0x70
			style.Color, style.Width = col, vg.Points(0.7)
		} else {
			style.Width = vg.Points(2)
		}
		c.style = style
		for _, ln := range c.lines {
			ln.LineStyle = style
		}
		for _, d := range c.dots {
			d.GlyphStyle.Color = style.Color
		}
		xr.union(c.x)
		yr.union(c.y)
		curves = append(curves, c)
		named = append(named, l.Name != "")
	}
	if !xr.ok() {
		p.X.Min, p.X.Max = 0, 1
		if len(lp.Lines) == 0 {
			p.Title.Text += " (no data)"
		}
	}
	if lp.Band != nil && (!lp.LogY || lp.Band[0] > 0) {
		lo, hi := lp.Band[0], lp.Band[1]
		x0, x1 := p.X.Min, p.X.Max
		if xr.ok() {
			x0, x1 = xr.lo, xr.hi
		}
		if x0 == x1 {
			x0, x1 = x0-0.5, x1+0.5
		}
		band, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: lo}, {X: x1, Y: lo}, {X: x1, Y: hi}, {X: x0, Y: hi}})
		if err != nil {
			return nil, fmt.Errorf("band: %w", err)
		}
		band.Color = color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x38}
		band.LineStyle = draw.LineStyle{Color: color.NRGBA{R: 0x60, G: 0x60, B: 0x60, A: 0xff}, Width: vg.Points(0.8),
			Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
		p.Add(band)
		if lp.BandName != "" {
			p.Legend.Add(lp.BandName, band)
		}
		yr.add(lo)
		yr.add(hi)
	}
	for i, c := range curves {
		for _, l := range c.lines {
			p.Add(l)
		}
		for _, d := range c.dots {
			p.Add(d)
		}
		if named[i] {
			p.Legend.Add(c.legend, &plotter.Line{LineStyle: c.style})
		}
	}
	switch {
	case !yr.ok() && lp.LogY:
		p.Y.Min, p.Y.Max = 1, 10
	case !yr.ok():
		p.Y.Min, p.Y.Max = 0, 1
	case lp.LogY && yr.lo == yr.hi:
		p.Y.Min, p.Y.Max = yr.lo/2, yr.hi*2
	}
	return p, nil
}

// logTicker labels a log axis at the powers of ten inside the range when
// there are at least two; otherwise (a range within about a decade, where
// plot.LogTicks labels one tick or none inside it) at the 1, 2 and 5
// multiples of the powers of ten inside it; both keep LogTicks'
// unlabelled minor ticks. Where even those are fewer than two (a range
// narrower than a factor of 2.5) it uses gonum's default linear ticks,
// which a log axis places correctly too. Every tick it returns is
// positive and every label lies inside the range.
type logTicker struct{}

// Ticks implements plot.Ticker.
func (logTicker) Ticks(lo, hi float64) []plot.Tick {
	if lo > 0 && hi > lo {
		for _, mults := range [][]float64{{1}, {1, 2, 5}} {
			var ticks []plot.Tick
			for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
				for _, m := range mults {
					// m 10^e rounded to one digit, so that 1e-5 is not 9.999999999999999e-06.
					v, _ := strconv.ParseFloat(strconv.FormatFloat(m*math.Pow(10, e), 'g', 1, 64), 64)
					if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
						ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
					}
				}
			}
			if len(ticks) < 2 {
				continue
			}
			for _, t := range (plot.LogTicks{Prec: -1}).Ticks(lo, hi) {
				labelled := slices.ContainsFunc(ticks, func(o plot.Tick) bool { return math.Abs(o.Value-t.Value) <= 1e-9*o.Value })
				if t.Label == "" && t.Value >= lo && t.Value <= hi && !labelled {
					ticks = append(ticks, plot.Tick{Value: t.Value})
				}
			}
			return ticks
		}
	}
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value > 0 {
			out = append(out, t)
		}
	}
	return out
}
