//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
#include <stdint.h>

// uhno_launch calls cuLaunchKernel with n 8-byte parameter slots held in C
// memory (args), so no Go pointer is passed to C.
static CUresult uhno_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shared, CUstream s,
		uint64_t *args, void **argp, int n) {
	for (int i = 0; i < n; i++) argp[i] = &args[i];
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, s, argp, NULL);
}

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

static const char *uhno_error_name(CUresult r) {
	const char *s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || s == NULL) return "unknown CUresult";
	return s;
}
*/
import "C"

import (
	"embed"
	"fmt"
	"io/fs"
	"runtime"
	"sort"
	"strings"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"uhno/internal/cuda/cufft"
	"uhno/internal/cuda/nccl"
	"uhno/internal/dist"
)

//go:embed ptx/*.ptx
var ptxFiles embed.FS

// maxArgs bounds a kernel's parameter count (the C memory of the launch
// slots).
const maxArgs = 32

// realDriver is the driver on an NVIDIA GPU: one context, one
// non-blocking stream, the embedded PTX modules JIT-compiled by the CUDA
// driver, and cuFFT loaded at run time. It is not safe for concurrent use
// (the launch slots are shared), like the Backend that owns it.
//
// The CUDA driver API works in the context current on the calling OS
// thread, and Go may move a goroutine to another thread between two cgo
// calls. Every method that calls the driver therefore locks the goroutine
// to its thread and makes the context current for the duration of the
// call (enter); locks nest, so a caller that holds its thread for longer
// (cmd/uhno's newBackend) is unaffected.
//
// Errors of the methods name the driver call that failed
// ("cuMemAlloc(512 bytes): CUDA_ERROR_OUT_OF_MEMORY"); the backend adds the
// operation. openDriver's errors are complete ("cuda: ..."): New returns
// them as they are.
type realDriver struct {
	dev    cu.Device
	ctx    cu.CUContext
	stream cu.Stream
	fns    map[string]cu.Function
	fft    *cufft.Lib
	plans  map[fftPlan]realPlan

	// nccl and comm are the data-parallel group's NCCL communicator
	// (JoinRanks), commTimeout the bound on one all-reduce.
	nccl        *nccl.Lib
	comm        nccl.Comm
	commTimeout time.Duration

	// args and argp are C memory for kernel parameters (maxArgs slots):
	// the values and the pointers to them that cuLaunchKernel reads.
	args *C.uint64_t
	argp *unsafe.Pointer
}

// realPlan is a live cuFFT plan and its direction (which exec call runs it).
type realPlan struct {
	h   cufft.Handle
	typ cufft.Type
}

var _ driver = (*realDriver)(nil)

// openDriver opens GPU `ordinal`: its context and stream, every embedded
// PTX module, and cuFFT. Errors name what failed; what was created before
// the failure is released.
func openDriver(ordinal int) (driver, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: counting devices: %w", err)
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d requested, %d present", ordinal, n)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev := cu.Device(ordinal)
	ctx, err := dev.MakeContext(cu.SchedAuto) // current on this thread
	if err != nil {
		return nil, fmt.Errorf("cuda: context on device %d: %w", ordinal, err)
	}
	d := &realDriver{dev: dev, ctx: ctx, fns: map[string]cu.Function{}, plans: map[fftPlan]realPlan{}}
	if err := d.open(); err != nil {
		// Destroying the context releases the stream and the modules.
		d.ctx.Destroy()
		return nil, err
	}
	d.args = (*C.uint64_t)(C.malloc(C.size_t(8 * maxArgs)))
	d.argp = (*unsafe.Pointer)(C.malloc(C.size_t(unsafe.Sizeof(uintptr(0)) * maxArgs)))
	return d, nil
}

// open creates the stream and loads the kernels and cuFFT, with d's
// context current on the calling (locked) thread.
func (d *realDriver) open() error {
	var err error
	if d.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return fmt.Errorf("cuda: stream: %w", err)
	}
	if err := d.loadModules(); err != nil {
		return err
	}
	if d.fft, err = cufft.Load(); err != nil {
		return err
	}
	return nil
}

