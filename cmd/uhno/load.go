package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/viper"

	"uhno/configs"
	"uhno/internal/config"
	"uhno/internal/datagen"
)

// envPrefix starts every environment variable uhno reads: optim.lr is read
// from UHNO_OPTIM_LR.
const envPrefix = "UHNO"

// loadRequest names the configuration sources given on the command line.
// The environment is read from the process.
type loadRequest struct {
	// Task is --task; empty means "take it from UHNO_TASK or the file".
	Task string
	// File is --config; empty means none.
	File string
	// Sets are the --set key=value flags, applied in order.
	Sets []string
	// Described, when set, is a user's data file described by `uhno
	// datagen --from` (DescribedPath its task.json): the task is its base
	// (unless Task names another) and its values are a layer over the
	// built-in file, below --config, the environment and --set.
	Described     *datagen.TaskFile
	DescribedPath string
}

// layer is one configuration source: its values and its name for errors.
type layer struct {
	source string
	values map[string]any
}

// loadConfig builds the configuration of one task from its sources, in
// rising precedence: the built-in task file, the --config file, UHNO_*
// environment variables, and --set flags. Each source is read with viper,
// checked on its own (so an error names the file, variable or flag at
// fault) and applied over the previous ones; the result is validated.
//
// The task is chosen first, with the same precedence: --task, then
// UHNO_TASK, then the file's "task" key.
func loadConfig(req loadRequest) (config.Config, error) {
	var fileVals map[string]any
	if req.File != "" {
		v, err := readFileLayer(req.File)
		if err != nil {
			return config.Config{}, err
		}
		fileVals = v
	}
	envVals, err := readEnvLayer()
	if err != nil {
		return config.Config{}, err
	}
	setVals, err := parseSets(req.Sets)
	if err != nil {
		return config.Config{}, err
	}

	if req.Described != nil && req.Task == "" {
		req.Task = req.Described.Base
	}
	task, err := resolveTask(req, envVals, fileVals)
	if err != nil {
		return config.Config{}, err
	}
	if _, err := config.LookupTask(task); err != nil {
		return config.Config{}, err
	}
	builtin, err := readBuiltinLayer(task)
	if err != nil {
		return config.Config{}, err
	}

	layers := []layer{{"built-in " + task + ".yaml", builtin}}
	if req.Described != nil {
		layers = append(layers, layer{"task description " + req.DescribedPath, req.Described.Values(req.DescribedPath)})
	}
	if fileVals != nil {
		layers = append(layers, layer{req.File, fileVals})
	}
	layers = append(layers, layer{"environment", envVals}, layer{"--set", setVals})
	var c config.Config
	for _, l := range layers {
		if err := config.Apply(&c, l.values, l.source); err != nil {
			return config.Config{}, err
		}
	}
	c.Task = task
	if err := c.Validate(); err != nil {
		return config.Config{}, err
	}
	return c, nil
}

// resolveTask picks the task by precedence and removes the task key from
// the lower layers, so that they cannot override the choice.
func resolveTask(req loadRequest, envVals, fileVals map[string]any) (string, error) {
	var fileTask string
	if raw, ok := fileVals["task"]; ok {
		s, isString := raw.(string)
		if !isString {
			return "", fmt.Errorf("config: key task in %s: got %v, want a task name", req.File, raw)
		}
		fileTask = s
		delete(fileVals, "task")
	}
	var envTask string
	if raw, ok := envVals["task"]; ok {
		envTask = raw.(string) // readEnvLayer stores strings only
		delete(envVals, "task")
	}
	for _, t := range []string{req.Task, envTask, fileTask} {
		if t = strings.TrimSpace(t); t != "" {
			return t, nil
		}
	}
	return "", fmt.Errorf("config: no task given; pass --task NAME (one of %s), set %s_TASK, or put task: in the --config file",
		strings.Join(config.TaskNames(), ", "), envPrefix)
}

// readBuiltinLayer returns the embedded configuration of task.
func readBuiltinLayer(task string) (map[string]any, error) {
	raw, err := configs.Read(task)
	if err != nil {
		return nil, err
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("config: built-in %s.yaml: %w", task, err)
	}
	return v.AllSettings(), nil
}

