//go:build cuda || cudaemu

package train

import (
	"math"
	"testing"

	"uhno/internal/cuda"
	"uhno/internal/model"
	"uhno/internal/tensor"
)

// TestGPUBF16LossFollowsFP32 trains the same tiny Burgers models (same
// seed, same batches) for 30 AdamW steps on the CUDA backend in fp32 and
// under bf16 autocast (cuda.Backend.SetPrecision, internal/cuda's package documentation,
// "bf16 autocast") and compares the loss of every step. Under the emulator in
// CI (scripts/emu_test.sh runs the train package's tests named GPU); on a
// GPU via `make cuda-test`.
//
// Tolerances, relative to the fp32 loss:
//   - step 1 (the same weights; only the forward's products differ):
//     2^-8. A product's operands rounded to bf16 move it by at most
//     2 * 2^-8 relative; a layer's output, a sum of such products with
//     independent rounding errors, moves by far less, and the loss (an
//     average over batch and grid) less again. Measured: 6e-5 (FNO),
//     2.4e-4 (U-HNO).
//   - steps 1 to 10: 1e-2 (measured worst: 6.9e-4 FNO, 4.2e-3 U-HNO).
//   - every step: 5e-2 for FNO (measured 1.5e-2) and 0.3 for U-HNO
//     (measured 0.19, at step 20). After a few steps the two runs' weights
//     differ by AdamW's normalised updates of slightly different gradients,
//     and U-HNO's hard top-k mask turns near-ties into whole pixels moved
//     between branches: its two curves separate as any two runs whose
//     arithmetic differs do (the fp32 GPU run against the CPU, whose
//     arithmetic differs by float32 ulps only, stays within 1e-7).
//
// The bf16 losses must also differ from the fp32 ones at every step, so a
// backend that ignored the setting fails; a wrong rounding, a bf16 AdamW
// or a bf16 FFT would break the early tolerances.
func TestGPUBF16LossFollowsFP32(t *testing.T) {
	gpu := openGPU(t)
	bc := newBurgersCurves(t)
	steps := curveSteps
	curve := func(precision string, build func(tensor.Backend) (model.Model, error)) []float64 {
		if err := gpu.SetPrecision(precision); err != nil {
			t.Fatal(err)
		}
		defer gpu.SetPrecision(cuda.FP32)
		return bc.curve(t, gpu, build)
	}
	cases := []struct {
		name  string
		build func(tensor.Backend) (model.Model, error)
		rtol  float64 // every step
	}{
		{"fno", func(be tensor.Backend) (model.Model, error) { return model.NewFNO(be, bc.fno, 3) }, 5e-2},
		{"uhno", func(be tensor.Backend) (model.Model, error) { return model.NewUHNO(be, bc.spec, 3) }, 0.3},
	}
	for _, cs := range cases {
		want := curve(cuda.FP32, cs.build)
		got := curve(cuda.BF16, cs.build)
		if want[steps-1] >= want[0] || got[steps-1] >= got[0] {
			t.Fatalf("%s: the loss did not fall (fp32 %g -> %g, bf16 %g -> %g)", cs.name, want[0], want[steps-1], got[0], got[steps-1])
		}
		worst, differ := 0.0, 0
		for s := range want {
			d := math.Abs(got[s]-want[s]) / math.Abs(want[s])
			lim := cs.rtol
			switch {
			case s == 0:
				lim = 1.0 / (1 << 8)
			case s < 10:
				lim = 1e-2
			}
			if d > lim || math.IsNaN(got[s]) {
				t.Fatalf("%s: step %d loss %.7g in bf16, %.7g in fp32 (rel diff %.2g > %g)", cs.name, s+1, got[s], want[s], d, lim)
			}
			worst = max(worst, d)
			if got[s] != want[s] {
				differ++
			}
		}
		if differ < steps {
			t.Fatalf("%s: the bf16 loss equals the fp32 loss at %d of %d steps: autocast rounded nothing", cs.name, steps-differ, steps)
		}
		t.Logf("%s: loss %.5g -> %.5g in fp32, %.5g -> %.5g in bf16; worst rel diff %.2g (step 1: %.2g)",
			cs.name, want[0], want[steps-1], got[0], got[steps-1], worst, math.Abs(got[0]-want[0])/want[0])
	}
}
