package data

import (
	"slices"
	"strings"
	"testing"
)

// TestPrefetcherSameBatches: a Prefetcher serves exactly the Batcher's
// batches, in order, bit for bit, across groups of trajectories and
// epochs, with and without a Skip first; Skip after the first batch and
// Next after Close are errors; Close stops a reader that is blocked on a
// full queue.
func TestPrefetcherSameBatches(t *testing.T) {
	p := mustPlan(t, cfdFixture(t, 5, 3, 4).path, Sampling{History: 1})
	train := []int{0, 1, 3, 4}
	newBatcher := func() *Batcher {
		b, err := NewBatcher(p, train, BatchOptions{Batch: 3, Seed: 5, Resident: 1})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	draw := func(next func(in, tgt []float32) error, b *Batcher, n int) [][]float32 {
		in := make([]float32, prod(b.InputShape()))
		tgt := make([]float32, prod(b.TargetShape()))
		var out [][]float32
		for range n {
			if err := next(in, tgt); err != nil {
				t.Fatal(err)
			}
			out = append(out, slices.Concat(in, tgt))
		}
		return out
	}
	for _, skip := range []int{0, 4} {
		ref := newBatcher()
		if err := ref.Skip(skip); err != nil {
			t.Fatal(err)
		}
		want := draw(func(in, tgt []float32) error { _, err := ref.Next(in, tgt); return err }, ref, 9)

		b := newBatcher()
		pf := NewPrefetcher(b)
		if err := pf.Skip(skip); err != nil {
			t.Fatal(err)
		}
		got := draw(pf.Next, b, 9)
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("skip %d: batch %d differs from the Batcher's", skip, i)
			}
		}
		if err := pf.Skip(1); err == nil || !strings.Contains(err.Error(), "after the first batch") {
			t.Errorf("Skip after Next: %v, want an error", err)
		}
		if pf.Waited() <= 0 {
			t.Errorf("Waited %v after 9 batches, want > 0 (the first batch is always waited for)", pf.Waited())
		}
		// The reader is now blocked on a full queue; Close must stop it.
		pf.Close()
		pf.Close()
		if err := pf.Next(make([]float32, len(want[0])), nil); err == nil {
			t.Error("Next after Close: want an error")
		}
	}
	// Closing a Prefetcher that never started is fine.
	NewPrefetcher(newBatcher()).Close()
}
