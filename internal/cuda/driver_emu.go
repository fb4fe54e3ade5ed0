//go:build cudaemu && !cuda

package cuda

import (
	"fmt"
	"os"
	"strconv"
	"time"
	"unsafe"

	"uhno/internal/cuda/cufft"
	"uhno/internal/cuda/emu"
	"uhno/internal/dist"
)

// emuDriver runs the backend on the CPU under internal/cuda/emu: the same
// kernels/*.cu, compiled as C++, launched through the emulator's table;
// FFTW for cuFFT. The emulator executes each call when it is made, so
// the stream is always drained; what a stream promises (order) holds
// trivially, and what it does not (overlap) is not exercised.
//
// Graph capture records the calls made between CaptureBegin and
// CaptureEnd (launches with their argument slots copied, device copies,
// memsets, FFT executions) without running them; Launch replays the
// recording. As on the driver, a synchronising call (a host copy, Sync)
// during capture fails and invalidates the capture.
type emuDriver struct {
	kernels map[string]emu.Kernel
	plans   map[fftPlan]int64
	// ranks is the data-parallel group all-reduces go through (JoinRanks).
	ranks dist.Comm

	// capturing is the recording in progress (nil when not capturing);
	// invalid holds the first error that invalidated it.
	capturing *emuGraph
	invalid   error

	// limit is the emulated card's memory ($UHNO_EMU_MEMORY, bytes; 0:
	// no limit), used the bytes allocated now and sizes each block's size,
	// so that a test can run a device out of memory.
	limit, used int64
	sizes       map[uintptr]int64
}

// EmulatorNote says what the emulated build is, for doctor.
const EmulatorNote = "no GPU is used; the CUDA kernels run on the CPU under internal/cuda/emu ($UHNO_EMU_ORDER, $UHNO_EMU_THREADS)"

// EnvMemory sets the emulated device's memory in bytes (unset or 0: no
// limit): an allocation beyond it fails as cuMemAlloc does on a full card
// (CUDA_ERROR_OUT_OF_MEMORY), and MemInfo reports it.
const EnvMemory = "UHNO_EMU_MEMORY"

// EnvOrder names the emulator's thread order for a whole run: forward,
// reverse or shuffle:SEED (the default is forward).
const EnvOrder = "UHNO_EMU_ORDER"

func openDriver(ordinal int) (driver, error) {
	if ordinal != 0 {
		return nil, fmt.Errorf("cuda: device %d requested, 1 present (the emulator)", ordinal)
	}
	if s := os.Getenv(EnvOrder); s != "" {
		o, seed, err := emu.ParseOrder(s)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", EnvOrder, err)
		}
		emu.SetOrder(o, seed)
	}
	d := &emuDriver{kernels: map[string]emu.Kernel{}, plans: map[fftPlan]int64{}, sizes: map[uintptr]int64{}}
	if s := os.Getenv(EnvMemory); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("$%s=%q: want the emulated device's memory in bytes (0: no limit)", EnvMemory, s)
		}
		d.limit = n
	}
	for i, k := range emu.Kernels() {
		d.kernels[k.Name] = emu.Kernel(i)
	}
	return d, nil
}

func (d *emuDriver) Describe() string { return "CUDA emulator on the CPU (internal/cuda/emu)" }

// emuTotal is what MemInfo reports as the emulated device's memory
// without a limit.
const emuTotal = 1 << 40

func (d *emuDriver) Malloc(bytes int64) (uintptr, error) {
	if d.limit > 0 && d.used+bytes > d.limit {
		return 0, fmt.Errorf("cuMemAlloc(%d bytes): CUDA_ERROR_OUT_OF_MEMORY (emulated: $%s=%d)", bytes, EnvMemory, d.limit)
	}
	p, err := emu.Malloc(bytes)
	if err == nil {
		d.sizes[p] = bytes
		d.used += bytes
	}
	return p, err
}

func (d *emuDriver) Free(p uintptr) error {
	d.used -= d.sizes[p]
	delete(d.sizes, p)
	return emu.Free(p)
}

func (d *emuDriver) MemInfo() (free, total int64, err error) {
	total = emuTotal
	if d.limit > 0 {
		total = d.limit
	}
	return total - d.used, total, nil
}
func (d *emuDriver) ExactSizes() bool { return true }

// enqueue runs op now, or records it while capturing.
func (d *emuDriver) enqueue(op func() error) error {
	if d.capturing != nil {
		d.capturing.ops = append(d.capturing.ops, op)
		return nil
	}
	return op()
}

// refuse fails a synchronising call made during capture and invalidates
// the capture, as the driver does.
func (d *emuDriver) refuse(call string) error {
	if d.capturing == nil {
		return nil
	}
	err := fmt.Errorf("cudaemu: %s during stream capture: operation not permitted when stream is capturing", call)
	if d.invalid == nil {
		d.invalid = err
	}
	return err
}

