//go:build cuda || cudaemu

package cuda

import "fmt"

// Precisions of the backend (SetPrecision).
const (
	// FP32 computes every operation in float32 (the default).
	FP32 = "fp32"
	// BF16 is autocast, as torch.amp.autocast(dtype=torch.bfloat16) on
	// CUDA: the dense products (Pointwise, ConvDown, Conv3,
	// DepthwiseConv, forward and backward) round their two operands to
	// bfloat16 and accumulate in float32 (double where the fp32 kernel
	// already sums in double), as tensor-core bf16 GEMMs do. Everything
	// else stays float32: the storage of activations, weights and
	// gradients, AdamW, the FFTs and the spectral mode mixing (complex,
	// which autocast leaves alone), the Gaussian branch, SPAR, the
	// normalisation statistics, GELU and the losses. The package
	// documentation, "bf16 autocast".
	BF16 = "bf16"
)

// SetPrecision selects FP32 or BF16 for every later launch. Set it
// before the first step: a recorded CUDA graph keeps the setting it was
// recorded with.
func (b *Backend) SetPrecision(p string) error {
	switch p {
	case FP32:
		b.autocast = 0
	case BF16:
		b.autocast = 1
	default:
		return fmt.Errorf("cuda: precision %q: want %s or %s", p, BF16, FP32)
	}
	return nil
}

// Precision is the precision SetPrecision selected (FP32 by default).
func (b *Backend) Precision() string {
	if b.autocast != 0 {
		return BF16
	}
	return FP32
}
