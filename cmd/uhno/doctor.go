package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"uhno/internal/experiment"
)

// nvidiaProcFile is where the NVIDIA kernel driver reports its version.
const nvidiaProcFile = "/proc/driver/nvidia/version"

// smiTimeout bounds the nvidia-smi query, which can hang on a broken driver.
const smiTimeout = 5 * time.Second

// hostProbe is how doctor looks at the machine; tests replace its functions.
type hostProbe struct {
	ReadFile   func(name string) ([]byte, error)
	LookPath   func(file string) (string, error)
	QuerySMI   func(ctx context.Context, smi string) (string, error)
	NumCPU     func() int
	GOMAXPROCS func() int
	BuildInfo  func() (*debug.BuildInfo, bool)
}

// systemProbe returns the probe of the real machine.
func systemProbe() hostProbe {
	return hostProbe{
		ReadFile:   os.ReadFile,
		LookPath:   exec.LookPath,
		QuerySMI:   querySMI,
		NumCPU:     runtime.NumCPU,
		GOMAXPROCS: func() int { return runtime.GOMAXPROCS(0) },
		BuildInfo:  debug.ReadBuildInfo,
	}
}

// doctorOptions are the inputs of `uhno doctor`.
type doctorOptions struct {
	Out     io.Writer
	Version string
	Probe   hostProbe
}

// newDoctorCmd returns the `uhno doctor` command. runF runs the parsed
// options; tests pass their own, nil means doctorRun.
func newDoctorCmd(out io.Writer, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{Out: out, Version: version, Probe: systemProbe()}
	return &cobra.Command{
		Use:   "doctor",
		Short: "Report the build, the machine and the usable compute backends",
		Long: `Report this binary's version and build, the Go version, the OS and CPU,
the compute backends compiled in, and whether an NVIDIA GPU is present and
usable by this binary.

In a GPU build (uhno-cuda, uhno-emu) doctor opens the GPU backend and runs
one trivial kernel round trip; it exits non-zero, with the reason on
stderr, when the backend cannot open (no device, cuFFT or the PTX not
loadable) or the round trip fails. The CPU build exits 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return doctorRun(cmd.Context(), opts)
		},
	}
}

// doctorRun writes the report.
func doctorRun(ctx context.Context, opts *doctorOptions) error {
	p := opts.Probe
	info, ok := p.BuildInfo()
	rows := [][2]string{
		{"uhno", versionLine(opts.Version, info, ok)},
		{"go", runtime.Version()},
		{"os/arch", runtime.GOOS + "/" + runtime.GOARCH},
		{"cpu cores", fmt.Sprintf("%d (GOMAXPROCS %d)", p.NumCPU(), p.GOMAXPROCS())},
		{"backends", strings.Join(compiledBackends(), ", ")},
	}
	gpu, gpuErr := gpuRows(ctx, p)
	rows = append(rows, gpu...)
	rows = append(rows, [2]string{"GPU device", gpuDeviceLine(ctx, p)})
	for _, r := range rows {
		if _, err := fmt.Fprintf(opts.Out, "%-11s %s\n", r[0], r[1]); err != nil {
			return fmt.Errorf("doctor: write report: %w", err)
		}
	}
	return doctorVerdict(gpuErr)
}

// doctorVerdict is doctor's result once the whole report is printed: nil
// (exit 0) when the build has no GPU backend or its backend opened and
// computed, else one line saying why the GPU backend is unusable, which
// run prints on stderr before exiting 1.
func doctorVerdict(gpuErr error) error {
	if gpuErr == nil {
		return nil
	}
	return fmt.Errorf("doctor: the GPU backend is not usable: %s", experiment.OneLine(gpuErr.Error()))
}

// versionLine describes the version and what the Go toolchain recorded
// about the build (module version, VCS revision, time, local changes).
func versionLine(version string, info *debug.BuildInfo, ok bool) string {
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

// gpuDeviceLine reports what NVIDIA hardware the machine shows, and whether
// this binary can use it.
func gpuDeviceLine(ctx context.Context, p hostProbe) string {
	var found []string
	if b, err := p.ReadFile(nvidiaProcFile); err == nil {
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
		return fmt.Sprintf("none found (no %s, no nvidia-smi on PATH)", nvidiaProcFile)
	}
	line := strings.Join(found, "; ")
	if !gpuUsable {
		line += "; this binary cannot use it (CPU build)"
	}
	return line
}

// querySMI asks nvidia-smi for the name, driver and memory of each GPU and
// returns them on one line.
func querySMI(ctx context.Context, smi string) (string, error) {
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
