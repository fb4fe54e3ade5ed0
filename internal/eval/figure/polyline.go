package figure

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// strokeRun is the most vertices polyline strokes in one path.
//
// Why: gonum's image canvas strokes through freetype's rasteriser, which
// keeps each pixel row's cells in a sorted linked list and walks it for
// every cell it adds (raster.(*Rasterizer).findCell). A long path whose
// segments cross the same rows many times (a noisy loss curve of 20,000
// records, the SPAR-contrast mean of 3,000) puts hundreds of cells in
// each row, and the drawing becomes quadratic: 21 s for one 20,000-point
// curve, 72 s for one histogram panel's mean line of 20,000 records.
// Stroked in short runs, each path has few cells per row.
const strokeRun = 64

// polyline is a plotter.Line drawn in time linear in its points: first
// thinned to at most four points per quarter-pixel column of the output
// (the first, lowest, highest and last point of the column, in their
// order: the "M4" reduction; at whole-pixel columns it moved the line's
// anti-aliased edges by up to 75 pixels of a column, at quarter pixels by
// at most a few, TestPolylineDrawsTheSameLine), then stroked in runs of strokeRun vertices that share their end points,
// each dashed run starting its pattern where the one before it ended.
type polyline struct{ *plotter.Line }

// newPolyline is plotter.NewLine for a polyline.
func newPolyline(xys plotter.XYer) (*polyline, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	return &polyline{l}, nil
}

// Plot implements plot.Plotter.
func (l *polyline) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	xys := thinToColumns(l.XYs, trX, vg.Inch/dpi/4)
	style := l.LineStyle
	for a := 0; a < len(xys)-1 || a == 0; a += strokeRun - 1 {
		b := min(a+strokeRun, len(xys))
		(&plotter.Line{XYs: xys[a:b], LineStyle: style}).Plot(c, plt)
		// The next run's dash pattern goes on where this one's ended.
		for k := a + 1; k < b && len(style.Dashes) > 0; k++ {
			style.DashOffs += vg.Length(math.Hypot(float64(trX(xys[k].X)-trX(xys[k-1].X)), float64(trY(xys[k].Y)-trY(xys[k-1].Y))))
		}
	}
}

// thinToColumns returns the M4 reduction of xys at column width px on the
// canvas, where trX places a data X: per column, the first, lowest,
// highest and last point of the consecutive points that fall in it, in
// their original order and each once. Points must be finite. A line whose
// canvas X ever decreases is returned whole (its columns would not be
// consecutive), as is one with no more than four points per column.
func thinToColumns(xys plotter.XYs, trX func(float64) vg.Length, px vg.Length) plotter.XYs {
	n := len(xys)
	if n < 8 {
		return xys
	}
	col := make([]int, n)
	x0 := trX(xys[0].X)
	for i, p := range xys {
		col[i] = int(math.Floor(float64((trX(p.X) - x0) / px)))
		if i > 0 && col[i] < col[i-1] {
			return xys
		}
	}
	if n <= 4*(col[n-1]+1) {
		return xys
	}
	out := make(plotter.XYs, 0, 4*(col[n-1]+1))
	for a := 0; a < n; {
		b := a + 1
		lo, hi := a, a
		for ; b < n && col[b] == col[a]; b++ {
			if xys[b].Y < xys[lo].Y {
				lo = b
			}
			if xys[b].Y > xys[hi].Y {
				hi = b
			}
		}
		keep := []int{a, lo, hi, b - 1}
		if keep[1] > keep[2] {
			keep[1], keep[2] = keep[2], keep[1]
		}
		for k, i := range keep {
			if k == 0 || i != keep[k-1] {
				out = append(out, xys[i])
			}
		}
		a = b
	}
	return out
}
