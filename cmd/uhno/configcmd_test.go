package main

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"

	"uhno/internal/config"
)

// TestConfigFlags checks that the flags fill configOptions.
func TestConfigFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want configOptions
	}{
		{"task only", []string{"--task", "ks"}, configOptions{Load: loadRequest{Task: "ks"}}},
		{"all flags", []string{"--task=ns2d", "--config", "my.yaml", "--set", "optim.lr=1e-4", "--json"},
			configOptions{Load: loadRequest{Task: "ns2d", File: "my.yaml", Sets: []string{"optim.lr=1e-4"}}, JSON: true}},
		{"list values keep their commas", []string{"--set", "pde.grid=64,64", "--set", "model.sigmas=[1,2,3]"},
			configOptions{Load: loadRequest{Sets: []string{"pde.grid=64,64", "model.sigmas=[1,2,3]"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *configOptions
			cmd := newConfigCmd(io.Discard, func(o *configOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			got.Out = nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// TestConfigOutputRoundTrips checks that the printed configuration, YAML or
// JSON, is a --config file that loads to the same configuration.
func TestConfigOutputRoundTrips(t *testing.T) {
	cleanEnv(t, nil)
	for _, task := range config.TaskNames() {
		for _, asJSON := range []bool{false, true} {
			ext := ".yaml"
			if asJSON {
				ext = ".json"
			}
			t.Run(task+ext, func(t *testing.T) {
				var first bytes.Buffer
				if err := configRun(&configOptions{Out: &first, Load: loadRequest{Task: task}, JSON: asJSON}); err != nil {
					t.Fatal(err)
				}
				path := writeFile(t, "printed"+ext, first.String())
				again, err := loadConfig(loadRequest{File: path})
				if err != nil {
					t.Fatalf("reloading the printed configuration: %v\n%s", err, first.String())
				}
				orig, err := loadConfig(loadRequest{Task: task})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(again, orig) {
					t.Errorf("round trip changed the configuration:\n got %+v\nwant %+v", again, orig)
				}
			})
		}
	}
}

func TestConfigYAMLHeader(t *testing.T) {
	cleanEnv(t, nil)
	var out bytes.Buffer
	opts := &configOptions{Out: &out, Load: loadRequest{Task: "kdv", Sets: []string{"seed=3"}}}
	if err := configRun(opts); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	want := "# uhno configuration of task kdv: built-in < UHNO_* environment < --set"
	if first != want {
		t.Errorf("header %q, want %q", first, want)
	}
	if !strings.Contains(out.String(), "\nseed: 3\n") {
		t.Errorf("--set seed=3 not in output:\n%s", out.String())
	}
}
