package data

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"uhno/internal/data/h5"
	"uhno/internal/data/h5/h5test"
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
	_, p := openPlan(b, path, Sampling{History: 10, Pairs: 10})
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
	_, p := openPlan(b, path, Sampling{History: 10, Pairs: 10})
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

// cfdBenchGrid is the grid of the 3D-CFD benchmarks: 64 (a 110 MB
// trajectory), or UHNO_BENCH_CFD_GRID (128 is PDEBench's M1.0Rand: 880 MB
// per trajectory, 1.8 GB of file and host memory to write it).
func cfdBenchGrid(b *testing.B) int {
	if v := os.Getenv("UHNO_BENCH_CFD_GRID"); v != "" {
		g, err := strconv.Atoi(v)
		if err != nil || g < 8 {
			b.Fatalf("UHNO_BENCH_CFD_GRID=%q: want a grid size >= 8", v)
		}
		return g
	}
	return 64
}

// writeCFD writes a PDEBench 3D-CFD file (its exact layout: five datasets
// [n, 21, g, g, g], coordinates, attributes) of n trajectories.
func writeCFD(b *testing.B, n, g int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "3D_CFD_Rand_M1.0_Eta1e-08_Zeta1e-08_periodic_Train.hdf5")
	if err := h5test.CFD3D(path, n, 21, g); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkReadResident3D times reading one whole 3D-CFD trajectory (21
// frames of five fields: the batcher's unit of I/O for cfd3d) by
// hyperslab; MB/s is the read throughput.
func BenchmarkReadResident3D(b *testing.B) {
	g := cfdBenchGrid(b)
	p := mustPlan(b, writeCFD(b, 2, g), Sampling{History: 1})
	blk := make([]float32, p.ResidentLen())
	b.SetBytes(int64(4 * len(blk)))
	b.ResetTimer()
	for i := range b.N {
		if err := p.ReadResident(blk, i%2); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrefetch3D draws cfd3d batches (batch 2, one trajectory
// resident, so a new trajectory is read every 10 batches) behind a
// simulated training step of 100 ms (UHNO_BENCH_STEP_MS to change it; the
// paper's 3D run took about 1 s a step), directly from the Batcher and
// through the Prefetcher, and reports the time the step waited for its
// batch (wait-ms/batch): what reading costs the trainer.
func BenchmarkPrefetch3D(b *testing.B) {
	g := cfdBenchGrid(b)
	p := mustPlan(b, writeCFD(b, 3, g), Sampling{History: 1})
	step := 100 * time.Millisecond
	if v := os.Getenv("UHNO_BENCH_STEP_MS"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			b.Fatalf("UHNO_BENCH_STEP_MS=%q: want milliseconds >= 0", v)
		}
		step = time.Duration(ms) * time.Millisecond
	}
	for _, prefetch := range []bool{false, true} {
		b.Run(fmt.Sprintf("prefetch=%v", prefetch), func(b *testing.B) {
			bt, err := NewBatcher(p, seq(0, 3), BatchOptions{Batch: 2, Seed: 1, Resident: 1})
			if err != nil {
				b.Fatal(err)
			}
			in := make([]float32, prod(bt.InputShape()))
			tgt := make([]float32, prod(bt.TargetShape()))
			next := func() error { _, err := bt.Next(in, tgt); return err }
			var pf *Prefetcher
			if prefetch {
				pf = NewPrefetcher(bt)
				defer pf.Close()
				next = func() error { return pf.Next(in, tgt) }
			}
			if err := next(); err != nil { // the first read is waited for either way
				b.Fatal(err)
			}
			var waited time.Duration
			b.ResetTimer()
			for range b.N {
				time.Sleep(step)
				t0 := time.Now()
				if err := next(); err != nil {
					b.Fatal(err)
				}
				waited += time.Since(t0)
			}
			b.ReportMetric(float64(waited.Milliseconds())/float64(b.N), "wait-ms/batch")
		})
	}
}
