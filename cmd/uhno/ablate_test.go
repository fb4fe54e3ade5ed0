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
		{[]string{"--steps", "-1"}, "ablate: --steps -1: want 0 or more (0: optim.steps)"},
		{[]string{"--threads", "-1"}, "ablate: --threads -1: want 0 or more (0: all cores)"},
		{[]string{"--task", "nope"}, "nope"},
	}
	for _, tt := range tests {
		code, _, errOut := execute(t, append([]string{"ablate", "--out", t.TempDir()}, tt.args...)...)
		if code == 0 || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: code %d, stderr %q, want one line with %q", tt.args, code, errOut, tt.want)
		}
	}
}

// TestAblateDryRun: `uhno ablate --dry-run` as typed plans the text-size
// ablation of NS-2D with every count, trains and writes nothing, and a
// bad flag is refused as the ablation refuses it.
func TestAblateDryRun(t *testing.T) {
	out, data := t.TempDir()+"/abl", t.TempDir()+"/data"
	code, stdout, errOut := execute(t, "ablate", "--task", "ns2d", "--modes", "A,F", "--params", "text", "--steps", "5000",
		"--seeds", "0,1", "--out", out, "--data", data, "--dry-run", "--estimate-steps", "0")
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"ablate --dry-run: 6 runs of 5000 steps (warm-up 250, batch 16) on ns2d",
		"0     Full U-HNO  64,266,460  -", "1     F: NoSPAR   64,265,749  -0.0%", "not started  5000",
		"(1000 trajectories, generated on first use)", "nothing was generated, read, trained or written"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, errOut := execute(t, "ablate", "--modes", "Z", "--dry-run", "--out", out); code == 0 || !strings.Contains(errOut, `"Z" is not a mode`) {
		t.Errorf("--modes Z --dry-run: code %d, %q", code, errOut)
	}
}
