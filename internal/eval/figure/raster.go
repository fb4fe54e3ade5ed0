package figure

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// grid is a 2-D view of a row-major float32 array for a heat map: the
// value of cell (c, r), column c along the horizontal axis and row r along
// the vertical one, is z[c*cs + r*rs]. The cols×rows cells tile the extent
// [x0, x1] × [y0, y1] in data coordinates.
type grid struct {
	z              []float32
	cols, rows     int
	cs, rs         int
	x0, x1, y0, y1 float64
}

// at returns the value of cell (c, r).
func (g grid) at(c, r int) float64 { return float64(g.z[c*g.cs+r*g.rs]) }

// lutSize is the number of colours a scale samples from its colour map:
// finer than the eye can tell apart, and At (a CIELAB conversion) is
// called once per entry instead of once per pixel.
const lutSize = 256

// scale maps values to colours: [lo, hi] onto a colour map, values
// outside clamped to its ends, non-finite values to nan.
type scale struct {
	cmap   palette.ColorMap // range set to [lo, hi], for the colour bar
	lut    []color.RGBA
	lo, hi float64
	nan    color.RGBA
}

// newScale sets cmap's range to [lo, hi] (lo < hi) and samples it.
func newScale(cmap palette.ColorMap, lo, hi float64) (scale, error) {
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return scale{}, fmt.Errorf("colour range [%g, %g] is empty", lo, hi)
	}
	cmap.SetMin(lo)
	cmap.SetMax(hi)
	s := scale{cmap: cmap, lut: make([]color.RGBA, lutSize), lo: lo, hi: hi,
		nan: color.RGBA{R: 0, G: 170, B: 0, A: 255}}
	for i := range s.lut {
		v := lo + (hi-lo)*float64(i)/float64(lutSize-1)
		if i == lutSize-1 {
			v = hi // no rounding past the end of the map
		}
		c, err := cmap.At(v)
		if err != nil {
			return scale{}, fmt.Errorf("colour map at %g: %w", v, err)
		}
		s.lut[i] = color.RGBAModel.Convert(c).(color.RGBA)
	}
	return s, nil
}

// colour returns v's colour.
func (s scale) colour(v float64) color.RGBA {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return s.nan
	}
	i := int((v-s.lo)/(s.hi-s.lo)*(lutSize-1) + 0.5)
	return s.lut[min(max(i, 0), lutSize-1)]
}

// diverging is the colour map of signed fields and routing masks.
func diverging() palette.ColorMap { return moreland.SmoothBlueRed() }

// sequential is the colour map of errors: black at 0.
func sequential() palette.ColorMap { return moreland.BlackBody() }

// span returns the smallest and largest finite value in zs and whether
// there was any.
func span(zs ...[]float32) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, z := range zs {
		for _, v := range z {
			f := float64(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				continue
			}
			lo, hi = math.Min(lo, f), math.Max(hi, f)
		}
	}
	return lo, hi, lo <= hi
}

// fieldRange is the colour range of signed fields shown side by side
// (truth and prediction): the finite values' span, made symmetric about 0
// when it straddles 0 so that 0 gets the diverging map's neutral colour.
// A constant field gets a range around its value, a field without finite
// values [-1, 1].
func fieldRange(zs ...[]float32) (lo, hi float64) {
	lo, hi, ok := span(zs...)
	switch {
	case !ok || (lo == 0 && hi == 0):
		return -1, 1
	case lo == hi:
		d := math.Abs(lo) / 2
		return lo - d, hi + d
	case lo < 0 && hi > 0:
		m := math.Max(-lo, hi)
		return -m, m
	}
	return lo, hi
}

// errorRange is the colour range of non-negative magnitudes: [0, largest
// finite value], or [0, 1] when they are all 0 or none is finite (a
// perfect or a wholly crashed prediction).
func errorRange(zs ...[]float32) (lo, hi float64) {
	_, hi, ok := span(zs...)
	if !ok || hi <= 0 {
		return 0, 1
	}
	return 0, hi
}

// absDiff returns |a[i] - b[i]| elementwise; non-finite inputs give a
// non-finite result.
func absDiff(a, b []float32) []float32 {
	d := make([]float32, len(a))
	for i := range a {
		d[i] = float32(math.Abs(float64(a[i]) - float64(b[i])))
	}
	return d
}

// nonFinite counts the NaN and infinite values in z.
func nonFinite(z []float32) int {
	n := 0
	for _, v := range z {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			n++
		}
	}
	return n
}

// withNonFinite appends the count of z's non-finite values to a panel
// title, when there are any.
func withNonFinite(title string, z []float32) string {
	if k := nonFinite(z); k > 0 {
		return fmt.Sprintf("%s (%d non-finite)", title, k)
	}
	return title
}

