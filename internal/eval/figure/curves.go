package figure

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one model's curve for Curves, e.g. its error along the
// rollout.
type Series struct {
	// Name is the legend entry.
	Name string
	// X and Y are the points, of equal length.
	X, Y []float64
	// Low and High bound an optional shaded band (e.g. a percentile range
	// over test trajectories): both nil, or both as long as X.
	Low, High []float64
}

// Curves sizes in inches: 1200×750 pixels.
const (
	curvesWIn = 8
	curvesHIn = 5
)

// Curves draws one line per series with its band, shaded in the line's
// colour, when Low and High are given, and a legend. On a log Y axis
// (logY) values <= 0 cannot be placed and are skipped like non-finite
// ones. A point that is skipped (a crashed rollout's NaN or Inf) breaks
// the line instead of joining its neighbours across the gap; a lone
// point between gaps is drawn as a dot. A series with nothing to draw
// keeps its legend entry, marked "(no finite values)" or "(no positive
// values)". The figure is 1200×750 pixels.
func Curves(path, title, xlabel, ylabel string, logY bool, series []Series) error {
	if err := checkSeries(series); err != nil {
		return wrap(path, err)
	}
	p, err := curvesPlot(title, xlabel, ylabel, logY, series)
	if err != nil {
		return wrap(path, err)
	}
	return wrap(path, render(path, inch(curvesWIn), inch(curvesHIn), func(c draw.Canvas) { drawPlot(p, c, legendBackdrop) }))
}

// checkSeries validates Curves' series.
func checkSeries(series []Series) error {
	if len(series) == 0 {
		return errors.New("series: none to draw")
	}
	for i, s := range series {
		if len(s.X) == 0 {
			return fmt.Errorf("series[%d] (%q): no points", i, s.Name)
		}
		if len(s.Y) != len(s.X) {
			return fmt.Errorf("series[%d] (%q): %d X values and %d Y values, want equal", i, s.Name, len(s.X), len(s.Y))
		}
		if (s.Low == nil) != (s.High == nil) {
			return fmt.Errorf("series[%d] (%q): Low and High must be given together", i, s.Name)
		}
		if s.Low != nil && (len(s.Low) != len(s.X) || len(s.High) != len(s.X)) {
			return fmt.Errorf("series[%d] (%q): Low has %d values and High %d, want %d like X", i, s.Name, len(s.Low), len(s.High), len(s.X))
		}
	}
	return nil
}

// curvesPlot builds Curves' plot.
func curvesPlot(title, xlabel, ylabel string, logY bool, series []Series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 14
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	// Top left: error curves grow to the right, so it stays clear of them.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), -vg.Points(4)
	p.Add(plotter.NewGrid())
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicker{}
	}
	xr, yr := newInterval(), newInterval()
	curves := make([]curve, len(series))
	for i, s := range series {
		c, err := newCurve(i, s, logY)
		if err != nil {
			return nil, fmt.Errorf("series[%d] (%q): %w", i, s.Name, err)
		}
		curves[i] = c
		xr.union(c.x)
		yr.union(c.y)
	}
	// Bands first, so that every line is drawn over them.
	for _, c := range curves {
		for _, b := range c.bands {
			p.Add(b)
		}
	}
	for _, c := range curves {
		for _, l := range c.lines {
			p.Add(l)
		}
		for _, d := range c.dots {
			p.Add(d)
		}
		p.Legend.Add(c.legend, &plotter.Line{LineStyle: c.style})
	}

	// Ranges gonum would get wrong: nothing drawn at all (it would fall
	// back to [-1, 1], which a log axis cannot take), or a single Y value
	// on a log axis (it widens a point range by ±1).
	if !xr.ok() {
		p.X.Min, p.X.Max = 0, 1
	}
	switch {
	case !yr.ok() && logY:
		p.Y.Min, p.Y.Max = 1, 10
	case !yr.ok():
		p.Y.Min, p.Y.Max = 0, 1
	case logY && yr.lo == yr.hi:
		p.Y.Min, p.Y.Max = yr.lo/2, yr.hi*2
	}
	return p, nil
}

