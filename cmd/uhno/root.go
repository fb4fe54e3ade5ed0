package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"uhno/internal/config"
	"uhno/internal/experiment"
)

// run executes the command line args and returns the process exit code:
// 0 on success, 1 on any error. Errors are printed to stderr as one line
// starting with "uhno: "; nothing below this function exits the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root, prof := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if perr := prof.stop(); err == nil {
		err = perr
	}
	if err != nil {
		fmt.Fprintf(stderr, "uhno: %s\n", experiment.OneLine(err.Error()))
		return 1
	}
	return 0
}

// newRootCmd returns the uhno command tree, writing to stdout and stderr.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root, _ := newRoot(stdout, stderr)
	return root
}

// profiler writes a Go CPU profile of one command when --cpuprofile names
// a file: the way to see where a slow model spends its training step
// (go tool pprof bin/uhno FILE).
type profiler struct {
	path string
	f    *os.File
}

// start begins profiling into p.path, if set.
func (p *profiler) start() error {
	if p.path == "" {
		return nil
	}
	f, err := os.Create(p.path)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile %s: %w", p.path, err)
	}
	p.f = f
	return nil
}

// stop ends a profile that start began and closes its file.
func (p *profiler) stop() error {
	if p.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	p.f = nil
	if err != nil {
		return fmt.Errorf("--cpuprofile %s: %w", p.path, err)
	}
	return nil
}

// newRoot returns the uhno command tree and the profiler its
// --cpuprofile flag starts, which the caller stops after the command.
func newRoot(stdout, stderr io.Writer) (*cobra.Command, *profiler) {
	prof := &profiler{}
	root := &cobra.Command{
		Use:           "uhno",
		Short:         "Train and evaluate the U-HNO neural operator on PDE benchmarks",
		Long:          rootHelp(),
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&prof.path, "cpuprofile", "", "write a Go CPU profile of the command to this `file` (read it with go tool pprof)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return prof.start() }
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w (see '%s --help')", err, cmd.CommandPath())
	})
	root.AddCommand(newConfigCmd(stdout, nil), newDoctorCmd(stdout, nil), newDatagenCmd(stdout, stderr, nil), newTrainCmd(stdout, stderr, nil), newEvalCmd(stdout, stderr, nil), newAblateCmd(stdout, stderr, nil), newBenchCmd(stdout, stderr, nil))
	root.AddCommand(newReportCmd(stdout, stderr, nil), newPredictCmd(stdout, stderr, nil), newReproduceCmd(stdout, stderr, nil))
	return root, prof
}

// rootHelp is the long description of `uhno --help`.
func rootHelp() string {
	var b strings.Builder
	b.WriteString(`uhno trains and evaluates U-HNO, the neural operator of "U-HNO: A U-shaped
Hybrid Neural Operator with Sparse-Point Adaptive Routing for Non-stationary
PDE Dynamics". U-HNO learns the one-step map of a PDE and is rolled out
autoregressively. At every level of a U-shaped encoder/decoder it runs two
branches on every grid point: a global Fourier branch (a spectral
convolution) and a local branch of multi-scale normalized Gaussian kernels.
SPAR, sparse-point adaptive routing, then picks one branch per point with a
hard top-k mask whose keep-ratio follows the contrast of its routing logits.

Tasks (the paper's benchmarks; each has a built-in configuration):
`)
	for _, t := range config.Tasks() {
		fmt.Fprintf(&b, "  %-8s %s: %s\n", t.Name, t.Title, t.Summary)
	}
	b.WriteString(`
Burgers regimes (not among the paper's eight; select with --task, e.g.
--task burgers-shock; each has a built-in configuration):
`)
	for _, t := range config.Regimes() {
		fmt.Fprintf(&b, "  %-14s %s\n", t.Name, t.Summary)
	}
	b.WriteString(`
Commands: "config" prints a task's merged configuration, "datagen"
generates a task's dataset (or indexes a PDEBench file), "train" trains
U-HNO (any ablation mode A-I) or a baseline (--model: FNO, FNO-wider,
WNO, F-FNO, LogLo-FNO, Conv-FNO, CNO, GNO, each matched to
U-HNO's parameter count; the flat additive hybrid of the gradient-angle
diagnostic) on a task, generating its data on first use (--dry-run
plans a run without touching data), "eval" rolls trained runs out on the test
trajectories and reports the paper's metrics with tables and figures,
"predict" rolls a trained run out from your own initial conditions (HDF5
or .npy, on the training grid or another the model takes) and writes the
trajectories (HDF5 in PDEBench's layout, or .npy), "ablate" trains and evaluates the nine ablation modes of Tab.
ablation-setup beside Full under one schedule (or sweeps one setting),
"bench" measures parameters, FLOPs, step times and memory, "report"
rebuilds the paper's tables and figures from those outputs beside the
paper's values, "reproduce" runs all of it for the paper's table grid
(resumably, on one machine or as a Slurm job array), and "doctor" reports
the build and the machine.

Builds: bin/uhno (make build) is the CPU build: runs on any machine.
bin/uhno-cuda (make cuda) computes on an NVIDIA GPU with hand-written
kernels; it has run on an NVIDIA H100 (every kernel test passes there),
every kernel is also tested on the CPU under an emulator, and bin/uhno-emu
(make emu) runs the GPU code path there. "uhno doctor" says which backends a binary has and whether a GPU is
present.`)
	return b.String()
}
