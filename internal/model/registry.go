package model

import (
	"encoding/json"
	"fmt"

	"uhno/internal/tensor"
)

// The model registry: every architecture uhno trains (U-HNO and its
// modes, FNO, the baselines, the flat additive hybrid) is registered once
// by name (models.go), with how a fresh run derives its spec, how the
// spec builds the model and how the model is described. Commands and
// internal/experiment plan, build and rebuild every model through it, so
// adding a model touches one table and nothing that trains or evaluates.
//
// The registry owns the model half of a checkpoint's build record,
// Record: the registered name and the spec as JSON. Records of older
// checkpoints, which kept the spec in a field per model family, are read
// by Record.Upgrade.

// Plan is what a fresh run's spec is derived from.
type Plan struct {
	// UHNO is the run's U-HNO spec (from the configuration, scaled to the
	// parameter budget), its mode included. The other models take their
	// channels, K0 and projection width from it and are matched to the
	// parameter count of its Full network.
	UHNO Spec
	// Grid is the task's grid; Periodic whether its boundary is periodic.
	Grid     []int
	Periodic bool
	// Width is FNO's width override (--width; 0: matched to the budget).
	Width int
}

// fullCount is the parameter count of p's Full U-HNO, the budget the
// other models are matched to.
func (p Plan) fullCount() int {
	full := p.UHNO
	full.Mode = ModeFull
	return CountUHNO(full)
}

// Builder is how one model is registered: S is its spec type, M its
// model type.
type Builder[S any, M Model] struct {
	// Paper is the model's name in the paper's tables ("U-HNO", "FNO",
	// "Conv-FNO", "FNO-wider", ...); empty for a model the paper does
	// not report (the additive hybrid of the gradient-angle diagnostic).
	Paper string
	// AllModes is set for U-HNO, the only model whose network the
	// ablation modes change; the others take only the loss-only modes
	// (Mode.LossOnly).
	AllModes bool
	// Plan derives a fresh run's spec.
	Plan func(Plan) (S, error)
	// New builds the model from a spec, initialised from seed.
	New func(b tensor.Backend, s S, seed uint64) (M, error)
	// Describe is the model's one-line description, to which the registry
	// adds ": <count> parameters".
	Describe func(s S, m M) string
}

// registered is a Builder with its spec type erased to JSON.
type registered struct {
	name     string
	paper    string
	allModes bool
	plan     func(Plan) (json.RawMessage, error)
	build    func(b tensor.Backend, raw json.RawMessage, seed uint64) (Model, string, error)
}

// registry holds the registered models in registration order. It is
// written only by Register during package initialisation.
var registry []registered

// Register adds a model under name. It is called from init (models.go)
// and panics on a name registered twice.
func Register[S any, M Model](name string, b Builder[S, M]) {
	for _, r := range registry {
		if r.name == name {
			panic("model: " + name + " registered twice")
		}
	}
	registry = append(registry, registered{name: name, paper: b.Paper, allModes: b.AllModes,
		plan: func(p Plan) (json.RawMessage, error) {
			s, err := b.Plan(p)
			if err != nil {
				return nil, err
			}
			return json.Marshal(s)
		},
		build: func(be tensor.Backend, raw json.RawMessage, seed uint64) (Model, string, error) {
			var s S
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, "", fmt.Errorf("the recorded %s spec cannot be read: %w", name, err)
			}
			m, err := b.New(be, s, seed)
			if err != nil {
				return nil, "", err
			}
			return m, fmt.Sprintf("%s: %s parameters", b.Describe(s, m), FormatCount(m.Params().Count())), nil
		}})
}

// Names lists the registered models in registration order.
func Names() []string {
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	return names
}

func lookup(name string) (registered, bool) {
	for _, r := range registry {
		if r.name == name {
			return r, true
		}
	}
	return registered{}, false
}

// PaperName is registered model name's name in the paper's tables
// ("Conv-FNO" for "convfno"), "" for a model the paper does not report
// or a name not registered (an ablation mode's "uhno-A" included).
func PaperName(name string) string {
	r, _ := lookup(name)
	return r.paper
}

// ByPaperName is the registered model the paper's tables call paper
// ("Conv-FNO" gives "convfno"), false when none is.
func ByPaperName(paper string) (string, bool) {
	for _, r := range registry {
		if r.paper != "" && r.paper == paper {
			return r.name, true
		}
	}
	return "", false
}

// Registered reports whether name is a registered model.
func Registered(name string) bool {
	_, ok := lookup(name)
	return ok
}

// TakesMode reports whether model name can be trained in mode: U-HNO in
// every mode, the others in the loss-only ones.
func TakesMode(name string, mode Mode) bool {
	r, ok := lookup(name)
	return ok && (r.allModes || mode.LossOnly())
}

// Record is the model half of a checkpoint's build record: the
// registered name and its spec. Spec is JSON in the registered model's
// spec type.
type Record struct {
	Model string          `json:"model"`
	Spec  json.RawMessage `json:"spec,omitempty"`
	// LegacySpecs are the spec fields of records written before the
	// registry; Upgrade moves them into Spec, and they are never written.
	LegacySpecs
}

// LegacySpecs are where build records of older versions kept the spec:
// one field per model family ("uhno", "fno", "additive", and "baseline"
// for the others).
type LegacySpecs struct {
	UHNO     json.RawMessage `json:"uhno,omitempty"`
	FNO      json.RawMessage `json:"fno,omitempty"`
	Additive json.RawMessage `json:"additive,omitempty"`
	Baseline json.RawMessage `json:"baseline,omitempty"`
}

// Upgrade moves the spec of an older record (LegacySpecs) into Spec, so
// that every checkpoint ever written rebuilds through Build. A record
// with Spec set is left as it is.
func (r *Record) Upgrade() {
	if r.Spec == nil {
		for _, s := range []json.RawMessage{r.UHNO, r.FNO, r.Additive, r.Baseline} {
			if s != nil {
				r.Spec = s
				break
			}
		}
	}
	r.LegacySpecs = LegacySpecs{}
}

// PlanRecord derives the record of a fresh run of model name.
func PlanRecord(name string, p Plan) (Record, error) {
	r, ok := lookup(name)
	if !ok {
		return Record{}, fmt.Errorf("model %q is not registered (%v)", name, Names())
	}
	raw, err := r.plan(p)
	if err != nil {
		return Record{}, err
	}
	return Record{Model: name, Spec: raw}, nil
}

// ErrUnknownModel is returned by Build for a record whose model this
// build of uhno does not register.
var ErrUnknownModel = fmt.Errorf("unknown model")

// Build builds the model rec describes on b, initialised from seed, and
// describes it in one line with its parameter count.
func Build(b tensor.Backend, rec Record, seed uint64) (Model, string, error) {
	r, ok := lookup(rec.Model)
	if !ok {
		return nil, "", fmt.Errorf("%w %q", ErrUnknownModel, rec.Model)
	}
	return r.build(b, rec.Spec, seed)
}
