package dist

import (
	"fmt"
	"sync"
	"time"
)

// NewLocal returns n Comms connected inside this process, one per rank,
// each to be used by its own goroutine: tests of code written against
// Comm (training) run several ranks without MPI. All-reduces sum in rank
// order; a rank waits for the others at most timeout (0: DefaultTimeout)
// and then fails as an MPI rank would.
func NewLocal(n int, timeout time.Duration) []Comm {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	g := &localGroup{n: n, timeout: timeout, slots: make([]any, n), round: &localRound{done: make(chan struct{})}}
	cs := make([]Comm, n)
	for r := range cs {
		cs[r] = &localComm{g: g, rank: r}
	}
	return cs
}

// localGroup is the shared state of NewLocal's ranks: the payloads of the
// collective in progress and its round, completed by the last rank to
// arrive.
type localGroup struct {
	mu      sync.Mutex
	n       int
	timeout time.Duration
	slots   []any
	arrived int
	round   *localRound
}

// localRound is one collective: closed done means result is ready.
type localRound struct {
	done   chan struct{}
	result any
}

// collective deposits in, waits for every rank, and returns combine of
// all ranks' payloads (computed once, by the last to arrive).
func (g *localGroup) collective(rank int, name string, in any, combine func([]any) any) (any, error) {
	g.mu.Lock()
	g.slots[rank] = in
	g.arrived++
	r := g.round
	if g.arrived == g.n {
		r.result = combine(g.slots)
		g.slots, g.arrived = make([]any, g.n), 0
		g.round = &localRound{done: make(chan struct{})}
		close(r.done)
	}
	g.mu.Unlock()
	t := time.NewTimer(g.timeout)
	defer t.Stop()
	select {
	case <-r.done:
		return r.result, nil
	case <-t.C:
		return nil, fmt.Errorf("dist: rank %d of %d: %s got no answer from the other ranks within %s: a rank died or hangs", rank, g.n, name, g.timeout)
	}
}

type localComm struct {
	g    *localGroup
	rank int
}

func (c *localComm) Rank() int { return c.rank }
func (c *localComm) Size() int { return c.g.n }

func (c *localComm) AllReduceSum(buf []float32) error {
	res, err := c.g.collective(c.rank, "all-reduce", buf, func(all []any) any {
		sum := make([]float32, len(buf))
		for _, a := range all {
			for i, v := range a.([]float32) {
				sum[i] += v
			}
		}
		return sum
	})
	if err == nil {
		copy(buf, res.([]float32))
	}
	return err
}

func (c *localComm) AllReduceSum64(buf []float64) error {
	res, err := c.g.collective(c.rank, "all-reduce", buf, func(all []any) any {
		sum := make([]float64, len(buf))
		for _, a := range all {
			for i, v := range a.([]float64) {
				sum[i] += v
			}
		}
		return sum
	})
	if err == nil {
		copy(buf, res.([]float64))
	}
	return err
}

func (c *localComm) Broadcast(buf []byte, root int) error {
	if root < 0 || root >= c.g.n {
		return fmt.Errorf("dist: broadcast from rank %d in a job of %d", root, c.g.n)
	}
	res, err := c.g.collective(c.rank, "broadcast", buf, func(all []any) any {
		return append([]byte(nil), all[root].([]byte)...)
	})
	if err == nil {
		copy(buf, res.([]byte))
	}
	return err
}

func (c *localComm) Barrier() error {
	_, err := c.g.collective(c.rank, "barrier", nil, func([]any) any { return nil })
	return err
}

func (c *localComm) Close() error { return nil }
