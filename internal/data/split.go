package data

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// SplitMode chooses how trajectories are divided into training and test
// sets. Splits are by trajectory, never by pair, so no frame of a test
// trajectory is ever trained on.
type SplitMode int

const (
	// SplitSeeded (the default) draws a permutation of all trajectories from
	// the seed: the first ntest are the test set, the next ntrain the
	// training set. Self-generated trajectories are i.i.d., so this differs
	// from SplitFirst only in which ones are held out; it also guards
	// against any ordering in a downloaded file.
	SplitSeeded SplitMode = iota
	// SplitFirst is PDEBench's convention: the first ntest trajectories of
	// the file are the test set (PDEBench holds out the first 10%), the
	// next ntrain the training set.
	SplitFirst
)

// String names the mode.
func (m SplitMode) String() string {
	switch m {
	case SplitSeeded:
		return "seeded"
	case SplitFirst:
		return "first"
	}
	return fmt.Sprintf("SplitMode(%d)", int(m))
}

// ParseSplitMode reads "seeded" or "first" (alias "pdebench").
func ParseSplitMode(s string) (SplitMode, error) {
	switch s {
	case "seeded", "":
		return SplitSeeded, nil
	case "first", "pdebench":
		return SplitFirst, nil
	}
	return 0, fmt.Errorf("data: split mode %q, want seeded or first (PDEBench: first 10%% test)", s)
}

// splitStream separates the split's random stream from the other uses of
// the same seed (PCG's second word).
const splitStream = 0x5d1e_7e57_0000_0001

// Split holds trajectory indices of the file, each list sorted ascending
// (sequential reads; the batcher does the shuffling).
type Split struct {
	Train, Test []int
}

// PDEBenchTestCount is PDEBench's held-out count for a file of n samples:
// int(0.1 n), the first 10%.
func PDEBenchTestCount(n int) int { return n / 10 }

// NewSplit divides n trajectories into ntrain training and ntest test
// trajectories. Trajectories beyond ntrain+ntest are unused.
func NewSplit(n, ntrain, ntest int, mode SplitMode, seed uint64) (Split, error) {
	if ntrain < 1 || ntest < 0 {
		return Split{}, fmt.Errorf("data: split: %d train and %d test trajectories, want >= 1 and >= 0", ntrain, ntest)
	}
	if ntrain+ntest > n {
		return Split{}, fmt.Errorf("data: split: want %d train + %d test trajectories, but the file holds %d", ntrain, ntest, n)
	}
	var order []int
	switch mode {
	case SplitSeeded:
		order = rand.New(rand.NewPCG(seed, splitStream)).Perm(n)
	case SplitFirst:
		order = make([]int, n)
		for i := range order {
			order[i] = i
		}
	default:
		return Split{}, fmt.Errorf("data: split: unknown mode %d", int(mode))
	}
	s := Split{Test: slices.Clone(order[:ntest]), Train: slices.Clone(order[ntest : ntest+ntrain])}
	slices.Sort(s.Test)
	slices.Sort(s.Train)
	return s, nil
}
