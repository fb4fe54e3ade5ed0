package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"uhno/internal/dist"
	"uhno/internal/tensor"
)

// shardStream gives rank `rank` of `size` its share of each batch of a
// memStream, as data.BatchOptions.Shards does for the real batcher.
type shardStream struct {
	s          *memStream
	rank, size int
	in, tgt    []float32
	failAt     int // Next fails at this draw (1-based; 0: never)
	drawn      int
}

func shard(s *memStream, rank, size int) *shardStream {
	return &shardStream{s: s, rank: rank, size: size, in: make([]float32, s.batch*s.grid), tgt: make([]float32, s.batch*s.grid)}
}

func (h *shardStream) Next(in, tgt []float32) error {
	h.drawn++
	if h.drawn == h.failAt {
		return errors.New("planted read error")
	}
	if err := h.s.Next(h.in, h.tgt); err != nil {
		return err
	}
	k := len(in)
	copy(in, h.in[h.rank*k:])
	copy(tgt, h.tgt[h.rank*k:])
	return nil
}

func (h *shardStream) InputShape() []int  { return []int{h.s.batch / h.size, 1, h.s.grid} }
func (h *shardStream) TargetShape() []int { return []int{h.s.batch / h.size, 1, h.s.grid} }

// rankRun is one rank's outcome.
type rankRun struct {
	m   *tinyModel
	res Result
	err error
}

// runRanks trains the tiny model with `size` in-process ranks (each with
// its own initial weights: rank 0's must win) and returns each rank's
// model and result. edit adjusts each rank's Config.
func runRanks(t *testing.T, size int, dir string, steps int, timeout time.Duration, edit func(rank int, c *Config, s *shardStream)) []rankRun {
	t.Helper()
	comms := dist.NewLocal(size, timeout)
	out := make([]rankRun, size)
	var wg sync.WaitGroup
	for r := range size {
		cfg, m, s := tinyRun(dir, steps, 1, uint64(1+r))
		sh := shard(s, r, size)
		cfg.Train, cfg.Comm = sh, comms[r]
		if edit != nil {
			edit(r, &cfg, sh)
		}
		out[r].m = m
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[r].res, out[r].err = Run(context.Background(), cfg, nil)
		}()
	}
	wg.Wait()
	return out
}

// maxDiff is the largest absolute difference between two weight vectors.
func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// weightTol is how far data-parallel weights may stray from one process's
// after the tiny run: the reduced gradients differ from the single-process
// ones only in float32 summation order (about 1e-7 relative); the
// weights end about 1.5e-8 apart here.
const weightTol = 1e-6