// loadModules loads every embedded PTX file and indexes its kernels by
// name (kernel names are unique across files: each is prefixed with its
// operation).
func (d *realDriver) loadModules() error {
	files, err := fs.Glob(ptxFiles, "ptx/*.ptx")
	if err != nil || len(files) == 0 {
		return fmt.Errorf("cuda: no embedded PTX (run make kernels)")
	}
	sort.Strings(files)
	for _, f := range files {
		src, err := ptxFiles.ReadFile(f)
		if err != nil {
			return fmt.Errorf("cuda: %s: %w", f, err)
		}
		mod, err := cu.LoadData(string(src))
		if err != nil {
			return fmt.Errorf("cuda: loading %s: %w", f, err)
		}
		for _, name := range ptxEntries(string(src)) {
			fn, err := mod.Function(name)
			if err != nil {
				return fmt.Errorf("cuda: %s: kernel %s: %w", f, name, err)
			}
			if _, dup := d.fns[name]; dup {
				return fmt.Errorf("cuda: kernel %s defined twice (%s)", name, f)
			}
			d.fns[name] = fn
		}
	}
	return nil
}

// ptxEntries lists the .entry names of a PTX module (extern "C" kernels,
// so the names are the C names).
func ptxEntries(src string) []string {
	var names []string
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, ".visible .entry "); ok {
			if i := strings.IndexByte(rest, '('); i > 0 {
				names = append(names, rest[:i])
			}
		}
	}
	return names
}

// enter locks the calling goroutine to its OS thread and makes d's
// context current there; the caller defers the returned function, which
// unlocks. On error the thread is already unlocked.
func (d *realDriver) enter() (leave func(), err error) {
	runtime.LockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("cuCtxSetCurrent: %w", err)
	}
	return runtime.UnlockOSThread, nil
}

// cuResult turns a driver result into an error naming the call (nil on
// success).
func cuResult(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	return fmt.Errorf("%s: %s", call, C.GoString(C.uhno_error_name(r)))
}

// fnHandle and streamHandle extract the driver handles from gorgonia's
// wrappers, single-field structs holding the C handle (gorgonia's own C
// types are not visible outside its package).
func fnHandle(f cu.Function) C.CUfunction { return *(*C.CUfunction)(unsafe.Pointer(&f)) }
func streamHandle(s cu.Stream) C.CUstream { return *(*C.CUstream)(unsafe.Pointer(&s)) }

// Describe is the GPU's name and memory ("NVIDIA H100 80GB HBM3, 79.1 GiB").
// Device queries need no context, so it does not enter.
func (d *realDriver) Describe() string {
	name, _ := d.dev.Name()
	mem, _ := d.dev.TotalMem()
	return fmt.Sprintf("%s, %.1f GiB", name, float64(mem)/(1<<30))
}

// Malloc is cuMemAlloc.
func (d *realDriver) Malloc(bytes int64) (uintptr, error) {
	leave, err := d.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	p, err := cu.MemAlloc(bytes)
	if err != nil {
		return 0, fmt.Errorf("cuMemAlloc(%d bytes): %w", bytes, err)
	}
	return uintptr(p), nil
}

// MemInfo is cuMemGetInfo.
func (d *realDriver) MemInfo() (free, total int64, err error) {
	leave, err := d.enter()
	if err != nil {
		return 0, 0, err
	}
	defer leave()
	free, total, err = cu.MemInfo()
	if err != nil {
		return 0, 0, fmt.Errorf("cuMemGetInfo: %w", err)
	}
	return free, total, nil
}

// Free is cuMemFree.
func (d *realDriver) Free(p uintptr) error {
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemFree(cu.DevicePtr(p)); err != nil {
		return fmt.Errorf("cuMemFree(0x%x): %w", p, err)
	}
	return nil
}

// ExactSizes is false: the caching allocator's size classes bound the
// number of distinct block sizes, which keeps cuMemAlloc calls rare.
func (d *realDriver) ExactSizes() bool { return false }

// HtoD enqueues the copy and waits for the stream, so the host memory may
// be reused once it returns (it is pageable: the driver stages it anyway).
func (d *realDriver) HtoD(dst uintptr, src unsafe.Pointer, bytes int64) error {
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, bytes, d.stream); err != nil {
		return fmt.Errorf("cuMemcpyHtoDAsync(%d bytes): %w", bytes, err)
	}
	if err := d.stream.Synchronize(); err != nil {
		return fmt.Errorf("cuStreamSynchronize: %w", err)
	}
	return nil
}

// DtoH enqueues the copy after the stream's work and waits for it.
func (d *realDriver) DtoH(dst unsafe.Pointer, src uintptr, bytes int64) error {
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), bytes, d.stream); err != nil {
		return fmt.Errorf("cuMemcpyDtoHAsync(%d bytes): %w", bytes, err)
	}
	if err := d.stream.Synchronize(); err != nil {
		return fmt.Errorf("cuStreamSynchronize: %w", err)
	}
	return nil
}

// DtoD enqueues a device-to-device copy.
func (d *realDriver) DtoD(dst, src uintptr, bytes int64) error {
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), bytes, d.stream); err != nil {
		return fmt.Errorf("cuMemcpyDtoDAsync(%d bytes): %w", bytes, err)
	}
	return nil
}

