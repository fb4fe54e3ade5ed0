package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"uhno/internal/config"
)

// configCheck wraps a loaded Config with a comparison helper.
type configCheck struct{ config.Config }

// equal reports a mismatch of one key.
func (configCheck) equal(t *testing.T, key string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", key, got, want)
	}
}

// cleanEnv removes every UHNO_* variable for the duration of the test, so
// the developer's environment cannot leak into the results, then sets env.
func cleanEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, envPrefix+"_") {
			t.Setenv(name, "") // registers the restore
			os.Unsetenv(name)
		}
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// writeFile writes a config file into the test's temporary directory.
func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPrecedence checks flag > environment > file > built-in, key by key.
func TestPrecedence(t *testing.T) {
	const builtinLR = 1e-3 // configs/burgers.yaml
	tests := []struct {
		name   string
		file   string // optim.lr in the --config file, "" for no file
		env    string // UHNO_OPTIM_LR, "" for unset
		set    string // --set optim.lr=..., "" for none
		wantLR float64
	}{
		{"built-in only", "", "", "", builtinLR},
		{"file beats built-in", "2e-3", "", "", 2e-3},
		{"env beats built-in", "", "3e-3", "", 3e-3},
		{"env beats file", "2e-3", "3e-3", "", 3e-3},
		{"flag beats built-in", "", "", "4e-3", 4e-3},
		{"flag beats file", "2e-3", "", "4e-3", 4e-3},
		{"flag beats env", "", "3e-3", "4e-3", 4e-3},
		{"flag beats env beats file", "2e-3", "3e-3", "4e-3", 4e-3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			if tt.env != "" {
				env["UHNO_OPTIM_LR"] = tt.env
			}
			cleanEnv(t, env)
			req := loadRequest{Task: "burgers"}
			if tt.file != "" {
				// The file also sets a second key, which no other layer touches.
				req.File = writeFile(t, "my.yaml", "optim:\n  lr: "+tt.file+"\n  batch: 8\n")
			}
			if tt.set != "" {
				req.Sets = []string{"optim.lr=" + tt.set}
			}
			c, err := loadConfig(req)
			if err != nil {
				t.Fatal(err)
			}
			if c.Optim.LR != tt.wantLR {
				t.Errorf("optim.lr = %g, want %g", c.Optim.LR, tt.wantLR)
			}
			wantBatch := 32 // built-in
			if tt.file != "" {
				wantBatch = 8
			}
			if c.Optim.Batch != wantBatch {
				t.Errorf("optim.batch = %d, want %d (layers merge key by key)", c.Optim.Batch, wantBatch)
			}
		})
	}
}

// TestTaskPrecedence checks that the task is chosen by --task, then
// UHNO_TASK, then the file, and that the chosen task's built-in file is the
// base.
func TestTaskPrecedence(t *testing.T) {
	tests := []struct {
		name     string
		flag     string
		env      string
		fileTask string
		want     string
	}{
		{"flag only", "ks", "", "", "ks"},
		{"env only", "", "kdv", "", "kdv"},
		{"file only", "", "", "ns2d", "ns2d"},
		{"flag beats env and file", "ks", "kdv", "ns2d", "ks"},
		{"env beats file", "", "kdv", "ns2d", "kdv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			if tt.env != "" {
				env["UHNO_TASK"] = tt.env
			}
			cleanEnv(t, env)
			req := loadRequest{Task: tt.flag}
			if tt.fileTask != "" {
				req.File = writeFile(t, "task.yaml", "task: "+tt.fileTask+"\n")
			}
			c, err := loadConfig(req)
			if err != nil {
				t.Fatal(err)
			}
			if c.Task != tt.want {
				t.Errorf("task = %q, want %q", c.Task, tt.want)
			}
			want := map[string]int{"ks": 32, "kdv": 24, "ns2d": 12}[tt.want] // Tab. per-task-hp K0
			if c.Model.K0 != want {
				t.Errorf("model.k0 = %d, want %d from the built-in %s.yaml", c.Model.K0, want, tt.want)
			}
		})
	}
}

