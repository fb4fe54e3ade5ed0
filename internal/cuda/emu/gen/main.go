// Command gen writes the CUDA emulator's generated C++ files (package
// emugen) into internal/cuda/emu. Run it with `go generate
// ./internal/cuda/emu` after editing kernels/*.cu.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"uhno/internal/cuda/emu/emugen"
)

func main() {
	// go generate runs in the package directory, internal/cuda/emu.
	files, err := emugen.Generate(filepath.Join("..", "..", "..", "kernels"), "../../../kernels")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	old, _ := filepath.Glob("k_*.cc")
	for _, p := range old {
		if _, keep := files[p]; !keep {
			os.Remove(p)
		}
	}
	for name, b := range files {
		if strings.ContainsRune(name, '/') {
			continue
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
