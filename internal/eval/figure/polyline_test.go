package figure

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestThinToColumns checks the M4 reduction on known answers: per column
// the first, lowest, highest and last point in order, each once; lines
// it must leave whole are left whole.
func TestThinToColumns(t *testing.T) {
	ident := func(x float64) vg.Length { return vg.Length(x) }
	xy := func(v ...float64) plotter.XYs {
		var out plotter.XYs
		for i := 0; i+1 < len(v); i += 2 {
			out = append(out, plotter.XY{X: v[i], Y: v[i+1]})
		}
		return out
	}
	tests := []struct {
		name    string
		in, out plotter.XYs
	}{
		{
			name: "two columns of five",
			// Column 0 (x in [0, 1)): first 5, low 1, high 9, last 4.
			// Column 1: first 7, then the low 0 which is also last, high 8.
			in:  xy(0, 5, 0.2, 9, 0.4, 3, 0.6, 1, 0.8, 4, 1.0, 7, 1.2, 8, 1.4, 2, 1.6, 6, 1.8, 0),
			out: xy(0, 5, 0.2, 9, 0.6, 1, 0.8, 4, 1.0, 7, 1.2, 8, 1.8, 0),
		},
		{
			name: "low before high in a column",
			in:   xy(0, 5, 0.1, 1, 0.2, 9, 0.3, 5, 0.4, 5, 0.5, 5, 0.6, 5, 0.7, 5, 0.8, 5, 1, 3),
			out:  xy(0, 5, 0.1, 1, 0.2, 9, 0.8, 5, 1, 3),
		},
		{
			name: "few points per column: whole",
			in:   xy(0, 1, 0.5, 2, 1, 3, 1.5, 4, 2, 5, 2.5, 6, 3, 7, 3.5, 8),
			out:  xy(0, 1, 0.5, 2, 1, 3, 1.5, 4, 2, 5, 2.5, 6, 3, 7, 3.5, 8),
		},
		{
			name: "x goes back: whole",
			in:   xy(0, 1, 0.1, 2, 0.2, 3, 0.3, 4, 0.4, 5, 0.5, 6, 0.6, 7, 0.7, 8, 1.5, 9, 0.1, 0),
			out:  xy(0, 1, 0.1, 2, 0.2, 3, 0.3, 4, 0.4, 5, 0.5, 6, 0.6, 7, 0.7, 8, 1.5, 9, 0.1, 0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := thinToColumns(tt.in, ident, 1)
			if len(got) != len(tt.out) {
				t.Fatalf("got %v, want %v", got, tt.out)
			}
			for i := range got {
				if got[i] != tt.out[i] {
					t.Fatalf("got %v, want %v", got, tt.out)
				}
			}
		})
	}
}

