package datagen

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/config"
	"uhno/internal/data/layout"
	"uhno/internal/data/npy"
)

// configure loads a built-in configuration as the command does.
func configure(t *testing.T) func(string) (config.Config, error) {
	return func(task string) (config.Config, error) { return builtin(t, task, nil), nil }
}

// writeArray writes a plain .npy array of shape and returns its path.
func writeArray(t *testing.T, dir string, shape ...int) string {
	t.Helper()
	n := 1
	for _, d := range shape {
		n *= d
	}
	path := filepath.Join(dir, "user.npy")
	if err := npy.Write(path, shape, make([]float32, n)); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDescribeFile: a user's 2D array becomes a task description in DIR
// (NS-2D's settings by default, the split a tenth for testing), read back
// the same; --task BASE and --test change them.
func TestDescribeFile(t *testing.T) {
	dir := t.TempDir()
	file := writeArray(t, dir, 20, 12, 32, 16, 2)
	out := filepath.Join(dir, "task")
	tf, path, err := DescribeFile(FromOptions{File: file, Dir: out, Configure: configure(t),
		Hints: layout.Hints{Channels: []string{"u", "v"}, Dt: 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(out, TaskFileName) || tf.Base != "ns2d" || tf.Train != 18 || tf.Test != 2 || tf.History != 10 ||
		!slices.Equal(tf.Description.ChannelNames(), []string{"u", "v"}) || tf.Description.File != file {
		t.Fatalf("task %+v at %s", tf, path)
	}
	back, err := ReadTaskFile(out)
	if err != nil || back.Base != tf.Base || back.Train != tf.Train || !slices.Equal(back.Description.Grid, []int{32, 16}) {
		t.Fatalf("read back %+v, %v", back, err)
	}
	tf, _, err = DescribeFile(FromOptions{File: file, Dir: out, Configure: configure(t), Base: "ac2d", Test: 5})
	if err != nil || tf.Base != "ac2d" || tf.Train != 15 || tf.Test != 5 {
		t.Fatalf("--task ac2d --test 5: %+v, %v", tf, err)
	}
}

// TestDescribeFileRefuses: a file the base task cannot train on is refused
// in one line naming the file and what was expected, and nothing is
// written into DIR.
func TestDescribeFileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape []int
		opt   FromOptions
		want  string
	}{
		{"too few frames for NS-2D's history", []int{4, 10, 32, 32, 1}, FromOptions{}, "10 frames per trajectory; the ns2d settings take 10 frames in"},
		{"a grid U-HNO cannot halve three times", []int{4, 12, 20, 32, 1}, FromOptions{}, "axis x has 20 points"},
		{"a base of another dimension", []int{4, 12, 32, 32, 1}, FromOptions{Base: "burgers"}, "the file is 2D and time-dependent; --task burgers is 1D"},
		{"a static base", []int{4, 12, 32, 32, 1}, FromOptions{Base: "darcy"}, "--task darcy is 2D and static"},
		{"no training trajectory left", []int{4, 12, 32, 32, 1}, FromOptions{Test: 4}, "cannot be split into --test 4"},
		{"an unknown base", []int{4, 12, 32, 32, 1}, FromOptions{Base: "heat"}, "--task heat"},
		{"a NaN in the last trajectory", []int{4, 12, 32, 32, 1}, FromOptions{}, "trajectory 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := writeArray(t, dir, tc.shape...)
			if strings.HasPrefix(tc.name, "a NaN") {
				n := 1
				for _, d := range tc.shape {
					n *= d
				}
				v := make([]float32, n)
				v[n-7] = float32(math.NaN())
				if err := npy.Write(file, tc.shape, v); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(dir, "task")
			opt := tc.opt
			opt.File, opt.Dir, opt.Configure = file, out, configure(t)
			_, _, err := DescribeFile(opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line containing %q", err, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written on a refusal", out)
			}
		})
	}
}