// MemsetD32 enqueues setting n 32-bit words at dst to v.
func (d *realDriver) MemsetD32(dst uintptr, v uint32, n int64) error {
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := cu.MemsetD32Async(cu.DevicePtr(dst), uint(v), n, d.stream); err != nil {
		return fmt.Errorf("cuMemsetD32Async(%d words): %w", n, err)
	}
	return nil
}

// HasKernel reports whether an embedded PTX module defines the kernel.
func (d *realDriver) HasKernel(name string) bool {
	_, ok := d.fns[name]
	return ok
}

// Launch copies the parameter slots into C memory and calls
// cuLaunchKernel on the stream (the driver copies the parameters before
// it returns, so the slots are reused by the next launch).
func (d *realDriver) Launch(name string, g Geometry, args []uint64, _ string) error {
	fn, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("kernel %s is not in the embedded PTX", name)
	}
	if len(args) > maxArgs {
		return fmt.Errorf("kernel %s: %d parameters, at most %d", name, len(args), maxArgs)
	}
	copy(unsafe.Slice((*uint64)(unsafe.Pointer(d.args)), maxArgs), args)
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cuResult("cuLaunchKernel", C.uhno_launch(fnHandle(fn),
		C.uint(g.Grid.X), C.uint(g.Grid.Y), C.uint(g.Grid.Z),
		C.uint(g.Block.X), C.uint(g.Block.Y), C.uint(g.Block.Z), C.uint(g.Shared),
		streamHandle(d.stream), d.args, d.argp, C.int(len(args))))
}

// Sync is cuStreamSynchronize.
func (d *realDriver) Sync() error {
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if err := d.stream.Synchronize(); err != nil {
		return fmt.Errorf("cuStreamSynchronize: %w", err)
	}
	return nil
}

// CaptureBegin starts capturing the stream in relaxed mode: Go may move
// the goroutine to another OS thread between driver calls, which the
// global and thread-local modes forbid (they tie the capture to the
// calling thread and reject allocator calls).
func (d *realDriver) CaptureBegin() error {
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cuResult("cuStreamBeginCapture", C.uhno_capture_begin(streamHandle(d.stream)))
}

