package pde

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// heat is a throw-away solver written as DESIGN's "Adding a task" says a
// new generated task's solver file is: a type embedding the base of its
// dimension (line), a constructor that checks its own constants, Attrs,
// Generate, and one Register call. It solves u_t = nu u_xx on the
// periodic line exactly in Fourier space (each mode decays by
// exp(-nu k^2 t)), so its frames can be checked against a closed form.
type heat struct {
	line
}

func newHeat(p Params) (*heat, error) {
	l, err := newLine("heat", p)
	if err != nil {
		return nil, err
	}
	if !(p.Nu > 0) {
		return nil, fmt.Errorf("heat: nu = %v: must be positive", p.Nu)
	}
	return &heat{line: l}, nil
}

func (g *heat) Attrs() map[string]any {
	a := g.attrs("heat: u_t = nu u_xx, periodic", "exact Fourier decay")
	a["nu"] = g.p.Nu
	return a
}

func (g *heat) Generate(seed uint64, i int, dst [][]float32) error {
	return g.generate(seed, i, dst, g.solve)
}

// solve hands frame k the exact solution at t_k from u0 on the solver
// grid.
func (g *heat) solve(u0 []float64, frame func(int, []float64) error) error {
	n, length := len(u0), g.p.Domain[0]
	sp := newSpectral1D(n, length)
	c0 := make([]complex128, sp.modes())
	sp.forward(c0, u0)
	u := make([]float64, n)
	for k := range g.p.Snapshots {
		t := float64(k) * g.p.TEnd / float64(g.p.Snapshots-1)
		c := slices.Clone(c0)
		for m := range c {
			w := 2 * math.Pi * float64(m) / length
			c[m] *= complex(math.Exp(-g.p.Nu*w*w*t), 0)
		}
		sp.inverse(u, c)
		if err := frame(k, u); err != nil {
			return err
		}
	}
	return nil
}

// TestAddSolverRecipe adds the throw-away heat solver by the recipe (one
// Register call) and checks that it is built by name from Params like
// every other solver, satisfies the Generator contract (shapes,
// coordinates, the same bits from (seed, i) whatever the goroutine) and
// solves its equation: a single mode decays as exp(-nu k^2 t).
func TestAddSolverRecipe(t *testing.T) {
	const eq = "heat"
	Register(eq, func(p Params) (Generator, error) { return newHeat(p) })
	defer delete(solvers, eq)
	if !Registered(eq) || !slices.Contains(Equations(), eq) {
		t.Fatalf("registered: %v", Equations())
	}
	p := Params{Domain: []float64{2}, Grid: []int{32}, SolverGrid: []int{64}, Snapshots: 5, TEnd: 0.4, Dt: 0.1,
		Nu: 0.05, IC: GRFParams{Alpha: 2.5, Tau: 7, Sigma: 1}}
	g, err := New(eq, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Shapes(); !slices.Equal(got[0], []int{5, 32}) || !slices.Equal(g.Datasets(), []string{"tensor"}) {
		t.Fatalf("shapes %v, datasets %v", got, g.Datasets())
	}
	c := g.Coords()
	if x, tc := c["x-coordinate"], c["t-coordinate"]; len(x) != 32 || x[1] != 2.0/32 || len(tc) != 5 || tc[4] != 0.4 {
		t.Fatalf("coordinates x %v t %v", x, tc)
	}
	// Determinism: trajectory 3 alone equals trajectory 3 generated among
	// others on several goroutines.
	one := [][]float32{make([]float32, 5*32)}
	if err := g.Generate(7, 3, one); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([][][]float32, 4)
	for i := range got {
		got[i] = [][]float32{make([]float32, 5*32)}
		wg.Go(func() {
			if err := g.Generate(7, i, got[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if !slices.Equal(one[0], got[3][0]) {
		t.Fatal("trajectory 3 differs between runs")
	}
	// The base's loop: frame 0 is the trajectory's initial field, drawn from
	// the stream (seed, i) on the solver grid, every second point kept.
	u0 := make([]float64, 64)
	h := g.(*heat)
	h.grf.Sample(rand.New(rand.NewPCG(7, 3)), u0)
	for j := range 32 {
		if one[0][j] != float32(u0[2*j]) {
			t.Fatalf("frame 0 point %d: %v, initial field %v", j, one[0][j], u0[2*j])
		}
	}
	// The equation: a mode sin(2 pi x m / L) decays by exp(-nu (2 pi m/L)^2 t).
	const m = 3
	for j := range u0 {
		u0[j] = math.Sin(2 * math.Pi * m * float64(j) / 64)
	}
	w := 2 * math.Pi * m / p.Domain[0]
	err = h.solve(u0, func(k int, u []float64) error { return storeFrame1D(one[0][k*32:(k+1)*32], u, 2) })
	if err != nil {
		t.Fatal(err)
	}
	for k := range p.Snapshots {
		tk := float64(k) * p.TEnd / float64(p.Snapshots-1)
		for j := range 32 {
			want := math.Exp(-p.Nu*w*w*tk) * math.Sin(2*math.Pi*m*float64(2*j)/64)
			if d := math.Abs(float64(one[0][k*32+j]) - want); d > 1e-6 {
				t.Fatalf("frame %d point %d: %v, exact %v", k, j, one[0][k*32+j], want)
			}
		}
	}
	if _, err := New(eq, Params{Domain: []float64{2}, Grid: []int{32}, Snapshots: 5, TEnd: 0.4, Dt: 0.1, IC: p.IC}); err == nil {
		t.Fatal("nu = 0 accepted")
	}
	if _, err := New("nosuch", p); err == nil {
		t.Fatal("an unregistered equation built")
	}
}
