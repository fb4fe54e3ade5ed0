package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestApplySetsValues(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		check  func(c *Config) bool
	}{
		{"nested mapping", map[string]any{"optim": map[string]any{"lr": 0.002, "batch": 8}},
			func(c *Config) bool { return c.Optim.LR == 0.002 && c.Optim.Batch == 8 }},
		{"flat dotted keys", map[string]any{"model.c0": 48, "spar.rho0": 0.4},
			func(c *Config) bool { return c.Model.C0 == 48 && c.SPAR.Rho0 == 0.4 }},
		{"strings are parsed (env and flags)", map[string]any{"model.c0": " 48 ", "optim.lr": "3e-4", "spar.unbiased_std": "false", "seed": "7"},
			func(c *Config) bool {
				return c.Model.C0 == 48 && c.Optim.LR == 3e-4 && !c.SPAR.UnbiasedStd && c.Seed == 7
			}},
		{"integer accepted for a float", map[string]any{"optim.lr": 1},
			func(c *Config) bool { return c.Optim.LR == 1 }},
		{"integral float accepted for an integer (JSON)", map[string]any{"model.c0": 32.0},
			func(c *Config) bool { return c.Model.C0 == 32 }},
		{"YAML list", map[string]any{"pde.grid": []any{64, 64}, "model.sigmas": []any{0.5, 1, 2.5}},
			func(c *Config) bool {
				return slices.Equal(c.PDE.Grid, []int{64, 64}) && slices.Equal(c.Model.Sigmas, []float64{0.5, 1, 2.5})
			}},
		{"comma list string", map[string]any{"pde.grid": "32,32", "data.inputs": "density, pressure"},
			func(c *Config) bool {
				return slices.Equal(c.PDE.Grid, []int{32, 32}) && slices.Equal(c.Data.Inputs, []string{"density", "pressure"})
			}},
		{"bracketed list string", map[string]any{"model.sigmas": "[0.5, 2]"},
			func(c *Config) bool { return slices.Equal(c.Model.Sigmas, []float64{0.5, 2}) }},
		{"Go slice", map[string]any{"optim.betas": []float64{0.8, 0.99}},
			func(c *Config) bool { return slices.Equal(c.Optim.Betas, []float64{0.8, 0.99}) }},
		{"keys are case-insensitive", map[string]any{"Optim": map[string]any{"LR": 0.5}},
			func(c *Config) bool { return c.Optim.LR == 0.5 }},
		{"deeper section", map[string]any{"pde": map[string]any{"ic": map[string]any{"kind": "grf", "tau": 7}}},
			func(c *Config) bool { return c.PDE.IC.Kind == "grf" && c.PDE.IC.Tau == 7 }},
		{"empty section is ignored", map[string]any{"optim": nil},
			func(c *Config) bool { return reflect.DeepEqual(*c, Config{}) }},
		{"map[any]any section", map[string]any{"loss": map[any]any{"lambda_h1": 0.1}},
			func(c *Config) bool { return c.Loss.LambdaH1 == 0.1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			if err := Apply(&c, tt.values, "test"); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if !tt.check(&c) {
				t.Fatalf("values not set as expected: %+v", c)
			}
		})
	}
}