// CaptureEnd ends the capture and instantiates the graph. When the
// capture was invalidated (a synchronising call during it) the driver
// still ends it, so the stream is usable again, and the error says why.
func (d *realDriver) CaptureEnd() (driverGraph, error) {
	leave, err := d.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	var graph C.CUgraph
	if err := cuResult("cuStreamEndCapture", C.uhno_capture_end(streamHandle(d.stream), &graph)); err != nil {
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
	return &realGraph{d: d, graph: graph, exec: exec}, nil
}

// realGraph is a captured graph and its executable instance.
type realGraph struct {
	d     *realDriver
	graph C.CUgraph
	exec  C.CUgraphExec
}

// Launch is cuGraphLaunch on the driver's stream.
func (g *realGraph) Launch() error {
	if g.exec == nil {
		return fmt.Errorf("cuGraphLaunch: the graph was destroyed")
	}
	leave, err := g.d.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cuResult("cuGraphLaunch", C.uhno_graph_launch(g.exec, streamHandle(g.d.stream)))
}

// Destroy releases the executable graph and the graph; replays already
// enqueued complete normally (the driver defers the release). A second
// call is a no-op.
func (g *realGraph) Destroy() error {
	if g.exec == nil && g.graph == nil {
		return nil
	}
	leave, err := g.d.enter()
	if err != nil {
		return err
	}
	defer leave()
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

// FFTPlan creates a cuFFT plan (cufftPlanMany, packed layouts) and binds
// it to the driver's stream. cuFFT works in the context current on the
// calling thread. The plan's handle is its fftPlan.
func (d *realDriver) FFTPlan(n []int, batch int, typ cufft.Type) (fftPlan, error) {
	if typ != cufft.R2C && typ != cufft.C2R {
		return 0, fmt.Errorf("cufft: plan of type 0x%x: only R2C and C2R are used", int(typ))
	}
	leave, err := d.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	h, err := d.fft.PlanMany(n, batch, typ)
	if err != nil {
		return 0, err
	}
	if err := d.fft.SetStream(h, uintptr(unsafe.Pointer(streamHandle(d.stream)))); err != nil {
		d.fft.Destroy(h)
		return 0, err
	}
	p := fftPlan(h)
	d.plans[p] = realPlan{h: h, typ: typ}
	return p, nil
}

// FFTExec runs plan p from in to out: cufftExecR2C or cufftExecC2R by the
// plan's type.
func (d *realDriver) FFTExec(p fftPlan, in, out uintptr) error {
	pl, ok := d.plans[p]
	if !ok {
		return fmt.Errorf("cufft: exec of plan %d, which is not live", p)
	}
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if pl.typ == cufft.R2C {
		return d.fft.ExecR2C(pl.h, in, out)
	}
	return d.fft.ExecC2R(pl.h, in, out)
}

// FFTDestroy is cufftDestroy.
func (d *realDriver) FFTDestroy(p fftPlan) error {
	pl, ok := d.plans[p]
	if !ok {
		return fmt.Errorf("cufft: destroy of plan %d, which is not live", p)
	}
	delete(d.plans, p)
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	return d.fft.Destroy(pl.h)
}

// Close destroys any plan still live, the stream and the context, and
// frees the launch slots. A second call is a no-op.
func (d *realDriver) Close() error {
	if d.args == nil {
		return nil
	}
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if d.nccl != nil {
		if nerr := d.nccl.Destroy(d.comm); err == nil {
			err = nerr
		}
		d.nccl = nil
	}
	for p, pl := range d.plans {
		if derr := d.fft.Destroy(pl.h); err == nil {
			err = derr
		}
		delete(d.plans, p)
	}
	if serr := d.stream.Destroy(); err == nil && serr != nil {
		err = fmt.Errorf("cuStreamDestroy: %w", serr)
	}
	if cerr := d.ctx.Destroy(); err == nil && cerr != nil {
		err = fmt.Errorf("cuCtxDestroy: %w", cerr)
	}
	C.free(unsafe.Pointer(d.args))
	C.free(unsafe.Pointer(d.argp))
	d.args, d.argp = nil, nil
	return err
}

// JoinRanks implements driver: it loads NCCL, rank 0 makes the
// communicator's unique id, c broadcasts it, and every rank joins with
// this driver's context current (one GPU a rank: the launcher's local
// rank picks the device, cmd/uhno).
func (d *realDriver) JoinRanks(c dist.Comm, timeout time.Duration) error {
	// Every rank must load NCCL before any joins: a rank that cannot would
	// leave the others waiting in ncclCommInitRank forever.
	lib, err := nccl.Load()
	missing := []float32{0}
	if err != nil {
		missing[0] = 1
	}
	if aerr := c.AllReduceSum(missing); aerr != nil {
		return fmt.Errorf("agreeing on NCCL: %w", aerr)
	}
	if err != nil {
		return err
	}
	if missing[0] > 0 {
		return fmt.Errorf("NCCL could not be loaded on %d of the %d ranks", int(missing[0]), c.Size())
	}
	var id nccl.ID
	if c.Rank() == 0 {
		if id, err = lib.UniqueID(); err != nil {
			return err
		}
	}
	if err := c.Broadcast(id[:], 0); err != nil {
		return fmt.Errorf("broadcasting the NCCL id: %w", err)
	}
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	comm, err := lib.CommInitRank(id, c.Size(), c.Rank())
	if err != nil {
		return err
	}
	d.nccl, d.comm, d.commTimeout = lib, comm, timeout
	return nil
}

// AllReduceSum implements driver: ncclAllReduce in place on the stream,
// then a wait that polls the stream and the communicator's asynchronous
// error; a dead peer or the timeout aborts the communicator (a collective
// that cannot complete would otherwise hang the stream forever).
func (d *realDriver) AllReduceSum(p uintptr, n int) error {
	if d.nccl == nil {
		return fmt.Errorf("cuda: all-reduce before JoinRanks")
	}
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	stream := uintptr(unsafe.Pointer(streamHandle(d.stream)))
	if err := d.nccl.AllReduceSum(d.comm, p, p, n, stream); err != nil {
		return err
	}
	deadline := time.Now().Add(d.commTimeout)
	for {
		switch r := C.cuStreamQuery(streamHandle(d.stream)); r {
		case C.CUDA_SUCCESS:
			return nil
		case C.CUDA_ERROR_NOT_READY:
		default:
			return cuResult("cuStreamQuery", r)
		}
		if err := d.nccl.AsyncError(d.comm); err != nil {
			d.nccl.Abort(d.comm)
			d.nccl = nil
			return err
		}
		if d.commTimeout > 0 && time.Now().After(deadline) {
			d.nccl.Abort(d.comm)
			d.nccl = nil
			return fmt.Errorf("ncclAllReduce of %d values did not complete within %s: a rank is gone or stuck", n, d.commTimeout)
		}
		time.Sleep(200 * time.Microsecond)
	}
}
