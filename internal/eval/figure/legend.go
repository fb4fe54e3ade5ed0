package figure

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// legendBackdrop is the box drawn under a legend on a light plot: white at
// 85% opacity, so a line that passes under the legend stays visible as a
// faint trace but no longer runs through its text.
var legendBackdrop = color.NRGBA{R: 255, G: 255, B: 255, A: 217}

// legendPadPt is the margin, in points, of the backdrop around the
// legend's thumbnails and text.
const legendPadPt = 2

// drawPlot draws p on c as p.Draw does, except that the legend goes onto
// a backdrop of colour bg laid over the data: gonum draws a legend
// straight over the lines, so a curve near the legend's corner crossed
// its text (the per-band error panels, whose high-band line starts at
// the top). The legend is placed in p's data area (p.DataCanvas), which
// is where gonum puts it less the few points it pads a plot by for its
// glyphs. A plot without legend entries is drawn as p.Draw draws it.
func drawPlot(p *plot.Plot, c draw.Canvas, bg color.Color) {
	leg := p.Legend
	if leg.Rectangle(c).Size().Y == 0 { // no entries
		p.Draw(c)
		return
	}
	p.Legend = plot.NewLegend() // drawn with no entries: nothing
	defer func() { p.Legend = leg }()
	p.Draw(c)
	d := p.DataCanvas(c)
	box := legendBox(leg, d)
	pad := vg.Points(legendPadPt)
	box.Min.X -= pad
	box.Min.Y -= pad
	box.Max.X += pad
	box.Max.Y += pad
	d.SetColor(bg)
	d.Fill(box.Path())
	leg.Draw(d)
}

// legendBox is the rectangle leg.Draw(c) covers: its thumbnails and
// text, offsets included. gonum's Legend.Rectangle has the right size but
// not the place (it ignores XOffs and YOffs and mirrors Left), so the
// place is worked out here from the arithmetic of Legend.Draw: entries of
// height entryHeight stacked down from the top (or up from the bottom)
// with Padding between them, thumbnails at the chosen side and the text
// on the side towards the middle.
func legendBox(leg plot.Legend, c draw.Canvas) vg.Rectangle {
	size := leg.Rectangle(c).Size()
	descent := leg.TextStyle.FontExtents().Descent
	var r vg.Rectangle
	if leg.Left {
		r.Min.X = c.Min.X + leg.XOffs
	} else {
		r.Min.X = c.Max.X + leg.XOffs - size.X
	}
	if leg.Top {
		r.Min.Y = c.Max.Y - descent + leg.YOffs - size.Y
	} else {
		r.Min.Y = c.Min.Y + leg.YOffs
	}
	r.Max = vg.Point{X: r.Min.X + size.X, Y: r.Min.Y + size.Y}
	return r
}
