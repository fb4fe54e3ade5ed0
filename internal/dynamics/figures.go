package dynamics

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"uhno/internal/eval/figure"
)

// Run is one training run's log for Figures: a label for legends and
// file names, and what Read found.
type Run struct {
	Label  string
	Series *Series
}

// Smoothing is the EMA weight of the bold curves of panels (a) and (e)
// (paper App. "Smoothing": smoothing factor 0.9; thin curves are raw).
const Smoothing = 0.9

// Figure file names (in Figures' dir). Per-run figures insert the run's
// label, made file-safe: dynamics-contrast-<label>.png.
const (
	BandsFile    = "dynamics-bands.png"       // (a) per-band rollout error
	ContrastFile = "dynamics-contrast-%s.png" // (b) contrast histograms, per run
	AngleFile    = "dynamics-angle.png"       // (c) gradient-angle histograms
	RhoFile      = "dynamics-rho.png"         // (d) keep-ratio per level
	LossFile     = "dynamics-loss.png"        // (e) loss terms
)

// Figures draws the panels of the paper's Fig. training-dynamics from the
// runs' logs into dir (created if needed) and returns the paths written,
// in this order, each only when some run has its data:
//
//   - BandsFile, (a): E_b per band (low, mid, high; averaged over the
//     rollout steps and the trajectories) and relL2 against the training
//     step, one colour per run, raw values thin and their EMA (Smoothing)
//     bold, log scale. Needs "dynamics" records.
//   - ContrastFile per routing run, (b): for each routing stage, the
//     histogram of the per-trajectory SPAR contrast c at every record as a
//     step × c heat map (share of trajectories per bin) with its mean;
//     the bins span the 0.5% to 99.5% quantiles of the stage's values
//     over training, the few beyond counted in the end bins.
//   - AngleFile, (c): the histogram of the branch-gradient angles (0-180
//     degrees) of each record, one panel per run with "angle" records.
//   - RhoFile, (d): the mean keep-ratio rho over the trajectories per
//     routing stage against the step, the clip range [rho_min, rho_max]
//     shaded; one panel per routing run.
//   - LossFile, (e): the training loss and its terms (MSE, H1 and CBC,
//     unweighted as logged) against the step, one colour per run (e.g.
//     Full and mode E), raw thin and EMA bold, log scale. Needs "train"
//     records.
//
// Labels must be unique and non-empty. A run without any record to draw
// is an error, as is a dir that cannot be written; a figure that fails
// stops Figures with the figure package's error (the ones written before
// stay and are returned).
func Figures(dir string, runs []Run) ([]string, error) {
	if len(runs) == 0 {
		return nil, errors.New("dynamics: no runs to draw")
	}
	names := map[string]string{} // label -> file-safe name, unique
	used := map[string]bool{}
	for i, r := range runs {
		switch {
		case r.Label == "":
			return nil, fmt.Errorf("dynamics: run %d has no label", i)
		case names[r.Label] != "":
			return nil, fmt.Errorf("dynamics: two runs labelled %q", r.Label)
		case r.Series == nil:
			return nil, fmt.Errorf("dynamics: run %q has no series", r.Label)
		case len(r.Series.Train)+len(r.Series.Dynamics)+len(r.Series.Angles) == 0:
			return nil, fmt.Errorf("dynamics: run %q (%s): no training, dynamics or angle records to draw", r.Label, r.Series.Path)
		}
		base := fileLabel(r.Label)
		name := base
		for k := 2; used[name]; k++ {
			name = fmt.Sprintf("%s-%d", base, k)
		}
		used[name], names[r.Label] = true, name
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("dynamics: %w", err)
	}
	var out []string
	draw := func(name string, f func(path string) error) error {
		path := filepath.Join(dir, name)
		if err := f(path); err != nil {
			return err
		}
		out = append(out, path)
		return nil
	}
	if panels := bandPanels(runs); panels != nil {
		title := "Per-band rollout error E_b over training" + trajNote(runs)
		if err := draw(BandsFile, func(p string) error { return figure.LinePanels(p, title, 4, panels) }); err != nil {
			return out, err
		}
	}
	for _, r := range runs {
		panels := contrastPanels(r.Series)
		if panels == nil {
			continue
		}
		title := fmt.Sprintf("SPAR contrast c per routing stage over training: %s", r.Label)
		if err := draw(fmt.Sprintf(ContrastFile, names[r.Label]), func(p string) error { return figure.Histograms(p, title, panels) }); err != nil {
			return out, err
		}
	}
	if panels := anglePanels(runs); panels != nil {
		title := "Branch-gradient angle over training"
		if err := draw(AngleFile, func(p string) error { return figure.Histograms(p, title, panels) }); err != nil {
			return out, err
		}
	}
	if panels := rhoPanels(runs); panels != nil {
		title := "SPAR keep-ratio rho per routing stage over training"
		if err := draw(RhoFile, func(p string) error { return figure.LinePanels(p, title, 2, panels) }); err != nil {
			return out, err
		}
	}
	if panels := lossPanels(runs); panels != nil {
		title := "Training loss terms (unweighted) over training"
		if err := draw(LossFile, func(p string) error { return figure.LinePanels(p, title, 2, panels) }); err != nil {
			return out, err
		}
	}
	return out, nil
}

