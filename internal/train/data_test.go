package train

import (
	"path/filepath"
	"slices"
	"testing"

	"uhno/internal/data"
	"uhno/internal/data/h5/h5test"
)

// dataFixture opens a small PDEBench-layout Burgers file (values follow
// h5test.Code, so every value names its trajectory, frame and point) and
// plans pairs with history 1 and 4 pairs per trajectory.
func dataFixture(t *testing.T) (*data.Plan, data.Split) {
	t.Helper()
	const n, nt, nx = 12, 6, 8
	path := filepath.Join(t.TempDir(), "1D_Burgers_Sols_Nu0.01.hdf5")
	if err := h5test.Burgers(path, n, nt, nx, 0.01); err != nil {
		t.Fatal(err)
	}
	d, err := data.Open(path, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	p, err := d.Plan(data.Sampling{History: 1, Pairs: 4})
	if err != nil {
		t.Fatal(err)
	}
	split, err := data.NewSplit(n, 8, 4, data.SplitSeeded, 3)
	if err != nil {
		t.Fatal(err)
	}
	return p, split
}

// TestNewValSet checks that the validation set holds the requested number
// of distinct pairs, all from held-out trajectories, each input frame k
// with its target frame k+1, in batches of the requested size, and that it
// is the same for the same seed.
func TestNewValSet(t *testing.T) {
	p, split := dataFixture(t)
	const n, nt, nx = 12, 6, 8
	vs, err := NewValSet(p, split.Test, nil, 10, 4, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs.Batches) != 3 || vs.Batches[2].InShape[0] != 2 || !slices.Equal(vs.Batches[0].TgtShape, []int{4, 1, nx}) {
		t.Fatalf("%d batches, shapes %v / %v; want 3 batches (4, 4, 2) of [b, 1, 8]", len(vs.Batches), vs.Batches[0].InShape, vs.Batches[len(vs.Batches)-1].InShape)
	}
	seen := map[[2]int]bool{}
	for _, vb := range vs.Batches {
		for s := range vb.InShape[0] {
			_, i, f, _ := h5test.Decode(vb.In[s*nx], n, nt, nx)
			_, it, ft, _ := h5test.Decode(vb.Tgt[s*nx], n, nt, nx)
			if !slices.Contains(split.Test, i) || it != i || ft != f+1 || f > 3 {
				t.Fatalf("sample: input trajectory %d frame %d, target trajectory %d frame %d; want a held-out pair k -> k+1, k < 4", i, f, it, ft)
			}
			if seen[[2]int{i, f}] {
				t.Fatalf("pair (%d, %d) drawn twice", i, f)
			}
			seen[[2]int{i, f}] = true
		}
	}
	again, err := NewValSet(p, split.Test, nil, 10, 4, 7)
	if err != nil {
		t.Fatal(err)
	}
	for k := range vs.Batches {
		if !slices.Equal(vs.Batches[k].In, again.Batches[k].In) {
			t.Fatal("the same seed gave another validation set")
		}
	}
	if _, err := NewValSet(p, nil, nil, 10, 4, 7); err == nil {
		t.Fatal("no held-out trajectories accepted")
	}
}

// TestFromBatcher checks that the adapter yields the batcher's batches
// and shapes.
func TestFromBatcher(t *testing.T) {
	p, split := dataFixture(t)
	opt := data.BatchOptions{Batch: 3, Seed: 5}
	b1, err := data.NewBatcher(p, split.Train, opt)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := data.NewBatcher(p, split.Train, opt)
	if err != nil {
		t.Fatal(err)
	}
	s := FromBatcher(b1)
	if !slices.Equal(s.InputShape(), []int{3, 1, 8}) || !slices.Equal(s.TargetShape(), []int{3, 1, 8}) {
		t.Fatalf("shapes %v -> %v, want [3 1 8] both", s.InputShape(), s.TargetShape())
	}
	in1, tgt1 := make([]float32, 24), make([]float32, 24)
	in2, tgt2 := make([]float32, 24), make([]float32, 24)
	for range 15 { // across an epoch boundary (32 pairs)
		if err := s.Next(in1, tgt1); err != nil {
			t.Fatal(err)
		}
		if _, err := b2.Next(in2, tgt2); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(in1, in2) || !slices.Equal(tgt1, tgt2) {
			t.Fatal("adapter batch differs from the batcher's")
		}
	}
}
