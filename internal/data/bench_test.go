package data

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"uhno/internal/data/h5"
)

// writeNS2D writes n trajectories of the 2D tasks' size (50 frames of
// 64x64, random values: the worst case for gzip) through h5.Writer.
func writeNS2D(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "ns2d.hdf5")
	w, err := h5.Create(path, h5.Spec{Datasets: []string{"tensor"}, Shapes: [][]int{{50, 64, 64}}}, n)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 50*64*64)
	for i := range n {
		for j := range x {
			x[j] = rng.Float32()
		}
		if err := w.Write(i, [][]float32{x}); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkWriteTrajectory2D times writing one 2D trajectory (800 KB,
// gzip level 4, two flushes): the I/O cost datagen adds per trajectory.
func BenchmarkWriteTrajectory2D(b *testing.B) {
	path := filepath.Join(b.TempDir(), "w.hdf5")
	w, err := h5.Create(path, h5.Spec{Datasets: []string{"tensor"}, Shapes: [][]int{{50, 64, 64}}}, b.N)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 50*64*64)
	for j := range x {
		x[j] = rng.Float32()
	}
	b.SetBytes(int64(4 * len(x)))
	b.ResetTimer()
	for i := range b.N {
		if err := w.Write(i, [][]float32{x}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadResident2D times reading the 20 leading frames of one 2D
// trajectory (the batcher's unit of I/O with H = 10, P = 10).
func BenchmarkReadResident2D(b *testing.B) {
	path := writeNS2D(b, 16)
	d, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	p, err := d.Plan(Sampling{History: 10, Pairs: 10})
	if err != nil {
		b.Fatal(err)
	}
	blk := make([]float32, p.ResidentLen())
	b.SetBytes(int64(4 * len(blk)))
	b.ResetTimer()
	for i := range b.N {
		if err := p.ReadResident(blk, i%16); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatch2D times one normalised batch of 16 pairs (10 frames of
// 64x64 in, 1 out) from resident trajectories.
func BenchmarkBatch2D(b *testing.B) {
	path := writeNS2D(b, 16)
	d, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	p, err := d.Plan(Sampling{History: 10, Pairs: 10})
	if err != nil {
		b.Fatal(err)
	}
	train := seq(0, 16)
	s, err := ComputeStats(p, train)
	if err != nil {
		b.Fatal(err)
	}
	bt, err := NewBatcher(p, train, BatchOptions{Batch: 16, Stats: &s})
	if err != nil {
		b.Fatal(err)
	}
	in := make([]float32, prod(bt.InputShape()))
	tgt := make([]float32, prod(bt.TargetShape()))
	for range 10 { // load every trajectory once
		bt.Next(in, tgt)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := bt.Next(in, tgt); err != nil {
			b.Fatal(err)
		}
	}
}
