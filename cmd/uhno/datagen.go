package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"uhno/internal/config"
	"uhno/internal/data/layout"
	"uhno/internal/datagen"
)

// datagenOptions are the inputs of `uhno datagen`.
type datagenOptions struct {
	Out, Err io.Writer
	Load     loadRequest
	Dir      string
	Train    int
	Test     int
	Seed     int64
	SeedSet  bool
	Workers  int
	Quiet    bool
	PDEBench string
	// From is a user's data file to describe (--from), with the hints a
	// plain array needs.
	From  string
	Hints layout.Hints
}

// newDatagenCmd returns the `uhno datagen` command; runF replaces
// datagenRun in tests.
func newDatagenCmd(out, errOut io.Writer, runF func(context.Context, *datagenOptions) error) *cobra.Command {
	opts := &datagenOptions{Out: out, Err: errOut}
	cmd := &cobra.Command{
		Use:   "datagen --task NAME [--out DIR] [--train N --test N] [--seed S] [--pdebench FILE] | --from FILE --out DIR",
		Short: "Generate a task's dataset (or index a PDEBench file)",
		Long: `Generate the trajectories of a task with uhno's own solvers (paper App. B)
and write them to one HDF5 file in the PDEBench layout. The file goes to
the data cache (` + "$UHNO_DATA" + `, else <user cache dir>/uhno/data; --out DIR overrides) under
a name holding the task, seed, count and a fingerprint of the solver
settings. A complete file with the same settings is reused; an interrupted
run (Ctrl-C) is resumed by running the same command again, and no
half-written file is ever left under the final name.

darcy and cfd3d can train on PDEBench's files instead: --pdebench FILE
checks the file's layout and records it for training (nothing is copied).
cfd3d has no built-in solver and needs the file (PDEBench, DaRUS
doi:10.18419/darus-2986).

--from FILE --out DIR describes a data file of any PDE (issue 36) and
writes the task it makes into DIR/task.json: The Well's layout, PDEBench's
tensor, CFD and per-sample-group layouts, or a plain array [trajectories,
frames, x (, y, z), channels] in a .npy file or as an HDF5 file's one
dataset. Only the file's metadata is read (it is never copied). The task
takes its model and training settings from the built-in task of the
file's dimension (burgers, ns2d, cfd3d; --task BASE for another) and
holds a tenth of the trajectories out for testing (--test N). A plain array's lengths,
time step, boundaries and channel names come from --domain, --dt,
--boundary, --channels or the dataset's attributes; what neither gives is
printed as assumed. A file the task cannot use is refused in one line and
nothing is written. Fields without a time axis and scalars that differ
between trajectories become constant input channels (data.constants); an
axis with walls or open ends makes the task non-periodic (pde.boundary
dirichlet; --set data.coordinates=true adds coordinate channels). Then
uhno train --data DIR (no --task) trains any model on it, and eval,
predict, ablate --data, bench --data and reproduce --data work on it.`,
		Example: `  uhno datagen --task burgers
  uhno datagen --task ns2d --train 80 --test 20 --out ./data
  uhno datagen --task darcy --pdebench 2D_DarcyFlow_beta1.0_Train.hdf5
  uhno datagen --from shear_flow_00.hdf5 --out tasks/shear
  uhno datagen --from run.npy --out tasks/mine --dt 0.01 --domain 6.283,6.283 --channels u,v`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.SeedSet = cmd.Flags().Changed("seed")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return datagenRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Load.Task, "task", "", "task: "+strings.Join(config.TaskNames(), ", "))
	f.StringVar(&opts.Load.File, "config", "", "YAML or JSON file with keys to override")
	f.StringArrayVar(&opts.Load.Sets, "set", nil, "override one key, key=value (repeatable)")
	f.StringVar(&opts.Dir, "out", "", "output directory (default: the data cache)")
	f.IntVar(&opts.Train, "train", 0, "training trajectories (default: data.train_trajectories)")
	f.IntVar(&opts.Test, "test", 0, "test trajectories (default: data.test_trajectories)")
	f.Int64Var(&opts.Seed, "seed", 0, "seed of the initial conditions and the split (default: the config's data.seed)")
	f.IntVar(&opts.Workers, "workers", 0, "trajectories solved at once (default: all cores)")
	f.BoolVar(&opts.Quiet, "quiet", false, "no progress bar")
	f.StringVar(&opts.PDEBench, "pdebench", "", "index this PDEBench HDF5 file instead of generating (darcy, cfd3d)")
	f.StringVar(&opts.From, "from", "", "describe this data file (The Well, PDEBench, .npy or one HDF5 array) as a task in --out DIR")
	f.Float64SliceVar(&opts.Hints.Domain, "domain", nil, "--from a plain array: length of each axis")
	f.Float64Var(&opts.Hints.Dt, "dt", 0, "--from a plain array: time between frames")
	f.StringSliceVar(&opts.Hints.Boundary, "boundary", nil, "--from a plain array: periodic, wall or open per axis")
	f.StringSliceVar(&opts.Hints.Channels, "channels", nil, "--from a plain array: channel names")
	return cmd
}