// readFileLayer reads a --config file (YAML or JSON, by extension).
func readFileLayer(path string) (map[string]any, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("config: --config %s: %w", path, err)
	}
	v := viper.New()
	v.SetConfigFile(path)
	if err := v.ReadInConfig(); err != nil {
		var unsupported viper.UnsupportedConfigError
		if errors.As(err, &unsupported) {
			return nil, fmt.Errorf("config: --config %s: %w (want a .yaml, .yml or .json file)", path, lineError{err})
		}
		// A parse error of the file's contents, which YAML may spread
		// over lines ("yaml: unmarshal errors:\n  line 1: ...").
		return nil, fmt.Errorf("config: --config %s: %w", path, lineError{err})
	}
	return v.AllSettings(), nil
}

// lineError is an error whose message is put on one line, as every uhno
// error is: a line break becomes "; " (a space after a colon) and the
// indentation after it is dropped.
type lineError struct{ err error }

func (e lineError) Error() string {
	var b strings.Builder
	lines := strings.FieldsFunc(e.err.Error(), func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if i > 0 {
			if strings.HasSuffix(lines[i-1], ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

func (e lineError) Unwrap() error { return e.err }

// envName returns the environment variable read for a key.
func envName(key string) string {
	return envPrefix + "_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// readEnvLayer returns the configuration keys set through UHNO_*
// environment variables, as strings. A variable in a configuration
// namespace (UHNO_OPTIM_*, UHNO_MODEL_*, ..., UHNO_SEED) that matches no
// key is an error naming the nearest valid variable; other UHNO_* variables
// are left alone for other uses.
func readEnvLayer() (map[string]any, error) {
	v := viper.New()
	v.SetEnvPrefix(envPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	keys := config.Keys()
	known := make([]string, 0, len(keys))
	var namespaces []string
	for _, k := range keys {
		if err := v.BindEnv(k); err != nil {
			return nil, fmt.Errorf("config: bind %s: %w", envName(k), err)
		}
		known = append(known, envName(k))
		head, _, nested := strings.Cut(k, ".")
		ns := envName(head)
		if nested {
			ns += "_"
		}
		if !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(known, name) {
			continue
		}
		for _, ns := range namespaces {
			if name == ns || (strings.HasSuffix(ns, "_") && strings.HasPrefix(name, ns)) {
				msg := fmt.Sprintf("config: unknown environment variable %s", name)
				if near, ok := config.Nearest(name, known); ok {
					msg += fmt.Sprintf("; did you mean %s?", near)
				}
				return nil, fmt.Errorf("%s", msg)
			}
		}
	}
	vals := map[string]any{}
	for _, k := range keys {
		if v.IsSet(k) {
			vals[k] = v.GetString(k)
		}
	}
	return vals, nil
}

// parseSets turns --set key=value flags into a layer; a later flag for the
// same key wins.
func parseSets(sets []string) (map[string]any, error) {
	vals := map[string]any{}
	for _, s := range sets {
		key, value, ok := strings.Cut(s, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if !ok || key == "" {
			return nil, fmt.Errorf("config: --set %q: want key=value, for example --set optim.lr=3e-4", s)
		}
		if key == "task" {
			return nil, fmt.Errorf("config: --set %q: choose the task with --task", s)
		}
		vals[key] = value
	}
	return vals, nil
}

// describedIn reads the task uhno datagen --from wrote into dir (nil, and
// no error, when dir holds none), with its task.json's path.
func describedIn(dir string) (*datagen.TaskFile, string, error) {
	path := describedTask(dir)
	if path == "" {
		return nil, "", nil
	}
	tf, err := datagen.ReadTaskFile(filepath.Dir(path))
	if err != nil {
		return nil, "", err
	}
	return &tf, path, nil
}

// withDescribed is req with the task described in dir as its described
// layer (req itself when dir holds none).
func withDescribed(req loadRequest, dir string) (loadRequest, error) {
	tf, path, err := describedIn(dir)
	if err != nil || tf == nil {
		return req, err
	}
	req.Described, req.DescribedPath = tf, path
	return req, nil
}
