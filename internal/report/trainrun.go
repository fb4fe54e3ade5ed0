package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"uhno/internal/train"
)

// trainSummary is what the report says of one training run.
type trainSummary struct {
	label         string
	last          *train.LogRecord // the last "train" record
	bestVal       float64          // lowest validation loss in the log (NaN: none)
	bestValStep   int
	elapsed       float64 // elapsed_s of the last record
	validations   int
	trainRecords  int
	mode, modelID string
}

func summarize(t trainInput) trainSummary {
	s := trainSummary{bestVal: math.NaN(), mode: t.state.Config.Model.Ablation, modelID: t.state.Model}
	if s.modelID == "fno" {
		s.mode = ""
	}
	s.label = fmt.Sprintf("%s %s", t.state.Task, t.state.Model)
	for i := range t.log {
		r := &t.log[i]
		s.elapsed = r.ElapsedSec
		switch r.Kind {
		case train.KindTrain:
			s.last = r
			s.trainRecords++
		case train.KindVal:
			s.validations++
			if math.IsNaN(s.bestVal) || r.Total < s.bestVal {
				s.bestVal, s.bestValStep = r.Total, r.Step
			}
		}
	}
	return s
}

// trainSection writes the training runs: final training loss, best
// validation loss, the configuration in the checkpoint, and the
// training-dynamics figures.
func (b *builder) trainSection(runs []trainInput) error {
	if len(runs) == 0 {
		return nil
	}
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(x, y trainInput) int {
		return cmp.Or(cmp.Compare(taskOrder(x.state.Task), taskOrder(y.state.Task)), strings.Compare(x.dir, y.dir))
	})
	b.printf("## Training runs (Fig. training-dynamics)\n\n")
	b.printf("The paper prints no numbers for Fig. training-dynamics; these are the runs' own. " +
		"`uhno train` does not record its command line: each run's resolved configuration is in its checkpoint's state.json, summarised below.\n\n")
	b.printf("| run | task | model | mode | params | step / steps | final training loss (mse, h1, cbc) | best validation loss (step) | time in the last process |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, t := range runs {
		s := summarize(t)
		st := t.state
		final := "no training record"
		if s.last != nil {
			final = fmt.Sprintf("%s at step %d (%s, %s, %s)", num(s.last.Total), s.last.Step, num(s.last.MSE), num(s.last.H1), num(s.last.CBC))
		}
		best := "no validation"
		if !math.IsNaN(s.bestVal) {
			best = fmt.Sprintf("%s (step %d)", num(s.bestVal), s.bestValStep)
		} else if st.BestVal > 0 {
			best = fmt.Sprintf("%s (step %d, from state.json)", num(st.BestVal), st.BestValStep)
		}
		b.printf("| %s | %s | %s | %s | %d | %d / %d | %s | %s | %s |\n", code(t.dir), st.Task, st.Model, cmp.Or(s.mode, "—"), st.Params,
			st.Step, st.Schedule.Steps, final, best, duration(s.elapsed))
	}
	b.printf("\nConfigurations (from each run's latest checkpoint):\n\n")
	for _, t := range runs {
		c := t.state.Config
		b.printf("- %s (checkpoint %s): task %s, model %s", code(t.dir), code(t.ckpt), c.Task, t.state.Model)
		if t.state.Model != "fno" {
			b.printf(", model.ablation %s, model.levels %d, model.c0 %d, model.k0 %d, spar.rho0 %g", c.Model.Ablation, c.Model.Levels, c.Model.C0, c.Model.K0, c.SPAR.Rho0)
		}
		if c0, ok := t.rec.UHNOWidth(); ok && c0 != c.Model.C0 {
			b.printf(" (built with C0 %d: --params scaled it)", c0)
		}
		b.printf(", loss.lambda_h1 %g, loss.lambda_cbc %g, optim.steps %d, optim.warmup %d, optim.batch %d, optim.lr %g, seed %d; command not recorded\n",
			c.Loss.LambdaH1, c.Loss.LambdaCBC, c.Optim.Steps, c.Optim.Warmup, c.Optim.Batch, c.Optim.LR, c.Seed)
	}
	b.printf("\n")
	if err := b.trainingFigures(runs); err != nil {
		return err
	}
	for _, t := range runs {
		b.cover("Fig. training-dynamics", fmt.Sprintf("%s (%s run)", code(t.dir), t.state.Task))
	}
	return nil
}

// duration formats seconds.
func duration(s float64) string {
	switch {
	case s <= 0 || math.IsNaN(s):
		return "—"
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.2f h", s/3600)
}
