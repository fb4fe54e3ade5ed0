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
//
// LogLo-FNO (`model.LogLoFNO`, `loglofno.go`, name `loglofno`). The
// paper: "mode budget is allocated proportionally to log(1+k)^−1 across the
// rfft axis, replacing the uniform top-K0 truncation of FNO. Depth and width
// match FNO". uhno's reading:
//
//   - What is kept. The budget is FNO's: K = min(K0, ⌊N/2⌋) frequencies per
//     axis, so the weights, names, shapes, initialisation and count are FNO's
//     exactly (same seed → same values). Only which frequencies the K
//     last-axis slots multiply changes. `tensor.LogModes(K0, N)` allocates
//     them over the whole rfft axis below the Nyquist bin (0 ≤ f ≤ ⌊(N−1)/2⌋):
//     DC first (the density diverges there), then the midpoint quantiles
//     (j − ½)/(K−1) of the density 1/log(1+k) on 1..kmax, made distinct by
//     stepping up and capping from the top. The full axes (2D, 3D) keep FNO's
//     corners, since the paper speaks of the rfft axis only. Examples: Burgers
//     (K0 = 24, N = 128) keeps 0 1 2 3 4 6 7 10 12 … 54 58 62. NS-2D (K0 = 12,
//     N = 64) keeps 0 1 2 3 6 8 11 14 18 21 25 29 on its last axis. KS
//     (K0 = 32, N = 256) keeps 0 1 2 3 5 7 10 … 119 125. When K0 ≥ N/2 every
//     bin is kept and the model is FNO bit for bit.
//   - Not reweighted. The weights are not also scaled by 1/log(1+k). A fixed
//     factor on a learned weight only rescales its learning rate under AdamW,
//     so an allocation that keeps the same modes would change nothing the
//     paper could attribute to it.
//   - Grid dependence. The kept frequencies span the grid's whole rfft axis,
//     so they depend on N. A model trained at one N is not
//     discretisation-invariant the way FNO is (FNO keeps 0..K−1 on any grid
//     with N ≥ 2K0). uhno trains and evaluates on the same grid.
//   - The op is FNO's: LogLo-FNO is an FNO (FNOSpec.Frequencies =
//     FrequenciesLog) whose SpectralConv receives `tensor.LogModes` of the
//     input's grid instead of `tensor.FirstModes`; there is one spectral
//     convolution (internal/tensor's doc). The CPU backend only swaps the
//     last axis's DFT matrices and the irfft factor D (1/∏N for f = 0,
//     2/∏N otherwise) and caches a plan per list.
//   - kalimuthu2025loglo's LOGLO-FNO adds local spectral blocks on patches
//     and a high-frequency path. The paper describes only the allocation, and
//     its FLOPs for LogLo-FNO (6.6× FNO's, Tab. cost) cannot come from a
//     reallocation of the same budget. uhno's LogLo-FNO has FNO's cost.
//
// Sizes at `--params 0.62M` (target 620,000):
//
//	| task | LogLo-FNO width (count) |
//	|---|---|
//	| burgers | 56 (622,417, +0.4%) |
//	| ks | 49 (631,083, +1.8%) |
//	| ns2d (in = 10) | 16 (593,393, −4.3%) |
//	| darcy | 16 (593,249, −4.3%) |
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
