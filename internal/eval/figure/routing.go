package figure

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Routing layout in inches. 1D: a field panel over one strip per level,
// 1500 × (495 + 120·levels) pixels. 2D: panels of cellWIn × cellHIn,
// at most routingCols per row.
const (
	routing1DWIn    = 10
	routingFieldHIn = 2.8 // the 1D field panel
	routingLevelHIn = 0.8 // one 1D level: title and strip
	routingStripHIn = 0.45
	routingBottomIn = 0.1
	routingCols     = 3
)

// gateTicks label the routing colour bars by branch instead of by number.
func gateTicks() []plot.Tick {
	return []plot.Tick{{Value: 0, Label: "Gauss"}, {Value: 1, Label: "Fourier"}}
}

// RoutingMasks draws the SPAR routing masks g, one per U-shape level,
// with the predicted field they route: g = 1 sends a point to the Fourier
// branch (red), g = 0 to the Gaussian branch (blue); soft values between
// are shaded between the two. field has shape fieldShape, [n] or [nx, ny]
// row-major; masks[l] has shape maskShapes[l] of the same rank, at the
// level's own resolution, and is named levels[l]. Each mask is stretched
// over the field's extent ([0, n], or [0, nx] × [0, ny] in field grid
// units), so a level at half the resolution has cells twice as wide.
// Mask values must lie in [0, 1]; non-finite ones are drawn green.
// Each level's title gives its mean g (the Fourier share of a hard mask).
//
// 1D: the field as a line, with one strip per level below it showing g
// along the same x axis; 1500 × (495 + 120·len(levels)) pixels. 2D: a
// heat map of the field and one per level, three to a row; 675·cols ×
// (60 + 540·rows) pixels, cols = min(1+len(levels), 3).
func RoutingMasks(path, title string, field []float32, fieldShape []int, masks [][]float32, maskShapes [][]int, levels []string) error {
	if err := checkRouting(field, fieldShape, masks, maskShapes, levels); err != nil {
		return wrap(path, err)
	}
	gs, err := newScale(diverging(), 0, 1)
	if err != nil {
		return wrap(path, err)
	}
	if len(fieldShape) == 1 {
		return wrap(path, routing1D(path, title, field, masks, levels, gs))
	}
	return wrap(path, routing2D(path, title, field, fieldShape, masks, maskShapes, levels, gs))
}

// routing1D draws the 1D layout.
func routing1D(path, title string, field []float32, masks [][]float32, levels []string, gs scale) error {
	n := len(field)
	fp := plot.New()
	fp.Title.Text = withNonFinite("prediction", field)
	fp.X.Label.Text = "x (grid point)"
	fp.Y.Label.Text = "u"
	fp.X.Padding = 0
	fp.Add(plotter.NewGrid())
	for _, r := range runs(n, func(i int) bool { return finite(float64(field[i])) }) {
		pts := make(plotter.XYs, 0, r[1]-r[0])
		for i := r[0]; i < r[1]; i++ {
			pts = append(pts, plotter.XY{X: float64(i) + 0.5, Y: float64(field[i])})
		}
		line, err := newPolyline(pts)
		if err != nil {
			return fmt.Errorf("field: %w", err)
		}
		line.LineStyle.Width = vg.Points(1.2)
		fp.Add(line)
	}
	fp.X.Min, fp.X.Max = 0, float64(n)

	strips := make([]*plot.Plot, len(masks))
	for l, m := range masks {
		sp := plot.New()
		sp.Title.Text = levelTitle(levels[l], []int{len(m)}, m)
		sp.Title.TextStyle.Font.Size = 10
		sp.HideAxes()
		sp.X.Padding, sp.Y.Padding = 0, 0
		sp.Add(&raster{g: grid{z: m, cols: len(m), rows: 1, cs: 1, x1: float64(n), y1: 1}, s: gs})
		strips[l] = sp
	}

	h := routingFieldHIn + routingLevelHIn*float64(len(masks)) + routingBottomIn
	return render(path, inch(routing1DWIn), inch(titleIn+h), func(c draw.Canvas) {
		c = drawTitle(c, title)
		fc := c
		fc.Min.Y = c.Max.Y - inch(routingFieldHIn)
		fc = draw.Crop(fc, 0, -inch(barMarginIn), 0, 0)
		fp.Draw(fc)
		d := fp.DataCanvas(fc)
		for l, sp := range strips {
			top := c.Max.Y - inch(routingFieldHIn) - inch(routingLevelHIn)*vg.Length(l)
			region := c
			region.Max.Y, region.Min.Y = top, top-inch(routingLevelHIn)
			bottom := region.Min.Y + inch(routingLevelHIn-routingStripHIn)/3
			want := vg.Rectangle{
				Min: vg.Point{X: d.Min.X, Y: bottom},
				Max: vg.Point{X: d.Max.X, Y: bottom + inch(routingStripHIn)},
			}
			sp.Draw(fit(sp, region, want))
			drawBar(c, gs, gateTicks(), want.Min.Y, want.Max.Y)
		}
	})
}