// TestPolylineDrawsTheSameLine renders dense noisy lines twice, once as
// gonum's plotter.Line and once as a polyline, and asserts that the two
// images differ in no more than a small share of the pixels the line
// covers (anti-aliased edges where thinning or a run's end moves a
// vertex by a fraction of a pixel), and that the polyline still covers
// every column the line covers. A thinning that drops a column's extreme
// or runs that do not share their end points fail it.
func TestPolylineDrawsTheSameLine(t *testing.T) {
	faint := color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0x70}
	tests := []struct {
		name  string
		n     int
		style draw.LineStyle
		logY  bool
		// column: where nothing is thinned, at most this many pixels of
		// one column may differ (a run's missing end segment or a dash
		// pattern restarted shows as tens); 0: not checked.
		column int
	}{
		{name: "opaque, log axis", n: 20000, style: draw.LineStyle{Color: plotutil.Color(0), Width: vg.Points(1.5)}, logY: true},
		{name: "opaque, thin", n: 20000, style: draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}},
		{name: "translucent", n: 20000, style: draw.LineStyle{Color: faint, Width: vg.Points(0.7)}},
		{name: "dashed", n: 20000, style: draw.LineStyle{Color: plotutil.Color(1), Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}},
		{name: "dashed, sparse: no thinning", n: 300, style: draw.LineStyle{Color: plotutil.Color(1), Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(4), vg.Points(2)}}, column: 4},
		{name: "sparse: no thinning", n: 300, style: draw.LineStyle{Color: plotutil.Color(2), Width: vg.Points(1.5)}, column: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(1, 2))
			pts := make(plotter.XYs, tt.n)
			for i := range pts {
				pts[i] = plotter.XY{X: float64(i), Y: math.Exp(-3*float64(i)/float64(tt.n)) * (1 + r.Float64())}
			}
			whole := &plotter.Line{XYs: pts, LineStyle: tt.style}
			thin, err := newPolyline(pts)
			if err != nil {
				t.Fatal(err)
			}
			thin.LineStyle = tt.style
			want, got := drawLine(whole, tt.logY), drawLine(thin, tt.logY)
			covered, differ := 0, 0
			colDiffer := map[int]int{}
			colsWant, colsGot := map[int]bool{}, map[int]bool{}
			b := want.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					w, g := want.RGBAAt(x, y), got.RGBAAt(x, y)
					if w != (color.RGBA{255, 255, 255, 255}) {
						covered++
						colsWant[x] = true
					}
					if g != (color.RGBA{255, 255, 255, 255}) {
						colsGot[x] = true
					}
					if channelGap(w, g) > 64 {
						differ++
						colDiffer[x]++
					}
				}
			}
			if covered == 0 {
				t.Fatal("the reference drew nothing")
			}
			if share := float64(differ) / float64(covered); share > 0.02 {
				t.Errorf("%d of the %d pixels the line covers differ by more than 64 in a channel (%.1f%%), want at most 2%%",
					differ, covered, 100*share)
			}
			for x, d := range colDiffer {
				if tt.column > 0 && d > tt.column {
					t.Errorf("column %d: %d pixels differ, want at most %d", x, d, tt.column)
					break
				}
			}
			for x := range colsWant {
				if !colsGot[x] {
					t.Errorf("column %d: drawn by the whole line, not by the polyline", x)
					break
				}
			}
		})
	}
}

// drawLine renders a line alone (renderLine) and returns its pixels.
func drawLine(l plot.Plotter, logY bool) *image.RGBA {
	return toRGBA(renderLine(l, logY).Image())
}

// toRGBA copies a rendered canvas's pixels into an RGBA image.
func toRGBA(src image.Image) *image.RGBA {
	out := image.NewRGBA(src.Bounds())
	for y := src.Bounds().Min.Y; y < src.Bounds().Max.Y; y++ {
		for x := src.Bounds().Min.X; x < src.Bounds().Max.X; x++ {
			out.Set(x, y, src.At(x, y))
		}
	}
	return out
}

// renderLine draws a line alone on a 675×450-pixel white canvas at the
// package's resolution, with no axes, so two renderings share the frame.
func renderLine(l plot.Plotter, logY bool) *vgimg.Canvas {
	p := plot.New()
	p.HideAxes()
	p.Add(l)
	if logY {
		p.Y.Scale = plot.LogScale{}
	}
	img := vgimg.NewWith(vgimg.UseWH(inch(4.5), inch(3)), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	p.Draw(dc)
	return img
}

// channelGap is the largest difference between two colours' channels.
func channelGap(a, b color.RGBA) int {
	d := 0
	for _, p := range [][2]uint8{{a.R, b.R}, {a.G, b.G}, {a.B, b.B}} {
		d = max(d, abs(int(p[0])-int(p[1])))
	}
	return d
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// BenchmarkDenseLine draws a training-loss-like line of 20,000 records
// (a decay by e with ±25% noise, on a log axis) as gonum's plotter.Line
// and as a polyline, side by side.
func BenchmarkDenseLine(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	pts := make(plotter.XYs, 20000)
	for i := range pts {
		pts[i] = plotter.XY{X: float64(i), Y: math.Exp(-float64(i)/20000) * (1 + 0.5*r.Float64())}
	}
	style := draw.LineStyle{Color: plotutil.Color(0), Width: vg.Points(1.5)}
	b.Run("plotter.Line", func(b *testing.B) {
		for b.Loop() {
			renderLine(&plotter.Line{XYs: pts, LineStyle: style}, true)
		}
	})
	b.Run("polyline", func(b *testing.B) {
		thin, _ := newPolyline(pts)
		thin.LineStyle = style
		for b.Loop() {
			renderLine(thin, true)
		}
	})
}
