package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"uhno/internal/config"
	"uhno/internal/datagen"
)

// configOptions are the inputs of `uhno config`.
type configOptions struct {
	Out  io.Writer
	Load loadRequest
	// JSON selects JSON output instead of YAML.
	JSON bool
	// DataDir is --data: a task uhno datagen --from described there.
	DataDir string
}

// newConfigCmd returns the `uhno config` command. runF runs the parsed
// options; tests pass their own to check flag parsing, nil means configRun.
func newConfigCmd(out io.Writer, runF func(*configOptions) error) *cobra.Command {
	opts := &configOptions{Out: out}
	cmd := &cobra.Command{
		Use:   "config --task NAME [--config FILE] [--set key=value ...] [--json]",
		Short: "Print the fully merged configuration of a task",
		Long: `Print the configuration a run of the task would use, after merging its
sources. Later sources override earlier ones:

  1. the built-in file of the task (embedded in the binary, citing the paper)
  2. --config FILE (YAML or JSON, any subset of the keys)
  3. environment variables UHNO_<KEY>, e.g. UHNO_OPTIM_LR=3e-4 for optim.lr
  4. --set key=value flags, e.g. --set optim.lr=3e-4 --set pde.grid=64,64

Unknown keys, values of the wrong type and values out of range are errors
that name the key, the value and what is allowed. The output is itself a
valid --config file.`,
		Example: `  uhno config --task burgers
  uhno config --data tasks/mine          # the task uhno datagen --from made
  uhno config --task ns2d --set optim.batch=8 --json
  UHNO_MODEL_C0=48 uhno config --task ks --config my.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.DataDir != "" {
				req, err := withDescribed(opts.Load, opts.DataDir)
				if err != nil {
					return err
				}
				if req.Described == nil {
					return fmt.Errorf("config: --data %s: no %s there (uhno datagen --from FILE --out DIR writes it)", opts.DataDir, datagen.TaskFileName)
				}
				opts.Load = req
			}
			if runF != nil {
				return runF(opts)
			}
			return configRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Load.Task, "task", "", "task: "+strings.Join(config.TaskNames(), ", "))
	f.StringVar(&opts.Load.File, "config", "", "YAML or JSON file with keys to override")
	// StringArray, not StringSlice: list values such as pde.grid=64,64
	// contain commas.
	f.StringArrayVar(&opts.Load.Sets, "set", nil, "override one key, key=value (repeatable)")
	f.BoolVar(&opts.JSON, "json", false, "print JSON instead of YAML")
	f.StringVar(&opts.DataDir, "data", "", "the task uhno datagen --from described in DIR: its base task's file with the description's values over it")
	return cmd
}

// configRun loads the configuration and prints it.
func configRun(opts *configOptions) error {
	c, err := loadConfig(opts.Load)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("config: write JSON: %w", err)
		}
		return nil
	}
	if _, err := fmt.Fprintf(opts.Out, "# uhno configuration of task %s: %s\n", c.Task, sourcesLine(opts.Load)); err != nil {
		return fmt.Errorf("config: write YAML: %w", err)
	}
	enc := yaml.NewEncoder(opts.Out)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("config: write YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("config: write YAML: %w", err)
	}
	return nil
}

// sourcesLine describes the merged sources for the YAML header comment.
func sourcesLine(req loadRequest) string {
	parts := []string{"built-in"}
	if req.Described != nil {
		parts = append(parts, "task description "+req.DescribedPath)
	}
	if req.File != "" {
		parts = append(parts, req.File)
	}
	parts = append(parts, envPrefix+"_* environment")
	if len(req.Sets) > 0 {
		parts = append(parts, "--set")
	}
	return strings.Join(parts, " < ")
}
