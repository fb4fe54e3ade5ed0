package data

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
	"uhno/internal/data/layout"
)

// constFile writes a 3-trajectory, 4-frame, 4 x 2 file in The Well's
// layout with one time-dependent field u (code channel 0) and the four
// kinds of constant input: k, a field per trajectory (frame code 9); g, a
// vector field the same for every trajectory (frame code 8, trajectory
// code 0, component c); Re, a scalar per trajectory (100 + b); Pr, one
// scalar for all (0.7). nan puts a NaN into k of trajectory 2.
func constFile(t *testing.T, nan bool) layout.Description {
	t.Helper()
	const nb, nt, nx, ny = 3, 4, 4, 2
	var u, k, g []float32
	for b := range nb {
		for tt := range nt {
			for x := range nx {
				for y := range ny {
					u = append(u, code(b, tt, x, y, 0))
				}
			}
		}
		for x := range nx {
			for y := range ny {
				k = append(k, code(b, 9, x, y, 0))
			}
		}
	}
	for x := range nx {
		for y := range ny {
			g = append(g, code(0, 8, x, y, 0), code(0, 8, x, y, 1))
		}
	}
	if nan {
		k[2*nx*ny+3] = float32(math.NaN())
	}
	axis := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i) + 0.5
		}
		return v
	}
	constant := func(sample bool) map[string]any {
		return map[string]any{"sample_varying": sample, "time_varying": false}
	}
	path := filepath.Join(t.TempDir(), "consts.hdf5")
	err := h5test.WriteTree(path, []h5test.Node{
		{Path: "", Attrs: map[string]any{"n_spatial_dims": 2, "n_trajectories": nb, "grid_type": "cartesian"}},
		{Path: "dimensions", Group: true, Attrs: map[string]any{"spatial_dims": []string{"x", "y"}}},
		{Path: "dimensions/time", Dims: []int{nt}, Data: axis(nt)},
		{Path: "dimensions/x", Dims: []int{nx}, Data: axis(nx)},
		{Path: "dimensions/y", Dims: []int{ny}, Data: axis(ny)},
		{Path: "boundary_conditions", Group: true},
		{Path: "boundary_conditions/all", Group: true, Attrs: map[string]any{"associated_dims": []string{"x", "y"}, "bc_type": "periodic"}},
		{Path: "scalars", Group: true, Attrs: map[string]any{"field_names": []string{"Re", "Pr"}}},
		{Path: "scalars/Re", Dims: []int{nb}, Data: []float32{100, 101, 102}, Attrs: constant(true)},
		{Path: "scalars/Pr", Dims: []int{1}, Data: []float32{0.7}, Attrs: constant(false)},
		{Path: "t0_fields", Group: true, Attrs: map[string]any{"field_names": []string{"u", "k"}}},
		{Path: "t0_fields/u", Dims: []int{nb, nt, nx, ny}, Data: u, Attrs: map[string]any{"sample_varying": true, "time_varying": true}},
		{Path: "t0_fields/k", Dims: []int{nb, nx, ny}, Data: k, Attrs: constant(true)},
		{Path: "t1_fields", Group: true, Attrs: map[string]any{"field_names": []string{"g"}}},
		{Path: "t1_fields/g", Dims: []int{nx, ny, 2}, Data: g, Attrs: constant(false)},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := layout.Describe(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestReadConstant reads each kind of constant input of trajectory 2,
// with and without a stride, and finds every value where it was written.
func TestReadConstant(t *testing.T) {
	desc := constFile(t, false)
	for _, stride := range []int{1, 2} {
		ds, err := OpenDescribed(desc, Options{Stride: stride})
		if err != nil {
			t.Fatal(err)
		}
		if got := ds.Constants(); !slices.Equal(got, []string{"k", "g_x", "g_y", "Re", "Pr"}) {
			t.Fatalf("constants %v", got)
		}
		grid, pts := ds.Grid(), ds.Points()
		want := map[string]func(x, y int) float32{
			"k":   func(x, y int) float32 { return code(2, 9, x, y, 0) },
			"g_x": func(x, y int) float32 { return code(0, 8, x, y, 0) },
			"g_y": func(x, y int) float32 { return code(0, 8, x, y, 1) },
			"Re":  func(int, int) float32 { return 102 },
			"Pr":  func(int, int) float32 { return 0.7 },
		}
		for name, w := range want {
			dst := make([]float32, pts)
			if err := ds.ReadConstant(dst, name, 2); err != nil {
				t.Fatal(err)
			}
			for p, v := range dst {
				x, y := (p/grid[1])*stride, (p%grid[1])*stride
				if v != w(x, y) {
					t.Fatalf("stride %d: %s at (%d, %d) = %v, want %v", stride, name, x, y, v, w(x, y))
				}
			}
		}
		if err := ds.ReadConstant(make([]float32, pts), "u", 0); err == nil || !strings.Contains(err.Error(), `no constant input "u"`) {
			t.Errorf("a time-dependent field read as a constant: %v", err)
		}
		ds.Close()
	}
}

// TestPlanConstants checks a plan with constant inputs: the input
// channels (frames, constants, coordinates), each pair's values, the same
// from a cached block and straight from the file, and the statistics of
// each constant over the training trajectories.
func TestPlanConstants(t *testing.T) {
	ds, err := OpenDescribed(constFile(t, false), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	p, err := ds.Plan(Sampling{History: 2, Pairs: 2, Constants: []string{"k", "g_y", "Re"}, Coordinates: true})
	if err != nil {
		t.Fatal(err)
	}
	wantCh := []string{"u", "u", "const:k", "const:g_y", "const:Re", "coord:x", "coord:y"}
	if got := p.InputChannels(); !slices.Equal(got, wantCh) {
		t.Fatalf("input channels %v, want %v", got, wantCh)
	}
	if got := p.InputShape(5); !slices.Equal(got, []int{5, 7, 4, 2}) {
		t.Fatalf("input shape %v", got)
	}
	pts := ds.Points()
	block := make([]float32, p.ResidentLen())
	if err := p.ReadResident(block, 1); err != nil {
		t.Fatal(err)
	}
	in, tgt := make([]float32, 7*pts), make([]float32, pts)
	p.PairFrom(block, 1, in, tgt)
	want := func(c, x, y int) float32 {
		switch c {
		case 0, 1:
			return code(1, 1+c, x, y, 0)
		case 2:
			return code(1, 9, x, y, 0)
		case 3:
			return code(0, 8, x, y, 1)
		case 4:
			return 101
		case 5:
			return float32(float64(x) / 3)
		}
		return float32(y)
	}
	for c := range 7 {
		for q := range pts {
			x, y := q/2, q%2
			if got := in[c*pts+q]; got != want(c, x, y) {
				t.Fatalf("pair 1 of trajectory 1: channel %s at (%d, %d) = %v, want %v", wantCh[c], x, y, got, want(c, x, y))
			}
			if tgt[q] != code(1, 3, x, y, 0) {
				t.Fatalf("target at (%d, %d) = %v", x, y, tgt[q])
			}
		}
	}
	in2, tgt2 := make([]float32, 7*pts), make([]float32, pts)
	if err := p.ReadPair(Pair{Traj: 1, Start: 1}, in2, tgt2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(in, in2) || !slices.Equal(tgt, tgt2) {
		t.Fatal("ReadPair differs from PairFrom of the resident block")
	}

	st, err := ComputeStats(p, []int{0, 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Fields, []string{"tensor", "const:k", "const:g_y", "const:Re"}) && !slices.Equal(st.Fields, []string{"u", "const:k", "const:g_y", "const:Re"}) {
		t.Fatalf("statistics of %v", st.Fields)
	}
	// Re: 100 and 102 at every point; k: code(b, 9, x, y, 0) over b in {0, 2}
	// and the 8 points, b*10000 + 9000 + 100x + 10y: mean 19000 + 150 + 5.
	checks := []struct {
		field     int
		mean, std float64
		count     int64
	}{{3, 101, 1, 16}, {1, 19155, math.Sqrt(1e8 + 12500 + 25), 16}, {2, 8155 + 1, math.Sqrt(12500 + 25), 16}}
	for _, c := range checks {
		if math.Abs(st.Mean[c.field]-c.mean) > 1e-9*c.mean || math.Abs(st.Std[c.field]-c.std) > 1e-9*c.std || st.Count[c.field] != c.count {
			t.Errorf("%s: mean %v std %v count %d, want %v %v %d", st.Fields[c.field], st.Mean[c.field], st.Std[c.field], st.Count[c.field], c.mean, c.std, c.count)
		}
	}
	if err := st.Check(p); err != nil {
		t.Fatal(err)
	}
	// Normalisation maps each constant channel with its own statistics and
	// leaves the coordinates alone.
	st.Normalize(in, wantCh, pts)
	if got, w := in[4*pts], float32((101-101)/1.0); got != w {
		t.Errorf("normalised Re %v, want %v", got, w)
	}
	if got := in[5*pts+pts-1]; got != 1 {
		t.Errorf("normalised coord:x at the last point %v, want 1 (left alone)", got)
	}
	noConst, _ := ds.Plan(Sampling{History: 2, Pairs: 2})
	if err := st.Check(noConst); err == nil {
		t.Error("statistics with constants accepted for a plan without them")
	}
}

// TestPlanConstantsRefused: an unknown or repeated constant input is
// refused in one line; a NaN in a constant is found by CheckFinite.
func TestPlanConstantsRefused(t *testing.T) {
	ds, err := OpenDescribed(constFile(t, true), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	for _, c := range []struct {
		consts []string
		want   string
	}{
		{[]string{"viscosity"}, `no constant input "viscosity"`},
		{[]string{"k", "k"}, `constant input "k" listed twice`},
	} {
		if _, err := ds.Plan(Sampling{Constants: c.consts}); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("constants %v: %v, want one line with %q", c.consts, err, c.want)
		}
	}
	if err := ds.CheckFinite([]int{0, 1}, nil); err != nil {
		t.Fatalf("trajectories 0 and 1 are finite: %v", err)
	}
	err = ds.CheckFinite([]int{2}, nil)
	if err == nil || !strings.Contains(err.Error(), `constant input "k"`) || !strings.Contains(err.Error(), "trajectory 2") {
		t.Errorf("NaN in k of trajectory 2: %v", err)
	}
}
