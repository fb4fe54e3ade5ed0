// Package train trains uhno's models: the loop (Run), the learning-rate
// schedule (Schedule), the objective of the paper's Eq. loss (LossConfig),
// and checkpoints that resume to the same bits.
//
// # Ownership and layout
//
// The model owns its parameters in two flat buffers (data and gradient)
// with named views (ParamSet); Run owns AdamW's two flat moment buffers and
// the Tape. One optimizer step is one backend call on the four flat
// buffers (tensor.Backend.AdamW), so a GPU backend runs it as one kernel.
// Batches arrive as host float32 slices from a Batches stream and go to the
// device through Tape.FromHost each step.
//
// The package depends on the small Model interface below, not on
// internal/model's types; Adapt wraps an internal/model network. It reads
// no global state: the command line builds a Config from the resolved
// configuration.
//
// # Determinism and resume
//
// Nothing in a step is random: the model has no dropout, SPAR's top-k is
// deterministic, and the CPU backend's results do not depend on the
// thread count. The only state outside the tensors is the position in
// the batch stream, whose order is a pure function of its seed and the
// number of batches drawn. A checkpoint therefore holds the weights, both
// moments, the step and that count, and a resumed run reproduces the
// uninterrupted one bit for bit (TestResumeBitIdentical).
//
// # Data parallel
//
// With Config.Comm of several ranks (internal/dist: processes started by
// mpirun or srun), Run is one rank of a data-parallel run: each rank
// trains on its share of every global batch, one all-reduce per step
// averages the gradients (and the logged losses) before AdamW, so every
// rank takes the update of one process with the global batch, up to
// float32 summation order; rank 0's initial weights are broadcast, rank 0
// alone writes the run directory, and the ranks compare weight checksums
// before every checkpoint (parallel.go; "Data parallel in detail" below).
//
// # Files
//
// A run directory holds log.jsonl and step-NNNNNNNN checkpoint
// directories (weights.safetensors, optimizer.safetensors, state.json,
// manifest.json) with a "latest" pointer; "Checkpoints" below gives the
// format and the atomic-write protocol.
//
// # The loop
//
// `train.Run(ctx, cfg, out)` takes a typed `train.Config` (a model, a
// backend, a batch stream, an optional validation set, the loss, schedule and
// AdamW settings, intervals and a run directory) and nothing from viper. One
// step t = 1..Steps is:
//
//  1. `Tape.Reset`; the next batch from the stream (host float32, normalised
//     by the training statistics) goes to the device with `FromHost`;
//  2. `Forward`, then the loss of Eq. loss (below) and its terms' values;
//     a NaN or Inf loss stops the run with an error naming the step and the
//     last checkpoint (the diverged weights are not saved);
//  3. `Backward`, then one backend call `AdamW(p, g, m, v, n, h)` on the
//     model's flat parameter and gradient buffers and the optimizer's flat
//     moment buffers (internal/cpu/adamw.go), then `ZeroGrad`;
//  4. every `--log-every` steps a JSON line; every `--val-every` steps and
//     after the last a validation loss; every `--ckpt-every` steps and after
//     the last a checkpoint.
//
// The progress bar (stderr) shows the step, the loss terms, the learning
// rate, steps/s and the ETA. `log.jsonl` in the run directory holds records
// `{"kind":"train","step","loss","mse","h1","cbc","lr","rho":[...],
// "contrast":[...],"steps_per_s","elapsed_s"}` and `{"kind":"val","step",
// "loss","mse","h1","cbc","lr","elapsed_s"}`. `rho` and `contrast` are the batch
// means of the SPAR keep-ratio and contrast of every routing stage, in
// `model.Aux` order (enc.0 .. enc.L-1, mid, dec.L-1 .. dec.0); `cbc` is
// absent for models without a branch pair (FNO, modes A, B). The loss terms
// are those of the normalised fields the model sees.
//
// Validation is a fixed sample of `--val-pairs` (256) pairs of the test
// split's trajectories (a seeded shuffle of all their pairs, read pair by
// pair), normalised with the training statistics and evaluated with the
// tape's recording off. It only monitors the run: nothing is selected or
// stopped on it, so the test split stays a fair test set. The best value and
// its step go into the checkpoint.
//
// Optimizer. AdamW exactly as `torch.optim.AdamW` (decoupled weight
// decay): `p *= 1 - lr wd`, `m = b1 m + (1-b1) g`, `v = b2 v + (1-b2) g^2`,
// `p -= (lr / (1-b1^t)) m / (sqrt(v)/sqrt(1-b2^t) + eps)`, in PyTorch's order
// of operations, each element computed in float64 and stored in float32.
// It is checked against two steps printed by PyTorch 1.13 (within 5e-7
// relative) and a float64 reference over five steps (one ulp). Weight decay
// applies to every parameter, biases and log sigma included, as
// `AdamW(model.parameters())` does in the yardstick.
//
// Schedule (Sec. 4.1: cosine annealing with 1,000 warm-up steps), with
// the update counted from 1: `lr(t) = lr0 t / W` for t <= W, then
// `lr(t) = lr0 (1 + cos(pi (t - W) / (T - W))) / 2`. The first update uses
// lr0/W (not 0), update W uses lr0, and the last update T uses 0. With the
// paper's values: lr(1) = 1e-6, lr(1000) = 1e-3, lr(10500) = 5e-4,
// lr(20000) = 0 (`TestScheduleKnownPoints`).
//
// # Loss (Eq. loss, Sec. 3.4)
//
//	L = MSE(u^, u) + lambda_H1 * 1/2 sum_d MSE(D_d u^, D_d u) + lambda_CBC * MSE(z_G, z_F)
//
// `D_d` is `Tape.Diff` along spatial axis d with spacing h_d = pde.domain[d] /
// pde.grid[d]: periodic central differences, and for Darcy (`pde.boundary:
// dirichlet`) central inside with one-sided first differences at the two
// boundary points (GUIDE section 4). z_F and z_G are the final routing
// stage's branch features (`model.Aux`); the term is skipped when either is
// nil. Modes C, D and E set lambda_CBC, lambda_H1 or both to 0
// (`train.LossConfigFor`). A term whose weight is 0 is still computed for
// the log, with the tape's recording off, so it adds no backward work. The
// yardstick's `uhno_loss` is the same formula. Tests compare every term with
// a float64 computation from the definition in 1D/2D/3D, periodic and not,
// and the gradient with finite differences.
//
// # Checkpoints
//
// A run directory holds:
//
//	latest                            "step-00001000\n": the newest checkpoint
//	log.jsonl
//	step-00001000/weights.safetensors
//	step-00001000/optimizer.safetensors
//	step-00001000/state.json
//	step-00001000/manifest.json
//
// What each file holds:
//
//   - `weights.safetensors`: every parameter as a float32 tensor named by its
//     parameter name and with its shape (the names and shapes are listed in
//     internal/model's package comment: `lift.w`, `enc.0.fourier.w`, ...,
//     `proj.1.b`; FNO: `lift.*`, `block.i.spectral.w`, `block.i.w.*`,
//     `proj.*`). Metadata `format: pt`, `model`. PyTorch reads it with
//     `safetensors.torch.load_file`; the file was also read with a plain
//     `struct`/`json`/`torch.frombuffer` reader: 144 tensors, 6,696,892 values
//     for the Burgers U-HNO. `TestWeightsFileFormat` decodes it from the
//     format's specification.
//   - `optimizer.safetensors`: AdamW's moments as two flat float32 vectors
//     `adamw.m` and `adamw.v`, in the order of the flat parameter buffer
//     (`Params.List` order).
//   - `state.json`: format `uhno-checkpoint/1`, the step, its learning rate
//     and loss terms, the schedule, the AdamW constants, the best validation
//     loss and its step, the data position (`seed`, `batch`,
//     `batches_drawn`), the model name and parameter count, the task, the
//     whole resolved configuration, the uhno version, and `build`: what
//     `uhno train` needs to rebuild the same model (its `model.Spec` or
//     `model.FNOSpec`, after `--params` or `--width`) and data (file as an
//     absolute path, stride, validation size, `data_stamp`: the file's size
//     and sampled SHA-256, below), and `control`: the run-control settings
//     (`log_every`, `val_every`, `ckpt_every`, `keep`, `threads`, `graph`).
//   - `manifest.json`, written last: the size and SHA-256 of the three files.
//
// Atomic writes. A checkpoint is written into `.tmp-step-N-*/` (each
// file fsynced, the manifest last, the directory fsynced), renamed to
// `step-N/`, and only then is `latest` replaced (temporary file, fsync,
// rename, directory fsync). A crash at any point leaves `latest` naming the
// previous, complete checkpoint; the next save removes the leftovers
// (`TestInterruptedSave` crashes a save at each stage of `train.SaveStages`:
// half-way through the weights, after each file, before the rename, before
// `latest`, before pruning). Older step directories beyond `--keep` (2) are
// deleted. A step saved a second time (a run resumed from an older
// checkpoint of its directory) replaces the old directory by an atomic
// swap (`renameat2(RENAME_EXCHANGE)` on Linux), so `latest` never names a
// missing directory; elsewhere the old copy is moved aside and back.
//
// Faults. The log is written a whole record at a time as the run goes
// (unbuffered, so it is current for tail -f and uhno report on a live
// run) and fsynced before every checkpoint, so the log of a killed run
// holds every record up to its last checkpoint (resuming trims the rest),
// and a fresh run truncates a log left by a run that died before its
// first checkpoint.
//
//   - Killed at any moment (SIGKILL, the OOM killer, a power cut after the
//     fsyncs): `TestTrainSurvivesSIGKILL` (cmd/uhno) runs `uhno train` in
//     child processes, kills them at seeded random moments and resumes each
//     time (starting afresh when no checkpoint exists yet), then kills them
//     inside a save at each stage with the test-only environment variable
//     `UHNO_TEST_CRASH_IN_CHECKPOINT=STAGE[@STEP]` (the process kills itself
//     with SIGKILL when the save of step STEP reaches STAGE); after every
//     kill `latest` names a checkpoint whose files match their manifest, and
//     both runs end with the weights, moments, state and logged losses of an
//     uninterrupted run, byte for byte.
//   - A full disk or an unwritable directory: the run stops with one line,
//     `train: checkpoint RUN/step-N not written: write RUN/.tmp-step-N-*/weights.safetensors:
//     no space left on device; RUN/latest still names RUN/step-M`; the
//     temporary directory is removed and `latest` is untouched. The writer
//     goes through a small file-system interface (`saveFS`) that the tests
//     replace to fail each operation of a save in turn with ENOSPC and EACCES
//     (`TestSaveDiskFull`; chmod does not stop root, who runs CI), and a run
//     whose second checkpoint hits a full disk resumes from the first to the
//     uninterrupted result (`TestRunDiskFull`).
//   - NaN or Inf: a non-finite training or validation loss stops the run
//     before the update, naming the step and the last checkpoint; and a save
//     refuses weights or AdamW moments that are not finite (an update can
//     diverge after a finite loss), naming the parameter and element, so no
//     checkpoint of diverged weights is ever written and the earlier ones
//     stay (`TestRunRefusals`, `TestRunNonFiniteWeights`,
//     `TestRunNaNValidation`).
//   - The data file changed: see "Resume" below.
//
// Loading verifies every file against the manifest before parsing it.
// Errors are one line and name the checkpoint: a missing file, a truncated
// file (its size and the manifest's), a corrupt one (SHA-256), no manifest
// (an interrupted save), a parameter missing, extra or of another shape
// (both shapes named), or a checkpoint of another run (task, model name,
// parameter count, schedule, AdamW constants, data seed or batch, each
// naming both values).
//
// # Resume: bit-for-bit the uninterrupted run
//
// Ctrl-C (or SIGTERM, or `--stop-after N`) lets the current step finish,
// saves a checkpoint and exits with status 0, printing the command that
// continues: `uhno train --resume DIR`. A resumed run takes every setting
// from the checkpoint's `state.json` and restores the weights, both
// moments, the step (hence the learning rate and AdamW's bias
// corrections), the best validation loss and the data order. Flags that
// would change the math (`--batch`, `--params`, `--set`, ...) or the
// validation set (`--val-pairs`) are refused. The run-control settings
// (`--log-every`, `--val-every`, `--ckpt-every`, `--keep`, `--threads`,
// `--graph`) change no weight, so they are restored too, unless the resume
// command line gives one: then it wins, is recorded from then on, and one
// line says so (`resume: --ckpt-every 50 overrides the run's 7`;
// `TestTrainResumeKeepsRunControl`). `--stop-after`, `--out`, `--data` and
// `--quiet` belong to one invocation and are not recorded.
//
// A run can be lengthened: `uhno train --resume DIR --steps M` with M larger
// than the run's steps continues from the checkpoint on the cosine of an
// M-step run (same peak and warm-up; `train.Config.Extend` lets the
// checkpoint's shorter schedule through) and says that the result is not
// bit-identical to a run started with `--steps M`, whose learning rate
// differed from the end of the warm-up on. A smaller M is refused
// (`TestTrainEndToEnd`).
//
// The data file is stamped when a fresh run indexes it: its size and a
// SHA-256 over its size and sampled blocks (the first and last MiB and 64
// blocks of 64 KiB between, the whole file up to 6 MiB; `data.FileStamp`).
// A full checksum would read the whole file at every start, resume and
// checkpoint (seconds per GB; PDEBench's 3D files are far larger), the
// sample takes milliseconds. It catches any change of size, a regenerated
// file (HDF5 writes timestamps into its headers, so even equal values
// differ in the first MiB) and damage in a sampled block; it misses a
// same-size change confined to bytes between the samples. A file uhno
// generated also gets a content digest (its settings and every
// trajectory's CRC-32C, `h5.File.ContentDigest`): a file whose bytes
// differ but whose digest is the run's is the same data generated again
// (on another machine, say, or a cluster node's own cache) and is accepted
// once its values are checked against the checksums (`TestFileStampContent`).
// A resume refuses a file that does not match, before reading anything
// from it, naming the file and both sizes or checksums
// (`TestTrainResumeRefusesChangedData`).
// During a run the open file is watched (`data.FileWatch`): an fstat after
// every batch (a truncation or a new modification time triggers a re-hash)
// and a re-hash before every checkpoint; a change stops the run before the
// update, naming the step, the file and the last checkpoint
// (`TestRunDataChanged`). A replacement by rename leaves the open file,
// and the running job, intact; the next resume refuses it. The batch stream is a pure function of its seed and the
// number of batches drawn (`data.Batcher`), so resuming moves past
// `batches_drawn` batches with `Batcher.Skip`, which replays only the
// shuffles (no file reads, no copies; `TestBatcherSkip` checks that the
// batches after a skip are those after drawing); nothing else in a step is
// random. The log is cut
// back to the checkpoint's step, so it reads as one run.
//
// On the CPU backend the result is the same bits as a run that was never
// stopped, for any thread count: `TestResumeBitIdentical` (tiny model, 2N
// steps straight against N steps, a new model with other initial weights on
// one thread, N more), `TestRealResume` (the same with internal/model's
// U-HNO), `TestInterruptSavesAndResumes` (a context cancelled inside a step)
// and `TestTrainEndToEnd` (`uhno train --stop-after 3`, then `--resume`)
// compare the final weights, moments, state and every logged loss byte for
// byte. By hand: `uhno train --task burgers` (6.7M parameters) killed with
// SIGINT at step 27 of 60 and resumed gave byte-identical
// `weights.safetensors`, `optimizer.safetensors` and log losses.
//
// # Data parallel in detail
//
// Semantics. `--batch` stays the global batch B, as the paper's
// per-task table reads, and must divide by the rank count N (else one line:
// "the batch of 3 ... does not split evenly over 2 ranks; use a multiple of
// 2"). Each rank's `data.Batcher` has `Shards: N, Shard: rank`: it walks the
// same seeded stream of B-pair batches as one process would and reads and
// returns only pairs `[rank*B/N, (rank+1)*B/N)` of each, so the ranks'
// shares concatenated are exactly the single-process batch
// (`TestBatcherShards`), skipping on resume moves by whole global batches,
// and `state.json` records B, not B/N: a checkpoint resumes under any N
// that divides B, one process included.
//
// Each step every rank runs forward and backward on its share, then one
// all-reduce (sum, float32, in place) of a buffer holding the flat gradient,
// the four loss terms, a stop flag, the share's row count and the SPAR
// contrast and keep-ratio sums per routing level; the gradient and the loss
// terms are divided by N. Every loss term (MSE, H1, CBC) is a mean over all
// elements of the batch, and nothing else in a step mixes samples (SPAR's
// top-k, its adaptive keep-ratio and the statistics are per sample; no
// normalisation layer has batch statistics; uhno has no gradient clipping),
// so with equal shares the mean of the ranks' mean-gradients is the
// gradient of the global mean, and AdamW (run identically on every rank)
// takes the single-process update up to float32 summation order. The
// non-finite-loss check uses the reduced loss, so all ranks stop together.
// The stop flag carries Ctrl-C: a rank that saw a signal sets it, and all
// ranks stop after the same step (the single-process loop still checks
// the context before a step). The time spent in the all-reduce, host copies
// included, is logged as `allreduce_share` in every train record and
// printed at the end.
//
// Who does what. Rank 0's initial weights and AdamW moments are
// broadcast after the model is built or resumed, after the ranks agree on
// parameter count, global batch, step and batches drawn (a rank that read
// another run directory stops with an error). Rank 0 alone creates the run
// directory and writes the log, the progress bar, the probes
// (`--dynamics-every`) and checkpoints; the other ranks print nothing but
// their errors, each prefixed `rank r of N`. Validation batches are shared
// out round-robin and their loss sums all-reduced in float64, so every rank
// knows the validation loss (best value, the non-finite check). Before every
// checkpoint the ranks compare an FNV-1a checksum of their weights (rank
// 0's broadcast, each compares, the mismatch flags all-reduced); a
// difference stops every rank with "the ranks' weights diverged: rank(s)
// [1] differ from rank 0" and no checkpoint. A checkpoint that rank 0 fails
// to write (or a data file that changed on any rank) stops all ranks
// through one more all-reduce of a failure flag. On first use rank 0
// generates the data while the others wait in the only collective without
// a time limit, a barrier (generation takes minutes; a rank that dies there
// is caught by the launcher).
//
// Faults. Measured with Open MPI 4.1.4 here: when one rank is killed
// with SIGKILL, mpirun sends the others SIGTERM and then SIGKILL, and the job
// ends about 2 s later with mpirun's report naming the dead rank; each
// survivor first prints one line of its own ("uhno: rank 0 of 2: train:
// interrupted (Ctrl-C, or the launcher ending the job because a rank
// stopped) ..."), since it is blocked in the all-reduce and cannot return
// an error. `latest` names the last complete checkpoint (the save protocol
// is unchanged), and `--resume` continues from it
// (`TestTrainMPIRankKilled`). Where a launcher does not end the job (srun
// without `--kill-on-bad-exit`, a rank that hangs instead of dying), the
// collective's time limit does: the survivors return "dist: rank 0 of 2:
// MPI_Allreduce got no answer from the other ranks within 5m0s: a rank died
// or hangs ..." with the step and the last checkpoint
// (`TestDataParallelFaults`, internal/dist's `TestMPI`). After a timeout
// the MPI thread may still sit in MPI, so no later call is made and MPI is
// not finalized; the process exits and the launcher ends the job. The
// limit must exceed rank 0's lone work between two collectives: a
// checkpoint write or a probe (about 1.5 s for a Burgers dynamics record,
// docs/PERFORMANCE.md).
//
// Tests. `dist.NewLocal` connects N in-process ranks (goroutines) through
// the same Comm interface, so `internal/train`'s tests run the real loop
// with 2 and 4 ranks, each starting from other weights: every rank ends
// with the same bits, within 1e-6 of one process's weights, with the AdamW
// moments within 1e-4 of their largest value (a gradient summed but not
// divided moves the moments by factors, while AdamW's update itself is
// nearly blind to the gradient's scale), and a 2-rank run stopped half-way
// resumes with 4 ranks and with one. In cmd/uhno, `TestTrainMPIMatchesOneProcess`
// runs the test binary under `mpirun -np 2 --oversubscribe` (and
// `--allow-run-as-root` as root) on a tiny Burgers run; with the division
// by N removed, both this test and the in-process one fail. The MPI tests
// skip when mpirun is absent, and fail instead when `CI=true`.
//
// # Failure model: what uhno promises
//
// This section says what a user can lose and what they cannot, and which test shows each promise. The details are in the sections it points to.
//
//	| promise | what can be lost | shown by |
//	|---|---|---|
//	| **A checkpoint is whole or absent.** `latest` always names a checkpoint whose files match their manifest, whatever kills the process and wherever (SIGKILL, the OOM killer, Ctrl-C, a crash inside a save). | The steps since the last checkpoint: at most `--ckpt-every`, which a resume keeps. | `TestInterruptedSave` (a save crashed at each of its stages), `TestTrainSurvivesSIGKILL` (cmd/uhno: `uhno train` killed at seeded random moments and inside saves, then resumed) |
//	| **Resume is the uninterrupted run.** On the CPU a resumed run ends with the same bits as a run that never stopped: weights, AdamW moments, state and every logged loss, for any thread count. | Nothing. | `TestResumeBitIdentical`, `TestRealResume`, `TestInterruptSavesAndResumes`, `TestTrainEndToEnd`, `TestTrainSurvivesSIGKILL`, `TestRunDiskFull` |
//	| **Resume keeps the run's settings.** The math-changing flags are refused. The run-control ones (`--ckpt-every`, `--log-every`, `--val-every`, `--keep`, `--threads`, `--graph`) are restored unless given again, and then one line says which value wins. | Nothing. | `TestTrainResumeKeepsRunControl` |
//	| **A full disk or an unwritable run directory** stops the run with one line naming the path; the previous checkpoint stays intact and `latest`; nothing half-written is left. | The steps since the last checkpoint. | `TestSaveDiskFull` (ENOSPC and EACCES at each file operation of a save), `TestRunDiskFull`, `TestSaveUnwritableDir` (skipped as root, who ignores permissions) |
//	| **No diverged weights are saved.** A NaN or Inf loss (training or validation) stops the run before the update, naming the step and the last checkpoint. A save refuses non-finite weights or moments. | The steps since the last checkpoint. | `TestRunRefusals`, `TestRunNonFiniteWeights`, `TestRunNaNValidation` |
//	| **The data a run trains on do not change under it.** A changed or truncated data file is refused at resume (before anything is read) and during a run (before the step's update), naming the file. | Nothing. | `TestTrainResumeRefusesChangedData`, `TestRunDataChanged`, `TestFileWatch` |
//	| **Generated data files are whole or absent**, and an interrupted generation resumes. | The trajectories not yet flushed. | `TestWriterKilled`, `TestWriterResume`, `TestRunInterruptedLeavesNoFile` |
//	| **Bad input is an error, never a crash.** Configurations, `--set`, checkpoints (safetensors, `state.json`, `manifest.json`, `latest`), PDEBench index files and HDF5 metadata give a one-line error naming the file, key or value. There is no panic, no hang, and no allocation larger than the file justifies. | Nothing. | the fuzz targets (`scripts/fuzz.sh`, run by `make test`; their corpora of past crashers run as plain tests) |
//	| **A data-parallel run does not hang on a dead rank.** mpirun ends the job about 2 s after a rank is killed; without such a launcher every collective gives up after `--dist-timeout` with a one-line error. Ranks whose weights diverge stop before a checkpoint. | The steps since the last checkpoint. | `TestTrainMPIRankKilled`, `TestDataParallelFaults`, internal/dist's `TestMPI` |
//	| **A run directory has one writer.** `train` (rank 0), `ablate` and `eval` hold an exclusive flock on `<dir>/.uhno.lock` from before their first write to their exit (internal/runlock). A second process on the same directory (a requeued job whose predecessor still runs, a command started twice) stops at once with one line naming the directory and the holder's pid and host, and changes nothing. The kernel drops the lock with the process, so a SIGKILLed run leaves no stale lock. `uhno predict` writes a single file atomically instead. | Nothing. | `TestRunDirectoryOneWriter` (two real processes, the holder frozen and then SIGKILLed, the run resumed), `TestAcquire` |
//	| **Concurrent code is race-free** where the race detector can see it: the CPU backend's parallel loops, datagen's workers, the input pipeline, evaluation, training and the commands. | Nothing. | `make race` (in `make test`) |
//
// What uhno does not promise:
//   - Power loss. Only process kills are tested. The fsync ordering is written for power loss, but it has not been tested there.
//   - Same-size edits between samples. A data-file change of the same size that touches only bytes between the sampled blocks is missed. The stamp is sampled, because a full hash would cost seconds per GB at every start, resume and checkpoint.
//   - Re-saving a step on non-Linux systems. There is no atomic swap, so a step saved twice has a short window in which `latest` names a directory that has moved aside. The next save repairs it.
//   - Bit-identical resume on the GPU. It has not been shown: no resume has run on a GPU. Under the emulator every kernel gives the same bits under every thread order. `TestGPUGraphMatchesDirect` shows a graph-replayed run equals a direct run bit for bit there, but cuFFT itself has not been checked.
//   - Regenerated data. HDF5 headers hold timestamps, so a regenerated file with identical values is refused at resume as changed.
//
// # Readers of outside input, fuzzed
//
// Every reader of a file a user or another program can write is a Go fuzz
// target (`scripts/fuzz.sh` finds them: every `FuzzXxx` in a
// `*_fuzz_test.go`): `FuzzConfigFile` (internal/config), `FuzzSetFlags` and
// `FuzzConfigFileFlag` (cmd/uhno), `FuzzCheckpointTensors` and
// `FuzzCheckpointState` (internal/train: the safetensors files, `latest`,
// `state.json`, `manifest.json`), `FuzzPDEBenchIndex` (internal/datagen),
// `FuzzOpenMetadata` (internal/data/h5) and `FuzzOpenShapes` (internal/data:
// uhno's and PDEBench's 1D, 2D and 3D layouts). Each is seeded from real
// files the code writes. On a loaded machine Go's fuzz engine can spend the
// whole `-fuzztime` measuring the seed corpus' coverage and then fail with
// "context deadline exceeded" without having fuzzed; `scripts/fuzz.sh`
// runs such a target once more with twice the time, and still fails on any
// run that wrote a failing input. A fuzz input may only produce an error: no panic,
// no hang, and the HDF5 targets fail a reader that allocates more than 16
// times the file's size plus 1 MiB. HDF5 is fuzzed in its metadata (shapes,
// types, attributes, names, through files libhdf5 itself writes), not in its
// bytes: libhdf5 parses those, is not hardened against arbitrary input, and
// Go cannot recover from its faults. The fuzzers found heap corruption
// (gonum reading bookkeeping datasets in the file's element type into a
// slice of another), terabyte allocations from declared shapes, a
// `state.json` accepted with miscased keys (Go's JSON matches keys without
// case) and an empty schedule, and multi-line error messages; the
// crashers' inputs are committed under each package's testdata/fuzz/ and
// run as plain tests. The checks added are bounds: a trajectory count of at
// most 2^24 and 2^30 values per field and trajectory in a data file;
// configuration sizes (grid axes at most 65,536, counts at most 2^24, a
// frame, a trajectory, a batch's activations at most 2^40 values, seeds at
// most 2^53-1 so JSON round-trips them); safetensors tensors F32, unique,
// with positive dimensions whose product is the data length; a state whose
// step, batches drawn and best step fit its schedule. A resumed or
// evaluated checkpoint's configuration is validated like one given on the
// command line, and the PDEBench index is checked value by value before use.
package train
