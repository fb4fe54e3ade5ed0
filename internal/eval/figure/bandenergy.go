package figure

import (
	"fmt"

	"gonum.org/v1/plot/vg/draw"
)

// BandEnergy draws Fig. motivation (a): a 1D trajectory as a space–time
// heat map beside the space–time maps of its local low-, mid- and
// high-band energy (eval.LocalBandEnergy of each frame), x horizontal and
// t vertical. field is [steps, n] row-major like SpaceTime's, bands[b]
// the same layout for band b. The field uses the diverging map, each band
// the sequential map from 0 to its own maximum, so that where each band
// lives is visible whatever its size. The figure is 2700×600 pixels.
func BandEnergy(path, title string, field []float32, bands [3][]float32, steps, n int, x0, x1, t0, t1 float64) error {
	if err := checkSpaceTime(field, field, steps, n, x0, x1, t0, t1); err != nil {
		return wrap(path, err)
	}
	for b, z := range bands {
		if len(z) != steps*n {
			return wrap(path, fmt.Errorf("bands[%d] has %d values, want steps*n = %d", b, len(z), steps*n))
		}
	}
	cells := func(z []float32) grid {
		return grid{z: z, cols: n, rows: steps, cs: 1, rs: n, x0: x0, x1: x1, y0: t0, y1: t1}
	}
	lo, hi := fieldRange(field)
	fs, err := newScale(diverging(), lo, hi)
	if err != nil {
		return wrap(path, err)
	}
	panels := []heatPanel{{title: withNonFinite("u(x, t)", field), g: cells(field), s: fs}}
	for b, name := range []string{"low-band energy", "mid-band energy", "high-band energy"} {
		lo, hi := errorRange(bands[b]) // [0, 1] for a band without energy
		s, err := newScale(sequential(), lo, hi)
		if err != nil {
			return wrap(path, err)
		}
		panels = append(panels, heatPanel{title: withNonFinite(name, bands[b]), g: cells(bands[b]), s: s})
	}
	cols := len(panels)
	w, h := inch(float64(cols)*cellWIn), inch(titleIn+cellHIn)
	return wrap(path, render(path, w, h, func(c draw.Canvas) {
		c = drawTitle(c, title)
		for i, hp := range panels {
			hp.xlabel, hp.ylabel = "x", "t"
			hp.draw(tile(c, cols, 1, i, 0))
		}
	}))
}
