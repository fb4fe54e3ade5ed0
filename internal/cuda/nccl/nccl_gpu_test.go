//go:build cuda

package nccl

import (
	"runtime"
	"testing"
	"unsafe"

	"gorgonia.org/cu"
)

// TestNCCLOneRank is the GPU check of this package's calls: NCCL (loaded
// as Load does, honouring $UHNO_NCCL and $UHNO_CUDA_LIB_DIRS) makes a
// one-rank communicator on device 0, all-reduces a small float32 buffer
// in place on a stream, and the result must equal the input (the sum over
// one rank). It skips when NCCL cannot be loaded. It needs a GPU: it
// builds with `go test -c -tags cuda ./internal/cuda/nccl`; on a machine
// without a driver gorgonia.org/cu exits the binary at start.
func TestNCCLOneRank(t *testing.T) {
	lib, err := Load()
	if err != nil {
		t.Skipf("NCCL cannot be loaded (set %s to libnccl.so.2's path or %s to its directory): %v", EnvPath, EnvLibDirs, err)
	}
	v, err := lib.Version()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NCCL %s, version %d", lib.Path(), v)

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n, err := cu.NumDevices()
	if err != nil || n < 1 {
		t.Fatalf("no CUDA device: %d devices, %v", n, err)
	}
	ctx, err := cu.Device(0).MakeContext(cu.SchedAuto)
	if err != nil {
		t.Fatalf("context on device 0: %v", err)
	}
	defer ctx.Destroy()
	stream, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	defer stream.Destroy()
	// A cu.Stream holds the CUstream handle as its first word.
	handle := *(*uintptr)(unsafe.Pointer(&stream))

	const count = 1027 // not a multiple of any vector width
	in := make([]float32, count)
	for i := range in {
		in[i] = float32(i%31) - 15.25
	}
	bytes := int64(4 * count)
	dev, err := cu.MemAlloc(bytes)
	if err != nil {
		t.Fatalf("cuMemAlloc(%d): %v", bytes, err)
	}
	defer cu.MemFree(dev)
	if err := cu.MemcpyHtoD(dev, unsafe.Pointer(&in[0]), bytes); err != nil {
		t.Fatalf("cuMemcpyHtoD: %v", err)
	}

	id, err := lib.UniqueID()
	if err != nil {
		t.Fatal(err)
	}
	comm, err := lib.CommInitRank(id, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := lib.Destroy(comm); err != nil {
			t.Errorf("destroying the communicator: %v", err)
		}
	}()
	if err := lib.AllReduceSum(comm, uintptr(dev), uintptr(dev), count, handle); err != nil {
		t.Fatal(err)
	}
	if err := stream.Synchronize(); err != nil {
		t.Fatalf("waiting for the all-reduce: %v", err)
	}
	if err := lib.AsyncError(comm); err != nil {
		t.Fatalf("communicator error: %v", err)
	}
	out := make([]float32, count)
	if err := cu.MemcpyDtoH(unsafe.Pointer(&out[0]), dev, bytes); err != nil {
		t.Fatalf("cuMemcpyDtoH: %v", err)
	}
	for i := range out {
		if out[i] != in[i] {
			t.Fatalf("all-reduce over one rank: element %d is %g, want %g (the input)", i, out[i], in[i])
		}
	}
}
