package train

import "uhno/internal/tensor"

// Model is what the loop needs of a network: a forward pass on a tape, the
// parameters, and a name for checkpoints. internal/model's models satisfy it
// through Adapt; tests use a tiny model of their own.
type Model interface {
	// Forward maps a batch x [B, Cin, grid...] to the prediction
	// [B, Cout, grid...], recording on tp, and returns what the loss and
	// the log need besides (Aux).
	Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux)
	// Params returns the trainable parameters.
	Params() ParamSet
	// Name identifies the architecture ("uhno", "fno"); a checkpoint of one
	// is not loaded into another.
	Name() string
}

// Aux is the part of a forward pass the loss and the log use besides the
// prediction.
type Aux struct {
	// ZF and ZG are the Fourier and Gaussian branch features of the last
	// routing stage, for the cross-branch consistency term (paper Sec. 3.4,
	// App. A.3). Either is nil when the model has no such pair (FNO, modes
	// A and B): the term is then skipped.
	ZF, ZG *tensor.Tensor
	// Stats holds one [B, 3] tensor per routing level with the per-sample
	// SPAR contrast c, keep-ratio rho and k (tensor.Backend.SPARKeep), for
	// the JSON-lines log. Empty for models without SPAR.
	Stats []*tensor.Tensor
}

// ParamSet is a model's trainable parameters, stored as llm.c does: one
// flat data buffer and one flat gradient buffer, of which each named
// parameter is a view. The optimizer works on the flat buffers in one
// backend call; checkpoints use the named views.
type ParamSet interface {
	// List returns the named parameters in a fixed order; each tensor's Data
	// and Grad.Data are views into the flat buffers.
	List() []*tensor.Tensor
	// Flat returns the flat data and gradient buffers and the number n of
	// parameters they hold (the buffers may be longer).
	Flat() (data, grad tensor.Storage, n int)
	// Count is the number of scalar parameters (n of Flat).
	Count() int
	// ZeroGrad clears the gradient buffer.
	ZeroGrad()
}
