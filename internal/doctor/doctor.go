package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"uhno/internal/experiment"
	"uhno/internal/tensor"
)

// NvidiaProcFile is where the NVIDIA kernel driver reports its version.
const NvidiaProcFile = "/proc/driver/nvidia/version"

// smiTimeout bounds the nvidia-smi query, which can hang on a broken driver.
const smiTimeout = 5 * time.Second

// Probe is how doctor looks at the machine; tests replace its functions.
type Probe struct {
	ReadFile   func(name string) ([]byte, error)
	LookPath   func(file string) (string, error)
	QuerySMI   func(ctx context.Context, smi string) (string, error)
	NumCPU     func() int
	GOMAXPROCS func() int
	BuildInfo  func() (*debug.BuildInfo, bool)
}

// SystemProbe returns the probe of the real machine.
func SystemProbe() Probe {
	return Probe{
		ReadFile:   os.ReadFile,
		LookPath:   exec.LookPath,
		QuerySMI:   QuerySMI,
		NumCPU:     runtime.NumCPU,
		GOMAXPROCS: func() int { return runtime.GOMAXPROCS(0) },
		BuildInfo:  debug.ReadBuildInfo,
	}
}

// Build is what the binary says about itself: its version, the compute
// backends compiled in, and how it opens its backend.
type Build struct {
	Version  string
	Backends []string
	// Ordinal is the GPU a GPU build computes on.
	Ordinal int
	// NewBackend opens the backend train and eval compute on (as
	// experiment.Env.NewBackend); the GPU builds' rows open it with 0
	// threads and run a kernel round trip on it.
	NewBackend func(threads int) (tensor.Backend, func() error, error)
}

// Report returns the rows of the report, each a label and a line, and the
// error that makes the GPU backend unusable (nil when the build has no GPU
// backend or its backend opened and computed): every row is returned
// either way, so that the whole report is printed before doctor fails.
func Report(ctx context.Context, b Build, p Probe) ([][2]string, error) {
	info, ok := p.BuildInfo()
	rows := [][2]string{
		{"uhno", VersionLine(b.Version, info, ok)},
		{"go", runtime.Version()},
		{"os/arch", runtime.GOOS + "/" + runtime.GOARCH},
		{"cpu cores", fmt.Sprintf("%d (GOMAXPROCS %d)", p.NumCPU(), p.GOMAXPROCS())},
		{"backends", strings.Join(b.Backends, ", ")},
	}
	gpu, gpuErr := gpuRows(ctx, b, p)
	rows = append(rows, gpu...)
	rows = append(rows, [2]string{"GPU device", DeviceLine(ctx, p)})
	return rows, gpuErr
}

// Verdict is doctor's result once the whole report is printed: nil
// (exit 0) when the build has no GPU backend or its backend opened and
// computed, else one line saying why the GPU backend is unusable, which
// the command prints on stderr before exiting 1.
func Verdict(gpuErr error) error {
	if gpuErr == nil {
		return nil
	}
	return fmt.Errorf("doctor: the GPU backend is not usable: %s", experiment.OneLine(gpuErr.Error()))
}

// VersionLine describes the version and what the Go toolchain recorded
// about the build (module version, VCS revision, time, local changes).
func VersionLine(version string, info *debug.BuildInfo, ok bool) string {
	var parts []string
	if ok && info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			parts = append(parts, "module "+v)
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev := s.Value
				if len(rev) > 12 {
					rev = rev[:12]
				}
				parts = append(parts, "commit "+rev)
			case "vcs.time":
				parts = append(parts, s.Value)
			case "vcs.modified":
				if s.Value == "true" {
					parts = append(parts, "with local changes")
				}
			}
		}
	}
	if len(parts) == 0 {
		return version + " (no VCS information in this build)"
	}
	return version + " (" + strings.Join(parts, ", ") + ")"
}

// DeviceLine reports what NVIDIA hardware the machine shows, and whether
// this binary can use it (GPUUsable).
func DeviceLine(ctx context.Context, p Probe) string {
	var found []string
	if b, err := p.ReadFile(NvidiaProcFile); err == nil {
		first, _, _ := strings.Cut(string(b), "\n")
		found = append(found, "driver: "+strings.Join(strings.Fields(first), " "))
	}
	if smi, err := p.LookPath("nvidia-smi"); err == nil {
		gpus, err := p.QuerySMI(ctx, smi)
		if err != nil {
			found = append(found, fmt.Sprintf("%s failed: %v", smi, err))
		} else {
			found = append(found, "GPUs: "+gpus)
		}
	}
	if len(found) == 0 {
		return fmt.Sprintf("none found (no %s, no nvidia-smi on PATH)", NvidiaProcFile)
	}
	line := strings.Join(found, "; ")
	if !GPUUsable {
		line += "; this binary cannot use it (CPU build)"
	}
	return line
}

// QuerySMI asks nvidia-smi for the name, driver and memory of each GPU and
// returns them on one line.
func QuerySMI(ctx context.Context, smi string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, smiTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader").Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && len(exitErr.Stderr) > 0 {
			return "", fmt.Errorf("%w: %s", err, strings.Join(strings.Fields(string(exitErr.Stderr)), " "))
		}
		return "", err
	}
	var gpus []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			gpus = append(gpus, l)
		}
	}
	if len(gpus) == 0 {
		return "none listed", nil
	}
	return strings.Join(gpus, " | "), nil
}
