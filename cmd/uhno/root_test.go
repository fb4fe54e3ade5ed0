package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"uhno/internal/testutil"
)

// execute runs the uhno command line and returns its exit code and output.
func execute(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// figs returns a command's arguments as a test gives them: unchanged in
// the plain pass, with --no-figures added under the race detector, which
// slows the serial PNG rendering about 300-fold (one toy evaluation: 45 s
// with its figures, 0.16 s without) and has nothing to watch there:
// internal/eval/figure starts no goroutine (D-ci-time). The plain pass
// renders every figure.
func figs(args ...string) []string {
	if testutil.Race {
		return append(args, "--no-figures")
	}
	return args
}

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantCode   int
		wantOut    []string // substrings of stdout
		wantStderr string   // the whole of stderr
	}{
		{name: "help explains the tool", args: []string{"--help"},
			wantOut: []string{"U-HNO", "SPAR", "Fourier branch", "Gaussian", "burgers", "ks", "kdv", "adv2d", "ac2d", "ns2d", "darcy", "cfd3d",
				"config", "datagen", "train", "eval", "bench", "doctor", "CPU build", "bin/uhno-cuda", "emulator", "ablate", "report", "--dry-run"}},
		{name: "no arguments prints help", args: nil, wantOut: []string{"Usage:", "Available Commands:"}},
		{name: "version flag", args: []string{"--version"}, wantOut: []string{"uhno version dev"}},
		{name: "config help", args: []string{"config", "--help"}, wantOut: []string{"--task", "--set", "--json", "UHNO_OPTIM_LR"}},
		{name: "config prints YAML", args: []string{"config", "--task", "burgers"},
			wantOut: []string{"# uhno configuration of task burgers", "task: burgers", "nu: 0.01", "k0: 24", "lambda_cbc: 0.005"}},
		{name: "config prints JSON", args: []string{"config", "--task", "adv2d", "--json"},
			wantOut: []string{`"task": "adv2d"`, `"lambda_cbc": 0.003`}},
		{name: "config applies --set", args: []string{"config", "--task", "ns2d", "--set", "optim.batch=8", "--set", "pde.grid=32,32"},
			wantOut: []string{"batch: 8", "grid: [32, 32]"}},
		{name: "doctor", args: []string{"doctor"},
			wantOut: []string{"uhno        dev", "go          go1.", "os/arch", "cpu cores", "backends    cpu", "GPU         not available in this build", "GPU device"}},

		{name: "unknown command", args: []string{"trian"}, wantCode: 1,
			wantStderr: "uhno: unknown command \"trian\" for \"uhno\" Did you mean this? train\n"},
		{name: "unknown flag", args: []string{"config", "--tsak", "ks"}, wantCode: 1,
			wantStderr: "uhno: unknown flag: --tsak (see 'uhno config --help')\n"},
		{name: "stray argument", args: []string{"config", "ks"}, wantCode: 1,
			wantStderr: "uhno: unknown command \"ks\" for \"uhno config\"\n"},
		{name: "unknown task", args: []string{"config", "--task", "burger"}, wantCode: 1,
			wantStderr: "uhno: config: unknown task \"burger\"; valid tasks: burgers, ks, kdv, adv2d, ac2d, ns2d, darcy, cfd3d, burgers-paper, burgers-shock; did you mean \"burgers\"?\n"},
		{name: "unknown key", args: []string{"config", "--task", "ks", "--set", "optim.lrr=1"}, wantCode: 1,
			wantStderr: "uhno: config: unknown key \"optim.lrr\" in --set; did you mean \"optim.lr\"?\n"},
		{name: "wrong type", args: []string{"config", "--task", "ks", "--set", "model.c0=abc"}, wantCode: 1,
			wantStderr: "uhno: config: key model.c0 in --set: got \"abc\", want an integer\n"},
		{name: "out of range", args: []string{"config", "--task", "darcy", "--set", "spar.rho_min=0.95"}, wantCode: 1,
			wantStderr: "uhno: config: key spar.rho_min: got 0.95, want <= spar.rho_max (0.9)\n"},
		{name: "bad environment", args: []string{"config", "--task", "ks"}, env: map[string]string{"UHNO_OPTIM_LR": "fast"}, wantCode: 1,
			wantStderr: "uhno: config: key optim.lr in environment: got \"fast\", want a finite number\n"},
		{name: "help names what exists", args: []string{"--help"},
			wantOut: []string{"U-HNO (any ablation mode) or one of the seven baselines", "U-HNO, its modes and the baselines"}},
		{name: "eval's errors carry its name", args: []string{"eval", "--checkpoint", "/nonexistent"}, wantCode: 1,
			wantStderr: "uhno: eval: checkpoint /nonexistent: stat /nonexistent: no such file or directory\n"},
		{name: "train's errors carry its name", args: []string{"train", "--resume", "/nonexistent"}, wantCode: 1,
			wantStderr: "uhno: train: checkpoint /nonexistent: stat /nonexistent: no such file or directory\n"},
		{name: "doctor takes no arguments", args: []string{"doctor", "now"}, wantCode: 1,
			wantStderr: "uhno: unknown command \"now\" for \"uhno doctor\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t, tt.env)
			code, out, errOut := execute(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tt.wantCode, errOut)
			}
			if errOut != tt.wantStderr {
				t.Errorf("stderr\n got: %q\nwant: %q", errOut, tt.wantStderr)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if tt.wantCode != 0 && out != "" {
				t.Errorf("stdout on error: %q", out)
			}
		})
	}
}
