package figure

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HistPanel is one histogram-over-training map of Histograms: at each
// step a set of samples (e.g. the SPAR contrast c of 128 trajectories, or
// gradient angles) is binned, and the histograms stand side by side.
type HistPanel struct {
	Title, XLabel, YLabel string
	// Steps are the positions of the histograms on the horizontal axis
	// (training steps), strictly increasing.
	Steps []float64
	// Values[k] are the samples at Steps[k]. Non-finite samples are not
	// binned; the title counts them.
	Values [][]float64
	// Lo and Hi are the range of the bins. Lo == Hi takes the range of
	// the finite samples of the panel. Samples outside a given range are
	// counted in the end bins.
	Lo, Hi float64
	// Bins is the number of bins (0: DefaultBins).
	Bins int
	// YTicks, when set, are the labelled ticks of the value axis (e.g.
	// 0, 45, ..., 180 degrees); otherwise gonum chooses them.
	YTicks []float64
}

// DefaultBins is the number of histogram bins when HistPanel.Bins is 0.
const DefaultBins = 40

// maxHistCols caps the number of columns of a histogram map: more
// records than this share columns by nearest step.
const maxHistCols = 2000

// Histograms draws one heat map per panel, three to a row, under a
// title: the horizontal axis is the step, the vertical one the binned
// value, and each column is the histogram of that step's samples as the
// share of its finite samples in each bin (colour bar, black-body map
// from 0), with their mean drawn as a cyan line. Columns are as wide as
// the smallest gap between steps; where records are further apart a
// column shows the record of the nearest step. Histograms are not
// smoothed. The figure is 675·cols × (60 + 540·rows) pixels, cols =
// min(len(panels), 3).
func Histograms(path, title string, panels []HistPanel) error {
	if err := checkHistPanels(panels); err != nil {
		return wrap(path, err)
	}
	type built struct {
		p *plot.Plot
		s scale
	}
	bs := make([]built, len(panels))
	for i, hp := range panels {
		p, s, err := histPlot(hp)
		if err != nil {
			return wrap(path, fmt.Errorf("panels[%d] (%q): %w", i, hp.Title, err))
		}
		bs[i] = built{p, s}
	}
	cols := min(len(panels), routingCols)
	rows := (len(panels) + cols - 1) / cols
	w, h := inch(float64(cols)*cellWIn), inch(titleIn+float64(rows)*cellHIn)
	return wrap(path, render(path, w, h, func(c draw.Canvas) {
		c = drawTitle(c, title)
		for i, b := range bs {
			cell := draw.Crop(tile(c, cols, rows, i%cols, i/cols), 0, 0, 0, -inch(panelGapIn))
			hc := draw.Crop(cell, 0, -inch(barMarginIn), 0, 0)
			b.p.Draw(hc)
			d := b.p.DataCanvas(hc)
			drawBar(cell, b.s, nil, d.Min.Y, d.Max.Y)
		}
	}))
}

// checkHistPanels validates Histograms' arguments.
func checkHistPanels(panels []HistPanel) error {
	if len(panels) == 0 {
		return errors.New("panels: none to draw")
	}
	for i, hp := range panels {
		switch {
		case len(hp.Steps) == 0:
			return fmt.Errorf("panels[%d] (%q): no steps", i, hp.Title)
		case len(hp.Values) != len(hp.Steps):
			return fmt.Errorf("panels[%d] (%q): %d steps and %d sample sets, want equal", i, hp.Title, len(hp.Steps), len(hp.Values))
		case hp.Bins < 0:
			return fmt.Errorf("panels[%d] (%q): %d bins, want >= 1 (0: %d)", i, hp.Title, hp.Bins, DefaultBins)
		case hp.Lo > hp.Hi || !finite(hp.Lo) || !finite(hp.Hi):
			return fmt.Errorf("panels[%d] (%q): bin range [%g, %g] is inverted or not finite", i, hp.Title, hp.Lo, hp.Hi)
		}
		for k, x := range hp.Steps {
			if !finite(x) {
				return fmt.Errorf("panels[%d] (%q): step %g is not finite", i, hp.Title, x)
			}
			if k > 0 && !(x > hp.Steps[k-1]) {
				return fmt.Errorf("panels[%d] (%q): steps %g then %g, want strictly increasing", i, hp.Title, hp.Steps[k-1], x)
			}
		}
	}
	return nil
}

// histMap is one panel's histograms on a grid of columns (steps) and
// rows (bins), with the colour scale, the mean of each record and the
// count of non-finite samples.
type histMap struct {
	g     grid
	s     scale
	means plotter.XYs
	bad   int
}

