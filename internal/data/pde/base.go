package pde

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// Params are the settings of a generated task: its configuration's pde.*
// and data.* values (paper App. B; configs/<task>.yaml) in one struct for
// every solver, grids as slices with one entry per axis. One struct, not
// one per equation, so that building any solver from a configuration is
// one mapping (internal/datagen) and a registration (Register), and a new
// equation adds fields only for constants no other has. Each solver reads
// the fields its equation has and checks them; the configuration's
// validation (internal/config) refuses keys a task does not use.
type Params struct {
	Domain     []float64 // side lengths per axis, the periodic box [0, L_d) (pde.domain)
	Grid       []int     // saved points per axis (pde.grid)
	SolverGrid []int     // points per axis the 1D solvers use, a multiple of Grid (pde.solver_grid); nil: Grid
	Snapshots  int       // frames saved (data.snapshots)
	TEnd       float64   // time from the first frame to the last (pde.t_end)
	TBurn      float64   // discarded spin-up before the first frame (pde.t_burn; KS)
	Dt         float64   // solver step (pde.dt; none for adv2d's exact solution)
	IC         GRFParams // initial field N(0, Sigma^2 (-Delta + Tau^2 I)^(-Alpha)) (pde.ic)

	Nu      float64 // viscosity (pde.nu: burgers, ns2d)
	Eps     float64 // interface parameter epsilon (pde.eps: ac2d)
	Forcing float64 // forcing amplitude (pde.forcing: ns2d's A, darcy's source beta)
	// VelocityMin and VelocityMax bound each velocity component, drawn
	// uniformly per trajectory; equal bounds fix it (pde.velocity or
	// pde.velocity_range: adv2d).
	VelocityMin, VelocityMax []float64
	SourceGrid               []int // the grid darcy solves on before keeping every second cell (data.source_grid)
}

// solvers maps an equation (config.TaskSpec.PDE) to how its solver is
// built from Params. Solver files fill it from init (Register), as
// image.RegisterFormat does, so adding an equation is its file alone.
var solvers = map[string]func(Params) (Generator, error){}

// Register makes build the solver of equation. It is called from the
// solver file's init; a second registration of one equation panics.
func Register(equation string, build func(Params) (Generator, error)) {
	if _, dup := solvers[equation]; dup {
		panic("pde: solver " + equation + " registered twice")
	}
	solvers[equation] = build
}

// Registered reports whether equation has a solver.
func Registered(equation string) bool {
	_, ok := solvers[equation]
	return ok
}