func TestApplyLaterLayerWins(t *testing.T) {
	var c Config
	layers := []map[string]any{
		{"optim": map[string]any{"lr": 0.001, "batch": 32}},
		{"optim.lr": "0.002"},
	}
	for i, l := range layers {
		if err := Apply(&c, l, "layer"); err != nil {
			t.Fatalf("layer %d: %v", i, err)
		}
	}
	if c.Optim.LR != 0.002 || c.Optim.Batch != 32 {
		t.Fatalf("got lr %g batch %d, want lr 0.002 (second layer) and batch 32 (first layer)", c.Optim.LR, c.Optim.Batch)
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"unknown key, near a valid one", map[string]any{"optim": map[string]any{"lrr": 0.1}},
			`config: unknown key "optim.lrr" in my.yaml; did you mean "optim.lr"?`},
		{"unknown key, right leaf in the wrong section", map[string]any{"model.lr": 0.1},
			`config: unknown key "model.lr" in my.yaml; did you mean "optim.lr"?`},
		{"unknown top-level key", map[string]any{"epochs": 3},
			`config: unknown key "epochs" in my.yaml; valid top-level keys: task, dim, seed, pde.*, data.*, model.*, loss.*, spar.*, optim.*`},
		{"unknown section", map[string]any{"optimizer": map[string]any{"lr": 1}},
			`config: unknown key "optimizer" in my.yaml; did you mean "optim"?`},
		{"string for an integer", map[string]any{"model.c0": "abc"},
			`config: key model.c0 in my.yaml: got "abc", want an integer`},
		{"fraction for an integer", map[string]any{"model.c0": 32.5},
			`config: key model.c0 in my.yaml: got 32.5, want an integer`},
		{"string for a float", map[string]any{"optim.lr": "fast"},
			`config: key optim.lr in my.yaml: got "fast", want a finite number`},
		{"NaN for a float", map[string]any{"optim.lr": "NaN"},
			`config: key optim.lr in my.yaml: got "NaN", want a finite number`},
		{"bad bool", map[string]any{"spar.unbiased_std": "maybe"},
			`config: key spar.unbiased_std in my.yaml: got "maybe", want true or false`},
		{"number for a string", map[string]any{"optim.name": 5},
			`config: key optim.name in my.yaml: got 5, want a string`},
		{"bad list element", map[string]any{"pde.grid": []any{64, "x"}},
			`config: key pde.grid in my.yaml: got [64, "x"], want a list of integers such as [64, 64] or 64,64`},
		{"scalar for a list", map[string]any{"model.sigmas": 0.5},
			`config: key model.sigmas in my.yaml: got 0.5, want a list of numbers such as [0.5, 1.0] or 0.5,1.0`},
		{"scalar for a section", map[string]any{"optim": 5},
			`config: key optim in my.yaml: got 5, want a mapping of keys`},
		{"mapping for a leaf", map[string]any{"optim": map[string]any{"lr": map[string]any{"x": 1}}},
			`config: key optim.lr in my.yaml: got a mapping, want a finite number`},
		{"null for a leaf", map[string]any{"seed": nil},
			`config: key seed in my.yaml: got null, want an integer`},
		{"first error in sorted key order", map[string]any{"optim.lr": "x", "model.c0": "y"},
			`config: key model.c0 in my.yaml: got "y", want an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			err := Apply(&c, tt.values, "my.yaml")
			if err == nil {
				t.Fatalf("Apply returned no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Fatalf("error\n got: %s\nwant: %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	keys := Keys()
	for _, k := range []string{"task", "dim", "seed", "pde.nu", "pde.ic.sigma", "data.history", "model.c0", "loss.lambda_cbc", "spar.rho_max", "optim.lr"} {
		if !slices.Contains(keys, k) {
			t.Errorf("Keys() lacks %q", k)
		}
	}
	for _, k := range []string{"pde", "pde.ic", "optim"} {
		if slices.Contains(keys, k) {
			t.Errorf("Keys() lists section %q as a key", k)
		}
	}
	if !slices.IsSorted(keys) {
		t.Error("Keys() is not sorted")
	}
}

// TestYAMLAndJSONNamesAgree guards the rule that `uhno config --json` prints
// the same keys as the YAML output.
func TestYAMLAndJSONNamesAgree(t *testing.T) {
	var walk func(t *testing.T, typ reflect.Type)
	walk = func(t *testing.T, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			yamlName, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			jsonName, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if yamlName == "" || yamlName != jsonName {
				t.Errorf("%s.%s: yaml name %q, json name %q", typ.Name(), f.Name, yamlName, jsonName)
			}
			if f.Type.Kind() == reflect.Struct {
				walk(t, f.Type)
			}
		}
	}
	walk(t, reflect.TypeOf(Config{}))
}
