// Package runlock gives a run directory one writer.
//
// Two uhno processes writing the same run directory (a scheduler requeue
// while the old job still runs, a command started twice) interleave their
// logs and remove each other's temporary checkpoints. Every command that
// writes a run directory therefore holds an exclusive advisory lock on a
// file in it, RunLockFile, from before its first write until it exits. The
// lock is flock(2) on an open file: the kernel drops it when the process
// ends in any way, SIGKILL included, so a killed run never leaves a stale
// lock behind and resumes without manual clean-up. The file also holds
// the holder's pid, host and start time, for the refusal message only;
// its presence means nothing.
package runlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// File is the lock file's name inside a run directory.
const File = ".uhno.lock"

// Lock is a held lock; Release it (or exit) to let another writer in.
type Lock struct {
	f   *os.File
	dir string
}

// ErrBusy is wrapped by Acquire's error when another process holds the
// lock.
var ErrBusy = errors.New("in use by another process")

// Acquire creates dir if needed and takes its lock without waiting. When
// another process holds it, the error names the directory and the holder's
// pid and host in one line (and wraps ErrBusy); nothing in dir is changed.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, File)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	held, err := TryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if !held {
		raw, _ := os.ReadFile(path)
		f.Close()
		who := strings.TrimSpace(string(raw))
		if who == "" {
			who = "a process that has not written its pid yet"
		}
		return nil, fmt.Errorf("run directory %s is %w (%s); wait for it to finish or stop it", dir, ErrBusy, who)
	}
	host, _ := os.Hostname()
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "pid %d on host %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	}
	return &Lock{f: f, dir: dir}, nil
}

// Release drops the lock. The file stays: removing it would race with a
// process that has just opened it.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Close() // closing the descriptor releases the flock
		l.f = nil
	}
}
