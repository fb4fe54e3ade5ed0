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
//
// The backend is a parameter everywhere, so the CUDA backend plugs in
// without changes here; it reports device memory by implementing
// MemoryReporter, otherwise the process's resident-set high-water mark is
// used.
package bench