func TestLoadSources(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		file  string // file name and body, "name|body"
		sets  []string
		check func(t *testing.T, c configCheck)
	}{
		{"env list and bool", map[string]string{"UHNO_MODEL_SIGMAS": "0.25,1,3", "UHNO_SPAR_UNBIASED_STD": "false"}, "", nil,
			func(t *testing.T, c configCheck) {
				c.equal(t, "model.sigmas", c.Model.Sigmas, []float64{0.25, 1, 3})
				c.equal(t, "spar.unbiased_std", c.SPAR.UnbiasedStd, false)
			}},
		{"other UHNO variables are left alone", map[string]string{"UHNO_CUFFT_LIBRARY": "/x/libcufft.so", "UHNO_SEED_FILE": "x"}, "", nil,
			func(t *testing.T, c configCheck) { c.equal(t, "task", c.Task, "burgers") }},
		{"JSON file", nil, `my.json|{"model": {"c0": 48}, "optim": {"betas": [0.8, 0.9]}}`, nil,
			func(t *testing.T, c configCheck) {
				c.equal(t, "model.c0", c.Model.C0, 48)
				c.equal(t, "optim.betas", c.Optim.Betas, []float64{0.8, 0.9})
			}},
		{"later --set wins", nil, "", []string{"model.c0=16", "model.c0=64"},
			func(t *testing.T, c configCheck) { c.equal(t, "model.c0", c.Model.C0, 64) }},
		{"--set list with brackets", nil, "", []string{"model.sigmas=[1, 2, 3]"},
			func(t *testing.T, c configCheck) { c.equal(t, "model.sigmas", c.Model.Sigmas, []float64{1, 2, 3}) }},
		{"upper-case keys in a file", nil, "up.yaml|Optim:\n  LR: 0.5\n", nil,
			func(t *testing.T, c configCheck) { c.equal(t, "optim.lr", c.Optim.LR, 0.5) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t, tt.env)
			req := loadRequest{Task: "burgers", Sets: tt.sets}
			if tt.file != "" {
				name, body, _ := strings.Cut(tt.file, "|")
				req.File = writeFile(t, name, body)
			}
			c, err := loadConfig(req)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, configCheck{c})
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		task string
		env  map[string]string
		file string // "name|body"
		sets []string
		want string // the whole error; FILE stands for the file's path
	}{
		{"no task", "", nil, "", nil,
			"config: no task given; pass --task NAME (one of burgers, ks, kdv, adv2d, ac2d, ns2d, darcy, cfd3d, burgers-paper, burgers-shock), set UHNO_TASK, or put task: in the --config file"},
		{"unknown task from env", "", map[string]string{"UHNO_TASK": "heat"}, "", nil,
			`config: unknown task "heat"; valid tasks: burgers, ks, kdv, adv2d, ac2d, ns2d, darcy, cfd3d, burgers-paper, burgers-shock`},
		{"unknown key in file", "burgers", nil, "my.yaml|optim:\n  lrr: 0.1\n", nil,
			`config: unknown key "optim.lrr" in FILE; did you mean "optim.lr"?`},
		{"wrong type in file", "burgers", nil, "my.yaml|model:\n  c0: abc\n", nil,
			`config: key model.c0 in FILE: got "abc", want an integer`},
		{"non-string task in file", "", nil, "my.yaml|task: 3\n", nil,
			`config: key task in FILE: got 3, want a task name`},
		{"out of range in file", "burgers", nil, "my.yaml|spar:\n  rho_min: 0.95\n", nil,
			`config: key spar.rho_min: got 0.95, want <= spar.rho_max (0.9)`},
		{"wrong type in env", "burgers", map[string]string{"UHNO_MODEL_C0": "abc"}, "", nil,
			`config: key model.c0 in environment: got "abc", want an integer`},
		{"unknown env variable", "burgers", map[string]string{"UHNO_OPTIM_LRR": "1"}, "", nil,
			`config: unknown environment variable UHNO_OPTIM_LRR; did you mean UHNO_OPTIM_LR?`},
		{"wrong type in --set", "burgers", nil, "", []string{"model.c0=abc"},
			`config: key model.c0 in --set: got "abc", want an integer`},
		{"unknown key in --set", "burgers", nil, "", []string{"optim.lrr=3"},
			`config: unknown key "optim.lrr" in --set; did you mean "optim.lr"?`},
		{"--set without =", "burgers", nil, "", []string{"optim.lr"},
			`config: --set "optim.lr": want key=value, for example --set optim.lr=3e-4`},
		{"--set task", "burgers", nil, "", []string{"task=ks"},
			`config: --set "task=ks": choose the task with --task`},
		{"negative viscosity from --set", "burgers", nil, "", []string{"pde.nu=-0.01"},
			`config: key pde.nu: got -0.01, want a viscosity > 0`},
		{"batch below 1 from --set", "ns2d", nil, "", []string{"optim.batch=0"},
			`config: key optim.batch: got 0, want >= 1`},
		{"zero learning rate from env", "ks", map[string]string{"UHNO_OPTIM_LR": "0"}, "", nil,
			`config: key optim.lr: got 0, want a learning rate > 0`},
		{"modes below 1", "kdv", nil, "", []string{"model.k0=0"},
			`config: key model.k0: got 0, want >= 1 Fourier mode`},
		{"key the task does not use", "ks", nil, "", []string{"pde.nu=0.1"},
			`config: key pde.nu: got 0.1, but task ks does not use it (its pde keys: pde.solver_grid, pde.dt, pde.t_end, pde.t_burn, pde.ic.kind, pde.ic.alpha, pde.ic.tau, pde.ic.sigma)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t, tt.env)
			req := loadRequest{Task: tt.task, Sets: tt.sets}
			if tt.file != "" {
				name, body, _ := strings.Cut(tt.file, "|")
				req.File = writeFile(t, name, body)
			}
			_, err := loadConfig(req)
			want := strings.ReplaceAll(tt.want, "FILE", req.File)
			if err == nil || err.Error() != want {
				t.Fatalf("error\n got: %v\nwant: %s", err, want)
			}
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	cleanEnv(t, nil)
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	if _, err := loadConfig(loadRequest{Task: "burgers", File: missing}); err == nil || !strings.HasPrefix(err.Error(), "config: --config "+missing+": ") {
		t.Errorf("missing file: got %v", err)
	}
	odd := writeFile(t, "my.conf", "optim: {lr: 1}\n")
	if _, err := loadConfig(loadRequest{Task: "burgers", File: odd}); err == nil || !strings.Contains(err.Error(), "want a .yaml, .yml or .json file") {
		t.Errorf("unsupported extension: got %v", err)
	}
	broken := writeFile(t, "broken.yaml", "optim: [\n")
	if _, err := loadConfig(loadRequest{Task: "burgers", File: broken}); err == nil || !strings.HasPrefix(err.Error(), "config: --config "+broken+": ") {
		t.Errorf("malformed YAML: got %v", err)
	}
}

func TestEnvName(t *testing.T) {
	tests := map[string]string{
		"optim.lr":         "UHNO_OPTIM_LR",
		"model.max_radius": "UHNO_MODEL_MAX_RADIUS",
		"pde.ic.sigma":     "UHNO_PDE_IC_SIGMA",
		"seed":             "UHNO_SEED",
	}
	for key, want := range tests {
		if got := envName(key); got != want {
			t.Errorf("envName(%q) = %q, want %q", key, got, want)
		}
	}
}
