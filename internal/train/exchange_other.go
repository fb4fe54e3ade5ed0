//go:build !linux

package train

import "errors"

// renameExchange is unsupported here; replaceDir falls back to two
// renames.
func renameExchange(a, b string) error { return errors.ErrUnsupported }
