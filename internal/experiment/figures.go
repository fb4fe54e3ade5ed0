package experiment

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"uhno/internal/config"
	"uhno/internal/eval"
	"uhno/internal/eval/figure"
)

// evalFigures writes the PNG figures and returns how many: per model the
// space-time plot (1D) or the snapshots at 0.25T, 0.5T and T (2D, 3D: the
// middle slice of the last axis), and the routing masks of U-HNO's last
// predicted frame (1D, 2D); and one error-growth plot of all models.
func evalFigures(dir string, cfg config.Config, td *taskData, rows []eval.Row, samples []*eval.Sample) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("eval: %w", err)
	}
	shape := td.ds.Grid()
	pts := td.ds.Points()
	n := 0
	for i, s := range samples {
		if s == nil || len(s.Pred) == 0 {
			continue
		}
		name := fileLabel(rows[i].Name)
		first := func(frames [][]float32) [][]float32 { // channel 0 of each frame
			out := make([][]float32, len(frames))
			for t, f := range frames {
				out[t] = f[:pts]
			}
			return out
		}
		truth, pred := first(s.Truth), first(s.Pred)
		steps := len(pred)
		title := fmt.Sprintf("%s, %s, test trajectory %d", cfg.Task, rows[i].Name, s.Traj)
		switch len(shape) {
		case 1:
			if steps > 1 {
				if err := figure.SpaceTime(filepath.Join(dir, name+"_spacetime.png"), title, flatten(truth), flatten(pred),
					steps, shape[0], 0, cfg.PDE.Domain[0], 1, float64(steps)); err != nil {
					return n, err
				}
				n++
			}
		default:
			nx, ny := shape[0], shape[1]
			slice := func(f []float32) []float32 { // 3D: the middle slice of the last axis
				if len(shape) == 2 {
					return f
				}
				nz, out := shape[2], make([]float32, nx*ny)
				for j := range out {
					out[j] = f[j*nz+nz/2]
				}
				return out
			}
			idx, labels := snapshotSteps(steps)
			var ts, ps [][]float32
			for _, k := range idx {
				ts, ps = append(ts, slice(truth[k])), append(ps, slice(pred[k]))
			}
			if err := figure.Snapshots(filepath.Join(dir, name+"_snapshots.png"), title, ts, ps, labels, nx, ny); err != nil {
				return n, err
			}
			n++
		}
		if len(s.Masks) > 0 && len(shape) <= 2 {
			if err := figure.RoutingMasks(filepath.Join(dir, name+"_routing.png"),
				fmt.Sprintf("%s: SPAR masks g (1 = Fourier) at step %d", title, steps),
				pred[steps-1], shape, s.Masks, s.MaskShapes, s.Stages); err != nil {
				return n, err
			}
			n++
		}
	}
	if len(shape) == 1 && rows[0].Summary.Steps > 1 {
		if k, err := bandEnergyFigure(filepath.Join(dir, "motivation_bands.png"), cfg, samples, pts); err != nil {
			return n, err
		} else {
			n += k
		}
	}
	if rows[0].Summary.Steps > 1 {
		var panels []figure.LinePanel
		for _, r := range rows {
			lp := figure.LinePanel{Title: r.Name, XLabel: "rollout step", YLabel: "E_b", LogY: true}
			for b, m := range []string{eval.MetricBandLow, eval.MetricBandMid, eval.MetricBandHigh} {
				c := r.Summary.Curves[m]
				x := make([]float64, len(c.Mean))
				for t := range x {
					x[t] = float64(t + 1)
				}
				lp.Lines = append(lp.Lines, figure.Line{Name: strings.TrimPrefix(m, "band_") + " band", X: x, Y: c.Mean, Colour: b})
			}
			panels = append(panels, lp)
		}
		if err := figure.LinePanels(filepath.Join(dir, "band_growth.png"),
			fmt.Sprintf("%s: binned spectral error E_b per band along the rollout (mean over test trajectories)", cfg.Task), 3, panels); err != nil {
			return n, err
		}
		n++
	}
	if rows[0].Summary.Steps > 1 {
		var series []figure.Series
		for _, r := range rows {
			c := r.Summary.Curves[eval.MetricRelL2]
			x := make([]float64, len(c.Mean))
			for t := range x {
				x[t] = float64(t + 1)
			}
			series = append(series, figure.Series{Name: r.Name, X: x, Y: c.Mean, Low: c.Low, High: c.High})
		}
		if err := figure.Curves(filepath.Join(dir, "error_growth.png"), fmt.Sprintf("%s: relL2 along the rollout (95%% bootstrap band)", cfg.Task),
			"rollout step", "relL2", true, series); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// bandEnergyWindow is the window of the local band energy (points).
const bandEnergyWindow = 32

// bandEnergyFigure draws Fig. motivation (a) for a 1D task: the first
// model's test trajectory (its truth, channel 0) and where its low-, mid-
// and high-band energy lies along the rollout (eval.LocalBandEnergy). It
// writes nothing, returning 0, when the grid is narrower than the window.
func bandEnergyFigure(path string, cfg config.Config, samples []*eval.Sample, pts int) (int, error) {
	var s *eval.Sample
	for _, x := range samples {
		if x != nil && len(x.Truth) > 0 {
			s = x
			break
		}
	}
	if s == nil || pts < bandEnergyWindow {
		return 0, nil
	}
	steps := len(s.Truth)
	field := make([]float32, 0, steps*pts)
	var bands [3][]float32
	for _, f := range s.Truth {
		field = append(field, f[:pts]...)
		e := eval.LocalBandEnergy(f[:pts], bandEnergyWindow)
		for b := range bands {
			for _, v := range e[b] {
				bands[b] = append(bands[b], float32(v))
			}
		}
	}
	title := fmt.Sprintf("%s, test trajectory %d: local band energy (Hann window of %d points; Fig. motivation (a))", cfg.Task, s.Traj, bandEnergyWindow)
	if err := figure.BandEnergy(path, title, field, bands, steps, pts, 0, cfg.PDE.Domain[0], 1, float64(steps)); err != nil {
		return 0, err
	}
	return 1, nil
}

// snapshotSteps are the 0-based indices of the steps at 0.25T, 0.5T and
// T of a rollout of steps steps (fewer when steps < 3).
func snapshotSteps(steps int) ([]int, []string) {
	var idx []int
	var labels []string
	for _, q := range []struct {
		f float64
		l string
	}{{0.25, "0.25T"}, {0.5, "0.5T"}, {1, "T"}} {
		k := max(int(math.Ceil(q.f*float64(steps)))-1, 0)
		if len(idx) > 0 && idx[len(idx)-1] == k {
			continue
		}
		idx = append(idx, k)
		labels = append(labels, fmt.Sprintf("%s (step %d)", q.l, k+1))
	}
	return idx, labels
}

// flatten joins frames into one row-major [steps, n] slice.
func flatten(frames [][]float32) []float32 {
	var out []float32
	for _, f := range frames {
		out = append(out, f...)
	}
	return out
}

// fileLabel turns a row label into a file name part.
func fileLabel(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}