// routing2D draws the 2D layout.
func routing2D(path, title string, field []float32, fieldShape []int, masks [][]float32, maskShapes [][]int, levels []string, gs scale) error {
	nx, ny := fieldShape[0], fieldShape[1]
	lo, hi := fieldRange(field)
	fs, err := newScale(diverging(), lo, hi)
	if err != nil {
		return err
	}
	panels := []heatPanel{{
		title: withNonFinite("prediction", field),
		g:     grid{z: field, cols: nx, rows: ny, cs: ny, rs: 1, x1: float64(nx), y1: float64(ny)},
		s:     fs,
	}}
	for l, m := range masks {
		mx, my := maskShapes[l][0], maskShapes[l][1]
		panels = append(panels, heatPanel{
			title: levelTitle(levels[l], maskShapes[l], m),
			g:     grid{z: m, cols: mx, rows: my, cs: my, rs: 1, x1: float64(nx), y1: float64(ny)},
			s:     gs,
			ticks: gateTicks(),
		})
	}
	cols := min(len(panels), routingCols)
	rows := (len(panels) + cols - 1) / cols
	w, h := inch(float64(cols)*cellWIn), inch(titleIn+float64(rows)*cellHIn)
	return render(path, w, h, func(c draw.Canvas) {
		c = drawTitle(c, title)
		for i, hp := range panels {
			hp.xlabel, hp.ylabel = "x", "y"
			hp.draw(tile(c, cols, rows, i%cols, i/cols))
		}
	})
}

// levelTitle names a level, its resolution and its mean gate value.
func levelTitle(level string, shape []int, m []float32) string {
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = strconv.Itoa(s)
	}
	res := strings.Join(dims, "x")
	sum, k := 0.0, 0
	for _, v := range m {
		if f := float64(v); finite(f) {
			sum += f
			k++
		}
	}
	if k == 0 {
		return fmt.Sprintf("%s, %s: no finite g", level, res)
	}
	t := fmt.Sprintf("%s, %s: mean g = %.2f", level, res, sum/float64(k))
	if k < len(m) {
		t += fmt.Sprintf(" (%d non-finite)", len(m)-k)
	}
	return t
}

// checkRouting validates RoutingMasks' arguments.
func checkRouting(field []float32, fieldShape []int, masks [][]float32, maskShapes [][]int, levels []string) error {
	if len(fieldShape) != 1 && len(fieldShape) != 2 {
		return fmt.Errorf("fieldShape %v: want [n] or [nx, ny]", fieldShape)
	}
	if err := checkShape("fieldShape", fieldShape, len(field), "field"); err != nil {
		return err
	}
	if len(masks) == 0 {
		return errors.New("masks: none to draw (a model without SPAR gates routes nothing)")
	}
	if len(maskShapes) != len(masks) || len(levels) != len(masks) {
		return fmt.Errorf("masks has %d entries, maskShapes %d, levels %d: want the same count", len(masks), len(maskShapes), len(levels))
	}
	for l, m := range masks {
		if len(maskShapes[l]) != len(fieldShape) {
			return fmt.Errorf("maskShapes[%d] %v: want rank %d like fieldShape %v", l, maskShapes[l], len(fieldShape), fieldShape)
		}
		if err := checkShape(fmt.Sprintf("maskShapes[%d]", l), maskShapes[l], len(m), fmt.Sprintf("masks[%d]", l)); err != nil {
			return err
		}
		for i, v := range m {
			if f := float64(v); finite(f) && (f < 0 || f > 1) {
				return fmt.Errorf("masks[%d][%d] = %g: want a gate value in [0, 1]", l, i, f)
			}
		}
	}
	return nil
}

// checkShape checks that shape (named name) has positive sizes whose
// product is n, the length of the slice named of.
func checkShape(name string, shape []int, n int, of string) error {
	size := 1
	for _, s := range shape {
		if s < 1 {
			return fmt.Errorf("%s %v: want sizes >= 1", name, shape)
		}
		if size > math.MaxInt/s {
			return fmt.Errorf("%s %v: too large", name, shape)
		}
		size *= s
	}
	if size != n {
		return fmt.Errorf("%s has %d values, want %d for %s %v", of, n, size, name, shape)
	}
	return nil
}
