//go:build cudaemu && !cuda

package cuda

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"uhno/internal/tensor"
)

// TestAllocOutOfMemory: on an emulated card of 1 MiB ($UHNO_EMU_MEMORY)
// MemInfo reports the free and total bytes, and an allocation beyond the
// free memory panics with a *tensor.OutOfMemory naming the device, the
// bytes asked, the free and total memory and the driver's error (what
// the commands recover into one line), not with a plain string. After
// the failure the backend still serves allocations that fit.
func TestAllocOutOfMemory(t *testing.T) {
	const total = 1 << 20
	t.Setenv(EnvMemory, strconv.Itoa(total))
	b, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	free, tot, err := b.MemInfo()
	if err != nil || free != total || tot != total {
		t.Fatalf("MemInfo = %d, %d, %v; want %d free of %d", free, tot, err, total, total)
	}
	x := b.Alloc(1000)
	defer b.Free(x)
	if free2, _, _ := b.MemInfo(); free2 != total-4000 {
		t.Errorf("after 4000 bytes, free = %d, want %d", free2, total-4000)
	}
	var oom *tensor.OutOfMemory
	func() {
		defer func() {
			r := recover()
			e, ok := r.(*tensor.OutOfMemory)
			if !ok {
				t.Fatalf("Alloc beyond the card panicked with %T %v, want *tensor.OutOfMemory", r, r)
			}
			oom = e
		}()
		b.Alloc(total / 4)
	}()
	if oom.Bytes != total || oom.Total != total || oom.Free != total-4000 {
		t.Errorf("OutOfMemory{Bytes %d, Free %d, Total %d}, want {%d, %d, %d}", oom.Bytes, oom.Free, oom.Total, total, total-4000, total)
	}
	msg := oom.Error()
	if !strings.Contains(msg, "out of device memory on CUDA emulator") || !strings.Contains(msg, "an allocation of 1.0 MiB failed with 1.0 MiB free of 1.0 MiB") ||
		!strings.Contains(msg, "CUDA_ERROR_OUT_OF_MEMORY") || !errors.Is(oom, oom.Err) {
		t.Errorf("message: %s", msg)
	}
	y := b.Alloc(1000)
	b.Free(y)
}
