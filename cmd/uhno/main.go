package main

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	// Ctrl-C (or SIGTERM) cancels the context: long commands stop cleanly,
	// keeping what they finished (datagen resumes, training checkpoints).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// commandErr is an error reworded with the name of the command that met
// it (asCommand); the original stays reachable with errors.Is and As.
type commandErr struct {
	msg string
	err error
}

func (e *commandErr) Error() string { return e.msg }
func (e *commandErr) Unwrap() error { return e.err }

// asCommand words err as command name's own: errors of internal/train
// carry its prefix ("train: checkpoint ..."), which reads as the wrong
// command when eval or ablate opens a run, so that prefix is replaced by
// name; any other error gets name in front unless it has it already.
func asCommand(name string, err error) error {
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "train: ")
	if !strings.HasPrefix(msg, name+": ") {
		msg = name + ": " + msg
	}
	return &commandErr{msg: msg, err: err}
}
