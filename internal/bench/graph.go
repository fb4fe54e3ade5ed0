package bench

import (
	"fmt"

	"uhno/internal/tensor"
	"uhno/internal/train"
)

// graphed is the training step of Options.Graph: forward, loss and
// backward recorded once as a graph (tensor.StepCapturer: a CUDA graph)
// and replayed, as `uhno train` runs its steps by default (internal/train
// graphStep), so that the bench times what training runs rather than one
// host launch per kernel. As there, the batch goes into two fixed device
// tensors before the replay, the first step runs directly (filling the
// tape's pool), the second is recorded, later ones are replayed; AdamW,
// clearing the gradients and reading the loss stay outside the recording.
// The recorded tape is not reset outside the recording again: the
// inference forwards use a tape of their own.
type graphed struct {
	capt   tensor.StepCapturer
	tp     *tensor.Tape
	x, y   *tensor.Tensor
	total  *tensor.Tensor
	warm   bool
	replay tensor.StepReplay
}

func newGraphed(capt tensor.StepCapturer, b tensor.Backend, c Case) *graphed {
	return &graphed{capt: capt, tp: tensor.NewTape(b),
		x: tensor.NewTensor(b.Alloc(tensor.Numel(c.Input)), c.Input...),
		y: tensor.NewTensor(b.Alloc(tensor.Numel(c.Target)), c.Target...)}
}

// body is the recorded part of a step.
func (g *graphed) body(s *stepper) {
	g.tp.Reset()
	g.tp.SetGrad(true)
	pred, aux := s.c.Model.Forward(g.tp, g.x)
	terms := s.c.Loss.Loss(g.tp, pred, g.y, train.Aux{ZF: aux.ZF, ZG: aux.ZG, Stats: aux.Stats})
	g.total = terms.Total
	g.tp.Backward(terms.Total)
}

// train is one training step on the graph path: the same work as
// stepper.train.
func (g *graphed) train(s *stepper, b tensor.Backend) error {
	b.Upload(g.x.Data, s.in)
	b.Upload(g.y.Data, s.tgt)
	switch {
	case !g.warm:
		g.body(s)
		g.warm = true
	case g.replay == nil:
		r, err := g.capt.CaptureStep(func() { g.body(s) })
		if err != nil {
			return fmt.Errorf("bench: %s: recording the training step as a graph: %w (bench without --graph)", s.c.Name, err)
		}
		g.replay = r
		fallthrough
	default:
		if err := g.replay.Launch(); err != nil {
			return fmt.Errorf("bench: %s: replaying the training step: %w", s.c.Name, err)
		}
	}
	return s.update(b, g.total)
}

func (g *graphed) release(b tensor.Backend) {
	if g.replay != nil {
		_ = g.replay.Destroy()
	}
	g.tp.Release()
	b.Free(g.x.Data)
	b.Free(g.y.Data)
}
