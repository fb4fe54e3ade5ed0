package experiment

import (
	"errors"
	"fmt"
	"strings"

	"uhno/internal/config"
	"uhno/internal/model"
	"uhno/internal/runrec"
	"uhno/internal/tensor"
)

// modelChoice is how a fresh run sizes its model: --params, U-HNO's
// parameter budget ("": the configuration's width), and --width, FNO's
// width (0: matched to U-HNO's count).
type modelChoice struct {
	Params string
	Width  int
}

// ParamsText is the --params value of the paper's text's protocol: U-HNO
// exactly at Tab. per-task-hp for the task (L, C0, K0, M), every baseline
// matched to its count within model.BudgetTolerance (App. C "Baseline
// Configurations"). The tables' "0.62M" is the other protocol
// (docs/DECISIONS.md, D-params-budget).
const ParamsText = "text"

// ParamsTarget resolves --params for cfg: 0 for "" (U-HNO as
// configured) and for ParamsText once cfg is checked to build Tab.
// per-task-hp's U-HNO (a one-line error names each key that differs), or
// the parameter count params states.
func ParamsTarget(cfg config.Config, params string) (int, error) {
	switch params {
	case "":
		return 0, nil
	case ParamsText:
		spec, err := config.LookupTask(cfg.Task)
		if err != nil {
			return 0, fmt.Errorf("--params text: %w", err)
		}
		if dev := spec.HP.TextDeviations(cfg.Model); len(dev) > 0 {
			return 0, fmt.Errorf("--params text: task %s is not at the paper's text's size: %s (drop the --set or config value, or use --params with a count)",
				cfg.Task, strings.Join(dev, "; "))
		}
		return 0, nil
	}
	n, err := model.ParseCount(params)
	if err != nil {
		return 0, fmt.Errorf("--params: %w (or %q: Tab. per-task-hp)", err, ParamsText)
	}
	return n, nil
}

// CheckParams checks a --params value before any configuration is known:
// "", ParamsText or a count.
func CheckParams(params string) error {
	if params == "" || params == ParamsText {
		return nil
	}
	_, err := ParamsTarget(config.Config{}, params)
	return err
}

// uhnoSpec is the U-HNO spec of cfg with in and out channels, scaled to
// the budget params ("" or ParamsText: as configured, the latter checked
// against Tab. per-task-hp).
func uhnoSpec(cfg config.Config, in, out int, params string) (model.Spec, error) {
	target, err := ParamsTarget(cfg, params)
	if err != nil {
		return model.Spec{}, err
	}
	spec, err := model.SpecFromConfig(cfg, in, out)
	if err != nil || target == 0 {
		return spec, err
	}
	return model.UHNOForBudget(spec, target)
}

// buildModel builds the model a fresh run asks for (rec.Model, its spec
// planned through the model registry and recorded in rec) or the one rec
// describes on resume, eval or predict, and describes it in one line with
// its parameter count.
func buildModel(cfg config.Config, in, out int, choice modelChoice, rec *runrec.BuildRecord, b tensor.Backend) (model.Model, string, error) {
	if rec.Spec == nil { // a fresh run: plan the record
		r, err := PlanRecord(cfg, rec.Model, in, out, choice.Params, choice.Width)
		if err != nil {
			return nil, "", err
		}
		rec.Record = r
	}
	m, desc, err := model.Build(b, rec.Record, uint64(cfg.Seed))
	if errors.Is(err, model.ErrUnknownModel) {
		return nil, "", fmt.Errorf("train: the checkpoint's model %q is not one this uhno builds (%s)", rec.Model, strings.Join(model.Names(), ", "))
	}
	return m, desc, err
}
