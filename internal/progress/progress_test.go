package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPlainLines: written to a non-terminal, 1,000 updates of a bar make a
// dozen lines, not a thousand: the first, one per tenth of the work or per
// interval, and the final summary.
func TestPlainLines(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := New(&out, 1000, Options{Description: "datagen burgers", Unit: "traj", Interval: 30 * time.Second,
		now: func() time.Time { return clock }})
	for i := 1; i <= 1000; i++ {
		clock = clock.Add(100 * time.Millisecond) // 100 s in all: three 30 s intervals inside the tenths
		b.Add(1)
	}
	b.Add(1) // after the end: nothing more
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 11 {
		t.Fatalf("%d lines, want 11 (the first, tenths 1-9, the summary):\n%s", len(lines), out.String())
	}
	if !strings.HasPrefix(lines[0], "datagen burgers: 1/1000 traj (0%), 100ms elapsed, ") {
		t.Errorf("first line %q", lines[0])
	}
	if lines[1] != "datagen burgers: 100/1000 traj (10%), 10s elapsed, 10 traj/s, about 1m30s left" {
		t.Errorf("tenth line %q", lines[1])
	}
	if want := "datagen burgers: 1000/1000 traj (100%) in 1m40s"; lines[10] != want {
		t.Errorf("last line %q, want %q", lines[10], want)
	}

	// A slow job: lines come every interval between tenths.
	out.Reset()
	b = New(&out, 10, Options{Unit: "steps", Interval: 30 * time.Second, now: func() time.Time { return clock }})
	b.Set(1)
	for range 5 {
		clock = clock.Add(31 * time.Second)
		b.Describe("step 1 loss 0.5")
		b.Set(1)
	}
	if n := strings.Count(out.String(), "\n"); n != 6 {
		t.Errorf("%d lines over 5 intervals, want 6:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "step 1 loss 0.5: 1/10 steps (10%), 2m35s elapsed") {
		t.Errorf("described line missing:\n%s", out.String())
	}
}

// TestResumedRate: a bar that starts at work already done (a resumed
// training run) reports the rate and the time left of the work done since,
// not of the whole count over the time since the restart.
func TestResumedRate(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := New(&out, 5000, Options{Unit: "steps", Done: 2000, Interval: 30 * time.Second, now: func() time.Time { return clock }})
	if out.Len() != 0 {
		t.Fatalf("a line before any work: %q", out.String())
	}
	clock = clock.Add(10 * time.Second)
	b.Set(2100) // 100 steps in 10 s
	if want := "2100/5000 steps (42%), 10s elapsed, 10 steps/s, about 4m50s left\n"; out.String() != want {
		t.Errorf("line %q, want %q", out.String(), want)
	}
	out.Reset()
	clock = clock.Add(90 * time.Second)
	b.Set(3000) // the next tenth, 1000 steps in 100 s
	if want := "3000/5000 steps (60%), 1m40s elapsed, 10 steps/s, about 3m20s left\n"; out.String() != want {
		t.Errorf("line %q, want %q", out.String(), want)
	}
}

// TestTerminalRedraws: with a terminal (forced), the bar redraws in place
// (carriage returns), as schollz/progressbar does.
func TestTerminalRedraws(t *testing.T) {
	var out bytes.Buffer
	yes := true
	b := New(&out, 3, Options{Unit: "steps", Terminal: &yes})
	b.Set(3)
	if !strings.Contains(out.String(), "\r") {
		t.Errorf("no redraw in %q", out.String())
	}
	if IsTerminal(&out) {
		t.Error("a buffer is not a terminal")
	}
}
