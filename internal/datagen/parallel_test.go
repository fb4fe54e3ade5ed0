package datagen

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// fakeGen writes (seed, i) into every element after a random delay, so
// trajectories finish out of order.
type fakeGen struct{ fail int }

func (fakeGen) Datasets() []string           { return []string{"a", "b"} }
func (fakeGen) Shapes() [][]int              { return [][]int{{2, 3}, {4}} }
func (fakeGen) Attrs() map[string]any        { return nil }
func (fakeGen) Coords() map[string][]float32 { return nil }
func (g fakeGen) Generate(seed uint64, i int, dst [][]float32) error {
	time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	if i == g.fail {
		return errors.New("boom")
	}
	for _, d := range dst {
		for j := range d {
			d[j] = float32(seed)*1000 + float32(i)
		}
	}
	return nil
}

type recordSink struct{ got []int }

func (s *recordSink) Write(i int, data [][]float32) error {
	if data[0][0] != float32(7000+i) || data[1][3] != float32(7000+i) {
		return errors.New("wrong data for index")
	}
	s.got = append(s.got, i)
	return nil
}

func TestGenerateAllInOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 5} {
		s := &recordSink{}
		var progress int
		if err := generateAll(context.Background(), fakeGen{fail: -1}, 7, seq(40), workers, s, func(int) { progress++ }); err != nil {
			t.Fatal(err)
		}
		if len(s.got) != 40 || progress != 40 {
			t.Fatalf("workers %d: wrote %d, progress %d", workers, len(s.got), progress)
		}
		for i, v := range s.got {
			if v != i {
				t.Fatalf("workers %d: order %v", workers, s.got)
			}
		}
	}
}

func TestGenerateAllStopsOnError(t *testing.T) {
	s := &recordSink{}
	err := generateAll(context.Background(), fakeGen{fail: 9}, 7, seq(40), 3, s, nil)
	if err == nil || err.Error() != "trajectory 9: boom" || len(s.got) > 9 {
		t.Fatalf("err %v after writing %d", err, len(s.got))
	}
}

func TestGenerateAllCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := generateAll(ctx, fakeGen{fail: -1}, 7, seq(1000), 2, &recordSink{}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestGenerateAllSubset writes only the given indices, in their order
// (a resumed file's Remaining list).
func TestGenerateAllSubset(t *testing.T) {
	s := &recordSink{}
	idx := []int{3, 4, 9, 17}
	if err := generateAll(context.Background(), fakeGen{fail: -1}, 7, idx, 3, s, nil); err != nil {
		t.Fatal(err)
	}
	if len(s.got) != 4 || s.got[0] != 3 || s.got[3] != 17 {
		t.Fatalf("wrote %v, want %v", s.got, idx)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
