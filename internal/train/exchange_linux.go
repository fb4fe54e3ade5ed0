package train

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameExchange swaps the paths a and b atomically (renameat2 with
// RENAME_EXCHANGE, Linux 3.15+). It returns errors.ErrUnsupported where
// the kernel or the file system cannot.
func renameExchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		return errors.ErrUnsupported
	}
	return err
}
