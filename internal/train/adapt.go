package train

import (
	"uhno/internal/model"
	"uhno/internal/tensor"
)

// modelAdapter presents an internal/model network as a Model.
type modelAdapter struct{ m model.Model }

// Adapt returns the training view of a U-HNO or FNO model: the same
// forward pass and parameters, with the auxiliary outputs the loss and the
// log use (the final-stage branch features for the CBC term and the SPAR
// statistics of every routing stage, in model.Aux's stage order).
func Adapt(m model.Model) Model { return modelAdapter{m} }

func (a modelAdapter) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux) {
	y, aux := a.m.Forward(tp, x)
	return y, Aux{ZF: aux.ZF, ZG: aux.ZG, Stats: aux.Stats}
}

func (a modelAdapter) Params() ParamSet { return a.m.Params() }
func (a modelAdapter) Name() string     { return a.m.Name() }
