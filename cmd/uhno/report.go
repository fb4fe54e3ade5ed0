package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"uhno/internal/experiment"
	"uhno/internal/report"
)

// reportOptions are the inputs of `uhno report`.
type reportOptions struct {
	Out, Err io.Writer
	Runs     []string // --runs values and the arguments after them
	Dir      string
	Command  string // the command line, for the report's header
	// NoFigures writes report.md alone (--no-figures).
	NoFigures bool
}

func newReportCmd(out, errOut io.Writer, runF func(context.Context, *reportOptions) error) *cobra.Command {
	opts := &reportOptions{Out: out, Err: errOut}
	cmd := &cobra.Command{
		Use:   "report --runs DIR... [--out DIR]",
		Short: "Rebuild the paper's tables and figures from runs and evaluations, beside the paper's values",
		Long: `Write one Markdown document with its PNG figures that rebuilds every table
and figure of the paper the given inputs support, each beside the paper's
values, with intervals, the input each comes from and the command recorded
in it, and says in words where ours contradicts the paper (a ranking
reversed, a claim of the text not borne out).

--runs takes directories (and files); a shell glob such as runs/* may
follow it, every argument after the flags is an input too. Each is
recognised by its contents:

  results.json of uhno eval     Tab. main-acc and main-acc-h1 (the task's
                                column), Tab. stability (the paper's is at
                                --horizon-mult 4), Tab. spectral, and Tab.
                                fno-wider (Burgers, 3D-CFD)
  ablation.json of uhno ablate  Tab. burgers-ablation (Burgers) or the
                                task's columns of Tab. ablation-extra and
                                ablation-extra-h1, degradation factors and
                                Fig. burgers-ablation-bars; a sweep (e.g.
                                spar.rho0) gives Fig. training-dynamics (f)
  log.jsonl + latest (uhno train)  final training loss, best validation
                                loss, configuration, Fig. training-dynamics
                                panels from the log
  bench JSON (uhno bench --json)  Tab. cost and Tab. cost-spar, with the
                                machine

Anything else is skipped and listed in the report. A path that does not
exist, or one of these files that does not parse, is an error naming the
file. The output directory (default runs/report) receives report.md and
figures/*.png, each written whole or not at all.`,
		Example: `  uhno report --runs runs/eval-burgers runs/ablate-burgers
  uhno report --runs runs/* bench.json --out runs/report`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Runs = append(opts.Runs, args...)
			if len(opts.Runs) == 0 {
				return fmt.Errorf("report: no inputs; give --runs DIR... (directories of uhno eval, uhno ablate or uhno train, or a bench JSON) (see 'uhno report --help')")
			}
			opts.Command = "uhno report --runs " + strings.Join(opts.Runs, " ")
			if opts.Dir != "" {
				opts.Command += " --out " + opts.Dir
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return reportRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.Runs, "runs", nil, "run, evaluation or ablation directory, or bench JSON (repeatable; the arguments after the flags count too)")
	f.StringVar(&opts.Dir, "out", "", "output directory (default: runs/report)")
	f.BoolVar(&opts.NoFigures, "no-figures", false, "write report.md alone, no PNG figures")
	return cmd
}

// reportRun writes the report and says what it used, skipped and found.
func reportRun(_ context.Context, opts *reportOptions) error {
	dir := opts.Dir
	if dir == "" {
		dir = filepath.Join(experiment.RunsDir, "report")
	}
	res, err := report.Write(report.Options{Inputs: opts.Runs, Dir: dir, Version: version, Command: opts.Command, NoFigures: opts.NoFigures})
	if err != nil {
		return err
	}
	for _, u := range res.Used {
		fmt.Fprintf(opts.Out, "used %s: %s\n", u.File, u.Kind)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(opts.Out, "skipped %s: %s\n", s.Path, s.Why)
	}
	// One line per ranking with reversals, then each other claim; the
	// report states every reversal.
	for _, c := range res.Summary {
		fmt.Fprintf(opts.Out, "contradicts the paper: %s\n", c)
	}
	if opts.NoFigures {
		fmt.Fprintf(opts.Out, "report in %s (no figures: --no-figures)\n", res.Report)
		return nil
	}
	fmt.Fprintf(opts.Out, "report in %s, %d figures in %s\n", res.Report, len(res.Figures), filepath.Join(dir, report.FiguresDir))
	return nil
}
