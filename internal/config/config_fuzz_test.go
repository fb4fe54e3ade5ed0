package config

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"uhno/configs"
)

// FuzzConfigFile decodes a configuration file (YAML, or JSON, which the
// YAML decoder and encoding/json both read), applies it over a task's
// built-in configuration and validates the result, as `uhno --config FILE`
// does after viper has read the file.
//
// A file may only produce a one-line "config: " error. A configuration
// that validates must survive the round trip of `uhno config` (printed as
// YAML and as JSON, read back, the same Config, valid again), and every
// buffer size the pipeline and the model derive from it (a frame, a
// trajectory, a batch, one level's activations) must stay within
// maxValues without overflowing an int.
func FuzzConfigFile(f *testing.F) {
	for i, task := range TaskNames() {
		raw, err := configs.Read(task)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), raw)
	}
	for _, seed := range []string{
		"",
		"optim:\n  lr: 3e-4\n  batch: 8\n",
		`{"model": {"c0": 48, "sigmas": [0.5, 2, 4]}, "model.m": 3}`,
		"pde:\n  grid: [65536]\n",
		"data:\n  snapshots: 1000000000000\n  history: 1\n",
		"model:\n  width_mult: 1000\n  levels: 10\n",
		"model: {c0: 1099511627776}\n",
		"optim: {steps: 4611686018427387904, warmup: 0}\n",
		"optim.batch: 9223372036854775807\n",
		"pde: 3\n",
		"model: {c0: 32.5}\n",
		"spar: {rho_min: 0.95}\n",
		"a: &a [*a]\n",
		"data: {inputs: [u, u]}\n",
		"pde: {solver_grid: [0]}\n",
		"seed: -1\n",
		"seed: 9007199254740993\n",
	} {
		f.Add(uint8(0), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, pick uint8, doc []byte) {
		tasks := TaskNames()
		task := tasks[int(pick)%len(tasks)]
		var layers []map[string]any
		var fromYAML map[string]any
		if yaml.Unmarshal(doc, &fromYAML) == nil {
			layers = append(layers, fromYAML)
		}
		var fromJSON map[string]any
		if json.Unmarshal(doc, &fromJSON) == nil {
			layers = append(layers, fromJSON)
		}
		for _, layer := range layers {
			c := builtinConfig(t, task)
			if err := Apply(&c, layer, "fuzz.yaml"); err != nil {
				checkOneLine(t, err)
				continue
			}
			if err := c.Validate(); err != nil {
				checkOneLine(t, err)
				continue
			}
			checkValid(t, c)
		}
	})
}

// builtinConfig is task's embedded configuration, applied but not
// validated (the fuzz input is applied over it).
func builtinConfig(t *testing.T, task string) Config {
	t.Helper()
	raw, err := configs.Read(task)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var c Config
	if err := Apply(&c, m, task+".yaml"); err != nil {
		t.Fatal(err)
	}
	return c
}

// checkOneLine fails t unless err is the package's one-line error.
func checkOneLine(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, "config: ") || strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error is not one line starting with \"config: \": %q", msg)
	}
}

// checkValid checks the invariants of a Config that Validate accepted:
// it reads back from its YAML and JSON forms as the same Config, and the
// sizes derived from it are bounded.
func checkValid(t *testing.T, c Config) {
	t.Helper()
	for _, enc := range []struct {
		name   string
		encode func(any) ([]byte, error)
		decode func([]byte, any) error
	}{
		{"yaml", yaml.Marshal, yaml.Unmarshal},
		{"json", json.Marshal, json.Unmarshal},
	} {
		out, err := enc.encode(c)
		if err != nil {
			t.Fatalf("%s: encoding a valid config: %v", enc.name, err)
		}
		var m map[string]any
		if err := enc.decode(out, &m); err != nil {
			t.Fatalf("%s: reading back\n%s\n%v", enc.name, out, err)
		}
		var back Config
		if err := Apply(&back, m, "round trip"); err != nil {
			t.Fatalf("%s: applying the printed config\n%s\n%v", enc.name, out, err)
		}
		if !reflect.DeepEqual(normalised(back), normalised(c)) {
			t.Fatalf("%s: round trip changed the config\n got %+v\nwant %+v", enc.name, back, c)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("%s: the printed config does not validate: %v", enc.name, err)
		}
	}

	// Every size a consumer derives must be exact in an int.
	cells := func(g []int) int {
		n := 1
		for _, v := range g {
			n = mulBounded(t, n, v)
		}
		return n
	}
	frame := max(cells(c.PDE.Grid), cells(c.PDE.SolverGrid), cells(c.Data.SourceGrid))
	channels := max(len(c.Data.Inputs), len(c.Data.Outputs))
	mulBounded(t, mulBounded(t, c.Data.Snapshots, frame), channels)
	widest := c.Model.C0
	for range c.Model.Levels {
		widest = mulBounded(t, widest, c.Model.WidthMult)
	}
	mulBounded(t, mulBounded(t, c.Optim.Batch, widest), cells(c.PDE.Grid))
	mulBounded(t, mulBounded(t, mulBounded(t, c.Optim.Batch, c.Data.History), len(c.Data.Inputs)), cells(c.PDE.Grid))
	mulBounded(t, c.Data.TrainTrajectories+c.Data.TestTrajectories, c.Data.PairsPerTrajectory)
	mulBounded(t, c.Optim.Steps, c.Optim.Batch)
}

// mulBounded returns a*b for positive a, b, failing t when the product
// exceeds maxValues (or overflows).
func mulBounded(t *testing.T, a, b int) int {
	t.Helper()
	if a < 0 || b < 0 || (b > 0 && a > maxValues/b) {
		t.Fatalf("a valid config implies a size %d x %d beyond %d values", a, b, maxValues)
	}
	return a * b
}

// normalised returns c with -0 as 0 in every float and empty lists as
// nil, so that DeepEqual compares what Validate and the consumers see
// (YAML prints -0 as "-0", which reads back as integer 0; an empty list is
// left out of the printed form).
func normalised(c Config) Config {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice:
			if v.Len() == 0 {
				v.Set(reflect.Zero(v.Type()))
				return
			}
			v.Set(reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()), v)) // a copy: c shares its arrays
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Float64:
			if v.Float() == 0 {
				v.SetFloat(math.Abs(v.Float()))
			}
		}
	}
	walk(reflect.ValueOf(&c).Elem())
	return c
}
