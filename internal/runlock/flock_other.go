//go:build !unix

package runlock

import "os"

// TryLock does not lock where flock(2) is missing: uhno's supported
// systems are Linux (and other Unix); elsewhere one writer per run
// directory is the user's to keep.
func TryLock(*os.File) (bool, error) { return true, nil }
