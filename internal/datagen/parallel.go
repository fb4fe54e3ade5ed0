package datagen

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"uhno/internal/data/pde"
)

// Sink receives generated trajectories in index order.
type Sink interface {
	// Write stores trajectory i (one slice per dataset of the generator).
	Write(i int, data [][]float32) error
}

// generateAll runs gen for the trajectory indices idx on `workers`
// goroutines and hands them to sink strictly in the order of idx, so the
// file is the same whatever the worker count. At most 2*workers trajectories are held in
// memory. done is called after each trajectory is written (progress). The
// first error, or ctx's cancellation, stops the work and is returned.
func generateAll(ctx context.Context, gen pde.Generator, seed uint64, idx []int, workers int, sink Sink, done func(i int)) error {
	n := len(idx)
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	shapes := gen.Shapes()
	sizes := make([]int, len(shapes))
	for k, s := range shapes {
		sizes[k] = 1
		for _, v := range s {
			sizes[k] *= v
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type result struct {
		i    int
		data [][]float32
		err  error
	}
	// Buffers cycle through a free list so memory stays bounded.
	free := make(chan [][]float32, 2*workers)
	for j := 0; j < 2*workers; j++ {
		buf := make([][]float32, len(sizes))
		for k, s := range sizes {
			buf[k] = make([]float32, s)
		}
		free <- buf
	}
	next := make(chan int)
	results := make(chan result, 2*workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// Take a buffer before an index: whoever holds the index
				// the writer waits for can always finish it.
				var buf [][]float32
				select {
				case buf = <-free:
				case <-ctx.Done():
					return
				}
				i, ok := <-next
				if !ok {
					return
				}
				err := gen.Generate(seed, i, buf)
				if err != nil {
					err = fmt.Errorf("trajectory %d: %w", i, err)
				}
				select {
				case results <- result{i, buf, err}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		defer close(next)
		for _, i := range idx {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	pending := map[int]result{}
	want := 0 // position in idx of the next trajectory to write
	for want < n {
		var r result
		var ok bool
		select {
		case r, ok = <-results:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fmt.Errorf("datagen: workers stopped after %d of %d trajectories", want, n)
		}
		if r.err != nil {
			return r.err
		}
		pending[r.i] = r
		for want < n {
			p, ok := pending[idx[want]]
			if !ok {
				break
			}
			delete(pending, idx[want])
			if err := sink.Write(p.i, p.data); err != nil {
				return err
			}
			free <- p.data
			if done != nil {
				done(p.i)
			}
			want++
		}
	}
	return nil
}
