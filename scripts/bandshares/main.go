// Command bandshares prints, for each HDF5 trajectory file given, how much
// of its fields lies in sharp features (issue 20, "Three Burgers
// regimes"): the share of spectral energy in the low, mid and high thirds
// of the wavenumbers (eval.Sharpness: low k < N/6 of the 0..N/2 range in
// 1D), and the largest one-cell jump as a fraction of the field's range,
// each the mean over trajectories and frames, as one Markdown table.
//
//	go run ./scripts/bandshares /work/evidence/data/*.h5
//	go run ./scripts/bandshares -n 100 -from 1 a.h5 b.h5
//
// Every field of a file is one channel of the frame. It reads the files
// only.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"uhno/internal/data"
	"uhno/internal/eval"
)

func main() {
	n := flag.Int("n", 0, "trajectories per file, the first n (0: all)")
	from := flag.Int("from", 0, "first frame to measure (0: the initial field included)")
	periodic := flag.Bool("periodic", true, "the grid is periodic (every task but Darcy)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: bandshares [-n N] [-from F] [-periodic=false] FILE.h5 ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Args(), *n, *from, *periodic); err != nil {
		fmt.Fprintln(os.Stderr, "bandshares:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, files []string, n, from int, periodic bool) error {
	fmt.Fprintln(w, "| file | trajectories | frames each | low | mid | high | jump/range, mean | jump/range, largest |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, path := range files {
		row, err := measure(path, n, from, periodic)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, row)
	}
	return nil
}

// measure returns the table row of one file.
func measure(path string, n, from int, periodic bool) (string, error) {
	d, err := data.Open(path, data.Options{})
	if err != nil {
		return "", err
	}
	defer d.Close()
	if from < 0 || from >= d.Frames() {
		return "", fmt.Errorf("%s: -from %d: the file has %d frames", path, from, d.Frames())
	}
	trajs := d.Len()
	if n > 0 {
		trajs = min(trajs, n)
	}
	fields := d.Fields()
	grid := d.Grid()
	spacing := make([]float64, len(grid))
	for a, m := range grid {
		spacing[a] = 1 / float64(m) // unused by the measure; any positive spacing
	}
	g := eval.Grid{Channels: len(fields), Shape: grid, Spacing: spacing, Periodic: periodic}
	meter := eval.NewSharpnessMeter(g)
	nt := d.Frames() - from
	buf := make([]float32, nt*g.Len())
	for i := range trajs {
		if err := d.ReadFrames(buf, i, from, nt, fields); err != nil {
			return "", err
		}
		for f := range nt {
			meter.Add(buf[f*g.Len() : (f+1)*g.Len()])
		}
	}
	mean, _, maxJump := meter.Mean()
	return fmt.Sprintf("| %s | %d | %d | %s | %.3g | %.3g | %.3g | %.3g |", filepath.Base(path), trajs, nt,
		share(mean.Share[eval.BandLow]), mean.Share[eval.BandMid], mean.Share[eval.BandHigh], mean.Jump, maxJump), nil
}

// share formats a share; one within 1e-3 of 1 as "1 - x", so that the
// small remainder stays readable.
func share(v float64) string {
	if v > 0.999 && v < 1 {
		return fmt.Sprintf("1 - %.3g", 1-v)
	}
	return fmt.Sprintf("%.3g", v)
}
