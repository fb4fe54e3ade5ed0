package train

import (
	"fmt"

	"uhno/internal/tensor"
)

// graphStep runs the forward pass, the loss and the backward pass of a
// training step as a recorded graph (tensor.StepCapturer; CUDA graphs on
// the GPU), so that a step costs one replay from the host plus the AdamW
// update, whose learning rate changes every step and therefore stays
// outside the recording.
//
// A recorded step must only enqueue device work and use the same buffers
// on every replay, so the step body differs from the direct loop in two
// ways: the batch goes into two fixed device tensors by Upload before the
// replay (the host copy cannot be recorded), and the loss terms are read
// after it. The body runs on the training tape, starting with its Reset:
// the first step runs it directly, which fills the tape's pool; the second
// records it (the pool then serves every buffer, the same ones each time)
// and replays it; later steps replay. The tape is never reset outside the
// recording again; validation uses its own tape.
type graphStep struct {
	capt  tensor.StepCapturer
	cfg   Config
	tp    *tensor.Tape
	x, y  *tensor.Tensor
	terms Terms
	aux   Aux

	warm   bool
	replay tensor.StepReplay
}

func newGraphStep(capt tensor.StepCapturer, tp *tensor.Tape, cfg Config) *graphStep {
	b := cfg.Backend
	xs, ys := cfg.Train.InputShape(), cfg.Train.TargetShape()
	return &graphStep{capt: capt, cfg: cfg, tp: tp,
		x: tensor.NewTensor(b.Alloc(tensor.Numel(xs)), xs...),
		y: tensor.NewTensor(b.Alloc(tensor.Numel(ys)), ys...)}
}

// body is the recorded part of a step.
func (g *graphStep) body() {
	g.tp.Reset()
	pred, aux := g.cfg.Model.Forward(g.tp, g.x)
	g.terms = g.cfg.Loss.Loss(g.tp, pred, g.y, aux)
	g.aux = aux
	g.tp.Backward(g.terms.Total)
}

// step uploads the batch and runs the step's forward, loss and backward:
// directly the first time, recorded the second, replayed after.
func (g *graphStep) step(in, tgt []float32) error {
	b := g.cfg.Backend
	b.Upload(g.x.Data, in)
	b.Upload(g.y.Data, tgt)
	switch {
	case !g.warm:
		g.body()
		g.warm = true
		return nil
	case g.replay == nil:
		r, err := g.capt.CaptureStep(g.body)
		if err != nil {
			return fmt.Errorf("recording the training step as a graph: %w (train without graphs: --graph=false)", err)
		}
		g.replay = r
	}
	return g.replay.Launch()
}

func (g *graphStep) release() {
	if g.replay != nil {
		_ = g.replay.Destroy()
	}
	g.cfg.Backend.Free(g.x.Data)
	g.cfg.Backend.Free(g.y.Data)
}
