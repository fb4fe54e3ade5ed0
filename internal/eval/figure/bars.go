package figure

import (
	"errors"
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarSeries is one set of bars for Bars: one value per group, drawn side
// by side with the other series' bars of the same group.
type BarSeries struct {
	// Name is the legend entry.
	Name string
	// Values has one value per group; a non-finite value leaves its bar
	// out (the group keeps its slot).
	Values []float64
}

// Bars sizes in inches: 1200×750 pixels.
const (
	barsWIn = 8
	barsHIn = 5
)

// Bars draws grouped bars: one group per entry of groups along the X
// axis, one bar per series in each group, with a legend, and a dashed
// horizontal line at ref when ref > 0 (e.g. 1 for degradation factors
// relative to a reference). It is the figure of Fig.
// burgers-ablation-bars. The figure is 1200×750 pixels.
func Bars(path, title, ylabel string, groups []string, series []BarSeries, ref float64) error {
	if err := checkBars(groups, series); err != nil {
		return wrap(path, err)
	}
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 14
	p.Y.Label.Text = ylabel
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), -vg.Points(4)
	p.Add(plotter.NewGrid())
	width := vg.Points(60 / float64(len(series)))
	if n := len(groups); n > 8 {
		width = vg.Points(60 * 8 / float64(n) / float64(len(series)))
	}
	yr := newInterval()
	yr.add(0)
	for i, s := range series {
		vals := make(plotter.Values, len(s.Values))
		for k, v := range s.Values {
			if finite(v) {
				vals[k] = v
				yr.add(v)
			}
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return wrap(path, fmt.Errorf("series[%d] (%q): %w", i, s.Name, err))
		}
		b.LineStyle.Width = 0
		b.Color = plotutil.Color(i)
		b.Offset = vg.Length(float64(i)-float64(len(series)-1)/2) * width
		p.Add(b)
		p.Legend.Add(s.Name, b)
	}
	if ref > 0 {
		yr.add(ref)
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: ref}, {X: float64(len(groups)) - 0.5, Y: ref}})
		if err != nil {
			return wrap(path, err)
		}
		l.LineStyle = draw.LineStyle{Color: plotutil.Color(7), Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(l)
	}
	p.NominalX(groups...)
	p.Y.Min, p.Y.Max = 0, yr.hi*1.08
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
	return wrap(path, render(path, inch(barsWIn), inch(barsHIn), func(c draw.Canvas) { drawPlot(p, c, legendBackdrop) }))
}

// checkBars validates Bars' arguments.
func checkBars(groups []string, series []BarSeries) error {
	if len(groups) == 0 {
		return errors.New("groups: none to draw")
	}
	if len(series) == 0 {
		return errors.New("series: none to draw")
	}
	for i, s := range series {
		if len(s.Values) != len(groups) {
			return fmt.Errorf("series[%d] (%q): %d values for %d groups, want one per group", i, s.Name, len(s.Values), len(groups))
		}
		for k, v := range s.Values {
			if finite(v) && v < 0 {
				return fmt.Errorf("series[%d] (%q): value %g for group %q is negative; bars start at 0", i, s.Name, v, groups[k])
			}
		}
	}
	return nil
}
