package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// parsed runs the command newCmd builds on args, stopping before its work,
// and returns the options its flags made.
func parsed[T any](newCmd func(out, errOut io.Writer, runF func(context.Context, *T) error) *cobra.Command, args ...string) (*T, error) {
	var got *T
	var out, errOut bytes.Buffer
	cmd := newCmd(&out, &errOut, func(_ context.Context, o *T) error { got = o; return nil })
	cmd.SetArgs(args)
	return got, cmd.Execute()
}

// TestNoFiguresFlag checks that --no-figures reaches the options of every
// command that draws PNGs, is off by default, and is repeated to
// reproduce's Slurm jobs (their finish step evaluates and reports).
func TestNoFiguresFlag(t *testing.T) {
	cases := []struct {
		name string
		// parse runs the command on args and returns its NoFigures.
		parse func(args ...string) (bool, error)
	}{
		{"eval", func(args ...string) (bool, error) {
			o, err := parsed(newEvalCmd, append([]string{"--checkpoint", "r"}, args...)...)
			return o != nil && o.NoFigures, err
		}},
		{"ablate", func(args ...string) (bool, error) {
			o, err := parsed(newAblateCmd, append([]string{"--task", "burgers"}, args...)...)
			return o != nil && o.NoFigures, err
		}},
		{"report", func(args ...string) (bool, error) {
			o, err := parsed(newReportCmd, append([]string{"--runs", "r"}, args...)...)
			return o != nil && o.NoFigures, err
		}},
		{"reproduce", func(args ...string) (bool, error) {
			o, err := parsed(newReproduceCmd, args...)
			if o != nil && o.NoFigures != slices.Contains(o.args, "--no-figures=true") {
				t.Errorf("reproduce: NoFigures %v, the Slurm jobs' flags %v", o.NoFigures, o.args)
			}
			return o != nil && o.NoFigures, err
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

// TestReportNoFiguresReachesWrite runs uhno report on an input it skips:
// report.md is written either way, the figures directory only without
// --no-figures (report.Write makes it unless told NoFigures).
func TestReportNoFiguresReachesWrite(t *testing.T) {
	in := t.TempDir()
	for _, c := range []struct {
		flags   []string
		figures bool
	}{{nil, true}, {[]string{"--no-figures"}, false}} {
		out := filepath.Join(t.TempDir(), "report")
		code, stdout, stderr := execute(t, append([]string{"report", "--runs", in, "--out", out}, c.flags...)...)
		if code != 0 {
			t.Fatalf("report %v: code %d, %s", c.flags, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
			t.Errorf("report %v: %v", c.flags, err)
		}
		if _, err := os.Stat(filepath.Join(out, "figures")); (err == nil) != c.figures {
			t.Errorf("report %v: figures directory there: %v, want %v; stdout %q", c.flags, err == nil, c.figures, stdout)
		}
	}
}