// TestDataParallelMatchesOneProcess trains with 2 and 4 ranks (different
// initial weights on every rank, so rank 0's broadcast must reach them)
// and one process with the same global batch: every rank ends with the
// same bits, within weightTol of the single process, with the same loss
// curve; the log is rank 0's alone and records the all-reduce's share.
// Then a 2-rank run stopped half-way resumes with 4 ranks and with one
// process, and still ends within weightTol.
func TestDataParallelMatchesOneProcess(t *testing.T) {
	const steps = 12
	one := filepath.Join(t.TempDir(), "one")
	cfg, m, _ := tinyRun(one, steps, 1, 1)
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	want := m.p.host()
	wantLog := readLog(t, one)
	wantCk, _, err := loadCheckpoint(one)
	if err != nil {
		t.Fatal(err)
	}

	// check compares a run with the single process; its steps after
	// aloneFrom were taken by one process (no all-reduce share logged).
	check := func(t *testing.T, runs []rankRun, dir string, aloneFrom int) {
		t.Helper()
		for r, run := range runs {
			if run.err != nil {
				t.Fatalf("rank %d: %v", r, run.err)
			}
			got := run.m.p.host()
			if r > 0 && maxDiff(got, runs[0].m.p.host()) != 0 {
				t.Errorf("rank %d's weights differ from rank 0's", r)
			}
			d := maxDiff(got, want)
			t.Logf("rank %d: largest weight difference from one process %.3g", r, d)
			if d > weightTol {
				t.Errorf("rank %d: weights differ from one process's by %g (tolerance %g)", r, d, weightTol)
			}
		}
		ck, _, err := loadCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		if ck.State.Step != steps || ck.State.Data.Batch != tinyBatch {
			t.Errorf("checkpoint: step %d, batch %d; want %d, %d (the global batch)", ck.State.Step, ck.State.Data.Batch, steps, tinyBatch)
		}
		// AdamW is nearly blind to the gradient's scale; its moments are
		// not: the second moment v of a gradient summed over the ranks
		// but not divided would be size^2 times one process's.
		for _, mom := range []struct {
			name      string
			got, want []float32
		}{{"m", ck.M, wantCk.M}, {"v", ck.V, wantCk.V}} {
			if d, scale := maxDiff(mom.got, mom.want), maxDiff(mom.want, make([]float32, len(mom.want))); d > 1e-4*scale {
				t.Errorf("AdamW moment %s differs from one process's by %g (largest value %g)", mom.name, d, scale)
			}
		}
		log := readLog(t, dir)
		if len(log) != len(wantLog) {
			t.Fatalf("log: %d records, want %d (rank 0's only)", len(log), len(wantLog))
		}
		for i, rec := range log {
			if rec.Kind != wantLog[i].Kind || rec.Step != wantLog[i].Step || math.Abs(rec.Total-wantLog[i].Total) > 1e-4*math.Abs(wantLog[i].Total) {
				t.Errorf("log record %d: %s step %d loss %g; one process: %s step %d loss %g", i, rec.Kind, rec.Step, rec.Total, wantLog[i].Kind, wantLog[i].Step, wantLog[i].Total)
			}
			if rec.Kind == "train" && ((rec.AllReduceShare <= 0) != (rec.Step > aloneFrom) || rec.AllReduceShare >= 1 || len(rec.Rho) != 1 || math.Abs(rec.Rho[0]-wantLog[i].Rho[0]) > 1e-5) {
				t.Errorf("log record %d: all-reduce share %g, rho %v (one process: %v)", i, rec.AllReduceShare, rec.Rho, wantLog[i].Rho)
			}
		}
	}
	for _, size := range []int{2, 4} {
		t.Run(fmt.Sprintf("ranks%d", size), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dp")
			check(t, runRanks(t, size, dir, steps, 0, nil), dir, steps)
		})
	}
	for _, size := range []int{4, 1} {
		t.Run(fmt.Sprintf("resume2to%d", size), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dp")
			for r, run := range runRanks(t, 2, dir, steps, 0, func(_ int, c *Config, _ *shardStream) { c.StopAfter = 5 }) {
				if run.err != nil || !run.res.Interrupted || run.res.Step != 5 {
					t.Fatalf("rank %d: %+v %v", r, run.res, run.err)
				}
			}
			aloneFrom := steps
			if size == 1 {
				aloneFrom = 5
			}
			check(t, runRanks(t, size, dir, steps, 0, func(_ int, c *Config, _ *shardStream) { c.Resume = dir }), dir, aloneFrom)
		})
	}
}

