// Package configtest gives tests a task's built-in configuration without
// the command layer (viper lives only in cmd/uhno): the embedded YAML
// decoded with config.Apply, optional overrides applied as --set would,
// then validated.
package configtest

import (
	"testing"

	"go.yaml.in/yaml/v3"

	"uhno/configs"
	"uhno/internal/config"
)

// Builtin returns task's embedded configuration with sets applied
// (flat keys such as "pde.t_end"; nil for none), validated. It fails t on
// any error.
func Builtin(t testing.TB, task string, sets map[string]any) config.Config {
	t.Helper()
	raw, err := configs.Read(task)
	if err != nil {
		t.Fatal(err)
	}
	var vals map[string]any
	if err := yaml.Unmarshal(raw, &vals); err != nil {
		t.Fatal(err)
	}
	var c config.Config
	if err := config.Apply(&c, vals, task+".yaml"); err != nil {
		t.Fatal(err)
	}
	if sets != nil {
		if err := config.Apply(&c, sets, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}
