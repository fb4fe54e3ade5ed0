// Package eval scores predictions against ground truth with the metrics of
// the paper's appendix "Evaluation Metrics" (relL2, relH1, the binned
// spectral error E_b, the structure-function error SF, energy drift, the
// crash rule and the rollout MSE), accumulates them along one test
// trajectory (TrajectoryMetrics), and puts confidence intervals on the
// results over test trajectories (App. "Bootstrap Confidence Intervals":
// percentile bootstrap of the mean, Wilson score interval of the crash
// rate).
//
// # Frames
//
// A frame is a []float32 laid out [Channels][Shape...] row-major, last axis
// fastest, with 1 to 3 spatial axes (Grid). Every sum is accumulated in
// float64. The metrics score the fields as the caller passes them; the
// relative ones do not change when all channels are scaled together, but
// do under a per-channel shift or scale, so they should be computed in the
// task's physical units, not on normalised values.
//
// Misuse panics (an invalid Grid, frames of the wrong length, a lag < 1,
// steps out of order), as in the rest of uhno; Grid.Validate returns the
// error for a caller that builds a grid from a config.
//
// # Points the paper leaves open, and the decisions taken here
//
// Multi-channel frames. The norm of a frame is one norm over all its values
// (the paper writes ||u||_2 of the field), so relL2, relH1, E_b and the
// energy drift of the 5-channel 3D-CFD frame are ratios of sums over all
// channels, not means of per-channel ratios; a large-valued channel weighs
// more. E_b transforms each channel alone and adds numerators and
// denominators over channels. The structure function is averaged with equal
// weight over channels and axes.
//
// A zero reference. A relative metric whose denominator is zero (a zero
// truth, a band without truth energy) is 0 when its numerator is zero too
// and NaN otherwise: undefined rather than infinite. Every mean in this
// package (TrajectoryMetrics.Mean over steps, Bootstrap over trajectories)
// skips NaN and reports how many values it used. With real data this does
// not happen; it keeps a degenerate frame from turning a table entry into
// Inf.
//
// relH1. Gradients are first differences with the task's grid spacing
// (Grid.Spacing, domain/N, the spacing of the H1 loss term), summed over
// axes: ||∇v||^2 = sum_d ||D_d v||^2. Periodic tasks use central
// differences with wrap-around. On a non-periodic axis (Darcy) the paper
// says "forward-difference at the boundaries"; a forward difference does
// not exist at the last point, so the first point uses the forward
// difference (v_1 - v_0)/h and the last the backward difference
// (v_{n-1} - v_{n-2})/h, central differences in between. This is the
// stencil of the training loss's H1 term (cpu.Diff), so the metric and the
// loss agree. Norms are plain sums over grid points; a cell volume would
// cancel in the ratio.
//
// Spectral bands. Wavenumbers are the integer DFT frequencies of each axis
// (k = m for m <= N/2, m - N above: cycles per domain length), |k| their
// Euclidean length, and K = min_d floor(N_d/2) the Nyquist radius of the
// coarsest axis. The B = 3 bands are thirds of [0, K]: low |k| < K/3 (with
// k = 0, the mean), mid K/3 <= |k| < 2K/3, high |k| >= 2K/3, which also
// takes the corner modes beyond K (present in 2D and 3D). The edges are
// compared exactly in integers (9|k|^2 against K^2 and 4K^2). At 64^2, K =
// 32: low |k| < 10.7, mid < 21.3; in 1D at 128 points: low k <= 21, mid
// 22..42, high 43..64. Domain lengths are not used: every uhno task has
// the same length on each axis. These are the paper's "thirds"; PDEBench's
// fRMSE bins ([0,4), [4,12), [12,end)) are a different definition.
// Transforms are real FFTs along the last axis and complex ones along the
// others (gonum dsp/fourier), parallel over lines; one 128^3 channel takes
// about 0.2 s on two cores.
//
// E_b is reduced two ways (docs/DECISIONS.md, D-band-pooled): per frame
// (band_low, band_mid, band_high: each frame's ratio, averaged over frames
// and then trajectories like every metric) and pooled (band_low_pooled,
// ...: BandSum's numerators and denominators summed over every frame and
// non-crashed trajectory before one division, RatioBootstrap's interval).
// A frame with little energy in a band dominates the per-frame mean; the
// pooled ratio weighs frames by their band energy.
//
// Structure function. S_r(u) = E_x |u(x+r) - u(x)|^2 is taken along each
// axis for a lag of r grid points (the paper's R = {1,2,4,8,16,32} "grid
// units"; DefaultLags) and averaged over axes and channels. On a periodic
// grid x+r wraps around; otherwise only pairs inside the domain count.
// SFError skips a lag that is not smaller than every axis (r >= min_d
// N_d): on a 32-point axis the lag 32 has no in-domain pair and, periodic,
// compares each point with itself; with every uhno grid at 64 points or
// more no lag is skipped.
//
// MSE. The paper's rollout MSE is (1/T) sum_t ||û_t - u_t||^2 with the
// plain squared norm. uhno divides each step's squared norm by the number
// of values in the frame (grid points times channels), the usual
// mean-squared error of FNO and PDEBench, so that the figure does not grow
// with the grid; the rollout value is the mean of these over steps.
//
// Energy drift. Eq. ed at the test horizon T, the last step of the
// rollout: TrajectoryMetrics.EnergyDrift and Mean(MetricEnergyDrift). The
// Drift curve keeps the same ratio at every step for figures.
//
// Crash rule. A trajectory crashes at the first step t whose prediction
// holds NaN or ±Inf, or has ||û_t||_2/||u_0||_2 > 1e3, or relL2(û_t,u_t)
// > 10 (DefaultCrashRule; strict inequalities, checked in that order for
// the reason given). u_0 is the state the rollout starts from: the last
// ground-truth frame fed to the model, in the output layout. After a crash
// the rollout goes on being scored, so every curve keeps one value per
// step and non-finite values stay as they come; CrashStep and CrashReason
// name the first crashing step. A crashed trajectory counts in the crash
// rate (Wilson interval) and is left out of every metric mean: its
// TrajectoryMetrics.Mean is NaN, which Bootstrap skips, so a table's N is
// the number of trajectories that did not crash. A step whose relL2 is
// undefined (a zero truth) is not a crash.
//
// Darcy. A single prediction a -> u: steps = 1 and no u_0 (the norm-ratio
// test is off). The paper reports no rollout, energy-drift or crash-rate
// figures for it; TrajectoryMetrics still computes them, and the report
// leaves them out.
//
// Averaging. As GUIDE section 4 reads the paper, relative metrics are
// computed per trajectory and step, averaged over the steps of each
// trajectory (TrajectoryMetrics.Mean; the paper averages relL2 over all
// rollout steps, and the other per-step metrics are treated alike), and the
// trajectory values are then averaged over the test set with a bootstrap
// interval.
//
// # Intervals
//
// Bootstrap is the percentile bootstrap of the mean over test
// trajectories, B = 10,000 resamples at 95% by default
// (DefaultResamples, DefaultLevel), with quantiles interpolated linearly
// between order statistics (numpy's default). Its draws come from math/rand/v2's
// PCG seeded by the caller's seed (`uhno eval --seed`, default 0), so
// intervals are reproducible bit for bit. NaN values are skipped (undefined
// values and crashed trajectories); ±Inf is kept. Wilson is the score
// interval without continuity correction (Newcombe 1998, method 3), z from
// gonum's normal quantile. The paper computes both at fixed model
// parameters from one training seed: they cover the finite test set, not
// training randomness.
//
// # Determinism
//
// Results do not depend on the number of CPUs: parallel work (FFT lines,
// structure-function lags) writes disjoint outputs, and every sum is
// added in a fixed order.
//
// # What uhno eval evaluates
//
// `uhno eval --checkpoint DIR [--checkpoint DIR ...]` rebuilds each model
// from the build record its checkpoint stores (the same record `--resume`
// uses), loads the weights (`train.LoadWeights`: every file checked against
// the manifest, the architecture's name and every parameter's name and shape
// checked), and opens the data exactly as training did (`openTaskData`,
// shared by `uhno train` and `uhno eval`): the same file, the same seeded
// split, the same training-set statistics. The test trajectories are the
// split's test set (`--trajectories N` takes its first N). Several
// checkpoints are put side by side only when they were trained on the same
// file, stride, seed, split sizes, history and fields; otherwise the error
// names both checkpoints and the key that differs.
//
// Without `--checkpoint`, `uhno eval` evaluates the default run directories
// of `uhno train` for `--task` (`runs/<task>-uhno` and `runs/<task>-fno`
// beside it, those that hold a checkpoint) or, without `--task`, the run
// under `runs/` whose `latest` was written last, and prints which it chose,
// so `uhno train --task burgers` followed by `uhno eval --rollout 25` works
// as typed (`TestDefaultCheckpoints`).
//
// # Rollout (eval.Rollout)
//
// The paper's protocol (GUIDE section 4): the first H frames of a test
// trajectory go in (H = 1 in 1D and 3D, 10 in 2D), normalised with the
// training statistics; the prediction is de-normalised for scoring and fed
// back, normalised, in place of the oldest input frame. Steps are the
// training step size, `data.rollout` by default (25 in 1D, 10 in 2D, 20 in
// 3D); `--rollout N` and `--horizon-mult M` change it, and a rollout longer
// than the trajectories (H + steps frames) is refused with both numbers and
// a hint to regenerate longer data (1D data hold 51 frames, so the 4x
// long-horizon study of Tab. stability runs in 2D only, which stores 50
// frames: 10 + 40). Darcy is a single prediction a -> u. Trajectories
// advance in batches (`optim.batch` by default) on a tape with gradient
// recording off; only the current batch's frames are held, plus the first
// test trajectory kept whole for the figures, so memory does not grow with
// the test set.
//
// Metrics are computed in physical units (de-normalised), per trajectory
// and step, then averaged over the steps of each trajectory and over
// trajectories (the package documentation of internal/eval lists every
// metric's definition and the points the paper leaves open: band edges,
// multi-channel frames, zero references, boundary stencils, MSE
// normalisation). A crashed trajectory counts only in the crash rate; every
// metric mean is over the trajectories that did not crash, and the intervals
// report how many (N).
//
// # Reports
//
//   - `results.json` (format `uhno-eval/1`): task, rollout length, data file,
//     and per model its label, name, parameter count, checkpoint, step, the
//     full resolved configuration, and the `evaluation`: every metric as
//     `{mean, low, high, n}`, the crash rate with its Wilson interval, the
//     crashed trajectories with step and reason, and per-step curves of every
//     metric (means; relL2 and relH1 also with per-step bootstrap intervals,
//     the band of the error-growth figure). Undefined values are `null`.
//   - `results.md`: the paper's four tables for the task (main-acc, main-acc-h1,
//     stability, spectral), one row per model, "value [low, high]".
//   - `figures/`: 1D space-time plots of truth, prediction and |error|
//     (App. qualitative); 2D snapshots at 0.25T, 0.5T and T (3D: the middle
//     slice of the last axis, channel 0); `error_growth.png` with every model's
//     relL2 per step and its 95% band; and for U-HNO the SPAR masks g of every
//     stage at the last predicted step over the predicted field (1D and 2D).
//     Heat maps are drawn cell by cell (no interpolation, so hard masks and
//     fronts stay sharp); non-finite values are drawn green and counted in the
//     panel's title (internal/eval/figure).
//
// Intervals are the paper's: percentile bootstrap over test trajectories,
// B = 10,000, 95%, seeded (`--seed`, default 0; each metric and step has its
// own derived seed, so an interval does not depend on which others were
// computed); Wilson 95% for crash rates.
package eval
