package experiment

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"uhno/internal/atomicfile"
	"uhno/internal/tensor"
)

// Env is what every experiment takes from the command that runs it:
// where to print, the binary's version (recorded in checkpoints and
// results) and how to open a compute backend. The backend is chosen by
// the binary's build (the CPU, the GPU, the emulator), which only the
// command knows.
type Env struct {
	// Out receives the results and progress lines, Err the warnings and
	// progress bars.
	Out, Err io.Writer
	// Version is the binary's release name.
	Version string
	// NewBackend opens a backend with threads CPU workers (threads > 0)
	// and returns the function that closes it.
	NewBackend func(threads int) (tensor.Backend, func() error, error)
}

// openBackend opens the backend train and eval compute on (NewBackend:
// the CPU with `threads` workers, all cores when threads <= 0, or the GPU
// in the cuda build). The returned function closes it, printing a failure
// to close as a warning on Err: the command's work is done by then. Call
// both from the same goroutine.
func (e Env) openBackend(threads int) (tensor.Backend, func(), error) {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	b, closeB, err := e.NewBackend(threads)
	if err != nil {
		return nil, nil, err
	}
	return b, func() {
		if err := closeB(); err != nil {
			fmt.Fprintf(e.Err, "warning: %v\n", err)
		}
	}, nil
}

// RunsDir is where uhno train puts its runs by default (--out).
const RunsDir = "runs"

// OneLine joins the lines of a message (cobra's "unknown command" error
// spans several) into one.
func OneLine(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// commandErr is an error reworded with the name of the command that met
// it (AsCommand); the original stays reachable with errors.Is and As.
type commandErr struct {
	msg string
	err error
}

func (e *commandErr) Error() string { return e.msg }
func (e *commandErr) Unwrap() error { return e.err }

// AsCommand words err as command name's own: errors of internal/train
// carry its prefix ("train: checkpoint ..."), which reads as the wrong
// command when eval or ablate opens a run, so that prefix is replaced by
// name; any other error gets name in front unless it has it already.
func AsCommand(name string, err error) error {
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "train: ")
	if !strings.HasPrefix(msg, name+": ") {
		msg = name + ": " + msg
	}
	return &commandErr{msg: msg, err: err}
}

// writeFile replaces path with data atomically and durably
// (atomicfile.WriteFile), with an error that names command cmd.
func writeFile(cmd, path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}
