package data

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
)

// TestBatcherEpochs runs whole epochs with several residency limits and
// checks, from the batch values themselves (not the returned pair list):
// every training pair appears exactly once per epoch, each sample holds
// the right frames, no test trajectory ever appears, and memory stays
// within the limit.
func TestBatcherEpochs(t *testing.T) {
	fx := burgersFixture(t, 10, 7, 8)
	d, err := Open(fx.path, Options{Stride: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	split, err := NewSplit(10, 6, 3, SplitSeeded, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Plan(Sampling{History: 2, Pairs: 4})
	if err != nil {
		t.Fatal(err)
	}
	pts := d.Points()
	for _, resident := range []int{1, 2, 4, 0} {
		t.Run(fmt.Sprintf("resident %d", resident), func(t *testing.T) {
			const batch = 4
			b, err := NewBatcher(p, split.Train, BatchOptions{Batch: batch, Seed: 9, Resident: resident})
			if err != nil {
				t.Fatal(err)
			}
			if resident == 0 && b.Resident() != len(split.Train) {
				t.Errorf("default residency %d, want all %d", b.Resident(), len(split.Train))
			}
			per := b.PairsPerEpoch() // 6 trajectories x 4 pairs = 24
			in := make([]float32, prod(b.InputShape()))
			tgt := make([]float32, prod(b.TargetShape()))
			for epoch := range 3 {
				seen := map[Pair]int{}
				var order []Pair
				for range per / batch {
					prs, err := b.Next(in, tgt)
					if err != nil {
						t.Fatal(err)
					}
					if b.cache.len() > b.Resident() {
						t.Fatalf("%d trajectories cached, limit %d", b.cache.len(), b.Resident())
					}
					for s := range batch {
						x := in[s*2*pts : (s+1)*2*pts]
						y := tgt[s*pts : (s+1)*pts]
						i := decodeTraj(fx, x[0])
						if slices.Contains(split.Test, i) || !slices.Contains(split.Train, i) {
							t.Fatalf("epoch %d: a batch holds trajectory %d, not in the training set %v", epoch, i, split.Train)
						}
						_, _, k, _ := h5test.Decode(x[0], fx.n, fx.nt, fx.points())
						checkBlock(t, fx, 2, x[:pts], 0, i, k, "input frame 0")
						checkBlock(t, fx, 2, x[pts:], 0, i, k+1, "input frame 1")
						checkBlock(t, fx, 2, y, 0, i, k+2, "target")
						if prs[s] != (Pair{i, k}) {
							t.Fatalf("Next reports %v for sample %v", prs[s], Pair{i, k})
						}
						seen[Pair{i, k}]++
						order = append(order, Pair{i, k})
					}
				}
				// Pairs are shuffled, not drawn trajectory by trajectory: in
				// trajectory order 18 of the 23 neighbours would be (i, k),
				// (i, k+1); a shuffle of each group of at least 2 trajectories
				// leaves few such runs.
				runs := 0
				for j := 1; j < len(order); j++ {
					if order[j] == (Pair{order[j-1].Traj, order[j-1].Start + 1}) {
						runs++
					}
				}
				if b.Resident() >= 2 && runs > 6 {
					t.Errorf("epoch %d: %d of %d neighbours are consecutive frames of one trajectory: not shuffled", epoch, runs, len(order)-1)
				}
				if len(seen) != per {
					t.Fatalf("epoch %d covered %d distinct pairs, want %d", epoch, len(seen), per)
				}
				for pr, c := range seen {
					if c != 1 || pr.Start >= 4 {
						t.Fatalf("epoch %d: pair %v drawn %d times", epoch, pr, c)
					}
				}
			}
		})
	}
}

// TestBatcherDeterminism checks that batches depend only on the seed: two
// batchers with one seed agree bit for bit, another seed differs, and
// batches run on across epoch boundaries when the epoch does not divide
// into whole batches.
func TestBatcherDeterminism(t *testing.T) {
	fx := cfdFixture(t, 5, 3, 4)
	_, p := fx.plan(t, Sampling{History: 1})
	train := []int{0, 1, 3, 4}
	run := func(seed uint64, resident int) [][]float32 {
		b, err := NewBatcher(p, train, BatchOptions{Batch: 3, Seed: seed, Resident: resident})
		if err != nil {
			t.Fatal(err)
		}
		in := make([]float32, prod(b.InputShape()))
		tgt := make([]float32, prod(b.TargetShape()))
		var out [][]float32
		for range 7 { // 21 pairs: 2 epochs of 8 and part of a third
			if _, err := b.Next(in, tgt); err != nil {
				t.Fatal(err)
			}
			out = append(out, slices.Concat(in, tgt))
		}
		if b.Epoch() != 2 {
			t.Errorf("after 21 pairs of 8-pair epochs the batcher is in epoch %d, want 2", b.Epoch())
		}
		return out
	}
	a, b, c := run(42, 2), run(42, 2), run(43, 2)
	for k := range a {
		if !slices.Equal(a[k], b[k]) {
			t.Fatalf("batch %d differs between two runs with seed 42", k)
		}
	}
	same := 0
	for k := range a {
		if slices.Equal(a[k], c[k]) {
			same++
		}
	}
	if same == len(a) {
		t.Error("seeds 42 and 43 give the same batches")
	}
}

// TestBatcherReadsOnce checks the streaming cost: with every training
// trajectory resident, three epochs read each trajectory from the file
// once; with one resident, once per epoch.
func TestBatcherReadsOnce(t *testing.T) {
	fx := burgersFixture(t, 6, 5, 8)
	_, p := fx.plan(t, Sampling{})
	for _, tc := range []struct{ resident, reads int }{{0, 6}, {1, 18}} {
		b, err := NewBatcher(p, seq(0, 6), BatchOptions{Batch: 4, Resident: tc.resident})
		if err != nil {
			t.Fatal(err)
		}
		in := make([]float32, prod(b.InputShape()))
		tgt := make([]float32, prod(b.TargetShape()))
		for range 3 * b.PairsPerEpoch() / 4 {
			if _, err := b.Next(in, tgt); err != nil {
				t.Fatal(err)
			}
		}
		if b.reads != tc.reads {
			t.Errorf("resident %d: %d trajectory reads over 3 epochs, want %d", tc.resident, b.reads, tc.reads)
		}
	}
}

// TestBatcherNormalizes checks that batches come normalised by the
// training statistics: over one epoch every field has mean 0 and std 1.
func TestBatcherNormalizes(t *testing.T) {
	path, _ := randomCFD(t, 4, 3, 2, nil)
	_, p := openPlan(t, path, Sampling{History: 1, Outputs: []string{"Vz"}})
	train := []int{0, 1, 2, 3}
	s, err := ComputeStats(p, train)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBatcher(p, train, BatchOptions{Batch: 2, Seed: 1, Stats: &s})
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float32, prod(b.InputShape()))
	tgt := make([]float32, prod(b.TargetShape()))
	var sums [6][2]float64 // five inputs then the target Vz: sum, sum of squares
	var n float64
	for range b.PairsPerEpoch() / 2 {
		if _, err := b.Next(in, tgt); err != nil {
			t.Fatal(err)
		}
		for smp := range 2 {
			for c := range 6 {
				var seg []float32
				if c < 5 {
					seg = in[(smp*5+c)*8 : (smp*5+c+1)*8]
				} else {
					seg = tgt[smp*8 : (smp+1)*8]
				}
				for _, v := range seg {
					sums[c][0] += float64(v)
					sums[c][1] += float64(v) * float64(v)
				}
			}
		}
		n += 2 * 8
	}
	// The four input-only fields are seen at frames 0..1, exactly the
	// frames their statistics cover. Vz's statistics cover frames 0..2
	// while its input channel sees 0..1 and its target 1..2, so it is not
	// checked here (TestStats checks its frame ranges).
	for c := range 4 {
		m := sums[c][0] / n
		sd := math.Sqrt(sums[c][1]/n - m*m)
		if math.Abs(m) > 1e-5 || math.Abs(sd-1) > 1e-5 {
			t.Errorf("input channel %d: normalised mean %v std %v", c, m, sd)
		}
	}
	if _, err := NewBatcher(p, train, BatchOptions{Batch: 2, Stats: &Stats{Fields: []string{"density"}}}); err == nil || !strings.Contains(err.Error(), `not field "pressure"`) {
		t.Errorf("statistics of the wrong fields: %v", err)
	}
}

// TestBatcherSkip: skipping n batches and drawing gives exactly the
// batches a batcher that drew the n gives next, values included, across
// group and epoch boundaries and for several residency limits, and skips
// read nothing from the file.
func TestBatcherSkip(t *testing.T) {
	fx := burgersFixture(t, 10, 7, 8)
	d := fx.open(t)
	split, err := NewSplit(10, 7, 3, SplitSeeded, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Plan(Sampling{History: 1, Pairs: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, resident := range []int{1, 3, 0} {
		for _, n := range []int{0, 1, 4, 9, 23} { // 35 pairs per epoch, batch 3: 9 and 23 cross epochs
			opt := BatchOptions{Batch: 3, Seed: 4, Resident: resident}
			drawn, _ := NewBatcher(p, split.Train, opt)
			skipped, _ := NewBatcher(p, split.Train, opt)
			in := make([]float32, prod(drawn.InputShape()))
			tgt := make([]float32, prod(drawn.TargetShape()))
			for range n {
				if _, err := drawn.Next(in, tgt); err != nil {
					t.Fatal(err)
				}
			}
			if err := skipped.Skip(n); err != nil {
				t.Fatal(err)
			}
			if skipped.reads != 0 {
				t.Fatalf("resident %d, skip %d: %d trajectories read while skipping", resident, n, skipped.reads)
			}
			in2, tgt2 := make([]float32, len(in)), make([]float32, len(tgt))
			for k := range 15 {
				a, err := drawn.Next(in, tgt)
				if err != nil {
					t.Fatal(err)
				}
				a = slices.Clone(a)
				b, err := skipped.Next(in2, tgt2)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(a, b) || !slices.Equal(in, in2) || !slices.Equal(tgt, tgt2) {
					t.Fatalf("resident %d, skip %d: batch %d after the skip differs: %v vs %v", resident, n, k, a, b)
				}
			}
		}
	}
	b, _ := NewBatcher(p, split.Train, BatchOptions{Batch: 3, Seed: 4})
	if err := b.Skip(-1); err == nil {
		t.Fatal("Skip(-1) accepted")
	}
}

// TestBatcherShards: the shards of every batch, concatenated in rank
// order, are the unsplit batch (values and pairs), across group and epoch
// boundaries, after a Skip, and with statistics; a batch that does not
// split evenly is refused.
func TestBatcherShards(t *testing.T) {
	fx := burgersFixture(t, 10, 7, 8)
	d := fx.open(t)
	split, err := NewSplit(10, 7, 3, SplitSeeded, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Plan(Sampling{History: 1, Pairs: 5})
	if err != nil {
		t.Fatal(err)
	}
	stats := &Stats{Fields: p.InputChannels(), Mean: []float64{0.1}, Std: []float64{2}}
	cases := []struct {
		batch, shards, resident, skip int
		stats                         *Stats
	}{
		{4, 1, 0, 0, nil},
		{4, 2, 0, 0, nil},
		{4, 4, 2, 3, nil},
		{6, 3, 1, 7, stats},
		{6, 2, 3, 0, stats},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("batch%d/shards%d/resident%d/skip%d", c.batch, c.shards, c.resident, c.skip), func(t *testing.T) {
			whole, err := NewBatcher(p, split.Train, BatchOptions{Batch: c.batch, Seed: 4, Resident: c.resident, Stats: c.stats})
			if err != nil {
				t.Fatal(err)
			}
			parts := make([]*Batcher, c.shards)
			for r := range parts {
				if parts[r], err = NewBatcher(p, split.Train, BatchOptions{Batch: c.batch, Seed: 4, Resident: c.resident, Stats: c.stats, Shards: c.shards, Shard: r}); err != nil {
					t.Fatal(err)
				}
				if got := parts[r].InputShape()[0]; got != c.batch/c.shards {
					t.Fatalf("shard %d: batch axis %d, want %d", r, got, c.batch/c.shards)
				}
				if err := parts[r].Skip(c.skip); err != nil {
					t.Fatal(err)
				}
			}
			in := make([]float32, prod(whole.InputShape()))
			tgt := make([]float32, prod(whole.TargetShape()))
			if err := whole.Skip(c.skip); err != nil {
				t.Fatal(err)
			}
			for k := range 20 { // 35 pairs per epoch: crosses epochs
				want, err := whole.Next(in, tgt)
				if err != nil {
					t.Fatal(err)
				}
				want = slices.Clone(want)
				var gotIn, gotTgt []float32
				var got []Pair
				for _, b := range parts {
					pin := make([]float32, prod(b.InputShape()))
					ptgt := make([]float32, prod(b.TargetShape()))
					pairs, err := b.Next(pin, ptgt)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, pairs...)
					gotIn, gotTgt = append(gotIn, pin...), append(gotTgt, ptgt...)
				}
				if !slices.Equal(want, got) || !slices.Equal(in, gotIn) || !slices.Equal(tgt, gotTgt) {
					t.Fatalf("batch %d: the shards concatenated differ from the whole batch: %v vs %v", k, want, got)
				}
			}
		})
	}
	for _, bad := range []BatchOptions{{Batch: 5, Shards: 2}, {Batch: 4, Shards: 2, Shard: 2}, {Batch: 4, Shards: 2, Shard: -1}} {
		if _, err := NewBatcher(p, split.Train, bad); err == nil || !strings.Contains(err.Error(), "want 0 <= shard < shards and the batch a multiple of shards") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
