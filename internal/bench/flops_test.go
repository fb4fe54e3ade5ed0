package bench

import (
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// field allocates a zero tensor of the given shape on b.
func field(b tensor.Backend, shape ...int) *tensor.Tensor {
	return tensor.NewTensor(b.Alloc(tensor.Numel(shape)), shape...)
}

// logSigmas returns a [s, g] logSigma tensor holding log of the sigmas,
// row by row.
func logSigmas(b tensor.Backend, s, g int, sigmas ...float64) *tensor.Tensor {
	v := make([]float32, len(sigmas))
	for i, sg := range sigmas {
		v[i] = float32(math.Log(sg))
	}
	t := field(b, s, g)
	b.Upload(t.Data, v)
	return t
}

// TestOpFLOPs checks every operation's count on small shapes against a
// count by hand (the comment of each case shows the sum).
func TestOpFLOPs(t *testing.T) {
	be := cpu.New(1)
	f := func(shape ...int) *tensor.Tensor { return field(be, shape...) }
	gauss := tensor.GaussOpts{Normalize: true, MaxRadius: 16}
	tests := []struct {
		name  string
		op    string
		call  func(c *Counter)
		flops int64
		fft   int64
	}{
		// 2 B Cout Cin N = 2*2*4*3*5 = 240; bias B Cout N = 40.
		{"pointwise with bias", "Pointwise", func(c *Counter) { c.Pointwise(f(2, 4, 5), f(2, 3, 5), f(4, 3), f(4)) }, 280, 0},
		{"pointwise without bias", "Pointwise", func(c *Counter) { c.Pointwise(f(2, 4, 5), f(2, 3, 5), f(4, 3), nil) }, 240, 0},
		// dx 240 + dw 240 + dbias 40.
		{"pointwise backward, all gradients", "PointwiseBackward", func(c *Counter) {
			c.PointwiseBackward(f(2, 3, 5), f(4, 3), f(4), f(2, 4, 5), f(2, 3, 5), f(4, 3))
		}, 520, 0},
		{"pointwise backward, dw only", "PointwiseBackward", func(c *Counter) {
			c.PointwiseBackward(nil, f(4, 3), nil, f(2, 4, 5), f(2, 3, 5), f(4, 3))
		}, 240, 0},
		// 2D, 4x4 -> 2x2: 2 B Cout Cin 3^2 N_out = 2*1*3*2*9*4 = 432; bias 1*3*4 = 12.
		{"convdown 2D", "ConvDown", func(c *Counter) { c.ConvDown(f(1, 3, 2, 2), f(1, 2, 4, 4), f(3, 2, 3, 3), f(3)) }, 444, 0},
		// dx 432 + dw 432 + dbias 12.
		{"convdown backward", "ConvDownBackward", func(c *Counter) {
			c.ConvDownBackward(f(1, 2, 4, 4), f(3, 2, 3, 3), f(3), f(1, 3, 2, 2), f(1, 2, 4, 4), f(3, 2, 3, 3))
		}, 876, 0},
		// 2D 4x4, 2 channels: 2 * 3^2 per point of 32 = 576; bias 32.
		{"depthwise 2D", "DepthwiseConv", func(c *Counter) { c.DepthwiseConv(f(1, 2, 4, 4), f(1, 2, 4, 4), f(2, 3, 3), f(2)) }, 608, 0},
		// 2D 4x4, B 1, Cin 2 -> Cout 3, 8 offsets: 2*8*2 per output of 48 = 1536; mean 48.
		{"stencil message 2D", "StencilMessage", func(c *Counter) {
			c.StencilMessage(f(1, 3, 4, 4), f(1, 2, 4, 4), f(8, 6, 1), make([]int, 16), true)
		}, 1584, 0},
		// dx 1536 + dk 1536 + scaling 48; dk only: 1536 + 48.
		{"stencil message backward", "StencilMessageBackward", func(c *Counter) {
			c.StencilMessageBackward(f(1, 2, 4, 4), f(8, 6, 1), f(1, 3, 4, 4), f(1, 2, 4, 4), f(8, 6, 1), make([]int, 16), true)
		}, 3120, 0},
		{"stencil message backward, dk only", "StencilMessageBackward", func(c *Counter) {
			c.StencilMessageBackward(nil, f(8, 6, 1), f(1, 3, 4, 4), f(1, 2, 4, 4), f(8, 6, 1), make([]int, 16), false)
		}, 1584, 0},
		// 1D N 5, B 2, 3 channels: 2 * 3 per point of 30 = 180, no bias.
		{"depthwise 1D without bias", "DepthwiseConv", func(c *Counter) { c.DepthwiseConv(f(2, 3, 5), f(2, 3, 5), f(3, 3), nil) }, 180, 0},
		// dx 576 + dw 576 + dbias 32.
		{"depthwise backward", "DepthwiseConvBackward", func(c *Counter) {
			c.DepthwiseConvBackward(f(1, 2, 4, 4), f(2, 3, 3), f(2), f(1, 2, 4, 4), f(1, 2, 4, 4), f(2, 3, 3))
		}, 1184, 0},
		{"depthwise backward, dw only", "DepthwiseConvBackward", func(c *Counter) {
			c.DepthwiseConvBackward(nil, f(2, 3, 3), nil, f(1, 2, 4, 4), f(1, 2, 4, 4), f(2, 3, 3))
		}, 576, 0},
		// 1D, N 4 -> 8: 8 outputs of 2 taps, 4 each = 32.
		{"upsample 1D", "Upsample2x", func(c *Counter) { c.Upsample2x(f(1, 1, 8), f(1, 1, 4), false) }, 32, 0},
		// 2D, 2 channels of 2x2: pass 1 gives 2*8 points (64), pass 2 2*16 points (128).
		{"upsample 2D", "Upsample2x", func(c *Counter) { c.Upsample2x(f(1, 2, 4, 4), f(1, 2, 2, 2), false) }, 192, 0},
		{"upsample 2D backward", "Upsample2xBackward", func(c *Counter) { c.Upsample2xBackward(f(1, 2, 2, 2), f(1, 2, 4, 4), false) }, 192, 0},
		// N = 8, K = 3 = M: FFT 5*8*3 = 120 per field, 2 in + 3 out fields = 600;
		// mixing 8 B Cin Cout M = 8*1*2*3*3 = 144.
		{"spectral 1D", "SpectralConv", func(c *Counter) { c.SpectralConv(f(1, 3, 8), f(1, 2, 8), f(1, 2, 3, 3, 2), 3, []int{0, 1, 2}) }, 744, 600},
		// 4x8, K0 = 3: axis 0 keeps 2*min(3,2) = 4, axis 1 min(3,4) = 3, M = 12;
		// FFT 5*32*5 = 800 per field, 2 fields; mixing 8*12 = 96.
		{"spectral 2D with mode cap", "SpectralConv", func(c *Counter) { c.SpectralConv(f(1, 1, 4, 8), f(1, 1, 4, 8), f(2, 1, 1, 3, 3, 2), 3, []int{0, 1, 2}) }, 1696, 1600},
		// The FFTs (600) and one mixing over 2 listed modes: 8*1*2*3*2 = 96.
		{"spectral list 1D", "SpectralConv", func(c *Counter) {
			c.SpectralConv(f(1, 3, 8), f(1, 2, 8), f(1, 2, 3, 3, 2), 3, []int{0, 2})
		}, 696, 600},
		// rfft(dy) 3, irfft to dx 2, rfft(x) 2: 840; two mixings 192.
		{"spectral list backward", "SpectralConvBackward", func(c *Counter) {
			c.SpectralConvBackward(f(1, 2, 8), f(1, 2, 3, 3, 2), f(1, 3, 8), f(1, 2, 8), f(1, 2, 3, 3, 2), 3, []int{0, 2})
		}, 1032, 840},
		// FFTs 600; two mixings at 3 modes, rank 4: 8*3*4*(2+3) = 480.
		{"low rank 1D", "LowRankSpectralConv", func(c *Counter) {
			c.LowRankSpectralConv(f(1, 3, 8), f(1, 2, 8), f(1, 2, 4, 3, 2), f(1, 4, 3, 3, 2), 3)
		}, 1080, 600},
		// rfft(dy) 3, rfft(x) 2, irfft 2: 840; dv: U (192) + V (288) mixings,
		// adjoint of V 288, du 192, dx 192: 1152.
		{"low rank backward", "LowRankSpectralConvBackward", func(c *Counter) {
			c.LowRankSpectralConvBackward(f(1, 2, 8), f(1, 2, 4, 3, 2), f(1, 4, 3, 3, 2), f(1, 3, 8), f(1, 2, 8), f(1, 2, 4, 3, 2), f(1, 4, 3, 3, 2), 3)
		}, 1992, 840},
		// rfft(dy) 3 fields, irfft to dx 2, rfft(x) again 2: 7*120 = 840; two mixings 288.
		{"spectral backward", "SpectralConvBackward", func(c *Counter) {
			c.SpectralConvBackward(f(1, 2, 8), f(1, 2, 3, 3, 2), f(1, 3, 8), f(1, 2, 8), f(1, 2, 3, 3, 2), 3, []int{0, 1, 2})
		}, 1128, 840},
		// dw only: rfft(dy) 3 + rfft(x) 2 fields = 600, one mixing 144.
		{"spectral backward, dw only", "SpectralConvBackward", func(c *Counter) {
			c.SpectralConvBackward(nil, f(1, 2, 3, 3, 2), f(1, 3, 8), f(1, 2, 8), f(1, 2, 3, 3, 2), 3, []int{0, 1, 2})
		}, 744, 600},
		// 1D N = 16, 3 scales x 1 group x 2 channels; sigma 0.55, 1.2, 2.5 give
		// r = 2, 4, 8 capped at (16-1)/2 = 7: taps 2*(5+9+15) = 58;
		// one pass of 2 FLOPs per tap: 16*2*58 = 1856.
		{"gaussian 1D", "GaussianConv", func(c *Counter) {
			c.GaussianConv(f(1, 6, 16), f(1, 6, 16), logSigmas(be, 3, 1, 0.55, 1.2, 2.5), gauss)
		}, 1856, 0},
		// 2D 8x8, 1 channel per scale: r = 2, 4->3, 8->3 (cap (8-1)/2): taps 5+7+7 = 19;
		// two passes: 64*2*2*19 = 4864.
		{"gaussian 2D", "GaussianConv", func(c *Counter) {
			c.GaussianConv(f(1, 3, 8, 8), f(1, 3, 8, 8), logSigmas(be, 3, 1, 0.55, 1.2, 2.5), gauss)
		}, 4864, 0},
		// 2 groups with their own sigma: 2 channels per (scale, group); r = 2 and 4:
		// taps 2*5 + 2*9 = 28, 16*2*28 = 896.
		{"gaussian groups", "GaussianConv", func(c *Counter) {
			c.GaussianConv(f(1, 4, 16), f(1, 4, 16), logSigmas(be, 1, 2, 0.55, 1.2), gauss)
		}, 896, 0},
		// both gradients, d = 1: u pass + w pass (2d-1 = 1) = 2*1856, plus
		// (2 dot + 1 dx) per point of 6*16 = 288.
		{"gaussian backward", "GaussianConvBackward", func(c *Counter) {
			c.GaussianConvBackward(f(1, 6, 16), f(3, 1), f(1, 6, 16), f(1, 6, 16), logSigmas(be, 3, 1, 0.55, 1.2, 2.5), gauss)
		}, 4000, 0},
		// dx only: the u pass and the accumulation, 1856 + 96.
		{"gaussian backward, dx only", "GaussianConvBackward", func(c *Counter) {
			c.GaussianConvBackward(f(1, 6, 16), nil, f(1, 6, 16), f(1, 6, 16), logSigmas(be, 3, 1, 0.55, 1.2, 2.5), gauss)
		}, 1952, 0},
		{"add", "Add", func(c *Counter) { c.Add(f(2, 5), f(2, 5), f(2, 5)) }, 10, 0},
		{"sub", "Sub", func(c *Counter) { c.Sub(f(2, 5), f(2, 5), f(2, 5)) }, 10, 0},
		{"mul", "Mul", func(c *Counter) { c.Mul(f(2, 5), f(2, 5), f(2, 5)) }, 10, 0},
		{"scale", "Scale", func(c *Counter) { c.Scale(f(2, 5), f(2, 5), 3) }, 10, 0},
		{"add scaled", "AddScaled", func(c *Counter) { c.AddScaled(f(2, 5), f(2, 5), 3) }, 20, 0},
		{"mul acc", "MulAcc", func(c *Counter) { c.MulAcc(f(2, 5), f(2, 5), f(2, 5)) }, 20, 0},
		{"gelu", "GELU", func(c *Counter) { c.GELU(f(2, 5), f(2, 5)) }, 50, 0},
		{"gelu backward", "GELUBackward", func(c *Counter) { c.GELUBackward(f(2, 5), f(2, 5), f(2, 5)) }, 120, 0},
		{"sigmoid", "Sigmoid", func(c *Counter) { c.Sigmoid(f(2, 5), f(2, 5)) }, 30, 0},
		{"sigmoid backward", "SigmoidBackward", func(c *Counter) { c.SigmoidBackward(f(2, 5), f(2, 5), f(2, 5)) }, 40, 0},
		// accumulate 2 of 5 channels of [2, 5, 3]: 2*2*3 = 12.
		{"channel copy, accumulate", "ChannelCopy", func(c *Counter) { c.ChannelCopy(f(2, 5, 3), 1, f(2, 2, 3), 0, 2, true) }, 12, 0},
		{"channel copy", "ChannelCopy", func(c *Counter) { c.ChannelCopy(f(2, 5, 3), 1, f(2, 2, 3), 0, 2, false) }, 0, 0},
		// x [2, 3, 4]: 4 per element of 24.
		{"mean std", "MeanStd", func(c *Counter) { c.MeanStd(f(2, 3), f(2, 3), f(2, 3, 4)) }, 96, 0},
		{"mean std backward", "MeanStdBackward", func(c *Counter) {
			c.MeanStdBackward(f(2, 3, 4), f(2, 3), f(2, 3), f(2, 3, 4), f(2, 3), f(2, 3))
		}, 96, 0},
		{"top-k mask", "TopKMask", func(c *Counter) { c.TopKMask(f(2, 1, 8), f(2, 1, 8), []int{3, 4}) }, 0, 0},
		// s [2, 1, 8]: 5 per point.
		{"spar keep", "SPARKeep", func(c *Counter) { c.SPARKeep(f(2, 1, 8), f(2, 3), f(2, 1, 8), tensor.DefaultSPAR) }, 80, 0},
		// r [2, 3, 8]: 3 per element.
		{"spar route", "SPARRoute", func(c *Counter) { c.SPARRoute(f(2, 3, 8), f(2, 3, 8), f(2, 3, 8), f(2, 1, 8)) }, 144, 0},
		// dzF 2*48 + dzG 3*48 + ds 3*48 + 9*16 = 528.
		{"spar route backward", "SPARRouteBackward", func(c *Counter) {
			c.SPARRouteBackward(f(2, 3, 8), f(2, 3, 8), f(2, 1, 8), f(2, 3, 8), f(2, 3, 8), f(2, 3, 8), f(2, 1, 8), f(2, 1, 8), 0.8, tensor.CentreZero)
		}, 528, 0},
		{"spar route backward, no score", "SPARRouteBackward", func(c *Counter) {
			c.SPARRouteBackward(f(2, 3, 8), f(2, 3, 8), nil, f(2, 3, 8), f(2, 3, 8), f(2, 3, 8), f(2, 1, 8), f(2, 1, 8), 0.8, tensor.CentreZero)
		}, 240, 0},
		// a [2, 1, 4]: 3 per element of 8, per gradient on the way back.
		{"mse", "MSE", func(c *Counter) { c.MSE(f(1), f(2, 1, 4), f(2, 1, 4)) }, 24, 0},
		{"mse backward", "MSEBackward", func(c *Counter) { c.MSEBackward(f(2, 1, 4), f(2, 1, 4), f(1), f(2, 1, 4), f(2, 1, 4)) }, 48, 0},
		{"mse backward, da only", "MSEBackward", func(c *Counter) { c.MSEBackward(f(2, 1, 4), nil, f(1), f(2, 1, 4), f(2, 1, 4)) }, 24, 0},
		{"diff", "Diff", func(c *Counter) { c.Diff(f(2, 1, 8), f(2, 1, 8), 0, 0.125, true) }, 32, 0},
		{"diff backward", "DiffBackward", func(c *Counter) { c.DiffBackward(f(2, 1, 8), f(2, 1, 8), 0, 0.125, true) }, 48, 0},
		{"adamw", "AdamW", func(c *Counter) {
			c.AdamW(be.Alloc(10), be.Alloc(10), be.Alloc(10), be.Alloc(10), 10,
				tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4, Step: 1})
		}, 140, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCounter(be)
			c.SetPhase("test")
			tt.call(c)
			var got *OpCount
			for _, oc := range c.Counts() {
				if oc.Op == tt.op {
					got = &oc
				}
			}
			if got == nil {
				t.Fatalf("no count for %s in %+v", tt.op, c.Counts())
			}
			if got.Calls != 1 || got.FLOPs != tt.flops || got.FFT != tt.fft || got.Phase != "test" {
				t.Errorf("%s: %d calls, %d FLOPs (%d FFT) in phase %q; want 1 call, %d FLOPs (%d FFT) in \"test\"",
					tt.op, got.Calls, got.FLOPs, got.FFT, got.Phase, tt.flops, tt.fft)
			}
		})
	}
}

// TestKeptModes checks Eq. mode-cap's mode count M per dimension with
// FNO's list 0..K-1 on the last axis.
func TestKeptModes(t *testing.T) {
	tests := []struct {
		grid []int
		k0   int
		want int
	}{
		{[]int{128}, 24, 24},         // K = 24
		{[]int{16}, 24, 8},           // capped at N/2
		{[]int{64, 64}, 12, 24 * 12}, // 2K on the full axis, K on the last
		{[]int{8, 8}, 12, 8 * 4},     // both capped at 4
		{[]int{16, 16, 16}, 12, 16 * 16 * 8},
	}
	for _, tt := range tests {
		if got := keptModes(tt.grid, tt.k0, firstModes(tt.grid, tt.k0)); got != tt.want {
			t.Errorf("keptModes(%v, %d) = %d, want %d", tt.grid, tt.k0, got, tt.want)
		}
	}
}
