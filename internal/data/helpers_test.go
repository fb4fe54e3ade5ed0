package data

import (
	"path/filepath"
	"testing"

	"uhno/internal/data/h5/h5test"
)

// fixture is a test file whose values follow h5test.Code.
type fixture struct {
	path   string
	n, nt  int   // trajectories and frames as stored (Darcy: nt = 1)
	stored []int // spatial grid as stored
}

func (f fixture) points() int {
	p := 1
	for _, g := range f.stored {
		p *= g
	}
	return p
}

// open opens the fixture's file, closed when the test ends.
func (f fixture) open(t *testing.T) *Dataset { return openFile(t, f.path) }

// plan opens the fixture's file and plans its pairs with sampling s.
func (f fixture) plan(t *testing.T, s Sampling) (*Dataset, *Plan) { return openPlan(t, f.path, s) }

// openFile opens the dataset at path, closed when the test ends.
func openFile(tb testing.TB, path string) *Dataset {
	tb.Helper()
	d, err := Open(path, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// openPlan opens the dataset at path and plans its pairs with sampling s.
func openPlan(tb testing.TB, path string, s Sampling) (*Dataset, *Plan) {
	tb.Helper()
	d := openFile(tb, path)
	p, err := d.Plan(s)
	if err != nil {
		tb.Fatal(err)
	}
	return d, p
}

func burgersFixture(t *testing.T, n, nt, nx int) fixture {
	t.Helper()
	p := filepath.Join(t.TempDir(), "1D_Burgers_Sols_Nu0.01.hdf5")
	if err := h5test.Burgers(p, n, nt, nx, 0.01); err != nil {
		t.Fatal(err)
	}
	return fixture{p, n, nt, []int{nx}}
}

func darcyFixture(t *testing.T, n, g int) fixture {
	t.Helper()
	p := filepath.Join(t.TempDir(), "2D_DarcyFlow_beta1.0_Train.hdf5")
	if err := h5test.Darcy(p, n, g, g, 1.0); err != nil {
		t.Fatal(err)
	}
	return fixture{p, n, 1, []int{g, g}}
}

func cfdFixture(t *testing.T, n, nt, g int) fixture {
	t.Helper()
	p := filepath.Join(t.TempDir(), "3D_CFD_Rand_M1.0_Eta1e-08_Zeta1e-08_periodic_Train.hdf5")
	if err := h5test.CFD3D(p, n, nt, g); err != nil {
		t.Fatal(err)
	}
	return fixture{p, n, nt, []int{g, g, g}}
}

// strided returns the flat source indices of the points kept by a stride,
// in the order a read returns them.
func strided(stored []int, s int) []int {
	idx := []int{0}
	for _, g := range stored {
		var next []int
		for _, base := range idx {
			for x := 0; x < g; x += s {
				next = append(next, base*g+x)
			}
		}
		idx = next
	}
	return idx
}

// checkBlock checks that vals (one channel of one frame, read with stride
// s) decode to variable c, trajectory i and frame f of fx at the strided
// points.
func checkBlock(t *testing.T, fx fixture, s int, vals []float32, c, i, f int, what string) {
	t.Helper()
	want := strided(fx.stored, s)
	if len(vals) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(vals), len(want))
	}
	for k, v := range vals {
		gc, gi, gf, gj := h5test.Decode(v, fx.n, fx.nt, fx.points())
		if gc != c || gi != i || gf != f || gj != want[k] {
			t.Fatalf("%s: value %d is variable %d, trajectory %d, frame %d, point %d; want %d, %d, %d, %d", what, k, gc, gi, gf, gj, c, i, f, want[k])
		}
	}
}

// decodeTraj returns the trajectory a block of values comes from.
func decodeTraj(fx fixture, v float32) int {
	_, i, _, _ := h5test.Decode(v, fx.n, fx.nt, fx.points())
	return i
}

// mustPlan opens path and plans its pairs, closing the dataset when the
// test ends.
func mustPlan(tb testing.TB, path string, s Sampling) *Plan {
	tb.Helper()
	d, err := Open(path, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	p, err := d.Plan(s)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