// datagenRun loads the configuration and generates or indexes the data.
func datagenRun(ctx context.Context, opts *datagenOptions) error {
	if opts.Train < 0 || opts.Test < 0 {
		return fmt.Errorf("datagen: --train %d --test %d: counts must be >= 1", opts.Train, opts.Test)
	}
	load := opts.Load
	if opts.SeedSet {
		load.Sets = append(append([]string(nil), load.Sets...), fmt.Sprintf("data.seed=%d", opts.Seed))
	}
	if opts.From != "" {
		return datagenFrom(opts)
	}
	cfg, err := loadConfig(load)
	if err != nil {
		return err
	}
	dopt := datagen.Options{Config: cfg, Dir: opts.Dir, Train: opts.Train, Test: opts.Test, Workers: opts.Workers}
	if opts.PDEBench != "" {
		idx, path, err := datagen.IndexPDEBench(dopt, opts.PDEBench)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.Out, "indexed %s: %d trajectories of %d frames, grid %v read with stride %d; recorded in %s\n",
			idx.Path, idx.Trajectories, idx.Frames, idx.StoredGrid, idx.Stride, path)
		return nil
	}
	if !opts.Quiet {
		dopt.Progress = opts.Err
	}
	res, err := datagen.Run(ctx, dopt)
	if err != nil {
		return err
	}
	if res.Generated == 0 {
		fmt.Fprintf(opts.Out, "%s: up to date (%d trajectories)\n", res.Path, res.Trajectories)
		return nil
	}
	fmt.Fprintf(opts.Out, "%s: %d trajectories (%d generated) in %s\n", res.Path, res.Trajectories, res.Generated, res.Elapsed.Round(1e7))
	return nil
}

// datagenFrom describes opts.From as a task in opts.Dir.
func datagenFrom(opts *datagenOptions) error {
	if opts.PDEBench != "" || opts.Train != 0 || opts.SeedSet {
		return fmt.Errorf("datagen: --from describes a file; --pdebench, --train and --seed are for a built-in task")
	}
	tf, path, err := datagen.DescribeFile(datagen.FromOptions{File: opts.From, Dir: opts.Dir, Base: opts.Load.Task, Test: opts.Test, Hints: opts.Hints,
		Configure: func(task string) (config.Config, error) {
			req := opts.Load
			req.Task = task
			return loadConfig(req)
		}})
	if err != nil {
		return err
	}
	d := tf.Description
	axes := make([]string, len(d.Axes))
	for i, a := range d.Axes {
		axes[i] = fmt.Sprintf("%s %d (%s, length %g)", a, d.Grid[i], d.Boundary[i], d.Domain[i])
	}
	fmt.Fprintf(opts.Out, "%s: %s layout, %dD: %s; %d trajectories of %d frames, dt %g\n", d.File, d.Layout, d.Dim, strings.Join(axes, ", "), d.Trajectories, d.Frames, d.Dt)
	fmt.Fprintf(opts.Out, "channels: %s\n", strings.Join(d.ChannelNames(), ", "))
	in, out := datagen.ConstantInputs(d)
	if len(in) > 0 {
		fmt.Fprintf(opts.Out, "constant inputs: %s (one input channel each after the frames; data.constants)\n", strings.Join(in, ", "))
	}
	if len(out) > 0 {
		fmt.Fprintf(opts.Out, "left out: %s (the same for every trajectory: nothing to learn from)\n", strings.Join(out, ", "))
	}
	for _, a := range d.Assumed {
		fmt.Fprintf(opts.Out, "assumed: %s\n", a)
	}
	fmt.Fprintf(opts.Out, "task: %s's settings (%d frames in), %d trajectories to train, %d to test; written to %s\n", tf.Base, tf.History, tf.Train, tf.Test, path)
	return nil
}
