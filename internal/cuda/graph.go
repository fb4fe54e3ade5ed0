//go:build cuda || cudaemu

package cuda

import (
	"fmt"

	"uhno/internal/tensor"
)

// Graph is a captured, instantiated CUDA graph: a recorded sequence of
// kernel launches and copies on the backend's stream that Launch replays
// with one driver call.
//
// # What a captured step requires
//
// Capture records the work a step enqueues, not the Go code that enqueued
// it: every replay runs exactly the recorded launches with exactly the
// recorded arguments on exactly the recorded device addresses. A step is
// therefore capturable only when
//
//   - its shapes are fixed: grids, loop bounds, chunk plans and FFT plans
//     are baked in at capture time, so a batch of another size (the last,
//     short batch of an epoch) needs its own graph or direct execution;
//   - the allocator returns the same blocks: the caching allocator
//     (internal/cuda/alloc) serves a request from the free list of its size
//     class, so after one direct warm-up step (which fills the free lists
//     and creates every per-op scratch buffer and plan) a step that makes
//     the same Alloc/Free sequence gets the same addresses while being
//     captured. A cuMemAlloc during capture (a cold cache or a growing
//     scratch buffer) is allowed in relaxed mode but its block then belongs
//     to the graph's addresses and must not be freed while the graph lives;
//     tensors the step keeps beyond itself (parameters, optimiser moments,
//     inputs, outputs) must be allocated before capture and never freed
//     while the graph lives;
//   - the step never waits for the device: Download, Upload (which waits
//     for its copy), sync, or any host read of device data is illegal on a
//     capturing stream; the driver invalidates the capture and Capture
//     returns an error. Host inputs of each step (the next batch) are
//     copied outside the graph into the fixed input tensors before Launch,
//     or, to keep the copy inside the graph, enqueued by the step as an
//     asynchronous copy from a fixed page-locked (pinned) host buffer that
//     the host refills before each Launch; operations whose interface takes
//     host data (TopKMask's k) are not capturable;
//   - per-step scalars are read from device memory: kernel arguments are
//     copied into the graph at capture time, so a value that changes from
//     step to step (the scheduled learning rate, AdamW's step count t and
//     its bias corrections, a loss scale) must live in a device buffer that
//     the kernel reads and that is updated before each Launch (by an upload
//     outside the graph or by a kernel inside it), not be passed as a
//     float32 or int argument. SPARKeep qualifies: its k is computed and
//     consumed on the device.
//
// Launch is asynchronous like every operation: the replay is ordered on
// the backend's stream, and errors of the replayed kernels surface at the
// next synchronising call (Download).
type Graph struct {
	g driverGraph // nil once destroyed
}

// Capture records the work step enqueues on the backend's stream into a
// graph (drv.CaptureBegin, step, drv.CaptureEnd) and instantiates it;
// nothing step enqueues runs during Capture. step must only enqueue work
// (see Graph); a step that synchronises, panics, or leaves the capture
// invalid makes Capture return an error after ending the capture, so the
// stream is usable again.
func (b *Backend) Capture(step func()) (g *Graph, err error) {
	if err := b.drv.CaptureBegin(); err != nil {
		return nil, fmt.Errorf("cuda: capture: %w", err)
	}
	capturing := true
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if capturing {
			// The driver reports the capture as invalidated here, which
			// is expected; only the ended capture matters.
			if dg, _ := b.drv.CaptureEnd(); dg != nil {
				dg.Destroy()
			}
		}
		g, err = nil, fmt.Errorf("cuda: capture: the step panicked: %v", p)
	}()
	step()
	capturing = false
	dg, err := b.drv.CaptureEnd()
	if err != nil {
		return nil, fmt.Errorf("cuda: capture: %w", err)
	}
	return &Graph{g: dg}, nil
}

// Launch replays the graph on the backend's stream. It returns once the
// replay is enqueued.
func (g *Graph) Launch() error {
	if g.g == nil {
		return fmt.Errorf("cuda: Launch of a destroyed graph")
	}
	if err := g.g.Launch(); err != nil {
		return fmt.Errorf("cuda: graph launch: %w", err)
	}
	return nil
}

// Destroy releases the graph. Replays already enqueued complete normally
// (the driver defers the release). Destroying twice is a no-op.
func (g *Graph) Destroy() error {
	if g.g == nil {
		return nil
	}
	dg := g.g
	g.g = nil
	if err := dg.Destroy(); err != nil {
		return fmt.Errorf("cuda: graph destroy: %w", err)
	}
	return nil
}

var _ tensor.StepCapturer = (*Backend)(nil)

// CaptureStep implements tensor.StepCapturer with Capture.
func (b *Backend) CaptureStep(step func()) (tensor.StepReplay, error) {
	g, err := b.Capture(step)
	if err != nil {
		return nil, err
	}
	return g, nil
}