// EMA returns the exponential moving average of y with weight w on the
// past (s_0 = y_0, s_t = w s_{t-1} + (1-w) y_t), TensorBoard's smoothing.
// Non-finite values do not enter the average and stay NaN in the output.
func EMA(y []float64, w float64) []float64 {
	out := make([]float64, len(y))
	s, started := 0.0, false
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			out[i] = math.NaN()
			continue
		}
		if !started {
			s, started = v, true
		} else {
			s = w*s + (1-w)*v
		}
		out[i] = s
	}
	return out
}

// smoothed returns a raw (faint, unnamed) and an EMA (bold, named) line.
func smoothed(name string, colour int, x, y []float64) []figure.Line {
	return []figure.Line{
		{X: x, Y: y, Colour: colour, Faint: true},
		{Name: name, X: x, Y: EMA(y, Smoothing), Colour: colour},
	}
}

// bandPanels builds panel (a), or nil without dynamics records.
func bandPanels(runs []Run) []figure.LinePanel {
	var panels []figure.LinePanel
	for _, band := range Bands {
		panels = append(panels, figure.LinePanel{Title: fmt.Sprintf("E_b, %s band (mean over rollout)", band), XLabel: "step", YLabel: "E_b", LogY: true})
	}
	panels = append(panels, figure.LinePanel{Title: "relL2 (mean over rollout)", XLabel: "step", YLabel: "relL2", LogY: true})
	found := false
	for i, r := range runs {
		pts := r.Series.Dynamics
		if len(pts) == 0 {
			continue
		}
		found = true
		x := make([]float64, len(pts))
		ys := make([][]float64, 4)
		for k, p := range pts {
			x[k] = float64(p.Step)
			for b := range 3 {
				ys[b] = append(ys[b], float64(p.Band[b]))
			}
			ys[3] = append(ys[3], float64(p.RelL2))
		}
		for j := range panels {
			panels[j].Lines = append(panels[j].Lines, smoothed(runLabel(r, pts), i, x, ys[j])...)
		}
	}
	if !found {
		return nil
	}
	return panels
}

// runLabel is a run's legend entry in panel (a): its label, with the
// crashed trajectories of its last record when there were any.
func runLabel(r Run, pts []Point) string {
	last := pts[len(pts)-1]
	if last.Crashed > 0 {
		return fmt.Sprintf("%s (%d of %d crashed at step %d)", r.Label, last.Crashed, last.Trajectories, last.Step)
	}
	return r.Label
}

// trajNote says what panel (a) averages over, when the runs agree.
func trajNote(runs []Run) string {
	n, steps := -1, -1
	for _, r := range runs {
		for _, p := range r.Series.Dynamics {
			switch {
			case n < 0:
				n, steps = p.Trajectories, p.RolloutSteps
			case n != p.Trajectories || steps != p.RolloutSteps:
				return ""
			}
		}
	}
	if n < 0 {
		return ""
	}
	if steps == 1 {
		return fmt.Sprintf(" (%d test trajectories, single prediction)", n)
	}
	return fmt.Sprintf(" (%d test trajectories, %d-step rollout)", n, steps)
}

// stageSeries returns, for one run, the routing stages (those of its
// first record with stages) and per stage the steps and the per-sample
// values pick returns, over the records that have that stage.
func stageSeries(s *Series, pick func(p Point, i int) Floats32) (stages []string, steps [][]float64, vals [][][]float64) {
	for _, p := range s.Dynamics {
		if len(p.Stages) > 0 {
			stages = p.Stages
			break
		}
	}
	steps = make([][]float64, len(stages))
	vals = make([][][]float64, len(stages))
	for _, p := range s.Dynamics {
		for i, name := range stages {
			j := index(p.Stages, name)
			if j < 0 {
				continue
			}
			v := pick(p, j)
			f := make([]float64, len(v))
			for k, x := range v {
				f[k] = float64(x)
			}
			steps[i] = append(steps[i], float64(p.Step))
			vals[i] = append(vals[i], f)
		}
	}
	return stages, steps, vals
}

