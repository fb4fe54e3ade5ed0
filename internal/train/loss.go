package train

import (
	"fmt"
	"math"

	"uhno/internal/config"
	"uhno/internal/tensor"
)

// LossConfig holds the weights and the grid of the training objective.
type LossConfig struct {
	// LambdaH1 and LambdaCBC weight the H1 and cross-branch consistency
	// terms (paper Tab. per-task-hp); 0 drops a term from the gradient.
	LambdaH1, LambdaCBC float64
	// Spacing is the grid spacing h of each spatial axis (domain / N).
	Spacing []float64
	// Periodic selects periodic central differences; false (Darcy, a
	// Dirichlet problem) uses one-sided differences at the boundary.
	Periodic bool
}

// LossConfigFor returns the objective of a configuration: the weights of
// loss.lambda_h1 and loss.lambda_cbc with the loss ablations of model.ablation
// applied (Tab. ablation-setup: C NoCBC sets lambda_CBC = 0, D NoH1 sets
// lambda_H1 = 0, E MSE-only sets both), spacing pde.domain / pde.grid per
// axis, and periodic differences unless pde.boundary is "dirichlet".
func LossConfigFor(c config.Config) LossConfig {
	lc := LossConfig{LambdaH1: c.Loss.LambdaH1, LambdaCBC: c.Loss.LambdaCBC, Periodic: c.PDE.Boundary != "dirichlet"}
	switch c.Model.Ablation {
	case "C":
		lc.LambdaCBC = 0
	case "D":
		lc.LambdaH1 = 0
	case "E":
		lc.LambdaH1, lc.LambdaCBC = 0, 0
	}
	for i, n := range c.PDE.Grid {
		lc.Spacing = append(lc.Spacing, c.PDE.Domain[i]/float64(n))
	}
	return lc
}

// Terms are the tape tensors of one evaluation of the objective, each with
// one element. H1 and CBC are the unweighted terms; Total is what Backward
// starts from. CBC is nil when the model has no branch pair.
type Terms struct {
	Total, MSE, H1, CBC *tensor.Tensor
}

// LossValues are the host values of Terms (JSON keys of the training log).
// CBC is left out (0) when the model has no branch pair.
type LossValues struct {
	Total float64 `json:"loss"`
	MSE   float64 `json:"mse"`
	H1    float64 `json:"h1"`
	CBC   float64 `json:"cbc,omitempty"`
}

// finite reports whether every term is finite: a NaN or Inf term cannot
// be logged or checkpointed (JSON has no NaN) and means the run diverged.
func (v LossValues) finite() bool {
	for _, x := range []float64{v.Total, v.MSE, v.H1, v.CBC} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// Loss evaluates Eq. loss (paper Sec. 3.4):
//
//	L = MSE(pred, target) + lambda_H1 * H1 + lambda_CBC * MSE(zG, zF),
//	H1 = 1/2 sum_d MSE(D_d pred, D_d target),
//
// where D_d is the first difference along spatial axis d with spacing h_d
// (tensor.Tape.Diff: periodic central differences, or one-sided at the
// boundary for Dirichlet problems) and zF, zG are the branch features of
// the last routing stage (aux.ZF, aux.ZG). MSE is the mean over every
// element, so the terms do not grow with batch or grid size.
//
// A term whose weight is 0 is still evaluated for the log, with the tape's
// recording switched off, so it costs no backward work and does not reach
// the gradient. The CBC term is skipped (Terms.CBC nil) when aux lacks
// either feature.
func (lc LossConfig) Loss(tp *tensor.Tape, pred, target *tensor.Tensor, aux Aux) Terms {
	if len(lc.Spacing) != pred.Dims() {
		panic(fmt.Sprintf("train: Loss: %d grid spacings for prediction %v", len(lc.Spacing), pred.Shape))
	}
	var t Terms
	t.MSE = tp.MSE(pred, target)
	t.Total = t.MSE

	t.H1 = weighted(tp, lc.LambdaH1, func() *tensor.Tensor {
		var sum *tensor.Tensor
		for d, h := range lc.Spacing {
			dp := tp.Diff(pred, d, float32(h), lc.Periodic)
			dt := tp.Diff(target, d, float32(h), lc.Periodic)
			m := tp.MSE(dp, dt)
			if sum == nil {
				sum = m
			} else {
				sum = tp.Add(sum, m)
			}
		}
		return tp.Scale(sum, 0.5)
	})
	if lc.LambdaH1 != 0 {
		t.Total = tp.Add(t.Total, tp.Scale(t.H1, float32(lc.LambdaH1)))
	}

	if aux.ZF != nil && aux.ZG != nil {
		t.CBC = weighted(tp, lc.LambdaCBC, func() *tensor.Tensor { return tp.MSE(aux.ZG, aux.ZF) })
		if lc.LambdaCBC != 0 {
			t.Total = tp.Add(t.Total, tp.Scale(t.CBC, float32(lc.LambdaCBC)))
		}
	}
	return t
}

// weighted evaluates a loss term, with recording off when its weight is 0.
func weighted(tp *tensor.Tape, lambda float64, term func() *tensor.Tensor) *tensor.Tensor {
	if lambda != 0 || !tp.GradEnabled() {
		return term()
	}
	tp.SetGrad(false)
	defer tp.SetGrad(true)
	return term()
}

// Values downloads the terms.
func (t Terms) Values(b tensor.Backend) LossValues {
	one := func(x *tensor.Tensor) float64 {
		if x == nil {
			return 0
		}
		var v [1]float32
		b.Download(v[:], x.Data)
		return float64(v[0])
	}
	return LossValues{Total: one(t.Total), MSE: one(t.MSE), H1: one(t.H1), CBC: one(t.CBC)}
}
