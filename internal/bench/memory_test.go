package bench

import (
	"errors"
	"testing"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		peak, cur  int64
		err        error
		wantAnyErr bool
	}{
		{name: "both", text: "Name:\tuhno\nVmPeak:\t  900 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t4\n", peak: 2048 << 10, cur: 1024 << 10},
		{name: "missing", text: "Name:\tuhno\nVmRSS:\t 1024 kB\n", err: ErrNoRSS},
		{name: "bad unit", text: "VmHWM:\t 2 MB\nVmRSS:\t 1024 kB\n", wantAnyErr: true},
		{name: "bad number", text: "VmHWM:\t x kB\nVmRSS:\t 1024 kB\n", wantAnyErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			peak, cur, err := parseStatus([]byte(tt.text))
			switch {
			case tt.wantAnyErr:
				if err == nil {
					t.Fatalf("got %d, %d, want an error", peak, cur)
				}
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Fatalf("got %v, want %v", err, tt.err)
				}
			case err != nil || peak != tt.peak || cur != tt.cur:
				t.Fatalf("got %d, %d, %v; want %d, %d", peak, cur, err, tt.peak, tt.cur)
			}
		})
	}
}

// TestParseMeminfo reads MemTotal in kB, and refuses text without it.
func TestParseMeminfo(t *testing.T) {
	got, err := parseMeminfo([]byte("MemFree:  100 kB\nMemTotal:       24589064 kB\nSwapTotal: 0 kB\n"))
	if err != nil || got != 24589064<<10 {
		t.Errorf("MemTotal 24589064 kB: got %d, %v", got, err)
	}
	for _, bad := range []string{"", "MemTotal: 12 MB\n", "MemTotal: x kB\n", "MemTotal: 0 kB\n"} {
		if _, err := parseMeminfo([]byte(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}
