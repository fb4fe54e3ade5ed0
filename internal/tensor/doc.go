// Package tensor holds uhno's tensors, the Backend interface that every
// compute device implements, and a reverse-mode autograd tape.
//
// # Layout
//
// A Tensor is a dense float32 array in row-major order with shape
// [batch, channels, spatial...], where there are 1, 2 or 3 spatial axes
// (1D, 2D, 3D tasks). Parameters use whatever shape their operation
// documents (for example a 1x1 mixer weight is [Cout, Cin]). The memory
// behind a tensor is a Storage owned by a Backend: on the CPU a Go slice, on
// a GPU a device pointer. Model code never reads a Storage; it calls the
// operations of a Tape, which call the Backend.
//
// # Operations are coarse
//
// The Backend interface has one method per paper-level operation (a whole
// spectral convolution, a whole depthwise Gaussian convolution, the SPAR
// routing), each with an explicit backward method. A training step is
// therefore a few dozen backend calls, each of which is easy to read, test
// against finite differences, and port to CUDA.
//
// Backward methods accumulate: they add into the gradient tensors they are
// given (dx += ...), so a tensor used twice receives the sum of both
// contributions. A nil gradient argument means "not needed" and the backend
// skips that part of the work.
//
// # Tape and memory
//
// A Tape records each operation's backward closure while the forward pass
// runs. Tensors created by the tape (activations and their gradients) come
// from a size-bucketed pool owned by the tape; Reset returns them all, so a
// training loop that calls Reset after each step allocates nothing new in
// the steady state. Parameters are created outside the tape and live until
// the caller releases them.
//
// Misuse (shape mismatches, wrong ranks) panics with a "tensor:" prefix, as
// gonum does: it is a programming error, not bad data.
package tensor