// raster is a plot.Plotter that draws a grid as an image rasterised at the
// output resolution, so the canvas scales it by about 1 and cell edges
// stay sharp. Where the grid is coarser than the pixels each pixel takes
// the cell under its centre; where it is finer (a 1024-point rollout in a
// 450-pixel panel) each pixel shows the mean of the cells it covers, so a
// one-cell error spike or NaN is shown rather than skipped.
type raster struct {
	g grid
	s scale
}

// Plot draws the image over the grid's extent.
func (r *raster) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	rect := vg.Rectangle{
		Min: vg.Point{X: trX(r.g.x0), Y: trY(r.g.y0)},
		Max: vg.Point{X: trX(r.g.x1), Y: trY(r.g.y1)},
	}
	w := max(1, int(math.Ceil(rect.Size().X.Dots(dpi))))
	h := max(1, int(math.Ceil(rect.Size().Y.Dots(dpi))))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	cols := cover(r.g.cols, w)
	rows := cover(r.g.rows, h)
	for py := range h {
		// Image rows run top down, grid rows bottom up.
		rr := rows[h-1-py]
		for px, cc := range cols {
			img.SetRGBA(px, py, r.s.colour(r.g.mean(cc, rr)))
		}
	}
	c.DrawImage(rect, img)
}

// cover returns, for each of n pixels along an axis of cells cells, the
// half-open range of cells the pixel shows: the cell under its centre
// when cells <= n, else the cells between its edges (at least one).
func cover(cells, n int) [][2]int {
	out := make([][2]int, n)
	for i := range out {
		if cells <= n {
			k := min(int((float64(i)+0.5)*float64(cells)/float64(n)), cells-1)
			out[i] = [2]int{k, k + 1}
			continue
		}
		a := i * cells / n
		b := max((i+1)*cells/n, a+1)
		out[i] = [2]int{a, min(b, cells)}
	}
	return out
}

// mean returns the mean of the cells in columns cc and rows rr, NaN if
// any of them is not finite.
func (g grid) mean(cc, rr [2]int) float64 {
	if cc[1]-cc[0] == 1 && rr[1]-rr[0] == 1 {
		return g.at(cc[0], rr[0])
	}
	sum := 0.0
	for c := cc[0]; c < cc[1]; c++ {
		for r := rr[0]; r < rr[1]; r++ {
			sum += g.at(c, r)
		}
	}
	if math.IsInf(sum, 0) {
		return math.NaN()
	}
	return sum / float64((cc[1]-cc[0])*(rr[1]-rr[0]))
}

// DataRange is the grid's extent.
func (r *raster) DataRange() (xmin, xmax, ymin, ymax float64) {
	return r.g.x0, r.g.x1, r.g.y0, r.g.y1
}

// Colour-bar layout: each heat map keeps barMarginIn inches on its right
// for a vertical colour bar barWIn wide, barRightIn from the edge, with
// its tick labels to its left.
const (
	barMarginIn = 1.05
	barWIn      = 0.14
	barRightIn  = 0.12
	panelGapIn  = 0.08
)

// heatPanel is a heat map with its colour bar.
type heatPanel struct {
	title, xlabel, ylabel string
	g                     grid
	s                     scale
	// ticks, when set, replace the colour bar's numeric ticks.
	ticks []plot.Tick
}

// draw draws the panel into c: the heat map on the left, the colour bar
// on the right, spanning the heat map's height.
func (hp heatPanel) draw(c draw.Canvas) {
	c = draw.Crop(c, 0, 0, 0, -inch(panelGapIn)) // air above the title
	p := plot.New()
	p.Title.Text = hp.title
	p.X.Label.Text = hp.xlabel
	p.Y.Label.Text = hp.ylabel
	p.X.Padding, p.Y.Padding = 0, 0
	p.Add(&raster{g: hp.g, s: hp.s})
	hc := draw.Crop(c, 0, -inch(barMarginIn), 0, 0)
	p.Draw(hc)
	d := p.DataCanvas(hc)
	drawBar(c, hp.s, hp.ticks, d.Min.Y, d.Max.Y)
}

// drawBar draws s's colour bar at the right edge of c between heights lo
// and hi, with ticks when given.
func drawBar(c draw.Canvas, s scale, ticks []plot.Tick, lo, hi vg.Length) {
	bp := plot.New()
	bp.HideX()
	bp.X.Padding, bp.Y.Padding = 0, 0
	bp.Add(&plotter.ColorBar{ColorMap: s.cmap, Vertical: true})
	if ticks != nil {
		bp.Y.Tick.Marker = plot.ConstantTicks(ticks)
	}
	right := c.Max.X - inch(barRightIn)
	want := vg.Rectangle{
		Min: vg.Point{X: right - inch(barWIn), Y: lo},
		Max: vg.Point{X: right, Y: hi},
	}
	bp.Draw(fit(bp, c, want))
}
