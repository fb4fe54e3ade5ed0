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
	"io"
	"os"
	"path/filepath"
	"syscall"
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
	return rename(OS, tmp, f.path)
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
	return rename(OS, tmp, path)
}

// rename is the policy's last step: the fsynced, closed file tmp is
// renamed over path and path's directory fsynced. On a failed rename tmp
// is removed.
func rename(fsys FS, tmp, path string) error {
	if err := fsys.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// FS is the file system as WriteFileFS writes to it: the seam where a
// caller's tests inject the faults no real device gives on demand (a full
// disk at the Nth write or at fsync, a failing rename). OS is the real one.
type FS interface {
	// Create creates or truncates the named file for writing, mode perm.
	Create(name string, perm os.FileMode) (Writer, error)
	Rename(oldpath, newpath string) error
}

// Writer is a file being written through an FS.
type Writer interface {
	Write(p []byte) (int, error)
	Sync() error
	Close() error
}

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Create(name string, perm os.FileMode) (Writer, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
}
func (osFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// WriteFileFS is WriteFile through fsys, with the same policy: data goes
// to TempPath(path), which is fsynced, closed, renamed over path, and the
// directory fsynced; on error the temporary file is removed. The error
// wraps fsys's, so errors.Is finds an injected fault.
func WriteFileFS(fsys FS, path string, data []byte, perm os.FileMode) error {
	tmp := TempPath(path)
	f, err := fsys.Create(tmp, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	n, err := f.Write(data)
	if err == nil && n != len(data) {
		err = &os.PathError{Op: "write", Path: tmp, Err: io.ErrShortWrite}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return rename(fsys, tmp, path)
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
// durable. A file system that cannot fsync a directory (EINVAL, as some
// network and FUSE file systems answer) is not an error: there is nothing
// more a writer can do there.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
		err = nil
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
