package eval

import (
	"fmt"
	"math"
)

// CrashRule holds the paper's divergence thresholds (App. "Evaluation
// Metrics", crash rate): a rollout step crashes when the prediction holds
// NaN or ±Inf (always checked), when ||û_t||_2 / ||u_0||_2 > NormRatio, or
// when relL2(û_t, u_t) > RelL2. A threshold <= 0 switches its test off.
type CrashRule struct {
	NormRatio, RelL2 float64
}

// DefaultCrashRule is the paper's rule: norm ratio 1e3, relL2 10.
var DefaultCrashRule = CrashRule{NormRatio: 1e3, RelL2: 10}

// crash returns why a rollout step crashes under r, or "" when it does
// not: sp is sum û_t^2, ratio ||û_t||_2 / ||u_0||_2 (NaN without u_0)
// and relL2 the step's relative l2 error. sum pred^2 in float64 is finite
// exactly when every value is: the square of the largest float32 is about
// 1.2e77, far below the float64 range even summed over 1e9 values.
func (r CrashRule) crash(sp, ratio, relL2 float64) string {
	switch {
	case math.IsNaN(sp) || math.IsInf(sp, 0):
		return "non-finite value (NaN or Inf) in the prediction"
	case r.NormRatio > 0 && ratio > r.NormRatio:
		return fmt.Sprintf("norm ratio ||û_t||/||u_0|| = %.4g > %g", ratio, r.NormRatio)
	case r.RelL2 > 0 && relL2 > r.RelL2:
		return fmt.Sprintf("relL2 = %.4g > %g", relL2, r.RelL2)
	}
	return ""
}
