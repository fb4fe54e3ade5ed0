//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>

// The capture API through static wrappers: cuda.h names several of these
// functions by macros (cuStreamBeginCapture is cuStreamBeginCapture_v2),
// which cgo cannot call. gorgonia.org/cu v0.9.6 has no capture API.
static CUresult uhno_capture_begin(CUstream s) {
	return cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED);
}
static CUresult uhno_capture_end(CUstream s, CUgraph *g) { return cuStreamEndCapture(s, g); }
static CUresult uhno_graph_instantiate(CUgraphExec *e, CUgraph g) { return cuGraphInstantiateWithFlags(e, g, 0); }
static CUresult uhno_graph_launch(CUgraphExec e, CUstream s) { return cuGraphLaunch(e, s); }
static CUresult uhno_graph_exec_destroy(CUgraphExec e) { return cuGraphExecDestroy(e); }
static CUresult uhno_graph_destroy(CUgraph g) { return cuGraphDestroy(g); }

static const char *uhno_graph_error_name(CUresult r) {
	const char *s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL) return "unknown CUresult";
	return s;
}
*/
import "C"

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
	b     *Backend
	graph C.CUgraph
	exec  C.CUgraphExec
}

// cuResult turns a driver result into an error naming the call.
func cuResult(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return fmt.Errorf("cuda: %s: %s", call, C.GoString(C.uhno_graph_error_name(r)))
}

// Capture records the work step enqueues on the backend's stream into a
// CUDA graph and instantiates it; nothing step enqueues runs during
// Capture. The capture mode is relaxed: Go may move the goroutine to
// another OS thread between driver calls, which the global and
// thread-local modes forbid (they tie the capture to the calling thread
// and reject allocator calls). step must only enqueue work (see Graph); a
// step that synchronises, panics, or leaves the capture invalid makes
// Capture return an error after ending the capture, so the stream is
// usable again.
func (b *Backend) Capture(step func()) (g *Graph, err error) {
	defer b.enter()()
	s := streamHandle(b.stream)
	if err := cuResult("cuStreamBeginCapture", C.uhno_capture_begin(s)); err != nil {
		return nil, err
	}
	capturing := true
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if capturing {
			var graph C.CUgraph
			C.uhno_capture_end(s, &graph) // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED is expected here
			if graph != nil {
				C.uhno_graph_destroy(graph)
			}
		}
		g, err = nil, fmt.Errorf("cuda: capture: the step panicked: %v", p)
	}()
	step()
	b.bind()
	var graph C.CUgraph
	capturing = false
	if err := cuResult("cuStreamEndCapture", C.uhno_capture_end(s, &graph)); err != nil {
		if graph != nil {
			C.uhno_graph_destroy(graph)
		}
		return nil, err
	}
	var exec C.CUgraphExec
	if err := cuResult("cuGraphInstantiateWithFlags", C.uhno_graph_instantiate(&exec, graph)); err != nil {
		C.uhno_graph_destroy(graph)
		return nil, err
	}
	return &Graph{b: b, graph: graph, exec: exec}, nil
}

// Launch replays the graph on the backend's stream (cuGraphLaunch). It
// returns once the replay is enqueued.
func (g *Graph) Launch() error {
	if g.exec == nil {
		return fmt.Errorf("cuda: Launch of a destroyed graph")
	}
	defer g.b.enter()()
	return cuResult("cuGraphLaunch", C.uhno_graph_launch(g.exec, streamHandle(g.b.stream)))
}

// Destroy releases the executable graph and the graph. Replays already
// enqueued complete normally (the driver defers the release). Destroying
// twice is a no-op.
func (g *Graph) Destroy() error {
	if g.exec == nil && g.graph == nil {
		return nil
	}
	defer g.b.enter()()
	var err error
	if g.exec != nil {
		err = cuResult("cuGraphExecDestroy", C.uhno_graph_exec_destroy(g.exec))
		g.exec = nil
	}
	if g.graph != nil {
		if gerr := cuResult("cuGraphDestroy", C.uhno_graph_destroy(g.graph)); err == nil {
			err = gerr
		}
		g.graph = nil
	}
	return err
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
