package main

import (
	"bytes"
	"context"
	"slices"
	"testing"
)

// TestNoFiguresFlag checks that --no-figures reaches the options of every
// command that draws PNGs, is off by default, and is repeated to reproduce's Slurm jobs (their finish
// step evaluates and reports).
func TestNoFiguresFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	cases := []struct {
		name string
		// parse runs the command on args and returns its NoFigures.
		parse func(args ...string) (bool, error)
	}{
		{"eval", func(args ...string) (bool, error) {
			var got *evalOptions
			cmd := newEvalCmd(&out, &errOut, func(_ context.Context, o *evalOptions) error { got = o; return nil })
			cmd.SetArgs(append([]string{"--checkpoint", "r"}, args...))
			err := cmd.Execute()
			return got != nil && got.NoFigures, err
		}},
		{"ablate", func(args ...string) (bool, error) {
			var got *ablateOptions
			cmd := newAblateCmd(&out, &errOut, func(_ context.Context, o *ablateOptions) error { got = o; return nil })
			cmd.SetArgs(append([]string{"--task", "burgers"}, args...))
			err := cmd.Execute()
			return got != nil && got.NoFigures, err
		}},
		{"report", func(args ...string) (bool, error) {
			var got *reportOptions
			cmd := newReportCmd(&out, &errOut, func(_ context.Context, o *reportOptions) error { got = o; return nil })
			cmd.SetArgs(append([]string{"--runs", "r"}, args...))
			err := cmd.Execute()
			return got != nil && got.NoFigures, err
		}},
		{"reproduce", func(args ...string) (bool, error) {
			var got *reproduceOptions
			cmd := newReproduceCmd(&out, &errOut, func(_ context.Context, o *reproduceOptions) error { got = o; return nil })
			cmd.SetArgs(args)
			err := cmd.Execute()
			if got != nil && got.NoFigures != slices.Contains(got.args, "--no-figures=true") {
				t.Errorf("reproduce: NoFigures %v, the Slurm jobs' flags %v", got.NoFigures, got.args)
			}
			return got != nil && got.NoFigures, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if on, err := c.parse(); err != nil || on {
				t.Errorf("default: NoFigures %v, err %v", on, err)
			}
			if on, err := c.parse("--no-figures"); err != nil || !on {
				t.Errorf("--no-figures: NoFigures %v, err %v", on, err)
			}
		})
	}
}