// curve is what Curves draws for one series: its band (one polygon per
// run of placeable band points), its line (one per run of placeable
// points, a dot for a lone point), its legend entry and the range all of
// it covers.
type curve struct {
	bands  []*plotter.Polygon
	lines  []*polyline
	dots   []*plotter.Scatter
	legend string
	style  draw.LineStyle
	x, y   *interval
}

// newCurve builds series i's curve. On a log Y axis only values > 0 can
// be placed.
func newCurve(i int, s Series, logY bool) (curve, error) {
	placeable := func(x, y float64) bool { return finite(x) && finite(y) && (!logY || y > 0) }
	c := curve{
		style: draw.LineStyle{
			Color:  plotutil.Color(i),
			Width:  vg.Points(1.5),
			Dashes: plotutil.Dashes(i / len(plotutil.DefaultColors)),
		},
		legend: s.Name,
		x:      newInterval(),
		y:      newInterval(),
	}
	if s.Low != nil {
		fill := color.NRGBAModel.Convert(c.style.Color).(color.NRGBA)
		fill.A = 0x40
		for _, r := range runs(len(s.X), func(k int) bool {
			return placeable(s.X[k], s.Low[k]) && placeable(s.X[k], s.High[k])
		}) {
			if r[1]-r[0] < 2 {
				continue // a band needs two points to have an area
			}
			ring := make(plotter.XYs, 0, 2*(r[1]-r[0]))
			for k := r[0]; k < r[1]; k++ {
				ring = append(ring, plotter.XY{X: s.X[k], Y: s.Low[k]})
			}
			for k := r[1] - 1; k >= r[0]; k-- {
				ring = append(ring, plotter.XY{X: s.X[k], Y: s.High[k]})
			}
			for _, q := range ring {
				c.x.add(q.X)
				c.y.add(q.Y)
			}
			band, err := plotter.NewPolygon(ring)
			if err != nil {
				return curve{}, fmt.Errorf("band: %w", err)
			}
			band.Color = fill
			band.LineStyle.Width = 0
			c.bands = append(c.bands, band)
		}
	}
	drawn := 0
	for _, r := range runs(len(s.X), func(k int) bool { return placeable(s.X[k], s.Y[k]) }) {
		pts := make(plotter.XYs, 0, r[1]-r[0])
		for k := r[0]; k < r[1]; k++ {
			pts = append(pts, plotter.XY{X: s.X[k], Y: s.Y[k]})
			c.x.add(s.X[k])
			c.y.add(s.Y[k])
		}
		drawn += len(pts)
		if len(pts) == 1 {
			dot, err := plotter.NewScatter(pts)
			if err != nil {
				return curve{}, err
			}
			dot.GlyphStyle = draw.GlyphStyle{Color: c.style.Color, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
			c.dots = append(c.dots, dot)
			continue
		}
		line, err := newPolyline(pts)
		if err != nil {
			return curve{}, err
		}
		line.LineStyle = c.style
		c.lines = append(c.lines, line)
	}
	if drawn == 0 {
		c.legend += " " + nothingToDraw(s.Y, logY)
	}
	return c, nil
}

// nothingToDraw says why a series drew nothing, for its legend entry.
func nothingToDraw(y []float64, logY bool) string {
	if logY {
		for _, v := range y {
			if finite(v) {
				return "(no positive values)"
			}
		}
	}
	return "(no finite values)"
}

// runs returns the maximal half-open index ranges [a, b) of 0..n-1 on
// which ok holds throughout.
func runs(n int, ok func(i int) bool) [][2]int {
	var out [][2]int
	start := -1
	for i := range n {
		good := ok(i)
		switch {
		case good && start < 0:
			start = i
		case !good && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, n})
	}
	return out
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// interval accumulates the range of the values added to it.
type interval struct{ lo, hi float64 }

// newInterval returns an empty interval.
func newInterval() *interval { return &interval{lo: math.Inf(1), hi: math.Inf(-1)} }

// add widens the interval to v.
func (s *interval) add(v float64) { s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v) }

// union widens the interval to cover o.
func (s *interval) union(o *interval) { s.lo, s.hi = math.Min(s.lo, o.lo), math.Max(s.hi, o.hi) }

// ok reports whether anything was added.
func (s *interval) ok() bool { return s.lo <= s.hi }
