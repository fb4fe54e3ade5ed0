// Package data is the training input pipeline: it opens trajectory files
// (uhno's own and PDEBench's, through package h5), splits them by
// trajectory, cuts input/target pairs along time, computes normalisation
// statistics on the training split and serves shuffled float32 batches
// that stream from the file.
//
// # Files and layouts
//
// Open detects one of three layouts (Format) from the dataset names and
// checks the shapes; all arrays are indexed [trajectory, (time,) space...]:
//
//	FormatTensor  tensor [b, t, x...]                      1D/2D tasks, PDEBench 1D Burgers
//	FormatDarcy   nu [b, x, y] (a), tensor [b, 1, x, y] (u)  PDEBench 2D Darcy, uhno's Darcy
//	FormatCFD     density, pressure, Vx, Vy, Vz [b, t, x, y, z]  PDEBench 3D CFD
//
// A Dataset reads by hyperslab, at most one trajectory (or a window of its
// frames) per call, never a whole file: PDEBench's 3D file is 88 GB.
// Options.Stride subsamples every spatial axis on read, keeping points 0,
// s, 2s, ... like PDEBench's reduced_resolution slicing ([::s]); this is
// what PDEBench does to train 3D at 64^3 and Darcy at 64^2, so the data
// match the benchmark's. Averaging blocks instead would low-pass the
// fields and change the task (a smoother target than PDEBench's), so it
// is not offered. Options.Frames and Options.Grid state what the config
// expects; a file that disagrees is refused with a one-line error.
//
// # Channels
//
// A frame holds one value per field and grid point. Fields are the
// datasets: "tensor" for a time series, "nu" and "tensor" for Darcy (the
// paper's a and u; Sampling also accepts those names), and the five CFD
// variables in PDEBench's order. A sample's input stacks its H frames as
// channels frame by frame, [H * len(Inputs), grid...]; the target is
// [len(Outputs), grid...].
//
// # Splits
//
// NewSplit divides trajectories, never pairs, into training and test sets,
// so no frame of a test trajectory is trained on. SplitSeeded (default)
// takes a PCG permutation of all trajectories seeded by the run's seed;
// SplitFirst is PDEBench's convention of holding out the first ones (the
// first 10%, PDEBenchTestCount).
//
// # Pairs
//
// Pair k of a trajectory of T frames is input frames k..k+H-1 and target
// frame k+H, k = 0..P-1, P <= T-H (Sampling, Plan). The paper's settings
// (GUIDE section 4, Tab. dataset-config): 1D T = 51, H = 1, P = 50; 2D T =
// 50, H = 10, of the 40 possible windows P = 10 are taken (inputs 0..9 ->
// 10 up to 9..18 -> 19, the FNO Navier–Stokes protocol: 8,000 pairs from
// 800 trajectories); 3D T = 21, H = 1, P = 20 with 5 channels; Darcy is
// static, a -> u, one pair per sample.
//
// # Normalisation
//
// ComputeStats gives each field's mean and population std over the values
// the training pairs contain (the frames that occur in some training pair,
// every grid point after the stride, training trajectories only), in
// float64 with a per-trajectory two-pass sum merged by Chan's update.
// LoadOrComputeStats stores them in the sidecar "<file>.stats.json"
// (StatsPath), keyed by the file's size and modification time, the
// training set and the sampling, so a new split, horizon or regenerated
// file gets new statistics and the same ones are reused.
//
// # Batches
//
// A Batcher streams: each epoch it permutes the training trajectories
// (seeded by the seed and the epoch), loads them R at a time into an LRU
// of decoded trajectories (their first P+H frames only), shuffles the
// group's pairs and copies them into the caller's batch buffers,
// normalised when Stats are given. R follows from a memory budget (1 GiB
// by default): every training trajectory of the 1D, 2D and Darcy tasks
// (read once), one 3D trajectory at 128^3. The same seed and options give
// the same batches bit for bit.
//
// # Reading and its errors
//
// `data.Open(path, data.Options{Stride, Frames, Grid})` detects the layout
// and checks the shapes (and the frames and grid the config expects). Reads
// are hyperslabs (`SelectHyperslab` + `ReadSubset`) of at most one trajectory,
// or one window of its frames: never a whole file (the 3D file is 88 GB).
// Float64 datasets are converted; other element types are refused.
//
// Errors, one line, naming the path: a missing file (and where PDEBench
// files come from: the DaRUS repository of PDEBench, doi:10.18419/darus-2986,
// or `uhno datagen` for ours); an empty, non-HDF5, truncated or corrupt file
// (HDF5 open failure; a corrupt chunk fails its read); wrong datasets (what
// was found and the three layouts expected); wrong shapes; frames or grid
// other than expected; NaN or Inf (trajectory, dataset, frame and grid point;
// `Dataset.CheckFinite` scans a whole file one trajectory at a time); an
// incomplete file from an interrupted write.
//
// # Statistics, batches and reading ahead
//
//   - Statistics are per field (a physical channel; its H stacked input
//     frames share them): mean and population std (divisor N) of the values
//     the training pairs contain (the frames that occur in some training pair,
//     after the stride, training trajectories only), accumulated in float64
//     per trajectory and merged with Chan's update. A constant field gets std 1.
//     They are stored in the sidecar `<file>.stats.json` (JSON, one entry
//     per file version (size, mtime), training set, sampling and stride), so
//     PDEBench files stay untouched and a regenerated file or a new split gets
//     new statistics; pass another sidecar path when the data directory is
//     read-only.
//
//   - A run carries its statistics (issue 25). The sidecar is only a cache
//     for a *new* run, written in the run's own data folder (`--data`, or the
//     cache when that is where the data are). The statistics a run trains with
//     are recorded in its checkpoint's build record (`stats`), and every
//     command that opens the run (eval, resume, ablate's evaluations, predict)
//     normalises with those: nothing is looked up in, or written into, a data
//     cache, so a run trained on `--data ./data` evaluates on a fresh machine,
//     a cluster node with another HOME, or from a read-only copy. A checkpoint
//     of an older uhno (no `stats`) looks the sidecars up read-only (beside the
//     data, then in the cache) and otherwise recomputes them in memory;
//     the values are the same bits either way (tested). Eval also checks the
//     data file's fingerprint as a resume does, so a changed file is refused
//     instead of being scored against the wrong truth.
//
//   - Batches. `data.Batcher` yields host float32 batches [B, H*C_in, grid...]
//     and [B, C_out, grid...], normalised when given the statistics. Each epoch
//     it permutes the training trajectories (PCG from the seed and the epoch
//     number), loads them R at a time into an LRU of decoded trajectories
//     (their first P+H frames only), and emits each group's pairs shuffled;
//     batches run on across groups and epochs, every pair once per epoch. R
//     comes from a 1 GiB budget by default: all training trajectories of the
//     1D (26 MB), 2D (262 MB) and Darcy (26 MB) tasks, read from disk once;
//     one 3D trajectory at 128^3 (880 MB) or nine at 64^3. The same seed and
//     options give the same batches bit for bit.
//
//   - Reading ahead. `uhno train` draws its batches through
//     `data.Prefetcher`: a goroutine runs the Batcher two batches ahead into
//     buffers of its own, and `Next` copies the oldest ready batch into the
//     trainer's buffers. The batches are the Batcher's, in its order, bit for
//     bit (`TestPrefetcherSameBatches`, also under the race detector); `Skip`
//     (resume) works before the first batch. It exists for cfd3d: one
//     trajectory of PDEBench's 88 GB file is 880 MB at 128^3, about a second
//     to read here, which without it stalls every tenth step. The run's
//     summary says when the steps waited more than 1% of the time for data.
//     Measured in PERFORMANCE.md ("3D-CFD reading").
package data
