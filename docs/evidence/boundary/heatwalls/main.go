// Command heatwalls writes the non-periodic dataset of issue 36's boundary
// measurement (docs/evidence/boundary/PLAN.md) as a plain .npy array
// [trajectories, frames, x, 1], the layout `uhno datagen --from` reads.
//
// The PDE is the heat equation between two walls held at their own
// temperatures, u_t = nu u_xx on [0, 1], u(0, t) = a, u(1, t) = b, with a
// and b drawn per trajectory from U(-1, 1), and the initial field the wall
// ramp plus a random sine series:
//
//	u(x, t) = a + (b - a) x + sum_{k=1..K} c_k exp(-nu pi^2 k^2 t) sin(k pi x),
//
// which is the exact solution (each sine mode is an eigenfunction of the
// Laplacian with zero walls; the ramp is steady). So the data carry no
// solver error, and a model's error near the walls is its own. Under a
// periodic reading of the domain the ramp jumps by b - a where x = 1
// meets x = 0: the case a boundary treatment is for.
//
// Usage: go run ./docs/evidence/boundary/heatwalls -out FILE [-n 1200]
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"uhno/internal/data/npy"
)

// Setting is the dataset's fixed recipe (PLAN.md).
type Setting struct {
	Trajectories, Frames, Grid, Modes int
	Nu, Dt                            float64
	Seed                              uint64
}

// Default is the recipe PLAN.md fixes.
var Default = Setting{Trajectories: 1200, Frames: 51, Grid: 128, Modes: 32, Nu: 0.02, Dt: 0.02, Seed: 36}

// Trajectory is one draw: the wall values and the sine coefficients.
type Trajectory struct {
	A, B float64
	C    []float64
}

// Draw returns trajectory i's values: a, b ~ U(-1, 1), c_k ~ N(0, 1) / k^1.5 / 2.
func (s Setting) Draw(i int) Trajectory {
	r := rand.New(rand.NewPCG(s.Seed, uint64(i)))
	t := Trajectory{A: 2*r.Float64() - 1, B: 2*r.Float64() - 1, C: make([]float64, s.Modes)}
	for k := range t.C {
		t.C[k] = r.NormFloat64() / math.Pow(float64(k+1), 1.5) / 2
	}
	return t
}

// At is the exact solution u(x, t) of trajectory tr.
func (s Setting) At(tr Trajectory, x, t float64) float64 {
	u := tr.A + (tr.B-tr.A)*x
	for k, c := range tr.C {
		kk := float64(k + 1)
		u += c * math.Exp(-s.Nu*math.Pi*math.Pi*kk*kk*t) * math.Sin(kk*math.Pi*x)
	}
	return u
}

// Array returns the dataset [trajectories, frames, grid, 1], the points
// x_i = i / (grid - 1) (both walls on the grid), frames t_j = j dt.
func (s Setting) Array() []float32 {
	out := make([]float32, 0, s.Trajectories*s.Frames*s.Grid)
	for i := range s.Trajectories {
		tr := s.Draw(i)
		for j := range s.Frames {
			for p := range s.Grid {
				out = append(out, float32(s.At(tr, float64(p)/float64(s.Grid-1), float64(j)*s.Dt)))
			}
		}
	}
	return out
}

func main() {
	out := flag.String("out", "", "the .npy file to write")
	n := flag.Int("n", Default.Trajectories, "trajectories")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "heatwalls: -out FILE is required")
		os.Exit(2)
	}
	s := Default
	s.Trajectories = *n
	if err := npy.Write(*out, []int{s.Trajectories, s.Frames, s.Grid, 1}, s.Array()); err != nil {
		fmt.Fprintln(os.Stderr, "heatwalls:", err)
		os.Exit(1)
	}
	fmt.Printf("heatwalls: %s: %d trajectories of %d frames on %d points, nu %g, dt %g, walls at x = 0 and 1\n",
		*out, s.Trajectories, s.Frames, s.Grid, s.Nu, s.Dt)
}