// TestDataParallelFaults: a rank whose weights change behind the
// optimizer's back stops every rank at the next checkpoint with no
// checkpoint of the diverged weights; a batch that fails on one rank stops
// that rank with its error and the others within their timeout, and the
// last checkpoint resumes.
func TestDataParallelFaults(t *testing.T) {
	const steps = 12
	t.Run("diverged", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "dp")
		runs := runRanks(t, 2, dir, steps, 0, func(r int, c *Config, _ *shardStream) {
			if r == 1 {
				m := c.Model.(*tinyModel)
				calls := 0
				m.forward = func() {
					if calls++; calls == 9 { // in step 9, after the checkpoint of step 7
						w := m.p.host()
						w[0] += 1e-3
						m.p.b.Upload(m.p.data, w)
					}
				}
			}
		})
		for r, run := range runs {
			if run.err == nil || !strings.Contains(run.err.Error(), "train: step 12: the ranks' weights diverged: rank(s) [1] differ from rank 0") ||
				!strings.Contains(run.err.Error(), "no checkpoint written, last checkpoint "+filepath.Join(dir, "step-00000007")) {
				t.Errorf("rank %d: %v", r, run.err)
			}
		}
		if st, _, err := ReadState(dir); err != nil || st.Step != 7 {
			t.Errorf("latest: step %d (%v), want 7", st.Step, err)
		}
	})
	t.Run("rank stops", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "dp")
		start := time.Now()
		runs := runRanks(t, 2, dir, steps, 300*time.Millisecond, func(r int, _ *Config, s *shardStream) {
			if r == 1 {
				s.failAt = 9
			}
		})
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("the ranks took %s to stop", took)
		}
		if err := runs[1].err; err == nil || !strings.Contains(err.Error(), "train: step 9: batch: planted read error") {
			t.Errorf("rank 1: %v", err)
		}
		if err := runs[0].err; err == nil || !strings.Contains(err.Error(), "train: step 9: dist: rank 0 of 2: all-reduce got no answer from the other ranks within 300ms") ||
			!strings.Contains(err.Error(), "last checkpoint "+filepath.Join(dir, "step-00000007")) {
			t.Errorf("rank 0: %v", err)
		}
		for r, run := range runRanks(t, 2, dir, steps, 0, func(_ int, c *Config, _ *shardStream) { c.Resume = dir }) {
			if run.err != nil || run.res.ResumedFrom != 7 || run.res.Step != steps {
				t.Errorf("resume, rank %d: %+v %v", r, run.res, run.err)
			}
		}
	})
}

// TestDataParallelReduceOnDevice: with Config.ReduceOnDevice (NCCL on a
// GPU; here a second in-process group standing in for it, summing the
// gradient buffer where it lies) the ranks take the same steps as one
// process, and the gradient does not travel with the loss terms.
func TestDataParallelReduceOnDevice(t *testing.T) {
	const steps = 12
	one := filepath.Join(t.TempDir(), "one")
	cfg, m, _ := tinyRun(one, steps, 1, 1)
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	want := m.p.host()
	wantCk, _, err := loadCheckpoint(one)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{2, 4} {
		t.Run(fmt.Sprintf("ranks%d", size), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dp")
			devices := dist.NewLocal(size, 0)
			var calls [4]int
			runs := runRanks(t, size, dir, steps, 0, func(rank int, c *Config, _ *shardStream) {
				b := c.Backend
				c.ReduceOnDevice = func(grad tensor.Storage, n int) error {
					calls[rank]++
					host := make([]float32, n)
					b.Download(host, grad)
					if err := devices[rank].AllReduceSum(host); err != nil {
						return err
					}
					b.Upload(grad, host)
					return nil
				}
			})
			for r, run := range runs {
				if run.err != nil {
					t.Fatalf("rank %d: %v", r, run.err)
				}
				if calls[r] != steps {
					t.Errorf("rank %d: ReduceOnDevice called %d times in %d steps", r, calls[r], steps)
				}
				if d := maxDiff(run.m.p.host(), want); d > weightTol {
					t.Errorf("rank %d: weights differ from one process's by %g (tolerance %g)", r, d, weightTol)
				}
			}
			// The moments see the gradient's scale, which the weights
			// barely do (AdamW).
			ck, _, err := loadCheckpoint(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, mom := range [][2][]float32{{ck.M, wantCk.M}, {ck.V, wantCk.V}} {
				if d, scale := maxDiff(mom[0], mom[1]), maxDiff(mom[1], make([]float32, len(mom[1]))); d > 1e-4*scale {
					t.Errorf("an AdamW moment differs from one process's by %g (largest value %g)", d, scale)
				}
			}
		})
	}
}
