package figure

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/plot/vg/draw"
)

// fieldPanels is the number of panels per row of the field figures:
// truth, prediction, |prediction - truth|.
const fieldPanels = 3

// SpaceTime draws a 1D rollout as three space–time heat maps side by side:
// truth, prediction and |prediction - truth|, x horizontal and t
// vertical, each with its colour bar (truth and prediction share one
// range). truth and pred are [steps, n] row-major: value (s, i), frame s
// at grid point i, is at s*n + i. The cells tile the extent [x0, x1] ×
// [t0, t1]: point i covers [x0 + i·Δx, x0 + (i+1)·Δx), Δx = (x1-x0)/n,
// and frame s likewise in t. The figure is 2025×600 pixels.
func SpaceTime(path, title string, truth, pred []float32, steps, n int, x0, x1, t0, t1 float64) error {
	if err := checkSpaceTime(truth, pred, steps, n, x0, x1, t0, t1); err != nil {
		return wrap(path, err)
	}
	cells := func(z []float32) grid {
		return grid{z: z, cols: n, rows: steps, cs: 1, rs: n, x0: x0, x1: x1, y0: t0, y1: t1}
	}
	errs := absDiff(pred, truth)
	fs, es, err := pairScales(truth, pred, errs)
	if err != nil {
		return wrap(path, err)
	}
	panels := []heatPanel{
		{title: withNonFinite("truth", truth), g: cells(truth), s: fs},
		{title: withNonFinite("prediction", pred), g: cells(pred), s: fs},
		{title: withNonFinite("|prediction - truth|", errs), g: cells(errs), s: es},
	}
	w, h := inch(fieldPanels*cellWIn), inch(titleIn+cellHIn)
	return wrap(path, render(path, w, h, func(c draw.Canvas) {
		c = drawTitle(c, title)
		for i, hp := range panels {
			hp.xlabel, hp.ylabel = "x", "t"
			hp.draw(tile(c, fieldPanels, 1, i, 0))
		}
	}))
}

// pairScales returns the scales of a truth/prediction pair and of its
// error: one diverging range for both fields, a sequential one from 0 for
// the error.
func pairScales(truth, pred, errs []float32) (fieldS, errS scale, err error) {
	lo, hi := fieldRange(truth, pred)
	if fieldS, err = newScale(diverging(), lo, hi); err != nil {
		return scale{}, scale{}, err
	}
	lo, hi = errorRange(errs)
	if errS, err = newScale(sequential(), lo, hi); err != nil {
		return scale{}, scale{}, err
	}
	return fieldS, errS, nil
}

// checkSpaceTime validates SpaceTime's arguments.
func checkSpaceTime(truth, pred []float32, steps, n int, x0, x1, t0, t1 float64) error {
	if steps < 1 || n < 1 {
		return fmt.Errorf("steps = %d, n = %d: want both >= 1", steps, n)
	}
	if len(truth) != steps*n {
		return fmt.Errorf("truth has %d values, want steps*n = %d*%d = %d", len(truth), steps, n, steps*n)
	}
	if len(pred) != steps*n {
		return fmt.Errorf("pred has %d values, want steps*n = %d*%d = %d", len(pred), steps, n, steps*n)
	}
	if !finiteInterval(x0, x1) {
		return fmt.Errorf("x0 = %g, x1 = %g: want finite x0 < x1", x0, x1)
	}
	if !finiteInterval(t0, t1) {
		return fmt.Errorf("t0 = %g, t1 = %g: want finite t0 < t1", t0, t1)
	}
	return nil
}

// finiteInterval reports whether a < b and both are finite.
func finiteInterval(a, b float64) bool {
	return a < b && !math.IsInf(a, 0) && !math.IsInf(b, 0)
}

// Snapshots draws 2D fields at a few times, one row per time: truth,
// prediction and |prediction - truth| with a colour bar each. truth[k] and
// pred[k] are the fields at time labels[k] (e.g. "0.25T", "0.5T", "T"),
// [nx, ny] row-major: value (i, j) at i*ny + j, x = i horizontal, y = j
// vertical, in grid units (cell (i, j) covers [i, i+1] × [j, j+1]). Truth
// and prediction share one colour range per row; each row's error has its
// own. The figure is 2025 pixels wide and 60 + 540·len(labels) high.
func Snapshots(path, title string, truth, pred [][]float32, labels []string, nx, ny int) error {
	if err := checkSnapshots(truth, pred, labels, nx, ny); err != nil {
		return wrap(path, err)
	}
	rows := len(labels)
	var panels []heatPanel
	for k, label := range labels {
		errs := absDiff(pred[k], truth[k])
		fs, es, err := pairScales(truth[k], pred[k], errs)
		if err != nil {
			return wrap(path, fmt.Errorf("row %q: %w", label, err))
		}
		cells := func(z []float32) grid {
			return grid{z: z, cols: nx, rows: ny, cs: ny, rs: 1, x1: float64(nx), y1: float64(ny)}
		}
		panels = append(panels,
			heatPanel{title: withNonFinite(label+": truth", truth[k]), g: cells(truth[k]), s: fs},
			heatPanel{title: withNonFinite(label+": prediction", pred[k]), g: cells(pred[k]), s: fs},
			heatPanel{title: withNonFinite(label+": |prediction - truth|", errs), g: cells(errs), s: es},
		)
	}
	w, h := inch(fieldPanels*cellWIn), inch(titleIn+float64(rows)*cellHIn)
	return wrap(path, render(path, w, h, func(c draw.Canvas) {
		c = drawTitle(c, title)
		for i, hp := range panels {
			hp.xlabel, hp.ylabel = "x", "y"
			hp.draw(tile(c, fieldPanels, rows, i%fieldPanels, i/fieldPanels))
		}
	}))
}

// checkSnapshots validates Snapshots' arguments.
func checkSnapshots(truth, pred [][]float32, labels []string, nx, ny int) error {
	if nx < 1 || ny < 1 {
		return fmt.Errorf("nx = %d, ny = %d: want both >= 1", nx, ny)
	}
	if len(labels) == 0 {
		return errors.New("labels: no snapshot to draw")
	}
	if len(truth) != len(labels) || len(pred) != len(labels) {
		return fmt.Errorf("truth has %d snapshots, pred %d, labels %d: want the same count", len(truth), len(pred), len(labels))
	}
	for k := range labels {
		if len(truth[k]) != nx*ny {
			return fmt.Errorf("truth[%d] has %d values, want nx*ny = %d*%d = %d", k, len(truth[k]), nx, ny, nx*ny)
		}
		if len(pred[k]) != nx*ny {
			return fmt.Errorf("pred[%d] has %d values, want nx*ny = %d*%d = %d", k, len(pred[k]), nx, ny, nx*ny)
		}
	}
	return nil
}
