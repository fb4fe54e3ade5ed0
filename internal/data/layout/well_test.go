package layout

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
)

// wellNodes is a 2D file in The Well's layout, as the_well's
// data_format.md gives it and h5py writes it: 2 trajectories of 5 frames
// on an 8 x 4 grid (x periodic, y between walls), a scalar field
// (density), a vector field (velocity), a tensor field (stress), a
// time-independent field (viscosity map, per trajectory) and two scalars
// (a Reynolds number per trajectory, a Prandtl number for all).
func wellNodes() []h5test.Node {
	const b, t, nx, ny = 2, 5, 8, 4
	field := func(dims ...int) []float32 {
		n := 1
		for _, d := range dims {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%97) / 97
		}
		return v
	}
	coords := func(n int, h, x0 float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = x0 + h*float32(i)
		}
		return x
	}
	tv := func() map[string]any {
		return map[string]any{"sample_varying": true, "time_varying": true, "dim_varying": []bool{true, true}}
	}
	return []h5test.Node{
		{Path: "", Attrs: map[string]any{"dataset_name": "toy_shear", "grid_type": "cartesian", "n_spatial_dims": 2,
			"n_trajectories": b, "simulation_parameters": []string{"Re"}, "Re": 100.0}},
		{Path: "dimensions", Group: true, Attrs: map[string]any{"spatial_dims": []string{"x", "y"}}},
		{Path: "dimensions/time", Dims: []int{t}, Data: coords(t, 0.25, 0), Attrs: map[string]any{"sample_varying": false}},
		// Cell centres: x on [0, 2) periodic, y on [0, 1] between walls.
		{Path: "dimensions/x", Dims: []int{nx}, Data: coords(nx, 0.25, 0.125), Attrs: map[string]any{"sample_varying": false, "time_varying": false}},
		{Path: "dimensions/y", Dims: []int{ny}, Data: coords(ny, 0.25, 0.125), Attrs: map[string]any{"sample_varying": false, "time_varying": false}},
		{Path: "boundary_conditions", Group: true},
		{Path: "boundary_conditions/x_periodic", Group: true, Attrs: map[string]any{"associated_dims": []string{"x"},
			"associated_fields": []string{}, "bc_type": "PERIODIC", "sample_varying": false, "time_varying": false}},
		{Path: "boundary_conditions/x_periodic/mask", Dims: []int{nx}, Bools: []bool{true, false, false, false, false, false, false, true}},
		{Path: "boundary_conditions/y_wall", Group: true, Attrs: map[string]any{"associated_dims": []string{"y"},
			"associated_fields": []string{}, "bc_type": "WALL", "sample_varying": false, "time_varying": false}},
		{Path: "scalars", Group: true, Attrs: map[string]any{"field_names": []string{"Re", "Pr"}}},
		{Path: "scalars/Re", Dims: []int{b}, Data: []float32{100, 200}, Attrs: map[string]any{"sample_varying": true, "time_varying": false}},
		{Path: "scalars/Pr", Dims: []int{1}, Data: []float32{0.7}, Attrs: map[string]any{"sample_varying": false, "time_varying": false}},
		{Path: "t0_fields", Group: true, Attrs: map[string]any{"field_names": []string{"density", "viscosity"}}},
		{Path: "t0_fields/density", Dims: []int{b, t, nx, ny}, Data: field(b, t, nx, ny), Attrs: tv()},
		{Path: "t0_fields/viscosity", Dims: []int{b, nx, ny}, Data: field(b, nx, ny),
			Attrs: map[string]any{"sample_varying": true, "time_varying": false, "dim_varying": []bool{true, true}}},
		{Path: "t1_fields", Group: true, Attrs: map[string]any{"field_names": []string{"velocity"}}},
		{Path: "t1_fields/velocity", Dims: []int{b, t, nx, ny, 2}, Data: field(b, t, nx, ny, 2), Attrs: tv()},
		{Path: "t2_fields", Group: true, Attrs: map[string]any{"field_names": []string{"stress"}}},
		{Path: "t2_fields/stress", Dims: []int{b, t, nx, ny, 2, 2}, Data: field(b, t, nx, ny, 2, 2),
			Attrs: map[string]any{"sample_varying": true, "time_varying": true, "dim_varying": []bool{true, true}, "symmetric": true, "antisymmetric": false}},
	}
}

func writeWell(t *testing.T, nodes []h5test.Node) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toy.hdf5")
	if err := h5test.WriteTree(path, nodes); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDescribeWell describes a 2D file in The Well's layout: the grid,
