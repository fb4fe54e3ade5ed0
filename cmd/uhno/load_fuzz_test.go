package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"uhno/configs"
	"uhno/internal/config"
)

// clearEnv removes every UHNO_* variable for the rest of the test or fuzz
// target, so the developer's environment cannot change what loadConfig
// reads.
func clearEnv(tb testing.TB) {
	tb.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, envPrefix+"_") {
			tb.Setenv(name, "") // registers the restore
			os.Unsetenv(name)
		}
	}
}

// checkLoadError fails t unless err is a one-line configuration error.
func checkLoadError(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, "config: ") || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error is not one line starting with \"config: \": %q", msg)
	}
}

// FuzzSetFlags loads a task's configuration with --set flags from the
// fuzzer, separated by NUL (which no command-line argument can hold):
// parseSets, then config.Apply and Validate through loadConfig. Any input
// may only give a one-line "config: " error. A configuration that loads
// is valid, keeps the task of --task, and is a fixed point: applying the
// same flags to it again changes nothing.
func FuzzSetFlags(f *testing.F) {
	clearEnv(f)
	for _, seed := range []string{
		"optim.lr=3e-4",
		"model.c0=48\x00model.groups=4",
		"pde.grid=[64, 64]\x00pde.grid=32,32",
		"model.sigmas=0.5,1,2.5",
		"MODEL.C0 = 48 ",
		"optim.lr",
		"=3",
		"task=ks",
		"model.c0=abc",
		"optim.lrr=3",
		"pde=3",
		"pde.ic=grf",
		"data.snapshots=99999999999999999999",
		"model.width_mult=1000000\x00model.levels=10",
		"spar.unbiased_std=maybe",
		"data.inputs=",
		"pde.grid=[,]",
		"optim.betas=[0.9, 0.999, 0.5]",
	} {
		f.Add(uint8(0), seed)
		f.Add(uint8(5), seed)
	}
	f.Fuzz(func(t *testing.T, pick uint8, flags string) {
		tasks := config.TaskNames()
		task := tasks[int(pick)%len(tasks)]
		sets := strings.Split(flags, "\x00")
		c, err := loadConfig(loadRequest{Task: task, Sets: sets})
		if err != nil {
			checkLoadError(t, err)
			return
		}
		if c.Task != task {
			t.Fatalf("loaded task %q with --task %s", c.Task, task)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("loaded a configuration that does not validate: %v", err)
		}
		vals, err := parseSets(sets)
		if err != nil {
			t.Fatalf("parseSets refuses flags that loaded: %v", err)
		}
		again := c
		if err := config.Apply(&again, vals, "--set"); err != nil {
			t.Fatalf("applying the flags again: %v", err)
		}
		if !reflect.DeepEqual(again, c) {
			t.Fatalf("applying the flags twice changed the configuration\n got %+v\nwant %+v", again, c)
		}
	})
}

// FuzzConfigFileFlag loads a --config file whose bytes come from the
// fuzzer, as YAML (.yaml, .yml) or JSON (.json), read by viper:
// readFileLayer, the task taken from --task or the file, then Apply and
// Validate. Any file may only give a one-line "config: " error naming the
// problem; a configuration that loads validates.
func FuzzConfigFileFlag(f *testing.F) {
	clearEnv(f)
	for i, task := range config.TaskNames() {
		raw, err := configs.Read(task)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), uint8(0), raw)
	}
	for _, seed := range []struct {
		ext  uint8
		body string
	}{
		{0, "task: ks\noptim:\n  lr: 3e-4\n"},
		{0, "task: 3\n"},
		{0, "- a\n- b\n"},
		{0, "optim: [\n"},
		{0, "a: &a [*a, *a, *a]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n"},
		{0, "optim:\n  lr: .inf\n"},
		{1, "model: {c0: 32.5}\n"},
		{1, "pde: {grid: [1, 2, 3]}\n"},
		{2, `{"task": "darcy", "data": {"file": "x.hdf5"}}`},
		{2, `{"optim": {"batch": 1e300}}`},
		{2, `[1, 2]`},
		{2, `{"model": {"sigmas": "0.5,1,2.5"}}`},
		{2, `{"optim": {"lr": 3e-4}, "optim.lr": 1}`},
	} {
		f.Add(uint8(0), seed.ext, []byte(seed.body))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, pick, ext uint8, body []byte) {
		tasks := config.TaskNames()
		task := ""
		if int(pick) < 4*len(tasks) { // otherwise the file must name it
			task = tasks[int(pick)%len(tasks)]
		}
		name := []string{"fuzz.yaml", "fuzz.yml", "fuzz.json"}[int(ext)%3]
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := loadConfig(loadRequest{Task: task, File: path})
		if err != nil {
			checkLoadError(t, err)
			return
		}
		if task != "" && c.Task != task {
			t.Fatalf("loaded task %q with --task %s", c.Task, task)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("loaded a configuration that does not validate: %v", err)
		}
	})
}
