package h5_test

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"uhno/internal/data/h5"
	"uhno/internal/data/h5/h5test"
)

// TestTreeAttributes writes a file in The Well's shape (groups, datasets
// in groups, attributes of every type h5py writes on the root, a group
// and a dataset) and reads every attribute back with its type, the
// groups' members and their kinds.
func TestTreeAttributes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tree.h5")
	nodes := []h5test.Node{
		{Path: "", Attrs: map[string]any{"dataset_name": "example", "n_spatial_dims": 2, "grid_type": "cartesian",
			"simulation_parameters": []string{"Re", "Pr"}, "Re": 1000.0, "fixed": h5test.Fixed{"ab", "c"}}},
		{Path: "dimensions", Group: true, Attrs: map[string]any{"spatial_dims": []string{"x", "y"}}},
		{Path: "dimensions/time", Dims: []int{3}, Data: []float32{0, 0.5, 1}, Attrs: map[string]any{"sample_varying": false}},
		{Path: "boundary_conditions", Group: true},
		{Path: "boundary_conditions/x_periodic", Group: true, Attrs: map[string]any{"bc_type": "PERIODIC",
			"associated_dims": []string{"x"}, "associated_fields": []string{}}},
		{Path: "boundary_conditions/x_periodic/mask", Dims: []int{4}, Bools: []bool{true, false, false, true}},
		{Path: "t0_fields", Group: true, Attrs: map[string]any{"field_names": []string{"density"}}},
		{Path: "t0_fields/density", Dims: []int{1, 3, 4, 2}, Data: make([]float32, 24),
			Attrs: map[string]any{"dim_varying": []bool{true, true}, "time_varying": true, "scale": []float64{1, 2.5}}},
	}
	if err := h5test.WriteTree(path, nodes); err != nil {
		t.Fatal(err)
	}
	f, err := h5.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		obj, name string
		want      any
	}{
		{"", "dataset_name", "example"},
		{"/", "n_spatial_dims", 2.0},
		{"", "simulation_parameters", []string{"Re", "Pr"}},
		{"", "Re", 1000.0},
		{"", "fixed", []string{"ab", "c"}},
		{"dimensions", "spatial_dims", []string{"x", "y"}},
		{"dimensions/time", "sample_varying", false},
		{"boundary_conditions/x_periodic", "bc_type", "PERIODIC"},
		{"boundary_conditions/x_periodic", "associated_fields", []string(nil)},
		{"t0_fields/density", "dim_varying", []bool{true, true}},
		{"t0_fields/density", "time_varying", true},
		{"t0_fields/density", "scale", []float64{1, 2.5}},
	} {
		got, ok, err := f.AttrOf(tc.obj, tc.name)
		if err != nil || !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s@%s: %#v (ok %v, %v), want %#v", tc.obj, tc.name, got, ok, err, tc.want)
		}
	}
	if _, ok, err := f.AttrOf("t0_fields", "nosuch"); ok || err != nil {
		t.Errorf("a missing attribute: ok %v, err %v", ok, err)
	}
	if _, ok, err := f.AttrOf("nosuch", "x"); ok || err != nil {
		t.Errorf("an attribute of a missing object: ok %v, err %v", ok, err)
	}
	ms, err := f.Members("")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		if m.Kind != h5.KindGroup {
			t.Errorf("%s: kind %v, want a group", m.Name, m.Kind)
		}
		names = append(names, m.Name)
	}
	if !slices.Equal(names, []string{"boundary_conditions", "dimensions", "t0_fields"}) {
		t.Errorf("root members %v", names)
	}
	if f.Kind("t0_fields/density") != h5.KindDataset || f.Kind("t0_fields") != h5.KindGroup || f.Kind("t1_fields") != h5.KindNone {
		t.Error("kinds of a dataset, a group and a missing path")
	}
	if shape, err := f.Shape("t0_fields/density"); err != nil || !slices.Equal(shape, []int{1, 3, 4, 2}) {
		t.Errorf("shape of a dataset in a group: %v, %v", shape, err)
	}
	if _, err := f.Members("t0_fields/density"); err == nil {
		t.Error("Members of a dataset: no error")
	}
}