func index(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// contrastPanels builds panel (b) for one run, or nil when it records no
// routing statistics.
func contrastPanels(s *Series) []figure.HistPanel {
	stages, steps, vals := stageSeries(s, func(p Point, i int) Floats32 { return p.Contrast[i] })
	var panels []figure.HistPanel
	for i, name := range stages {
		if len(steps[i]) == 0 {
			continue
		}
		lo, hi := quantileRange(vals[i], 0.005, 0.995)
		panels = append(panels, figure.HistPanel{Title: "c, " + name, XLabel: "step", YLabel: "contrast c",
			Steps: steps[i], Values: vals[i], Lo: lo, Hi: hi})
	}
	return panels
}

// quantileRange returns the q0 and q1 quantiles of the finite values in
// vs (nearest rank), the bin range of a contrast histogram that a few
// outlying samples do not stretch (they go to the end bins); 0, 0 (the
// histogram's own range) when there are fewer than two distinct values.
func quantileRange(vs [][]float64, q0, q1 float64) (lo, hi float64) {
	var all []float64
	for _, v := range vs {
		for _, x := range v {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				all = append(all, x)
			}
		}
	}
	if len(all) < 2 {
		return 0, 0
	}
	slices.Sort(all)
	at := func(q float64) float64 { return all[int(math.Round(q*float64(len(all)-1)))] }
	lo, hi = at(q0), at(q1)
	if !(lo < hi) {
		return 0, 0
	}
	return lo, hi
}

// anglePanels builds panel (c), or nil without angle records.
func anglePanels(runs []Run) []figure.HistPanel {
	var panels []figure.HistPanel
	for _, r := range runs {
		if len(r.Series.Angles) == 0 {
			continue
		}
		hp := figure.HistPanel{Title: r.Label, XLabel: "step", YLabel: "angle (degrees)", Lo: 0, Hi: 180, Bins: 36,
			YTicks: []float64{0, 45, 90, 135, 180}}
		for _, a := range r.Series.Angles {
			hp.Steps = append(hp.Steps, float64(a.Step))
			hp.Values = append(hp.Values, a.Degrees)
		}
		panels = append(panels, hp)
	}
	return panels
}

// rhoPanels builds panel (d), one per routing run, or nil.
func rhoPanels(runs []Run) []figure.LinePanel {
	var panels []figure.LinePanel
	for _, r := range runs {
		stages, steps, vals := stageSeries(r.Series, func(p Point, i int) Floats32 { return p.Rho[i] })
		if len(stages) == 0 {
			continue
		}
		lp := figure.LinePanel{Title: r.Label, XLabel: "step", YLabel: "mean rho over trajectories"}
		for _, p := range r.Series.Dynamics {
			if p.RhoRange != nil {
				band := *p.RhoRange
				lp.Band, lp.BandName = &band, fmt.Sprintf("[rho_min, rho_max] = [%g, %g]", band[0], band[1])
				break
			}
		}
		for i, name := range stages {
			y := make([]float64, len(vals[i]))
			for k, v := range vals[i] {
				y[k] = mean(v)
			}
			lp.Lines = append(lp.Lines, figure.Line{Name: name, X: steps[i], Y: y, Colour: i})
		}
		panels = append(panels, lp)
	}
	return panels
}

// lossPanels builds panel (e), or nil without training records. A run
// whose CBC term is 0 at every record has none (a baseline, or a U-HNO
// mode without both branches: the log writes 0 for a term the loss
// skips), so it has no line in the CBC panel, whose title names it; with
// no CBC term in any run the panel is left out. Drawn, such a run was an
// empty line marked "(no positive values)" on a log axis.
func lossPanels(runs []Run) []figure.LinePanel {
	const cbc = 3 // terms' index of the CBC term
	terms := []struct {
		title string
		get   func(l Loss) float64
	}{
		{"total loss", func(l Loss) float64 { return l.Total }},
		{"MSE", func(l Loss) float64 { return l.MSE }},
		{"H1 term", func(l Loss) float64 { return l.H1 }},
		{"CBC term", func(l Loss) float64 { return l.CBC }},
	}
	panels := make([]figure.LinePanel, len(terms))
	for j, t := range terms {
		panels[j] = figure.LinePanel{Title: t.title, XLabel: "step", YLabel: t.title, LogY: true}
	}
	found := false
	var noCBC []string
	for i, r := range runs {
		recs := r.Series.Train
		if len(recs) == 0 {
			continue
		}
		found = true
		x := make([]float64, len(recs))
		for k, l := range recs {
			x[k] = float64(l.Step)
		}
		for j, t := range terms {
			y := make([]float64, len(recs))
			zero := true
			for k, l := range recs {
				y[k] = t.get(l)
				zero = zero && y[k] == 0
			}
			if j == cbc && zero {
				noCBC = append(noCBC, r.Label)
				continue
			}
			panels[j].Lines = append(panels[j].Lines, smoothed(r.Label, i, x, y)...)
		}
	}
	if !found {
		return nil
	}
	if len(panels[cbc].Lines) == 0 {
		return panels[:cbc]
	}
	if len(noCBC) > 0 {
		panels[cbc].Title += " (none in " + strings.Join(noCBC, ", ") + ")"
	}
	return panels
}

// mean is the mean of the finite values of v, NaN when there are none.
func mean(v []float64) float64 {
	s, n := 0.0, 0
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// fileLabel makes a label file-safe: lower case, runs of other characters
// than letters and digits as one '-'.
func fileLabel(label string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(label) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimSuffix(b.String(), "-")
	if s == "" {
		s = "run"
	}
	return s
}