// binHist bins one panel's samples.
func binHist(hp HistPanel) (histMap, error) {
	bins := hp.Bins
	if bins == 0 {
		bins = DefaultBins
	}
	lo, hi := hp.Lo, hp.Hi
	bad, found := 0, false
	if lo == hi {
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, vs := range hp.Values {
			for _, v := range vs {
				if finite(v) {
					lo, hi, found = math.Min(lo, v), math.Max(hi, v), true
				}
			}
		}
		switch {
		case !found:
			lo, hi = 0, 1
		case lo == hi:
			d := math.Max(math.Abs(lo)/2, 0.5)
			lo, hi = lo-d, hi+d
		}
	}

	// Columns: one per smallest step gap, each showing the record of the
	// nearest step.
	n := len(hp.Steps)
	first, last := hp.Steps[0], hp.Steps[n-1]
	gap := 1.0
	for k := 1; k < n; k++ {
		if d := hp.Steps[k] - hp.Steps[k-1]; k == 1 || d < gap {
			gap = d
		}
	}
	ncols := 1
	if n > 1 {
		ncols = int(math.Round((last-first)/gap)) + 1
		if ncols > maxHistCols {
			ncols = maxHistCols
			gap = (last - first) / float64(ncols-1)
		}
	}
	// Histogram of each record: the share of its finite samples per bin.
	share := make([][]float64, n)
	means := make(plotter.XYs, 0, n)
	top := 0.0
	for k, vs := range hp.Values {
		h := make([]float64, bins)
		cnt, sum := 0, 0.0
		for _, v := range vs {
			if !finite(v) {
				bad++
				continue
			}
			b := int(math.Floor((v - lo) / (hi - lo) * float64(bins)))
			h[min(max(b, 0), bins-1)]++
			cnt++
			sum += v
		}
		if cnt > 0 {
			for b := range h {
				h[b] /= float64(cnt)
				top = math.Max(top, h[b])
			}
			means = append(means, plotter.XY{X: hp.Steps[k], Y: sum / float64(cnt)})
		}
		share[k] = h
	}
	z := make([]float32, ncols*bins)
	for c := range ncols {
		x := first + float64(c)*gap
		k := sort.SearchFloat64s(hp.Steps, x) // first step >= x
		if k == n || (k > 0 && x-hp.Steps[k-1] <= hp.Steps[k]-x) {
			k--
		}
		for b := range bins {
			z[c*bins+b] = float32(share[k][b])
		}
	}
	if top <= 0 {
		top = 1
	}
	s, err := newScale(sequential(), 0, top)
	if err != nil {
		return histMap{}, err
	}
	g := grid{z: z, cols: ncols, rows: bins, cs: bins, rs: 1,
		x0: first - gap/2, x1: first + (float64(ncols)-0.5)*gap, y0: lo, y1: hi}
	return histMap{g: g, s: s, means: means, bad: bad}, nil
}

// histPlot bins one panel and builds its plot and colour scale.
func histPlot(hp HistPanel) (*plot.Plot, scale, error) {
	hm, err := binHist(hp)
	if err != nil {
		return nil, scale{}, err
	}
	g, means := hm.g, hm.means
	p := plot.New()
	p.Title.Text = hp.Title
	if hm.bad > 0 {
		p.Title.Text += fmt.Sprintf(" (%d non-finite)", hm.bad)
	}
	p.Title.TextStyle.Font.Size = 11
	p.X.Label.Text = hp.XLabel
	p.Y.Label.Text = hp.YLabel
	p.X.Padding, p.Y.Padding = 0, 0
	p.Add(&raster{g: g, s: hm.s})
	if len(means) > 1 {
		line, err := newPolyline(means)
		if err != nil {
			return nil, scale{}, err
		}
		line.LineStyle = draw.LineStyle{Color: color.RGBA{R: 0, G: 220, B: 255, A: 255}, Width: vg.Points(1.2)}
		p.Add(line)
		p.Legend.Add("mean", line)
		p.Legend.Top = true
		p.Legend.TextStyle.Font.Size = 8
		p.Legend.TextStyle.Color = color.White
	}
	if hp.YTicks != nil {
		var ticks []plot.Tick
		for _, v := range hp.YTicks {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
		p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	}
	p.X.Min, p.X.Max = g.x0, g.x1
	p.Y.Min, p.Y.Max = g.y0, g.y1
	return p, hm.s, nil
}