// Equations returns the registered equations, sorted.
func Equations() []string {
	var out []string
	for e := range solvers {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// New builds the solver of equation from p.
func New(equation string, p Params) (Generator, error) {
	build, ok := solvers[equation]
	if !ok {
		return nil, fmt.Errorf("pde: no solver for equation %q; registered: %s", equation, strings.Join(Equations(), ", "))
	}
	return build(p)
}

// axisNames name the coordinate datasets of axes 0, 1, 2 as PDEBench
// does ("x-coordinate", ...).
var axisNames = []string{"x", "y", "z"}

// frames is embedded in every time-dependent solver: its parameters and
// what follows from them alike for every equation, namely the dataset it
// writes ("tensor", [Snapshots, Grid...]), the coordinates (the grid
// points x_j = j L/N, not cell centres, and the frame times from t_burn)
// and the check of a destination.
type frames struct {
	p    Params
	name string // the solver, for errors: "burgers", "ns2d", ...
}

// Datasets implements Generator.
func (f *frames) Datasets() []string { return []string{"tensor"} }

// Shapes implements Generator: [Snapshots, Grid...].
func (f *frames) Shapes() [][]int { return [][]int{append([]int{f.p.Snapshots}, f.p.Grid...)} }

// Coords implements Generator: the saved grid points of each axis and the
// frame times t_burn + k t_end/(S-1) (D-snapshot-times).
func (f *frames) Coords() map[string][]float32 {
	c := map[string][]float32{"t-coordinate": snapshotTimes(f.p.TBurn, f.p.TEnd, f.p.Snapshots)}
	for d, n := range f.p.Grid {
		c[axisNames[d]+"-coordinate"] = gridPoints(n, f.p.Domain[d])
	}
	return c
}

// frameLen is the number of values in one saved frame.
func (f *frames) frameLen() int {
	n := 1
	for _, m := range f.p.Grid {
		n *= m
	}
	return n
}

// checkDst refuses a destination that is not one slice of a whole
// trajectory.
func (f *frames) checkDst(i int, dst [][]float32) error {
	if len(dst) != 1 || len(dst[0]) != f.p.Snapshots*f.frameLen() {
		return fmt.Errorf("%s: trajectory %d: destination must be one slice of %d x %v values", f.name, i, f.p.Snapshots, f.p.Grid)
	}
	return nil
}

// checkAxes refuses grids and domains of another dimension than dims.
func (f *frames) checkAxes(dims int) error {
	if len(f.p.Grid) != dims || len(f.p.Domain) != dims {
		return fmt.Errorf("%s: pde.grid %v, pde.domain %v: want %d axes each", f.name, f.p.Grid, f.p.Domain, dims)
	}
	return nil
}

// line is embedded in the 1D solvers (burgers, ks, kdv): the solver grid,
// the steps between frames and before the first, the initial field on the
// unit-rescaled domain, the trajectory loop and the shared attributes.
type line struct {
	frames
	every int // solver steps between frames
	burn  int // solver steps before frame 0 (t_burn)
	grf   *GRF
}

// newLine validates the settings every 1D solver shares.
func newLine(name string, p Params) (line, error) {
	if len(p.SolverGrid) == 0 {
		p.SolverGrid = p.Grid
	}
	l := line{frames: frames{p: p, name: name}}
	if err := l.checkAxes(1); err != nil {
		return line{}, err
	}
	if len(p.SolverGrid) != 1 {
		return line{}, fmt.Errorf("%s: pde.solver_grid %v: want one axis", name, p.SolverGrid)
	}
	if err := check1DGrid(name, p.Grid[0], p.SolverGrid[0], p.Domain[0]); err != nil {
		return line{}, err
	}
	var err error
	if l.every, err = checkSnapshots1D(name, p.Snapshots, p.TEnd, p.Dt); err != nil {
		return line{}, err
	}
	if p.TBurn != 0 {
		if l.burn, err = stepCount1D("t_burn", p.TBurn, p.Dt); err != nil {
			return line{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := p.IC.check(name); err != nil {
		return line{}, err
	}
	l.grf = NewGRF([]int{p.SolverGrid[0]}, []float64{1}, p.IC.Alpha, p.IC.Tau, p.IC.Sigma)
	return l, nil
}

// generate writes trajectory i of seed into dst: the initial field drawn
// on the solver grid from a PCG stream seeded (seed, i), then every frame
// solve hands back, every SolverGrid/Grid-th point kept.
func (l *line) generate(seed uint64, i int, dst [][]float32, solve func(u0 []float64, frame func(k int, u []float64) error) error) error {
	if err := l.checkDst(i, dst); err != nil {
		return err
	}
	n, sn := l.p.Grid[0], l.p.SolverGrid[0]
	u0 := make([]float64, sn)
	l.grf.Sample(rand.New(rand.NewPCG(seed, uint64(i))), u0)
	out := dst[0]
	err := solve(u0, func(k int, u []float64) error {
		return storeFrame1D(out[k*n:(k+1)*n], u, sn/n)
	})
	if err != nil {
		return fmt.Errorf("%s: trajectory %d: %w", l.name, i, err)
	}
	return nil
}

// attrs are the HDF5 attributes every 1D solver stores, with its
// equation and scheme.
func (l *line) attrs(equation, scheme string) map[string]any {
	return map[string]any{
		"pde":         equation,
		"scheme":      scheme,
		"dt":          l.p.Dt,
		"t_end":       l.p.TEnd,
		"domain":      []float64{l.p.Domain[0]},
		"grid":        l.p.Grid[0],
		"solver_grid": l.p.SolverGrid[0],
		"snapshots":   l.p.Snapshots,
		"ic":          "grf on the unit-rescaled domain, zero mean",
		"ic_alpha":    l.p.IC.Alpha,
		"ic_tau":      l.p.IC.Tau,
		"ic_sigma":    l.p.IC.Sigma,
	}
}

// box is embedded in the 2D solvers (adv2d, ac2d, ns2d): the periodic
// box's wavenumbers, the initial field on the box, the frame times and the
// shared attributes.
type box struct {
	frames
	grf   *GRF
	waves *waves2D
	times []float64 // frame times, t = 0 first
}

// newBox validates the settings every 2D solver shares.
func newBox(name string, p Params) (box, error) {
	b := box{frames: frames{p: p, name: name}}
	if err := b.checkAxes(2); err != nil {
		return box{}, err
	}
	if err := checkGrid2D([2]int{p.Grid[0], p.Grid[1]}); err != nil {
		return box{}, fmt.Errorf("%s: pde.%w", name, err)
	}
	if !(p.Domain[0] > 0) || !(p.Domain[1] > 0) || math.IsInf(p.Domain[0], 0) || math.IsInf(p.Domain[1], 0) {
		return box{}, fmt.Errorf("%s: pde.domain = %v: sides must be positive and finite", name, p.Domain)
	}
	if err := checkFrames2D(p.Snapshots, p.TEnd); err != nil {
		return box{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := p.IC.check(name); err != nil {
		return box{}, err
	}
	b.grf = NewGRF(slices.Clone(p.Grid), slices.Clone(p.Domain), p.IC.Alpha, p.IC.Tau, p.IC.Sigma)
	b.waves = newWaves2D(p.Grid[0], p.Grid[1], p.Domain[0], p.Domain[1])
	b.times = frameTimes2D(p.Snapshots, p.TEnd)
	return b, nil
}

// steps returns the solver steps of size Dt in one frame interval.
func (b *box) steps() (int, error) {
	s, err := stepsPerFrame2D(b.p.Dt, b.p.TEnd, b.p.Snapshots)
	if err != nil {
		return 0, fmt.Errorf("%s: pde.%w", b.name, err)
	}
	return s, nil
}

// attrs are the HDF5 attributes every 2D solver stores, with its own
// (equation, scheme, constants) added.
func (b *box) attrs(own map[string]any) map[string]any {
	a := map[string]any{
		"t_end":     b.p.TEnd,
		"domain":    []float64{b.p.Domain[0], b.p.Domain[1]},
		"ic":        "grf",
		"ic_alpha":  b.p.IC.Alpha,
		"ic_tau":    b.p.IC.Tau,
		"ic_sigma":  b.p.IC.Sigma,
		"snapshots": b.p.Snapshots,
	}
	for k, v := range own {
		a[k] = v
	}
	return a
}

// generate writes trajectory i of seed into dst: the initial field drawn
// from a PCG stream seeded (seed, i), then the frames solve computes
// (frames[0] the initial field).
func (b *box) generate(seed uint64, i int, dst [][]float32, solve func(u0 []float64, frames [][]float64) error) error {
	if err := b.checkDst(i, dst); err != nil {
		return err
	}
	n := b.frameLen()
	u0 := make([]float64, n)
	b.grf.Sample(rand.New(rand.NewPCG(seed, uint64(i))), u0)
	frames := make([][]float64, b.p.Snapshots)
	for k := range frames {
		frames[k] = make([]float64, n)
	}
	if err := solve(u0, frames); err != nil {
		return fmt.Errorf("%s: trajectory %d: %w", b.name, i, err)
	}
	for k, f := range frames {
		copyFloat32(dst[0][k*n:(k+1)*n], f)
	}
	return nil
}
