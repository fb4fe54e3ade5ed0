// Command uhno trains and evaluates U-HNO, the U-shaped hybrid neural
// operator with sparse-point adaptive routing, on the paper's PDE
// benchmarks. Run `uhno --help` for the tasks and commands.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