// each axis's length and boundary kind, every channel with its name and
// component, the constant inputs, the trajectories, frames and time step.
func TestDescribeWell(t *testing.T) {
	d, err := Describe(writeWell(t, wellNodes()))
	if err != nil {
		t.Fatal(err)
	}
	if d.Layout != TheWell || d.Name != "toy_shear" || d.Dim != 2 || !slices.Equal(d.Axes, []string{"x", "y"}) {
		t.Errorf("layout %s, name %q, dim %d, axes %v", d.Layout, d.Name, d.Dim, d.Axes)
	}
	if !slices.Equal(d.Grid, []int{8, 4}) || !slices.Equal(d.Boundary, []string{Periodic, Wall}) || d.Periodic() {
		t.Errorf("grid %v, boundary %v", d.Grid, d.Boundary)
	}
	// x periodic: 8 cells of 0.25 = 2; y walls: first to last centre, 0.75.
	if math.Abs(d.Domain[0]-2) > 1e-6 || math.Abs(d.Domain[1]-0.75) > 1e-6 {
		t.Errorf("domain %v, want [2 0.75]", d.Domain)
	}
	if d.Trajectories != 2 || d.Frames != 5 || math.Abs(d.Dt-0.25) > 1e-7 {
		t.Errorf("trajectories %d, frames %d, dt %v", d.Trajectories, d.Frames, d.Dt)
	}
	want := []string{"density", "velocity_x", "velocity_y", "stress_xx", "stress_xy", "stress_yx", "stress_yy"}
	if got := d.ChannelNames(); !slices.Equal(got, want) {
		t.Errorf("channels %v, want %v", got, want)
	}
	if c := d.Channels[4]; c.Dataset != "t2_fields/stress" || !slices.Equal(c.Component, []int{0, 1}) {
		t.Errorf("stress_xy: %+v", c)
	}
	if c := d.Channels[2]; c.Dataset != "t1_fields/velocity" || !slices.Equal(c.Component, []int{1}) {
		t.Errorf("velocity_y: %+v", c)
	}
	var consts []string
	for _, c := range d.Constants {
		consts = append(consts, c.Name)
	}
	if !slices.Equal(consts, []string{"viscosity", "Re", "Pr"}) || !d.Constants[0].PerTrajectory || d.Constants[0].Scalar ||
		!d.Constants[1].Scalar || !d.Constants[1].PerTrajectory || d.Constants[2].PerTrajectory {
		t.Errorf("constants %+v", d.Constants)
	}
}

// TestDescribeWellRefuses: each damaged variant of the file is refused in
// one line naming the file and the dataset or attribute at fault.
func TestDescribeWellRefuses(t *testing.T) {
	edit := func(f func([]h5test.Node) []h5test.Node) []h5test.Node { return f(wellNodes()) }
	set := func(path, key string, v any) []h5test.Node {
		return edit(func(ns []h5test.Node) []h5test.Node {
			for i := range ns {
				if ns[i].Path == path {
					ns[i].Attrs[key] = v
				}
			}
			return ns
		})
	}
	drop := func(path string) []h5test.Node {
		return edit(func(ns []h5test.Node) []h5test.Node {
			return slices.DeleteFunc(ns, func(n h5test.Node) bool { return n.Path == path || strings.HasPrefix(n.Path, path+"/") })
		})
	}
	reshape := func(path string, dims ...int) []h5test.Node {
		return edit(func(ns []h5test.Node) []h5test.Node {
			for i := range ns {
				if ns[i].Path == path {
					n := 1
					for _, d := range dims {
						n *= d
					}
					ns[i].Dims, ns[i].Data = dims, make([]float32, n)
				}
			}
			return ns
		})
	}
	for _, tc := range []struct {
		name  string
		nodes []h5test.Node
		want  string
	}{
		{"non-cartesian grid", set("", "grid_type", "spherical"), "grid_type is spherical"},
		{"a field of the wrong rank", reshape("t1_fields/velocity", 2, 5, 8, 4), "dataset t1_fields/velocity has shape [2 5 8 4], want [2 5 8 4 2]"},
		{"inconsistent trajectories", reshape("t0_fields/density", 3, 5, 8, 4), "dataset t0_fields/density has shape [3 5 8 4]"},
		{"inconsistent grids", reshape("t2_fields/stress", 2, 5, 8, 8, 2, 2), "dataset t2_fields/stress has shape"},
		{"an axis with no boundary", drop("boundary_conditions/y_wall"), "gives axis y no kind"},
		{"an unknown boundary kind", set("boundary_conditions/y_wall", "bc_type", "SLIP"), "bc_type is SLIP"},
		{"missing coordinates", drop("dimensions/y"), "no dataset dimensions/y"},
		{"spatial_dims of the wrong length", set("dimensions", "spatial_dims", []string{"x"}), "want 2 axis names"},
		{"a field listed but absent", set("t0_fields", "field_names", []string{"density", "pressure"}), "field_names lists t0_fields/pressure"},
		{"a time-varying scalar", set("scalars/Re", "time_varying", true), "scalar scalars/Re varies in time"},
		{"a field constant along an axis", set("t0_fields/density", "dim_varying", []bool{true, false}), "dim_varying [true false]"},
		{"no time-varying field", edit(func(ns []h5test.Node) []h5test.Node {
			ns = slices.DeleteFunc(ns, func(n h5test.Node) bool {
				return strings.HasPrefix(n.Path, "t1_fields") || strings.HasPrefix(n.Path, "t2_fields") || n.Path == "t0_fields/density"
			})
			for i := range ns {
				if ns[i].Path == "t0_fields" {
					ns[i].Attrs["field_names"] = []string{"viscosity"}
				}
			}
			return ns
		}), "no field varies in time"},
		{"fractional trajectories", set("", "n_trajectories", 2.5), "n_trajectories"},
		{"none of the layouts", []h5test.Node{{Path: "u", Dims: []int{2, 3}, Data: make([]float32, 6)},
			{Path: "v", Dims: []int{2}, Data: make([]float32, 2)}}, "none of the supported layouts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeWell(t, tc.nodes)
			_, err := Describe(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line naming %s and containing %q", err, path, tc.want)
			}
		})
	}
}
