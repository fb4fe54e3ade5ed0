package figure

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"uhno/internal/atomicfile"
)

// dpi is the output resolution: 150 dots per inch, enough for a shock
// front of a 1024-point rollout to stay sharp in a 3-inch panel.
const dpi = 150

// Layout lengths in inches. A figure's pixel size is its size in inches
// times dpi.
const (
	titleIn = 0.4 // the figure title band at the top of every figure
	cellWIn = 4.5 // one heat-map panel with its colour bar
	cellHIn = 3.6
)

// inch converts inches to gonum's lengths.
func inch(x float64) vg.Length { return vg.Length(x) * vg.Inch }

// render draws a w×h figure with paint and writes it to path as a PNG,
// atomically (see writeAtomic). A panic while painting (gonum/plot panics
// on some inputs it does not expect) becomes an error, and nothing is
// written.
func render(path string, w, h vg.Length, paint func(c draw.Canvas)) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	if err := paintSafely(img, paint); err != nil {
		return err
	}
	return writeAtomic(path, vgimg.PngCanvas{Canvas: img})
}

// paintSafely runs paint on img and turns a panic into an error.
func paintSafely(img *vgimg.Canvas, paint func(c draw.Canvas)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("drawing: %v", r)
		}
	}()
	paint(draw.New(img))
	return nil
}

// writeAtomic writes w's bytes to path through atomicfile, so readers
// never see a partial figure; on failure the temporary file is removed.
func writeAtomic(path string, w io.WriterTo) error {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := w.WriteTo(f); err != nil {
		return fmt.Errorf("writing PNG: %w", err)
	}
	return f.Commit()
}

// wrap prefixes err with the package and the figure's path; nil stays nil.
func wrap(path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("figure: %s: %w", path, err)
}

// textStyle is gonum's default plain-text style at size points, centred on
// the point it is drawn at.
func textStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, size),
		XAlign:  text.XCenter,
		YAlign:  text.YCenter,
		Handler: plot.DefaultTextHandler,
	}
}

// drawTitle writes title centred in the title band at the top of c and
// returns the canvas below the band. The band is kept when title is
// empty, so a figure's size does not depend on its title.
func drawTitle(c draw.Canvas, title string) draw.Canvas {
	band := inch(titleIn)
	if title != "" {
		c.FillText(textStyle(14), vg.Point{X: c.Center().X, Y: c.Max.Y - band/2}, title)
	}
	return draw.Crop(c, 0, 0, 0, -band)
}

// fit returns the canvas in which p puts its data area exactly on want:
// c shifted edge by edge by the difference between want and p's data
// area in c. The margins a plot keeps around its data (axes, labels,
// title) do not depend on the canvas size, so one correction suffices;
// a second one absorbs the rare tick that changes with the size.
// Aligned data areas make panels and their colour bars line up.
func fit(p *plot.Plot, c draw.Canvas, want vg.Rectangle) draw.Canvas {
	for range 2 {
		d := p.DataCanvas(c)
		c.Min.X += want.Min.X - d.Min.X
		c.Min.Y += want.Min.Y - d.Min.Y
		c.Max.X += want.Max.X - d.Max.X
		c.Max.Y += want.Max.Y - d.Max.Y
	}
	return c
}

// tile returns the cell (col, row) of a grid of cols×rows equal cells
// covering c, row 0 at the top.
func tile(c draw.Canvas, cols, rows, col, row int) draw.Canvas {
	w := (c.Max.X - c.Min.X) / vg.Length(cols)
	h := (c.Max.Y - c.Min.Y) / vg.Length(rows)
	c.Min.X += vg.Length(col) * w
	c.Max.X = c.Min.X + w
	c.Max.Y -= vg.Length(row) * h
	c.Min.Y = c.Max.Y - h
	return c
}
