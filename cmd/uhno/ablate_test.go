package main

import (
	"strings"
	"testing"
)

// TestAblateErrors checks the one-line refusals of bad flags.
func TestAblateErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--modes", "Z"}, `ablate: --modes "Z": "Z" is not a mode`},
		{[]string{"--sweep", "rho"}, `ablate: --sweep "rho": want key=v1,v2,...`},
		{[]string{"--sweep", "spar.rho0=0.1", "--modes", "A,B"}, `--sweep runs one mode over the values; --modes "A,B" names 2`},
		{[]string{"--sweep", "spar.nope=1"}, "spar.nope"},
		{[]string{"--steps", "-1"}, "must not be negative"},
		{[]string{"--task", "nope"}, "nope"},
	}
	for _, tt := range tests {
		code, _, errOut := execute(t, append([]string{"ablate", "--out", t.TempDir()}, tt.args...)...)
		if code == 0 || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: code %d, stderr %q, want one line with %q", tt.args, code, errOut, tt.want)
		}
	}
}
