// Package bench measures what one model costs: parameters, FLOPs per
// sample counted operation by operation, training and inference time per
// step and per sample, and peak memory. It is the engine of `uhno bench`
// (issue 6) and of the paper's Tables cost and cost-spar.
//
// Two parts, kept apart so that counting never slows what is timed:
//
//   - Counter is a tensor.Backend decorator: it forwards every call to the
//     backend it wraps, unchanged, and adds the call's FLOPs, computed from
//     the shapes by a fixed formula per operation (flops.go), to a tally
//     keyed by phase (forward, loss, backward, optimizer, inference) and
//     operation name.
//   - Run drives a model: one counted training step and one counted
//     inference forward through a Counter, then warm-up and timed repeats
//     on the plain backend, and reports min and median times, FLOPs,
//     achieved GFLOP/s and the memory high-water mark.
//   - With Options.OpTimes (`uhno bench --op-times N`, CPU only), Run then
//     times N more training steps through a Counter with SetTiming on:
//     each call's wall-clock time is added to its tally (the methods
//     defer the function add returns), which gives where a step goes,
//     operation by operation (WriteOpTimes). Kept out of the timed
//     repeats, whose figures stay free of the two clock reads per call.
//
// The backend is a parameter everywhere, so the CUDA backend plugs in
// without changes here; it reports device memory by implementing
// MemoryReporter, otherwise the process's resident-set high-water mark is
// used.
//
// # Memory plan (Planner, uhno train --dry-run)
//
// `--dry-run` prints what one training step holds at its peak, by part,
// without allocating it: the model is built on `bench.Planner`, a
// `tensor.Backend` whose storage is a length and whose operations do
// nothing, and one step (forward, Eq. loss, backward, AdamW) is recorded
// on it. Because the tape frees nothing before `Reset`, everything a step
// creates is live at its end, so the planner's sum is the step's
// high-water mark of uhno's own buffers: parameters and gradients (flat,
// allocated with the model), the two AdamW moments, the batch, and the
// tape's tensors, which `Tape.SetAllocObserver` files by grid (forward:
// what is kept for the backward; backward: the gradients). A model built on
// a planner skips drawing its initial values (`tensor.ShapeOnly`), so the
// cfd3d plan (845M parameters) takes 0.1 s instead of 28 s and 6.6 GB.
// `TestPlanStepMatchesRealStep` checks the planner's peak against a real
// step's allocations on the CPU backend, byte for byte, for U-HNO (Full and
// F) and FNO in 1D and 2D; a planted bug (one observer call dropped) fails
// it.
//
// Not counted: a backend's workspace (the CPU's packed GEMM operands, FFT
// scratch; cuFFT's work areas, the CUDA context and the caching
// allocator's rounding on a GPU: add a few hundred MiB there). The bf16
// column is the layout of autocast with float32 master weights: every tape
// tensor in 2 bytes, the weights, gradients and moments in 4. uhno does not
// store activations in bf16 yet (internal/cuda, "bf16 autocast"), so on uhno today
// that column is a target, not a measurement.
//
// What it shows for cfd3d at the paper's settings (128^3, L 3, C0 24,
// K0 12): 845M parameters, 1.9 GiB of them in the bottleneck's spectral
// weights (C_3 = 192, 12^3 modes in 4 corners, complex). Weights,
// gradients and moments alone are 12.6 GiB (13.5 GB) in float32, more than
// the paper's whole 12.5 GB peak per GPU (Tab. 3d-config) at batch 1 with
// bf16. At batch 1 the tape adds 31 GiB in float32 (15.7 GiB in bf16): a
// peak near 44 GiB float32 / 28 GiB bf16 per rank. An A100 80GB holds it;
// 12.5 GB cannot hold it: the paper's figure fits only a smaller model
// than its own spectral weight (C_l x C_l x K0 per axis, extended to three
// axes as App. "Fourier Branch Implementation" does for two) gives, and
// we report that rather than shrink the model to match. This machine's
// 23.5 GiB trains at most 88^3 in float32 (112^3 with a bf16 tape).
//
// # What uhno bench measures
//
// `uhno bench` (internal/bench, cmd/uhno/bench.go) measures what a model
// costs at a task's shape: parameters, FLOPs per sample, training and
// inference time, peak memory. Presets: `burgers` (N = 128, batch 32),
// `cost-ns2d` (Table cost: NS-2D 128x128, batch 16; U-HNO and FNO) and
// `cost-spar` (Table cost-spar: Full against mode F at both shapes, with
// the ratio Full/F). Models are built by `buildModel`, the code of
// `uhno train`, so `--params 0.62M` gives the same widths and the same
// matched FNO; the input has history x inputs channels (NS-2D: 10). No data
// are read: the batch is random (seed 1).
//
// FLOPs are counted per operation, from shapes. `bench.Counter` is a
// `tensor.Backend` decorator: it forwards every call unchanged (a test
// checks bit-identical losses, predictions and weights over three training
// steps) and adds the call's FLOPs under a phase (forward, loss, backward,
// optimizer, inference) and the method's name; the JSON report lists every
// (phase, op) with calls and FLOPs. The formulas count the operation as
// `tensor.Backend` defines it, not what a backend's kernels happen to do, so
// CPU and GPU figures compare:
//
//   - linear maps: 2 FLOPs per multiply-add. Pointwise 2 B Cout Cin N (+ B Cout
//     N for the bias), ConvDown 2 B Cout Cin 3^d N_out, DepthwiseConv
//     2 B C 3^d N (+ B C N for the bias), Upsample2x 4 per output
//     point of each of its d separable passes, a Gaussian pass 2 (2r+1) per
//     point with r = `tensor.GaussianRadius` of the current sigma;
//   - SpectralConv as an FFT implementation does it: 5 N log2 N per real
//     transform of a field of N points (rfftn of each input channel, irfftn of
//     each output channel) plus 8 B Cin Cout M for the complex mixing of the M
//     kept modes (Eq. mode-cap). 5 N log2 N is the classic complex-FFT count;
//     an optimal real FFT needs about half, and counters such as fvcore count
//     no FFT at all, so the FFT part is reported apart (`fft_flops`, and
//     `train_step_fft`, `inference_fft`) and another convention is a rescale.
//     The CPU backend's truncated DFTs (internal/cpu) do different
//     arithmetic;
//   - elementwise: 1 per +, -, *, /, and 1 per special function (exp, erf,
//     sqrt); comparisons and copies 0 (TopKMask, the top-k of SPARKeep,
//     ChannelCopy unless it accumulates); AdamW 14 per parameter;
//   - backward methods count only the gradients they are asked for, and what
//     the backend recomputes (SpectralConvBackward transforms x again for dW;
//     GaussianConvBackward's log-sigma gradient takes 2d-1 more passes).
//
// The per-element constants and each formula are in internal/bench/flops.go
// and counter.go, and tests check them on small shapes against sums done by
// hand, and a whole FNO forward against its layer-by-layer sum. The counts
// come from one counting pass before the timing: an inference forward, then
// one training step, on the weights as built. Inference goes first because
// the Gaussian radii ceil(3 sigma) follow the learned sigmas, and the
// paper's initial sigma = 1 sits on a radius boundary that the first AdamW
// step crosses; counted on the same weights, the training forward equals
// the inference forward op by op (tested). FLOPs/sample fwd is the
// inference forward over B; train FLOPs/sample is forward + loss + backward
// + AdamW over B.
//
// What is timed. After the counting pass, `--warmup` untimed then
// `--repeats` timed iterations on the plain backend, each (a) one training
// step as `train.Run` takes it: upload the batch, forward, the loss of Eq.
// loss, backward, AdamW, clear the gradients, read the loss back; (b) one
// inference forward on the same tape with recording off, reading the
// prediction back. The read-backs are what makes a GPU step complete. The
// report gives min and median per step and per sample (/B) and the achieved
// GFLOP/s (FLOPs over the median time). The model trains on the fixed batch
// while it is timed, so sigmas, and with them a radius, may move: the
// counted work is that of the weights as built.
//
// Memory. A backend that implements `bench.MemoryReporter`
// (`PeakBytes() int64`; the CUDA backend reports its caching allocator's
// high-water mark) is asked for its peak; each row runs on a backend of its
// own (`newBackend`), so that peak covers one model. Otherwise the runner
// reads VmHWM, the resident-set high-water mark of /proc/self/status, which
// is process-wide: it includes the Go runtime, the binary, the model and
// its AdamW moments and not-yet-collected garbage. Before the warm-up the
// runner collects garbage, returns free memory to the OS
// (`debug.FreeOSMemory`) and resets VmHWM (writing 5 to
// /proc/self/clear_refs, Linux >= 4.0); the JSON also records the resident
// set at that point (`baseline_bytes`), so the steps' own working set is
// peak - baseline.
package bench
