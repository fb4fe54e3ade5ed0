//go:build cuda || cudaemu

package cuda

import "uhno/internal/tensor"

// MSE implements tensor.Backend: out[0] = mean((a-b)^2), reduced in double
// (as the CPU does in float64) in two passes with a shape-determined
// partition (MSEParts): per-block partial sums into the "mse_parts"
// scratch, then one block adds them in order. Deterministic, no atomics,
// and the result stays on the device.
func (b *Backend) MSE(out, a, c *tensor.Tensor) {
	n := a.Numel()
	g, parts, chunk := MSEParts(n)
	part := b.scratchBuf("mse_parts", 2*parts) // parts doubles
	b.launch("mse_partial", g, part, buf(a), buf(c), n, chunk)
	b.launch("mse_final", MSEFinal(), buf(out), part, parts, max(n, 1))
}

// MSEBackward implements tensor.Backend: da += 2 dout (a-b)/n and
// db -= the same; dout is read on the device (no host round trip), and a
// nil da or db is skipped.
func (b *Backend) MSEBackward(da, db, dout, a, c *tensor.Tensor) {
	n := a.Numel()
	if n == 0 || (da == nil && db == nil) {
		return
	}
	b.launch("mse_backward", Elementwise(n), buf(da), buf(db), buf(dout), buf(a), buf(c), n)
}
