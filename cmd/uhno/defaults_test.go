package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestScaleWarmup: --steps without --warmup scales the configuration's
// warm-up to the new length (burgers: 1,000 of 20,000) and says so; an
// explicit --warmup or --set optim.warmup is kept.
func TestScaleWarmup(t *testing.T) {
	cases := []struct {
		args       []string
		warmup     int
		sayScaling bool
	}{
		{[]string{"--task", "burgers", "--steps", "200"}, 10, true},
		{[]string{"--task", "burgers", "--steps", "40000"}, 2000, true},
		{[]string{"--task", "burgers", "--steps", "10"}, 1, true},
		{[]string{"--task", "burgers", "--steps", "200", "--warmup", "0"}, 0, false},
		{[]string{"--task", "burgers", "--steps", "200", "--set", "optim.warmup=7"}, 7, false},
		{[]string{"--task", "burgers", "--steps", "20000"}, 1000, false},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var errOut bytes.Buffer
			var got *trainOptions
			cmd := newTrainCmd(&bytes.Buffer{}, &errOut, func(_ context.Context, o *trainOptions) error {
				got = o
				return scaleWarmup(o)
			})
			cmd.SetArgs(c.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			cfg, err := loadTrain(got)
			if err != nil {
				t.Fatalf("the scaled configuration is refused: %v", err)
			}
			if cfg.Optim.Warmup != c.warmup {
				t.Errorf("warm-up %d, want %d", cfg.Optim.Warmup, c.warmup)
			}
			said := strings.Contains(errOut.String(), "without --warmup: warm-up")
			if said != c.sayScaling {
				t.Errorf("said %q; want a scaling line: %v", errOut.String(), c.sayScaling)
			}
		})
	}
}
