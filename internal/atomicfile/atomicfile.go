// Package atomicfile is uhno's one way to write a file that a reader must
// never see half-written: results.json, reports, figures, checkpoints'
// metadata, statistics sidecars, dataset indexes and generated HDF5 files.
//
// The durability policy, the same for every writer: the bytes go to a
// temporary file in the destination's directory (so the rename cannot
// cross file systems), the temporary file is fsynced and closed, renamed
// over the destination, and the directory is fsynced so the rename itself
// survives a power cut. On any error the temporary file is removed and the
// destination is untouched. Errors name the destination path; callers add
// the command's name.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data, atomically and durably (see the
// package doc). perm is the new file's mode.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// File is a temporary file that becomes path on Commit. Write to it like
// any *os.File; call Commit to publish it or Abort to throw it away.
// Abort after Commit does nothing, so `defer f.Abort()` is the idiom.
type File struct {
	*os.File
	path string
	done bool
}

// Create opens a temporary file next to path with mode perm.
func Create(path string, perm os.FileMode) (*File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &File{File: tmp, path: path}, nil
}

// Path is the destination the file becomes on Commit.
func (f *File) Path() string { return f.path }

// Commit fsyncs and closes the temporary file, renames it over the
// destination and fsyncs the directory.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("writing %s: already committed or aborted", f.path)
	}
	f.done = true
	tmp := f.File.Name()
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return Publish(tmp, f.path)
}

// Abort closes and removes the temporary file; the destination is
// untouched. It does nothing after Commit or a previous Abort.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.File.Close()
	if rerr := os.Remove(f.File.Name()); err == nil && !errors.Is(rerr, os.ErrNotExist) {
		err = rerr
	}
	return err
}

// TempPath returns an unused name next to path for writers that must
// create the file themselves by name (the HDF5 library does); finish
// with Publish, or remove it.
func TempPath(path string) string {
	return filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.tmp-%d", filepath.Base(path), os.Getpid()))
}

// Publish makes the finished file tmp durable and renames it to path:
// fsync tmp, rename, fsync the directory. On error tmp is removed.
func Publish(tmp, path string) error {
	if err := SyncFile(tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// SyncFile fsyncs the named file's contents.
func SyncFile(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncDir fsyncs a directory, so renames and creations inside it are
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
