package dynamics

import (
	"context"
	"errors"
	"fmt"
	"math"

	"uhno/internal/eval"
	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

// DefaultEvery and DefaultTrajectories are the paper's cadence (App.
// "Training Dynamics Details": every 200 steps on a held-out batch of 128).
const (
	DefaultEvery        = 200
	DefaultTrajectories = 128
)

// ProbeOptions configure NewProbe.
type ProbeOptions struct {
	// Every is the interval in training steps (>= 1).
	Every int
	// Steps is the rollout length (the task's data.rollout); static data
	// (Darcy) take a single prediction and ignore it.
	Steps int
	// Batch is the number of trajectories advanced together; 0 takes all
	// of them at once, the cheapest per trajectory on the CPU.
	Batch int
	// RhoRange is [rho_min, rho_max] of the run (spar.rho_min, rho_max),
	// recorded for the figures when the model routes.
	RhoRange [2]float64
}

// NewProbe returns the "dynamics" probe of a training run (train.Probe):
// every opt.Every steps it rolls m out on src's trajectories with
// eval.Rollout (the protocol of `uhno eval`: physical units, the crash
// rule) and records a Record: E_b per band and relL2, and the SPAR
// contrast c and keep-ratio rho of every trajectory and routing stage in
// the rollout's first forward pass (read from the model's Aux as the
// rollout runs; no extra pass). m must be the model being trained; the
// rollout reads its weights, runs with gradient recording off on a tape
// of its own, and changes nothing the training uses.
func NewProbe(m model.Model, b tensor.Backend, src eval.Source, opt ProbeOptions) (train.Probe, error) {
	if opt.Every < 1 {
		return train.Probe{}, fmt.Errorf("dynamics: probe interval %d steps, want >= 1", opt.Every)
	}
	if len(src.Trajs) == 0 {
		return train.Probe{}, errors.New("dynamics: no trajectories to roll out")
	}
	if src.Plan == nil {
		return train.Probe{}, errors.New("dynamics: the source has no sampling plan")
	}
	steps := opt.Steps
	if src.Plan.Static() {
		steps = 1
	}
	if err := eval.CheckRollout(src.Plan, steps); err != nil {
		return train.Probe{}, fmt.Errorf("dynamics: %w", err)
	}
	if err := src.Grid.Validate(); err != nil {
		return train.Probe{}, fmt.Errorf("dynamics: %w", err)
	}
	batch := opt.Batch
	if batch <= 0 || batch > len(src.Trajs) {
		batch = len(src.Trajs)
	}
	run := func(ctx context.Context, step int) (any, error) {
		sm := &statsModel{Model: m, b: b, steps: steps}
		o, err := eval.Rollout(ctx, sm, b, src, eval.RolloutOptions{Steps: steps, Batch: batch})
		if err != nil {
			return nil, err
		}
		if want := (len(src.Trajs) + batch - 1) / batch * steps; sm.calls != want {
			return nil, fmt.Errorf("dynamics: the rollout ran %d forward passes, want %d (%d trajectories in batches of %d, %d steps)",
				sm.calls, want, len(src.Trajs), batch, steps)
		}
		rec := Measure(o)
		if len(sm.stages) > 0 {
			if n := len(sm.contrast[0]); n != len(src.Trajs) {
				return nil, fmt.Errorf("dynamics: SPAR statistics of %d samples for %d trajectories", n, len(src.Trajs))
			}
			rec.Stages, rec.Contrast, rec.Rho = sm.stages, sm.contrast, sm.rho
			rr := opt.RhoRange
			rec.RhoRange = &rr
		}
		return rec, nil
	}
	return train.Probe{Name: ProbeName, Every: opt.Every, Run: run}, nil
}

// statsModel is the model under probe, keeping the SPAR statistics
// (contrast c and keep-ratio rho per sample and routing stage) of the
// first forward pass of each batch of trajectories: eval.Rollout advances
// a batch by `steps` forward passes, one batch after the other.
type statsModel struct {
	model.Model
	b             tensor.Backend
	steps, calls  int
	stages        []string
	contrast, rho []Floats32
}

// Forward runs the model and copies the statistics of a batch's first
// step to the host.
func (s *statsModel) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, model.Aux) {
	y, aux := s.Model.Forward(tp, x)
	first := s.calls%s.steps == 0
	s.calls++
	if !first || len(aux.Stats) == 0 {
		return y, aux
	}
	if s.stages == nil {
		for i := range aux.Stats {
			name := fmt.Sprintf("stage.%d", i)
			if i < len(aux.Stages) {
				name = aux.Stages[i]
			}
			s.stages = append(s.stages, name)
		}
		s.contrast = make([]Floats32, len(aux.Stats))
		s.rho = make([]Floats32, len(aux.Stats))
	}
	for i, st := range aux.Stats {
		if i >= len(s.stages) {
			break
		}
		h := tensor.ToHost(s.b, st) // [B, 3] = (c, rho, k)
		for r := range st.Shape[0] {
			s.contrast[i] = append(s.contrast[i], h[3*r])
			s.rho[i] = append(s.rho[i], h[3*r+1])
		}
	}
	return y, aux
}

// Measure summarises a rollout as a Record (without the SPAR statistics,
// which the rollout's Outcome does not hold): E_b and relL2 averaged over
// steps and at the horizon, and E_b at every step, each a mean over the
// trajectories that did not crash, skipping undefined (NaN) values.
func Measure(o *eval.Outcome) Record {
	rec := Record{Trajectories: len(o.Metrics), RolloutSteps: o.Steps, Static: o.Static}
	var ok []*eval.TrajectoryMetrics
	for _, m := range o.Metrics {
		if m.Crashed {
			rec.Crashed++
			continue
		}
		ok = append(ok, m)
	}
	names := [3]string{eval.MetricBandLow, eval.MetricBandMid, eval.MetricBandHigh}
	mean := func(f func(m *eval.TrajectoryMetrics) float64) Float {
		var s float64
		n := 0
		for _, m := range ok {
			if v := f(m); !math.IsNaN(v) {
				s += v
				n++
			}
		}
		if n == 0 {
			return Float(math.NaN())
		}
		return Float(s / float64(n))
	}
	for b, name := range names {
		rec.Band[b] = mean(func(m *eval.TrajectoryMetrics) float64 { return m.Mean(name) })
	}
	rec.RelL2 = mean(func(m *eval.TrajectoryMetrics) float64 { return m.Mean(eval.MetricRelL2) })
	rec.BandSteps = make([][3]Float, o.Steps)
	for t := range o.Steps {
		for b := range 3 {
			rec.BandSteps[t][b] = mean(func(m *eval.TrajectoryMetrics) float64 { return m.Band[t][b] })
		}
	}
	last := o.Steps - 1
	rec.BandHorizon = rec.BandSteps[last]
	rec.RelL2Horizon = mean(func(m *eval.TrajectoryMetrics) float64 { return m.RelL2[last] })
	return rec
}
