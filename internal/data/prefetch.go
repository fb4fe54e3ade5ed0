package data

import (
	"errors"
	"time"
)

// Prefetcher draws a Batcher's batches ahead of the trainer on a goroutine
// of its own: while the caller trains on batch t, batches t+1 and t+2 are
// read (from the batcher's cache or, when a new group of trajectories is
// due, from the file) and normalised into buffers of the Prefetcher. The
// batches, their order and their values are exactly the Batcher's: the
// Prefetcher only moves the reading in time. It matters for 3D-CFD, where
// one trajectory of PDEBench's 88 GB file is 880 MB at 128^3 and is read
// while steps run instead of stalling one of them.
//
// Next copies a ready batch into the caller's buffers (a copy costs far
// less than a read); Waited reports how long Next has blocked in all, the
// time the trainer stood still for data. It costs two more batches of
// memory. Skip works only before the first Next (resuming skips first).
// Close stops the goroutine; a Prefetcher is not safe for concurrent use.
type Prefetcher struct {
	b       *Batcher
	started bool
	closed  bool
	ready   chan *prefetched // filled batches, in order
	free    chan *prefetched // buffers to fill
	stop    chan struct{}
	done    chan struct{}
	waited  time.Duration
	err     error // the first error the reader returned; every later Next returns it
}

// prefetched is one batch's buffers, or the error that ended the stream.
type prefetched struct {
	in, tgt []float32
	err     error
}

// prefetchDepth is how many batches are read ahead.
const prefetchDepth = 2

// NewPrefetcher returns a Prefetcher over b. b must not be used directly
// afterwards.
func NewPrefetcher(b *Batcher) *Prefetcher { return &Prefetcher{b: b} }

// InputShape and TargetShape are the Batcher's.
func (p *Prefetcher) InputShape() []int  { return p.b.InputShape() }
func (p *Prefetcher) TargetShape() []int { return p.b.TargetShape() }

// Skip moves past the first n batches without reading them (Batcher.Skip).
// It must come before the first Next.
func (p *Prefetcher) Skip(n int) error {
	if p.started {
		return errors.New("data: Prefetcher.Skip after the first batch was drawn")
	}
	return p.b.Skip(n)
}

// start launches the reader with prefetchDepth buffers.
func (p *Prefetcher) start(inLen, tgtLen int) {
	p.started = true
	p.ready = make(chan *prefetched, prefetchDepth)
	p.free = make(chan *prefetched, prefetchDepth)
	p.stop = make(chan struct{})
	p.done = make(chan struct{})
	for range prefetchDepth {
		p.free <- &prefetched{in: make([]float32, inLen), tgt: make([]float32, tgtLen)}
	}
	go func() {
		defer close(p.done)
		for {
			var buf *prefetched
			select {
			case buf = <-p.free:
			case <-p.stop:
				return
			}
			_, buf.err = p.b.Next(buf.in, buf.tgt)
			select {
			case p.ready <- buf:
			case <-p.stop:
				return
			}
			if buf.err != nil {
				return
			}
		}
	}()
}

// Next fills in and tgt with the next batch, waiting for the reader if it
// is not ready yet.
func (p *Prefetcher) Next(in, tgt []float32) error {
	if p.closed {
		return errors.New("data: Prefetcher.Next after Close")
	}
	if p.err != nil {
		return p.err
	}
	if !p.started {
		p.start(len(in), len(tgt))
	}
	t0 := time.Now()
	buf := <-p.ready
	p.waited += time.Since(t0)
	if buf.err != nil {
		p.err = buf.err
		return p.err
	}
	if len(in) != len(buf.in) || len(tgt) != len(buf.tgt) {
		panic("data: Prefetcher.Next: the batch buffers changed size")
	}
	copy(in, buf.in)
	copy(tgt, buf.tgt)
	p.free <- buf
	return nil
}

// Waited is the time Next has spent waiting for the reader.
func (p *Prefetcher) Waited() time.Duration { return p.waited }

// Close stops the reader (after the read in progress, if any). Further
// calls do nothing.
func (p *Prefetcher) Close() {
	if p.closed {
		return
	}
	p.closed = true
	if p.started {
		close(p.stop)
		<-p.done
	}
}
