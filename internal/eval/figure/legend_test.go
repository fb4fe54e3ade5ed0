package figure

import (
	"image"
	"image/color"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestLegendBackdrop draws a plot whose fat red line runs under the
// legend, at each corner the figures use, and checks that drawPlot's
// legend text stands on a backdrop: no red inside the legend's box, the
// text's dark pixels inside it and none in the margin around it (which
// would mean legendBox put the box where the text is not). gonum's own
// p.Draw, the control, leaves the red line under the text.
func TestLegendBackdrop(t *testing.T) {
	for _, tt := range []struct {
		name        string
		top, left   bool
		xoffs, yoff vg.Length
	}{
		{"top left (Curves, Bars)", true, true, vg.Points(6), -vg.Points(4)},
		{"top right (LinePanels)", true, false, -vg.Points(4), -vg.Points(4)},
		{"bottom left", false, true, vg.Points(3), vg.Points(5)},
		{"bottom right", false, false, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lineY := 0.93
			if !tt.top {
				lineY = 0.07
			}
			p := plot.New()
			p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
			l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: lineY}, {X: 1, Y: lineY}})
			if err != nil {
				t.Fatal(err)
			}
			l.LineStyle = draw.LineStyle{Color: color.RGBA{R: 255, A: 255}, Width: vg.Points(30)}
			p.Add(l)
			p.Legend.Top, p.Legend.Left = tt.top, tt.left
			p.Legend.XOffs, p.Legend.YOffs = tt.xoffs, tt.yoff
			p.Legend.Add("a legend entry of some length")
			p.Legend.Add("a second one")

			ours, box := paintLegendCase(p, true)
			if n := countIn(ours, box, isRed); n != 0 {
				t.Errorf("drawPlot: %d red pixels inside the legend's box %v, want 0", n, box)
			}
			if n := countIn(ours, box, isDark); n < 50 {
				t.Errorf("drawPlot: %d dark (text) pixels inside the legend's box %v, want its text there", n, box)
			}
			// The text may stand a pixel or two past the box (a tall
			// glyph over its line's height): the backdrop's margin of
			// legendPadPt (4 pixels) takes it. Its outer half must be clear.
			inner, outer := box.Inset(-2), box.Inset(-4)
			if n := countIn(ours, outer, isDark) - countIn(ours, inner, isDark); n != 0 {
				t.Errorf("drawPlot: %d dark pixels 2-4 pixels outside the legend's box %v, want the text inside the backdrop", n, box)
			}
			gonum, _ := paintLegendCase(p, false)
			if n := countIn(gonum, box, isRed); n == 0 {
				t.Errorf("control (p.Draw): no red pixels inside the legend's box %v; the case does not put the line under the legend", box)
			}
		})
	}
}

// paintLegendCase draws p on a 675×450-pixel white canvas, with drawPlot
// (backdrop) or gonum's p.Draw, and returns the pixels and the legend's
// box (legendBox) in pixels.
func paintLegendCase(p *plot.Plot, backdrop bool) (*image.RGBA, image.Rectangle) {
	img := vgimg.NewWith(vgimg.UseWH(inch(4.5), inch(3)), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if backdrop {
		drawPlot(p, dc, legendBackdrop)
	} else {
		p.Draw(dc)
	}
	r := legendBox(p.Legend, p.DataCanvas(dc))
	px := func(l vg.Length) float64 { return float64(l) * dpi / 72 }
	h := px(dc.Max.Y)
	box := image.Rect(int(px(r.Min.X)), int(h-px(r.Max.Y)), int(px(r.Max.X)+0.999), int(h-px(r.Min.Y)+0.999))
	return toRGBA(img.Image()), box
}

func isRed(c color.RGBA) bool  { return c.R > 200 && c.G < 80 && c.B < 80 }
func isDark(c color.RGBA) bool { return c.R < 100 && c.G < 100 && c.B < 100 }

// countIn counts the pixels of r (clipped to img) for which is holds.
func countIn(img *image.RGBA, r image.Rectangle, is func(color.RGBA) bool) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if is(img.RGBAAt(x, y)) {
				n++
			}
		}
	}
	return n
}
