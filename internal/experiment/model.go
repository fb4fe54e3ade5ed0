package experiment

import (
	"errors"
	"fmt"
	"strings"

	"uhno/internal/config"
	"uhno/internal/model"
	"uhno/internal/tensor"
)

// modelChoice is how a fresh run sizes its model: --params, U-HNO's
// parameter budget ("": the configuration's width), and --width, FNO's
// width (0: matched to U-HNO's count).
type modelChoice struct {
	Params string
	Width  int
}

// uhnoSpec is the U-HNO spec of cfg with in and out channels, scaled to
// the budget params ("": as configured).
func uhnoSpec(cfg config.Config, in, out int, params string) (model.Spec, error) {
	spec, err := model.SpecFromConfig(cfg, in, out)
	if err != nil {
		return spec, err
	}
	if params == "" {
		return spec, nil
	}
	target, err := model.ParseCount(params)
	if err != nil {
		return spec, err
	}
	return model.UHNOForBudget(spec, target)
}

// buildModel builds the model a fresh run asks for (rec.Model, its spec
// planned through the model registry and recorded in rec) or the one rec
// describes on resume, eval or predict, and describes it in one line with
// its parameter count.
func buildModel(cfg config.Config, in, out int, choice modelChoice, rec *BuildRecord, b tensor.Backend) (model.Model, string, error) {
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
