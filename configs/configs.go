// Package configs embeds the built-in configuration of each benchmark task,
// one YAML file per task named after it (burgers.yaml, ks.yaml, ...), so
// that the uhno binary carries them and runs from any directory.
//
// Every value in the files cites the section or table of the paper it comes
// from; values the paper does not give are marked "choice (paper is
// silent)" and registered, each with its reason, in docs/DECISIONS.md.
package configs

import (
	"embed"
	"fmt"
	"io/fs"
)

// FS holds the task files at its root.
//
//go:embed *.yaml
var FS embed.FS

// Read returns the built-in YAML of the named task.
func Read(task string) ([]byte, error) {
	b, err := fs.ReadFile(FS, task+".yaml")
	if err != nil {
		return nil, fmt.Errorf("configs: no built-in configuration for task %q: %w", task, err)
	}
	return b, nil
}
