//go:build cudaemu && !cuda

package cuda

import (
	"strings"
	"sync"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/dist"
)

// TestAllReduceSumRanks: three emulated devices joined as ranks sum a
// device buffer in place (a prefix of it: the rest is untouched), and an
// all-reduce before JoinRanks or of foreign storage is an error. On a GPU
// the same calls go through NCCL, one GPU a rank, which one machine with
// one GPU cannot test; under the emulator they go through the rank group
// (collective.go).
func TestAllReduceSumRanks(t *testing.T) {
	if err := gpu.AllReduceSum(gpu.Alloc(4), 4); err == nil || !strings.Contains(err.Error(), "before JoinRanks") {
		t.Errorf("all-reduce before JoinRanks: %v", err)
	}
	const size, n = 3, 1000
	comms := dist.NewLocal(size, 0)
	got := make([][]float32, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := New(0)
			if err != nil {
				errs[r] = err
				return
			}
			defer b.Close()
			if err := b.JoinRanks(comms[r], 0); err != nil {
				errs[r] = err
				return
			}
			s := b.Alloc(n + 5)
			vals := make([]float32, n+5)
			for i := range vals {
				vals[i] = float32(r+1) * float32(i%7)
			}
			b.Upload(s, vals)
			if errs[r] = b.AllReduceSum(s, n); errs[r] != nil {
				return
			}
			got[r] = make([]float32, n+5)
			b.Download(got[r], s)
		}()
	}
	wg.Wait()
	for r := range size {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		for i, v := range got[r] {
			want := float32(1+2+3) * float32(i%7)
			if i >= n {
				want = float32(r+1) * float32(i%7) // past n: untouched
			}
			if v != want {
				t.Fatalf("rank %d: value %d is %g, want %g", r, i, v, want)
			}
		}
	}
	if err := gpu.AllReduceSum(cpu.New(1).Alloc(4), 4); err == nil || !strings.Contains(err.Error(), "storage") {
		t.Errorf("all-reduce of CPU storage: %v", err)
	}
}
