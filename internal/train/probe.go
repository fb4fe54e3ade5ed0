package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Probe is a measurement taken between training steps and written to the
// run's log (the training-dynamics diagnostics of the paper's App.
// "Training Dynamics Details": per-band rollout error, SPAR statistics,
// branch-gradient angles).
//
// Run calls Probe.Run after the optimizer update of every step that is a
// multiple of Every (and at no other step), after that step's training and
// validation records and before its checkpoint, and appends the result as
// one log line (ProbeRecord). Nothing a probe can do through the model
// changes the run: it runs between steps, on a tape of its own, and Run
// clears the gradient buffer after the probes of a step, so a probe may run
// forward and backward passes (e.g. to measure gradients). A probe must not
// write the parameters, draw from the training batch stream, or keep
// tensors of the training tape; within those rules a run with probes ends
// with the same bits as one without (TestProbesLeaveTrainingAlone).
//
// The cadence is a property of the step number, so a resumed run probes at
// the same steps as an uninterrupted one. A probe interrupted by ctx
// (Ctrl-C) writes no record; the resume from the checkpoint of that step
// runs it again before the first step, on the same weights. Any other
// error stops the run with an error naming the probe and the step; the
// last checkpoint stays latest.
type Probe struct {
	// Name identifies the probe in the log ("dynamics", "angle"); unique
	// within a run, non-empty.
	Name string
	// Every is the interval in steps (>= 1).
	Every int
	// Run measures the model after update step and returns a value that
	// encoding/json can encode (no NaN or Inf float64: use a type that
	// writes them as null). ctx is the run's context.
	Run func(ctx context.Context, step int) (any, error)
}

// ProbeKind is the "kind" of a probe record in the log.
const ProbeKind = "probe"

// ProbeRecord is one log line written for a probe result:
//
//	{"kind":"probe","step":200,"probe":"dynamics","value":{...},"probe_s":1.9,"elapsed_s":310.2}
//
// Value is what Probe.Run returned, as JSON. Seconds is the probe's wall
// time and ElapsedSec the time since the run (this process) started, as in
// the training records.
type ProbeRecord struct {
	Kind       string          `json:"kind"`
	Step       int             `json:"step"`
	Probe      string          `json:"probe"`
	Value      json.RawMessage `json:"value"`
	Seconds    float64         `json:"probe_s"`
	ElapsedSec float64         `json:"elapsed_s"`
}

// validateProbes checks the probes of a Config.
func validateProbes(ps []Probe) error {
	seen := map[string]bool{}
	for i, p := range ps {
		switch {
		case p.Name == "":
			return fmt.Errorf("train: probe %d has no name", i)
		case seen[p.Name]:
			return fmt.Errorf("train: two probes named %q", p.Name)
		case p.Every < 1:
			return fmt.Errorf("train: probe %q: interval %d steps, want >= 1", p.Name, p.Every)
		case p.Run == nil:
			return fmt.Errorf("train: probe %q has no Run function", p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

// probeRunner runs a Config's probes and writes their records.
type probeRunner struct {
	probes   []Probe
	zeroGrad func()
	enc      *json.Encoder
	start    time.Time
	spent    time.Duration // the probes' wall time in this process
	describe func(string)  // progress-bar note while a probe runs (may be nil)
	lastCkpt func() string // the last checkpoint, for error messages
}

// due returns the probes due after update step.
func (r *probeRunner) due(step int) []Probe {
	var out []Probe
	for _, p := range r.probes {
		if step > 0 && step%p.Every == 0 {
			out = append(out, p)
		}
	}
	return out
}

// run runs the given probes after update step, in order, and logs their
// results. It returns interrupted = true when ctx was cancelled during a
// probe (whose record is then not written), and an error for a failed
// probe or a record that cannot be written.
func (r *probeRunner) run(ctx context.Context, step int, ps []Probe) (interrupted bool, err error) {
	if len(ps) == 0 {
		return false, nil
	}
	// Whatever a probe did to the gradients, the next step starts from
	// zero as it would without probes.
	defer r.zeroGrad()
	for _, p := range ps {
		if r.describe != nil {
			r.describe(fmt.Sprintf("step %d: probe %s", step, p.Name))
		}
		t0 := time.Now()
		v, err := p.Run(ctx, step)
		took := time.Since(t0)
		r.spent += took
		if err != nil {
			if ctx.Err() != nil {
				return true, nil
			}
			return false, fmt.Errorf("train: step %d: probe %q: %w; the run stopped, last checkpoint %s", step, p.Name, err, orNone(r.lastCkpt()))
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return false, fmt.Errorf("train: step %d: probe %q: encoding its result: %w; the run stopped, last checkpoint %s", step, p.Name, err, orNone(r.lastCkpt()))
		}
		rec := ProbeRecord{Kind: ProbeKind, Step: step, Probe: p.Name, Value: raw,
			Seconds: took.Seconds(), ElapsedSec: time.Since(r.start).Seconds()}
		if err := r.enc.Encode(rec); err != nil {
			return false, fmt.Errorf("train: log: %w", err)
		}
	}
	return false, nil
}

// missingProbes returns the probes due at step (the step of the
// checkpoint a run resumes from) that have no record at that step in the
// log at path: those interrupted there, or added on resume.
func missingProbes(path string, step int, ps []Probe) ([]Probe, error) {
	due := (&probeRunner{probes: ps}).due(step)
	if len(due) == 0 {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return due, nil
	}
	if err != nil {
		return nil, fmt.Errorf("train: log: %w", err)
	}
	logged := map[string]bool{}
	for line := range bytes.Lines(raw) {
		var r struct {
			Kind  string `json:"kind"`
			Step  int    `json:"step"`
			Probe string `json:"probe"`
		}
		if json.Unmarshal(line, &r) == nil && r.Kind == ProbeKind && r.Step == step {
			logged[r.Probe] = true
		}
	}
	var out []Probe
	for _, p := range due {
		if !logged[p.Name] {
			out = append(out, p)
		}
	}
	return out, nil
}
