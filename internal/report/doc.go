// Package report rebuilds the paper's tables and figures from uhno's own
// outputs and writes them, each beside the paper's values, as one
// Markdown document with its PNG figures (`uhno report`).
//
// # Inputs
//
// Write takes a list of paths and recognises each by its contents:
//
//   - an evaluation directory of `uhno eval` (results.json, format
//     uhno-eval/1): Tab. main-acc and main-acc-h1 (the task's column),
//     Tab. stability (the paper's is at 4x the training horizon:
//     `uhno eval --horizon-mult 4`), Tab. spectral, and Tab. fno-wider
//     when a Burgers or 3D-CFD evaluation holds both U-HNO and FNO;
//   - an ablation directory of `uhno ablate` (ablation.json, format
//     uhno-ablation/1): Tab. burgers-ablation (Burgers) or the task's
//     columns of Tab. ablation-extra and ablation-extra-h1 (NS-2D,
//     3D-CFD), the degradation factors, and Fig. burgers-ablation-bars;
//     a sweep (e.g. spar.rho0) gives Fig. training-dynamics (f) and a
//     table;
//   - a training run directory of `uhno train` (log.jsonl and latest):
//     final training loss, best validation loss, the configuration in the
//     checkpoint, the training and validation loss, and the panels of
//     Fig. training-dynamics that package dynamics draws from the log's
//     probe records (panel (e) pairs a Full with a mode-E run of a task);
//   - a bench JSON of `uhno bench --json FILE` (format uhno-bench/1; the
//     file, or a directory holding it): Tab. cost and Tab. cost-spar, with
//     the machine it ran on.
//
// A path that is none of these is skipped and listed in the report; a
// path that does not exist, or a file that should be one of these but
// does not parse, stops the report with a one-line error naming the file
// and what was expected.
//
// # Output
//
// report.md and figures/*.png in the output directory. Each file is
// written whole to a temporary name and renamed, so a reader never sees
// half a report. Ours print as "mean [low, high]" (eval.FormatInterval:
// 95% percentile bootstrap intervals over test trajectories, Wilson for
// crash rates; for timings median [min, max] over the repeats), the
// paper's with the intervals it prints. Every table names the input it
// comes from and the command recorded in it (or says that none was
// recorded and gives the command reconstructed from the recorded
// settings), and says in words where ours contradicts the paper: a
// ranking the paper gives that ours reverses, a claim of the text that
// ours does not bear out. The paper's numbers are in paper.go, checked
// cell by cell against the LaTeX source by TestReportPaperMatchesTex.
//
// # Checks
//
// The paper's numbers are Go data in paper.go, every value set citing its
// table's label; TestReportPaperMatchesTex compares all of them with the
// LaTeX source when ../shared/paper is present (not in CI, which clones the
// repository only). The contradictions are also summarised at the top of
// report.md, with the list of what was and was not rebuilt and the command
// that would rebuild the rest: the ranking reversals as one row per table,
// task and metric (pairs the paper orders, how many ours reverses, how
// many of those our 95% intervals resolve, Kendall's tau and the resolved
// ones), every other claim one by one. Each statement in its section says
// whether our intervals settle it at 95%.
//
// # Horizons
//
// The paper's Tab. main-acc, main-acc-h1, spectral and fno-wider are at
// the training horizon, Tab. stability at 4x. A task evaluated at both
// fills each table from the evaluation at the paper's horizon only; an
// evaluation at another horizon fills a table only where the task has
// none at the paper's, says so, and its differences from the paper's
// order are reported but not counted as contradictions (they are not like
// for like).
package report
