package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"uhno/internal/dynamics"
	"uhno/internal/eval/figure"
	"uhno/internal/train"
)

// trainingFigures draws Fig. training-dynamics for the training runs
// (sorted by task) and writes them into the report: per task, the
// training and validation loss of every run from log.jsonl, then the
// paper's panels from package dynamics (dynamics.Read of each run's log,
// dynamics.Figures of the task's runs): (a) per-band rollout error, (b)
// SPAR contrast, (c) branch-gradient angle, (d) keep-ratio per level,
// (e) the loss terms of every run, which is the paper's panel when the
// task has a Full and a mode-E run; each only when the logs hold its
// records (the probes of uhno train).
func (b *builder) trainingFigures(runs []trainInput) error {
	if b.noFigures {
		return nil
	}
	byTask := map[string][]trainInput{}
	var tasks []string
	for _, t := range runs {
		if _, ok := byTask[t.state.Task]; !ok {
			tasks = append(tasks, t.state.Task)
		}
		byTask[t.state.Task] = append(byTask[t.state.Task], t)
	}
	for _, task := range tasks {
		rs := byTask[task]
		var series []figure.Series
		for _, t := range rs {
			name := runLabel(t)
			if s, ok := logSeries(t, train.KindTrain, func(r train.LogRecord) float64 { return r.Total }); ok {
				s.Name = name + ", training loss"
				series = append(series, s)
			}
			if s, ok := logSeries(t, train.KindVal, func(r train.LogRecord) float64 { return r.Total }); ok {
				s.Name = name + ", validation loss"
				series = append(series, s)
			}
		}
		if len(series) > 0 {
			path, rel := b.figure("training_loss_" + task)
			err := figure.Curves(path, task+": training and validation loss", "step", "loss", true, series)
			b.wrote(path, rel, fmt.Sprintf("Training and validation loss of the %s runs.", task), err)
		}
		if err := b.dynamicsPanels(task, rs); err != nil {
			return err
		}
	}
	return nil
}

// dynamicsPanels draws the panels of Fig. training-dynamics of one
// task's runs with package dynamics into figures/dynamics-<task>/.
func (b *builder) dynamicsPanels(task string, rs []trainInput) error {
	var druns []dynamics.Run
	labels := map[string]int{}
	var full, modeE []string
	for _, t := range rs {
		path := filepath.Join(t.dir, train.LogFile)
		s, err := dynamics.Read(path)
		if err != nil {
			return fmt.Errorf("report: %s", strings.TrimPrefix(err.Error(), "dynamics: "))
		}
		label := runLabel(t)
		if labels[label]++; labels[label] > 1 {
			label = fmt.Sprintf("%s #%d", label, labels[label])
		}
		if len(s.Train)+len(s.Dynamics)+len(s.Angles) == 0 {
			b.printf("%s holds no training or probe records: no dynamics panels for it.\n\n", code(path))
			continue
		}
		if s.Torn {
			b.printf("%s ends in a partial line (a run still writing it?), left out.\n\n", code(path))
		}
		druns = append(druns, dynamics.Run{Label: label, Series: s})
		switch {
		case t.state.Model == "fno":
		case t.state.Config.Model.Ablation == "full":
			full = append(full, t.dir)
		case t.state.Config.Model.Ablation == "E":
			modeE = append(modeE, t.dir)
		}
	}
	if len(druns) == 0 {
		return nil
	}
	sub := "dynamics-" + fileName(task)
	paths, err := dynamics.Figures(filepath.Join(b.figDir, sub), druns)
	for _, p := range paths {
		base := filepath.Base(p)
		b.figs = append(b.figs, p)
		caption := dynamicsCaption(task, base, full, modeE)
		b.printf("![%s](%s)\n\n*%s*\n\n", caption, FiguresDir+"/"+sub+"/"+base, caption)
	}
	if err != nil {
		return fmt.Errorf("report: %s", strings.TrimPrefix(err.Error(), "dynamics: "))
	}
	if len(full) == 0 || len(modeE) == 0 {
		b.printf("Panel (e) of the paper compares Full with mode E: give a Full and a mode-E run of %s (`uhno train --task %s --mode E`).\n\n", task, task)
	}
	return nil
}

// dynamicsCaption says which panel of Fig. training-dynamics a file of
// dynamics.Figures is.
func dynamicsCaption(task, base string, full, modeE []string) string {
	switch {
	case base == dynamics.BandsFile:
		return fmt.Sprintf("Fig. training-dynamics (a), %s: per-band rollout error over training (EMA bold, raw thin).", task)
	case strings.HasPrefix(base, strings.SplitN(dynamics.ContrastFile, "%", 2)[0]):
		return fmt.Sprintf("Fig. training-dynamics (b), %s: SPAR routing-logit contrast per stage over training (%s).", task, base)
	case base == dynamics.AngleFile:
		return fmt.Sprintf("Fig. training-dynamics (c), %s: branch-gradient angle over training.", task)
	case base == dynamics.RhoFile:
		return fmt.Sprintf("Fig. training-dynamics (d), %s: keep-ratio rho per routing stage, clip range shaded.", task)
	case base == dynamics.LossFile:
		if len(full) > 0 && len(modeE) > 0 {
			return fmt.Sprintf("Fig. training-dynamics (e), %s: loss terms of Full (%s) against mode E (%s).", task, strings.Join(full, ", "), strings.Join(modeE, ", "))
		}
		return fmt.Sprintf("Fig. training-dynamics (e) layout, %s: loss terms of each run (no Full and mode-E pair given).", task)
	}
	return fmt.Sprintf("Fig. training-dynamics, %s: %s.", task, base)
}

// runLabel names a run in a figure's legend.
func runLabel(t trainInput) string {
	name := filepath.Base(t.dir)
	if t.state.Model != "fno" && !strings.Contains(name, t.state.Config.Model.Ablation) {
		name += " (" + t.state.Config.Model.Ablation + ")"
	}
	return name
}

// logSeries is one value of a run's log records of a kind against the
// step.
func logSeries(t trainInput, kind string, f func(train.LogRecord) float64) (figure.Series, bool) {
	var s figure.Series
	for _, r := range t.log {
		if r.Kind == kind {
			s.X, s.Y = append(s.X, float64(r.Step)), append(s.Y, f(r))
		}
	}
	return s, len(s.X) > 0
}
