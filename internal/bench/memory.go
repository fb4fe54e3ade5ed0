package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// MemoryReporter is implemented by a backend that knows its own memory
// high-water mark (a GPU backend: device memory). Run prefers it to the
// process's resident set.
type MemoryReporter interface {
	// PeakBytes is the most memory the backend has held at once since it
	// was created.
	PeakBytes() int64
}

// procStatus is where Linux reports a process's memory (VmHWM, VmRSS).
const procStatus = "/proc/self/status"

// procClearRefs resets the VmHWM high-water mark when "5" is written to it
// (Linux >= 4.0, proc(5)).
const procClearRefs = "/proc/self/clear_refs"

// ErrNoRSS reports that the resident-set figures are not available (not
// Linux, or /proc is not mounted).
var ErrNoRSS = errors.New("bench: resident set size not available (needs Linux /proc/self/status)")

// PeakRSS returns the process's resident-set high-water mark (VmHWM) and
// its current resident set (VmRSS), in bytes. Both are process-wide: they
// include the Go runtime, the binary and everything else the process holds.
func PeakRSS() (peak, current int64, err error) {
	raw, err := os.ReadFile(procStatus)
	if err != nil {
		return 0, 0, ErrNoRSS
	}
	return parseStatus(raw)
}

// parseStatus reads VmHWM and VmRSS ("VmHWM:   123456 kB") from the text of
// /proc/self/status.
func parseStatus(raw []byte) (peak, current int64, err error) {
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmHWM" && key != "VmRSS") {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("bench: %s line %q: want a number of kB", procStatus, sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: %s line %q: %w", procStatus, sc.Text(), err)
		}
		if key == "VmHWM" {
			peak = kb << 10
		} else {
			current = kb << 10
		}
		found++
	}
	if found != 2 {
		return 0, 0, ErrNoRSS
	}
	return peak, current, nil
}

// ResetPeakRSS returns the Go heap's free memory to the operating system
// and then lowers VmHWM to the current resident set, so that the next
// PeakRSS reports the peak of what follows. It reports whether the reset
// took (it needs Linux >= 4.0 and a writable /proc/self/clear_refs);
// without it the peak also covers everything the process did before.
func ResetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile(procClearRefs, []byte("5"), 0) == nil
}

// procMeminfo is where Linux reports the machine's memory.
const procMeminfo = "/proc/meminfo"

// MachineMemory returns the machine's memory (MemTotal of /proc/meminfo)
// in bytes.
func MachineMemory() (int64, error) {
	raw, err := os.ReadFile(procMeminfo)
	if err != nil {
		return 0, fmt.Errorf("bench: the machine's memory is not known (needs Linux %s)", procMeminfo)
	}
	return parseMeminfo(raw)
}

// parseMeminfo reads MemTotal ("MemTotal:  24589064 kB") from the text of
// /proc/meminfo.
func parseMeminfo(raw []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb <= 0 {
				break
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("bench: %s has no MemTotal line in kB", procMeminfo)
}
