package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"uhno/internal/config"
	"uhno/internal/dynamics"
	"uhno/internal/experiment"
	"uhno/internal/progress"
)

// The worker pool: runs trained one after another or --parallel N at a
// time, each on its share of the threads, with line-prefixed output.

// lockedWriter serialises the writes of parallel trainings.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// linePrefix writes whole lines to w, each led by prefix: the lines of
// one run of a --parallel grid, which interleave with the other runs'.
// A line is held until its newline (Flush writes a last partial one), so
// that the underlying lockedWriter receives it in one Write.
type linePrefix struct {
	mu     sync.Mutex
	prefix string
	w      io.Writer
	buf    []byte
}

func (l *linePrefix) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := slices.Index(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := append([]byte(l.prefix), l.buf[:i+1]...)
		l.buf = l.buf[i+1:]
		if _, err := l.w.Write(line); err != nil {
			return 0, err
		}
	}
}

// Flush writes a last line that has no newline, ending it with one.
func (l *linePrefix) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	line := append(append([]byte(l.prefix), l.buf...), '\n')
	l.buf = nil
	_, err := l.w.Write(line)
	return err
}

// split returns how many of n trainings run at once (--parallel, at most
// n) and the CPU threads each gets (--threads or all cores, divided
// between them, at least one).
func (o *RunOptions) split(n int) (par, threads int) {
	par = max(1, min(o.Parallel, n))
	threads = o.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	return par, max(1, threads/par)
}

// train trains the runs not finished yet, Parallel at a time with the
// threads split between them. One line per run start with the grid's
// estimate of the time left, plain progress lines over the grid, and the
// run's own bar (one training at a time; with --parallel each run's
// lines, its bar's plain lines included, are led by its name).
//
// taskDone, if not nil, is called once for each task all of whose runs
// (among runs) are trained, with withAblation true, when some run is left
// to train: before the trainings for a task trained already, else by the
// worker that finished its last run, while the other workers train on.
// A task with ablation modes among runs is also called once, withAblation
// false, when its other runs are trained and some of its modes are not.
// Its error stops the grid as a training error does.
func (o *RunOptions) train(ctx context.Context, runs []*planned, taskDone func(context.Context, experiment.Env, string, bool) error) error {
	var todo []*planned
	left := map[string]int{}     // untrained runs per task
	leftMain := map[string]int{} // of which not ablation modes
	for _, p := range runs {
		if p.state == experiment.RunDone {
			fmt.Fprintf(o.Out, "reproduce: %s: trained already\n", p.Dir)
			continue
		}
		todo = append(todo, p)
		left[p.Task]++
		if p.Mode == "" {
			leftMain[p.Task]++
		}
	}
	if len(todo) == 0 {
		return nil // the finish, next, evaluates everything
	}
	if taskDone != nil {
		var tasks []string
		for _, p := range runs {
			if leftMain[p.Task] == 0 && !slices.Contains(tasks, p.Task) {
				tasks = append(tasks, p.Task)
			}
		}
		for _, task := range tasks {
			if err := taskDone(ctx, o.Env, task, left[task] == 0); err != nil {
				return err
			}
		}
	}
	par, threads := o.split(len(todo))
	var mu sync.Mutex
	env := o.Env
	env.Out, env.Err = lockedWriter{&mu, o.Out}, lockedWriter{&mu, o.Err}
	off := false
	bar := progress.New(env.Err, len(todo), progress.Options{Description: "reproduce grid", Unit: "runs", Terminal: &off})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done int
		firstErr   error
		start      = time.Now()
		wg         sync.WaitGroup
		state      sync.Mutex
	)
	for w := 0; w < par; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				state.Lock()
				if next >= len(todo) || firstErr != nil {
					state.Unlock()
					return
				}
				p := todo[next]
				next++
				head := fmt.Sprintf("reproduce [%d/%d] %s", next, len(todo), p.Dir)
				if done > 0 {
					per := time.Since(start) / time.Duration(done)
					head += fmt.Sprintf(" (about %s left)", (per * time.Duration(len(todo)-done) / time.Duration(par)).Round(time.Second))
				}
				state.Unlock()
				verb := "training into"
				if p.state == experiment.RunPartial {
					verb = "resuming"
				}
				fmt.Fprintf(env.Out, "%s: %s %s\n", head, verb, p.dir)
				err := o.trainOne(ctx, env, p, threads, par > 1)
				if err == nil && ctx.Err() != nil {
					err = fmt.Errorf("reproduce: interrupted during %s; rerun the same command to continue", p.Dir)
				}
				state.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				last, lastMain := false, false
				if err == nil {
					done++
					bar.Add(1)
					left[p.Task]--
					last = left[p.Task] == 0
					if p.Mode == "" {
						leftMain[p.Task]--
						lastMain = leftMain[p.Task] == 0 && !last
					}
				}
				state.Unlock()
				if (last || lastMain) && taskDone != nil {
					if err := taskDone(ctx, env, p.Task, last); err != nil {
						state.Lock()
						if firstErr == nil {
							firstErr = err
							cancel()
						}
						state.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// trainOne trains (or resumes) one run as uhno train would; shared says
// that other runs train beside it (--parallel), so its lines are led by
// its name.
func (o *RunOptions) trainOne(ctx context.Context, env experiment.Env, p *planned, threads int, shared bool) (err error) {
	if shared && !o.Quiet {
		out, errOut := &linePrefix{prefix: p.Dir + ": ", w: env.Out}, &linePrefix{prefix: p.Dir + ": ", w: env.Err}
		env.Out, env.Err = out, errOut
		defer func() { err = errors.Join(err, out.Flush(), errOut.Flush()) }()
	}
	cfg := p.cfg
	t := experiment.TrainOptions{Env: env, Model: p.Model, Params: o.Params, Dir: p.dir, DataDir: o.DataDir, Threads: threads,
		Quiet: o.Quiet, Graph: true, LogEvery: 10, ValEvery: 500, CkptEvery: 1000, Keep: 2, ValPairs: 256,
		DynamicsEvery: experiment.DefaultDynamicsEvery, DynamicsTrajs: dynamics.DefaultTrajectories,
		Configure: func(io.Writer) (config.Config, error) { return cfg, nil }}
	if p.state == experiment.RunPartial {
		t.Resume = p.dir
		t.Configure = nil
	}
	return experiment.Train(ctx, &t)
}
