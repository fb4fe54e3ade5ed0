package main

import "testing"

// TestFlagRanges: an integer flag out of range is refused before any
// work (no checkpoint, input or data is looked at), in one line naming
// the flag, the value and the range (package flagcheck).
func TestFlagRanges(t *testing.T) {
	out := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--rollout", "-3"}, "eval: --rollout -3: want 0 or more (0: the task's data.rollout)"},
		{[]string{"eval", "--checkpoint", "nowhere", "--horizon-mult", "0"}, "eval: --horizon-mult 0: want 1 or more"},
		{[]string{"eval", "--checkpoint", "nowhere", "--threads", "-1"}, "eval: --threads -1: want 0 or more (0: all cores)"},
		{[]string{"eval", "--checkpoint", "nowhere", "--trajectories", "-5"}, "eval: --trajectories -5: want 0 or more (0: all)"},
		{[]string{"predict", "--checkpoint", "nowhere", "--input", "nothing.h5", "--batch", "0"}, "predict: --batch 0: want 1 or more"},
		{[]string{"predict", "--checkpoint", "nowhere", "--input", "nothing.h5", "--steps", "-2"}, "predict: --steps -2: want 0 or more (0: the run's data.rollout)"},
		{[]string{"reproduce", "--tables", "main-acc", "--tasks", "burgers", "--out", out, "--parallel", "-1"}, "reproduce: --parallel -1: want 0 or more (0: one)"},
		{[]string{"reproduce", "--tables", "main-acc", "--tasks", "burgers", "--out", out, "--resamples", "0"}, "reproduce: --resamples 0: want 1 or more"},
	}
	for _, tt := range tests {
		code, _, stderr := execute(t, tt.args...)
		if code != 1 || stderr != "uhno: "+tt.want+"\n" {
			t.Errorf("%v: code %d, stderr %q, want %q", tt.args, code, stderr, "uhno: "+tt.want)
		}
	}
}
