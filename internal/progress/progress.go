// Package progress reports the progress of long work (data generation,
// training, evaluation, benchmarks) the way its reader can use it.
//
// On a terminal it draws a redrawn bar (schollz/progressbar). Written to a
// file or a pipe (`uhno train ... > log 2>&1`, CI logs, Slurm's output
// files) a redrawn bar becomes thousands of lines, so there it prints one
// plain line at a modest interval instead (every Interval, default 30 s,
// or every tenth of the work, whichever comes first) and one when the work
// is done, as well-behaved command-line tools do.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Options shape a Bar.
type Options struct {
	// Description leads every line (it can change with Describe).
	Description string
	// Unit names what is counted: "steps", "trajectories".
	Unit string
	// Done is the work already done when the bar starts (the step a
	// resumed training run starts from): the bar starts there, and the
	// rate and the time left count only the work done since.
	Done int
	// Interval is the least time between plain lines (default 30 s).
	Interval time.Duration
	// Terminal forces the redrawn bar (true) or plain lines (false);
	// nil decides by whether the writer is a terminal.
	Terminal *bool
	// now is the clock (tests).
	now func() time.Time
}

// Bar reports a count of work toward a total. Its methods may be called
// from several goroutines.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	o     Options
	bar   *progressbar.ProgressBar // terminal mode

	// plain mode
	desc            string
	n, base         int // units done; units done at the start (Options.Done)
	start, lastLine time.Time
	lastTenth       int
	printed, done   bool
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// New starts a Bar over total units of work written to w.
func New(w io.Writer, total int, o Options) *Bar {
	if o.Interval <= 0 {
		o.Interval = 30 * time.Second
	}
	if o.now == nil {
		o.now = time.Now
	}
	b := &Bar{w: w, total: total, o: o, desc: o.Description, start: o.now(), n: o.Done, base: o.Done}
	b.lastLine = b.start
	if total > 0 {
		b.lastTenth = 10 * o.Done / total
	}
	tty := IsTerminal(w)
	if o.Terminal != nil {
		tty = *o.Terminal
	}
	if tty {
		b.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(o.Description),
			progressbar.OptionSetItsString(o.Unit),
			progressbar.OptionShowIts(),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(250*time.Millisecond),
			progressbar.OptionSetWidth(20),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
		if o.Done > 0 {
			// The library's rate is a rolling average of the last few
			// seconds, so this jump leaves it within seconds.
			_ = b.bar.Set(o.Done)
		}
	}
	return b
}

// Set reports that n units are done.
func (b *Bar) Set(n int) {
	if b.bar != nil {
		_ = b.bar.Set(n)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set(n)
}

// Add reports n more units done.
func (b *Bar) Add(n int) {
	if b.bar != nil {
		_ = b.bar.Add(n)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set(b.n + n)
}

// Describe replaces the description (a training step's losses, say).
func (b *Bar) Describe(s string) {
	if b.bar != nil {
		b.bar.Describe(s)
		return
	}
	b.mu.Lock()
	b.desc = s
	b.mu.Unlock()
}

// Exit stops the bar where it is (work interrupted or ended early),
// leaving the cursor on a fresh line; plain mode prints nothing more.
func (b *Bar) Exit() {
	if b.bar != nil {
		_ = b.bar.Exit()
		fmt.Fprintln(b.w)
	}
}

func (b *Bar) set(n int) {
	if b.done {
		return
	}
	b.n = n
	now := b.o.now()
	tenth := 0
	if b.total > 0 {
		tenth = 10 * n / b.total
	}
	switch {
	case b.total > 0 && n >= b.total:
		b.done = true
		fmt.Fprintf(b.w, "%s%d/%d %s (100%%) in %s\n", b.prefix(), n, b.total, b.o.Unit, round(now.Sub(b.start)))
		return
	case !b.printed && n > b.base, tenth > b.lastTenth, now.Sub(b.lastLine) >= b.o.Interval:
		b.line(now)
		b.printed, b.lastTenth, b.lastLine = true, tenth, now
	}
}

// line prints the count, the share, the elapsed time and the estimate of
// the time left, from the rate of the work done since the bar started.
func (b *Bar) line(now time.Time) {
	el := now.Sub(b.start)
	pct := 0.0
	if b.total > 0 {
		pct = 100 * float64(b.n) / float64(b.total)
	}
	left := ""
	if b.n > b.base && b.total > b.n && el > 0 {
		rate := float64(b.n-b.base) / el.Seconds()
		left = fmt.Sprintf(", %.3g %s/s, about %s left", rate, b.o.Unit, round(time.Duration(float64(b.total-b.n)/rate*float64(time.Second))))
	}
	fmt.Fprintf(b.w, "%s%d/%d %s (%.0f%%), %s elapsed%s\n", b.prefix(), b.n, b.total, b.o.Unit, pct, round(el), left)
}

func (b *Bar) prefix() string {
	if b.desc == "" {
		return ""
	}
	return b.desc + ": "
}

func round(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