func (d *emuDriver) HtoD(dst uintptr, src unsafe.Pointer, bytes int64) error {
	if err := d.refuse("a host-to-device copy"); err != nil {
		return err
	}
	return emu.CopyHtoD(dst, src, bytes)
}

func (d *emuDriver) DtoH(dst unsafe.Pointer, src uintptr, bytes int64) error {
	if err := d.refuse("a device-to-host copy"); err != nil {
		return err
	}
	return emu.CopyDtoH(dst, src, bytes)
}

func (d *emuDriver) DtoD(dst, src uintptr, bytes int64) error {
	return d.enqueue(func() error { return emu.CopyDtoD(dst, src, bytes) })
}

func (d *emuDriver) MemsetD32(dst uintptr, v uint32, n int64) error {
	return d.enqueue(func() error { return emu.Memset32(dst, v, n) })
}

func (d *emuDriver) HasKernel(name string) bool {
	_, ok := d.kernels[name]
	return ok
}

// Launch hands the emulator the slots with the kinds the backend packed
// them as; the emulator checks both against the kernel's C++ signature.
func (d *emuDriver) Launch(name string, g Geometry, args []uint64, kinds string) error {
	k, ok := d.kernels[name]
	if !ok {
		return fmt.Errorf("cudaemu: no kernel %s", name)
	}
	slots := append([]uint64(nil), args...)
	grid := [3]int{g.Grid.X, g.Grid.Y, g.Grid.Z}
	block := [3]int{g.Block.X, g.Block.Y, g.Block.Z}
	return d.enqueue(func() error { return emu.Launch(k, grid, block, g.Shared, slots, kinds) })
}

func (d *emuDriver) Sync() error { return d.refuse("a stream synchronisation") }

func (d *emuDriver) CaptureBegin() error {
	if d.capturing != nil {
		return fmt.Errorf("cudaemu: capture begun twice")
	}
	d.capturing, d.invalid = &emuGraph{}, nil
	return nil
}

func (d *emuDriver) CaptureEnd() (driverGraph, error) {
	g, invalid := d.capturing, d.invalid
	d.capturing, d.invalid = nil, nil
	if g == nil {
		return nil, fmt.Errorf("cudaemu: capture ended without a begin")
	}
	if invalid != nil {
		return nil, fmt.Errorf("cudaemu: the capture was invalidated: %w", invalid)
	}
	return g, nil
}

func (d *emuDriver) FFTPlan(n []int, batch int, typ cufft.Type) (fftPlan, error) {
	p, err := emu.FFTPlan(n, batch, int(typ))
	if err != nil {
		return 0, err
	}
	d.plans[fftPlan(p)] = p
	return fftPlan(p), nil
}

func (d *emuDriver) FFTExec(p fftPlan, in, out uintptr) error {
	h, ok := d.plans[p]
	if !ok {
		return fmt.Errorf("cudaemu: fft exec: no plan %d", p)
	}
	return d.enqueue(func() error { return emu.FFTExec(h, in, out) })
}

func (d *emuDriver) FFTDestroy(p fftPlan) error {
	h, ok := d.plans[p]
	if !ok {
		return fmt.Errorf("cudaemu: fft destroy: no plan %d", p)
	}
	delete(d.plans, p)
	return emu.FFTDestroy(h)
}

// JoinRanks implements driver. The emulator's device memory is host
// memory, so its all-reduce goes through c itself (MPI or in-process
// ranks): a stand-in for NCCL that runs training's device path
// (Config.ReduceOnDevice) without a GPU. The timeout is c's own.
func (d *emuDriver) JoinRanks(c dist.Comm, _ time.Duration) error {
	d.ranks = c
	return nil
}

// AllReduceSum implements driver.
func (d *emuDriver) AllReduceSum(p uintptr, n int) error {
	if d.ranks == nil {
		return fmt.Errorf("cudaemu: all-reduce before JoinRanks")
	}
	if err := d.refuse("an all-reduce"); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	host := make([]float32, n)
	if err := emu.CopyDtoH(unsafe.Pointer(&host[0]), p, 4*int64(n)); err != nil {
		return err
	}
	if err := d.ranks.AllReduceSum(host); err != nil {
		return err
	}
	return emu.CopyHtoD(p, unsafe.Pointer(&host[0]), 4*int64(n))
}

func (d *emuDriver) Close() error {
	for p := range d.plans {
		if err := d.FFTDestroy(p); err != nil {
			return err
		}
	}
	return nil
}

// emuGraph is a recorded sequence of stream operations.
type emuGraph struct {
	ops       []func() error
	destroyed bool
}

func (g *emuGraph) Launch() error {
	if g.destroyed {
		return fmt.Errorf("cudaemu: launch of a destroyed graph")
	}
	for _, op := range g.ops {
		if err := op(); err != nil {
			return fmt.Errorf("cudaemu: graph replay: %w", err)
		}
	}
	return nil
}

func (g *emuGraph) Destroy() error {
	g.destroyed = true
	g.ops = nil
	return nil
}
