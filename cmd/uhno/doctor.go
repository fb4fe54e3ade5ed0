package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"uhno/internal/doctor"
)

// doctorOptions are the inputs of `uhno doctor`.
type doctorOptions struct {
	Out     io.Writer
	Version string
	Probe   doctor.Probe
}

// newDoctorCmd returns the `uhno doctor` command. runF runs the parsed
// options; tests pass their own, nil means doctorRun.
func newDoctorCmd(out io.Writer, runF func(context.Context, *doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{Out: out, Version: version, Probe: doctor.SystemProbe()}
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

// doctorRun writes the report (doctor.Report) and returns its verdict.
func doctorRun(ctx context.Context, opts *doctorOptions) error {
	build := doctor.Build{Version: opts.Version, Backends: compiledBackends(), Ordinal: gpuOrdinal, NewBackend: newBackend}
	rows, gpuErr := doctor.Report(ctx, build, opts.Probe)
	for _, r := range rows {
		if _, err := fmt.Fprintf(opts.Out, "%-11s %s\n", r[0], r[1]); err != nil {
			return fmt.Errorf("doctor: write report: %w", err)
		}
	}
	return doctor.Verdict(gpuErr)
}
