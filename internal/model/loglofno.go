package model

import "uhno/internal/tensor"

// LogLo-FNO, the baseline of App. "Baseline Configurations" in the
// paper's reading: "mode budget is allocated proportionally to
// log(1+k)^-1 across the rfft axis, replacing the uniform top-K0
// truncation of FNO. Depth and width match FNO". It is an FNO whose
// spectral convolutions keep, on the last (rfft) axis, the
// K = min(K0, floor(N/2)) frequencies tensor.LogModes(K0, N) instead of
// 0..K-1 (FNOSpec.Frequencies = FrequenciesLog): DC, then the midpoint
// quantiles of the density 1/log(1+k) over the whole axis below the
// Nyquist bin. Slot j of the weight's last mode axis multiplies frequency
// LogModes(K0, N)[j]; the other axes keep FNO's corners [0:K] and
// [N-K:N]. Parameters (names, shapes, initial values at a seed, count)
// are FNO's. The kept frequencies depend on the grid (they span its whole
// rfft axis), so unlike FNO the model is tied to the grid it was trained
// on; uhno evaluates on the training grid. This is the paper's reading,
// not kalimuthu2025loglo's architecture (docs/DECISIONS.md, D-loglo-fno).
//
// The names below are the entry points the commands and the build record
// use; a LogLo-FNO spec is an FNOSpec, so a recorded spec (written before
// FNOSpec had Frequencies, or after) decodes into it unchanged and
// NewLogLoFNO sets the log frequencies.

// LogLoFNOSpec is LogLo-FNO's architecture: FNO's, with Frequencies set
// to FrequenciesLog by LogLoFNOSpecFor and NewLogLoFNO.
type LogLoFNOSpec = FNOSpec

// LogLoFNO is the LogLo-FNO baseline: an FNO with the log frequencies.
type LogLoFNO = FNO

// logLo returns s with the log frequencies.
func logLo(s FNOSpec) FNOSpec {
	s.Frequencies = FrequenciesLog
	return s
}

// LogLoFNOSpecFor returns the LogLo-FNO baseline for the same task as a
// U-HNO spec: FNOSpecFor's dimension, channels, K0, four blocks and
// projection, with the log frequencies. Width is left 0: choose it with
// LogLoFNOForBudget (the same width as FNOForBudget's, since the counts
// are equal) or set it.
func LogLoFNOSpecFor(s Spec) LogLoFNOSpec {
	return logLo(FNOSpecFor(s, 0))
}

// NewLogLoFNO builds a LogLo-FNO on backend b with parameters initialised
// from seed (the same values as NewFNO's at the same width and seed): the
// FNO of s with Frequencies = FrequenciesLog, whatever s holds there.
func NewLogLoFNO(b tensor.Backend, s LogLoFNOSpec, seed uint64) (*LogLoFNO, error) {
	return NewFNO(b, logLo(s), seed)
}

// CountLogLoFNO is the number of parameters NewLogLoFNO would hold (FNO's
// at the same width). It panics on an invalid spec.
func CountLogLoFNO(s LogLoFNOSpec) int {
	return CountFNO(logLo(s))
}

// LogLoFNOForBudget sets the width whose parameter count is closest to
// target, within BudgetTolerance (as FNOForBudget).
func LogLoFNOForBudget(s LogLoFNOSpec, target int) (LogLoFNOSpec, error) {
	return fitWidth(logLo(s), target, "loglofno", CountFNO)
}
