// Command wallerr splits a rollout's error on the heat-between-walls data
// (docs/evidence/boundary/PLAN.md) by distance from the nearest wall: for
// each band of points, the rms error over steps 1..25 and the 200 test
// trajectories relative to the rms of the truth there.
//
// Usage: go run ./docs/evidence/boundary/wallerr HEATWALLS.npy PRED.npy...
// where each PRED.npy is `uhno predict --checkpoint RUN --input
// HEATWALLS.npy --test-split --steps 25 --out PRED.npy` (the test
// trajectories in the split's order, frame 0 the input).
package main

import (
	"fmt"
	"math"
	"os"

	"uhno/internal/data"
	"uhno/internal/data/npy"
)

const trajectories, train, test, frames, points, steps = 1200, 1000, 200, 51, 128, 25

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: wallerr HEATWALLS.npy PRED.npy...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "wallerr:", err)
		os.Exit(1)
	}
}

func run(truthPath string, preds []string) error {
	// The task's split: data.seed 0, as uhno datagen --from made it.
	split, err := data.NewSplit(trajectories, train, test, data.SplitSeeded, 0)
	if err != nil {
		return err
	}
	th, err := npy.ReadHeader(truthPath)
	if err != nil {
		return err
	}
	bands := [][2]int{{0, 4}, {4, 16}, {16, 64}}
	fmt.Println("| prediction | points 0-3 from a wall | 4-15 | 16-63 |")
	fmt.Println("|---|---|---|---|")
	for _, r := range preds {
		ph, err := npy.ReadHeader(r)
		if err != nil {
			return err
		}
		pred := make([]float32, ph.Len())
		if err := npy.Read(r, ph, 0, pred); err != nil {
			return err
		}
		se, tt := make([]float64, len(bands)), make([]float64, len(bands))
		traj := make([]float32, frames*points)
		for k, i := range split.Test {
			if err := npy.Read(truthPath, th, i*frames*points, traj); err != nil {
				return err
			}
			for s := 1; s <= steps; s++ {
				for p := range points {
					d := min(p, points-1-p)
					for b, bd := range bands {
						if d >= bd[0] && d < bd[1] {
							e := float64(pred[(k*(steps+1)+s)*points+p] - traj[s*points+p])
							se[b] += e * e
							tt[b] += float64(traj[s*points+p]) * float64(traj[s*points+p])
						}
					}
				}
			}
		}
		fmt.Printf("| %s |", r)
		for b := range bands {
			fmt.Printf(" %.4f |", math.Sqrt(se[b]/tt[b]))
		}
		fmt.Println()
	}
	return nil
}
