package experiment

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"uhno/internal/config"
	"uhno/internal/dynamics"
	"uhno/internal/eval"
	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

// dynamicsProbe returns the training-dynamics probe of `uhno train`
// (paper App. "Training Dynamics Details"): every `every` steps the model
// is rolled out on the first min(trajs, len(split.Test)) test
// trajectories of the run's split for the task's data.rollout steps, with
// the normalisation and the metric grid of `uhno eval`, and a
// dynamics.Record (E_b per band, relL2, per-sample SPAR contrast and
// keep-ratio per routing stage) goes into log.jsonl. Static data (Darcy)
// get the single prediction a -> u: one "step", no rollout. Models
// without SPAR routing (FNO, modes A, B, F) record the bands only. It
// also returns a line describing the probe for the run's output.
func dynamicsProbe(cfg config.Config, td *taskData, m model.Model, b tensor.Backend, every, trajs int) (train.Probe, string, error) {
	test := td.split.Test
	if len(test) == 0 {
		return train.Probe{}, "", fmt.Errorf("train: --dynamics-every %d: the split has no test trajectories (data.test_trajectories = %d); pass --dynamics-every 0",
			every, cfg.Data.TestTrajectories)
	}
	n := min(trajs, len(test))
	grid, err := metricGrid(cfg, td)
	if err != nil {
		return train.Probe{}, "", err
	}
	// 1D trajectories are small: all of them advance in one batch, the
	// cheapest way per trajectory. 2D and 3D ones go in batches of the
	// training batch, whose activations are known to fit.
	batch := n
	if len(grid.Shape) > 1 {
		batch = cfg.Optim.Batch
	}
	p, err := dynamics.NewProbe(m, b, eval.Source{Plan: td.plan, Trajs: test[:n], Stats: &td.stats, Grid: grid}, dynamics.ProbeOptions{
		Every: every, Steps: cfg.Data.Rollout, Batch: batch,
		RhoRange: [2]float64{cfg.SPAR.RhoMin, cfg.SPAR.RhoMax},
	})
	if err != nil {
		return train.Probe{}, "", fmt.Errorf("train: the training-dynamics probe (--dynamics-every %d): %w; --dynamics-every 0 trains without it", every, err)
	}
	what := fmt.Sprintf("a %d-step rollout", cfg.Data.Rollout)
	if td.plan.Static() {
		what = "the single prediction a -> u"
	}
	line := fmt.Sprintf("dynamics: every %d steps, %s of %d test trajectories (E_b per band, relL2", every, what, n)
	if n < trajs {
		line = fmt.Sprintf("dynamics: every %d steps, %s of all %d test trajectories (fewer than --dynamics-trajectories %d; E_b per band, relL2", every, what, n, trajs)
	}
	switch m.Mode() {
	case model.ModeNoLocal, model.ModeNoGlobal, model.ModeNoSPAR: // U-HNO without a SPAR gate
	default:
		if strings.HasPrefix(m.Name(), "uhno") {
			line += ", SPAR contrast and keep-ratio per routing stage"
		}
	}
	return p, line + ") into log.jsonl", nil
}

// DefaultDynamicsEvery is the default of --dynamics-every. The paper logs
// every 200 steps (dynamics.DefaultEvery); on the CPU a record at
// --params 0.62M on Burgers (a 25-step rollout of 128 trajectories) costs
// about 1.3 s, 10-12% of a run at that cadence, well over the few percent
// a diagnostic should cost. Every 1,000 steps costs about 2%; the paper's
// cadence is one flag away (docs/DECISIONS.md, D-dynamics-cadence).
const DefaultDynamicsEvery = 1000

// angleSamples is the sub-batch of the branch-gradient angle (App.
// "Training Dynamics Details": a 64-sample sub-batch every 1,000 steps).
// The angle costs one forward and backward pass of 64 pairs, so it is
// recorded with every dynamics record (--dynamics-every, whose default is
// the paper's 1,000 steps for the angle).
const angleSamples = 64

// angleProbe returns the branch-gradient angle probe of the flat additive
// hybrid (App. "Branch-Parameter Gradient-Angle Diagnostic";
// model.BranchAngles): every `every` steps, the angle of each matched
// layer pair on a fixed sub-batch of the first angleSamples validation
// pairs (held out, the same pairs at every record, so the records differ
// only by training), logged as a dynamics.AngleRecord. NaN angles (a
// branch whose gradient changes nothing) are logged as null.
func angleProbe(m *model.Additive, b tensor.Backend, val *train.ValSet, every int) (train.Probe, string, error) {
	var in, tgt []float32
	var inShape, tgtShape []int
	n := 0
	for _, vb := range val.Batches {
		if n >= angleSamples {
			break
		}
		take := min(vb.InShape[0], angleSamples-n)
		inPer, tgtPer := len(vb.In)/vb.InShape[0], len(vb.Tgt)/vb.TgtShape[0]
		in = append(in, vb.In[:take*inPer]...)
		tgt = append(tgt, vb.Tgt[:take*tgtPer]...)
		inShape, tgtShape = slices.Clone(vb.InShape), slices.Clone(vb.TgtShape)
		n += take
	}
	if n == 0 {
		return train.Probe{}, "", fmt.Errorf("train: the gradient-angle probe has no validation pairs")
	}
	inShape[0], tgtShape[0] = n, n
	run := func(_ context.Context, _ int) (any, error) {
		deg, err := model.BranchAngles(m, b, in, tgt, inShape, tgtShape)
		if err != nil {
			return nil, err
		}
		return dynamics.NewAngleRecord(deg), nil
	}
	line := fmt.Sprintf("dynamics: every %d steps, the angle between the Fourier and depthwise branches' MSE gradient updates of each of the %d matched layers, on %d held-out pairs", every, m.Spec().Blocks, n)
	return train.Probe{Name: dynamics.AngleProbeName, Every: every, Run: run}, line, nil
}
