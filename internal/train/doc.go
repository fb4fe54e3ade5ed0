// Package train trains uhno's models: the loop (Run), the learning-rate
// schedule (Schedule), the objective of the paper's Eq. loss (LossConfig),
// and checkpoints that resume to the same bits.
//
// # Ownership and layout
//
// The model owns its parameters in two flat buffers (data and gradient)
// with named views (ParamSet); Run owns AdamW's two flat moment buffers and
// the Tape. One optimizer step is one backend call on the four flat
// buffers (tensor.Backend.AdamW), so a GPU backend runs it as one kernel.
// Batches arrive as host float32 slices from a Batches stream and go to the
// device through Tape.FromHost each step.
//
// The package depends on the small Model interface below, not on
// internal/model's types; Adapt wraps an internal/model network. It reads
// no global state: the command line builds a Config from the resolved
// configuration.
//
// # Determinism and resume
//
// Nothing in a step is random: the model has no dropout, SPAR's top-k is
// deterministic, and the CPU backend's results do not depend on the
// thread count. The only state outside the tensors is the position in
// the batch stream, whose order is a pure function of its seed and the
// number of batches drawn. A checkpoint therefore holds the weights, both
// moments, the step and that count, and a resumed run reproduces the
// uninterrupted one bit for bit (TestResumeBitIdentical).
//
// # Data parallel
//
// With Config.Comm of several ranks (internal/dist: processes started by
// mpirun or srun), Run is one rank of a data-parallel run: each rank
// trains on its share of every global batch, one all-reduce per step
// averages the gradients (and the logged losses) before AdamW, so every
// rank takes the update of one process with the global batch, up to
// float32 summation order; rank 0's initial weights are broadcast, rank 0
// alone writes the run directory, and the ranks compare weight checksums
// before every checkpoint (parallel.go; docs/DESIGN.md "Data parallel").
//
// # Files
//
// A run directory holds log.jsonl and step-NNNNNNNN checkpoint
// directories (weights.safetensors, optimizer.safetensors, state.json,
// manifest.json) with a "latest" pointer; see checkpoint.go and
// docs/DESIGN.md "Training" for the format and the atomic-write protocol.
package train
