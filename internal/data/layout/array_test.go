package layout

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
	"uhno/internal/data/npy"
)

// TestDescribeArray describes a plain array in a .npy file (defaults, then
// hints) and as the one dataset of an HDF5 file (its attributes).
func TestDescribeArray(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "my_pde.npy")
	if err := npy.Write(path, []int{4, 7, 16, 8, 3}, make([]float32, 4*7*16*8*3)); err != nil {
		t.Fatal(err)
	}
	d, err := Describe(path)
	if err != nil {
		t.Fatal(err)
	}
	if d.Layout != ArrayNpy || d.Name != "my_pde" || d.Dim != 2 || !slices.Equal(d.Grid, []int{16, 8}) || d.Trajectories != 4 || d.Frames != 7 ||
		!slices.Equal(d.Domain, []float64{1, 1}) || d.Dt != 1 || !d.Periodic() || !slices.Equal(d.ChannelNames(), []string{"c0", "c1", "c2"}) ||
		len(d.Assumed) != 4 {
		t.Errorf("defaults: %+v", d)
	}
	d, err = DescribeWith(path, Hints{Domain: []float64{2, 1}, Dt: 0.1, Boundary: []string{Periodic, Wall}, Channels: []string{"u", "v", "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Domain, []float64{2, 1}) || d.Dt != 0.1 || !slices.Equal(d.Boundary, []string{Periodic, Wall}) ||
		!slices.Equal(d.ChannelNames(), []string{"u", "v", "p"}) || len(d.Assumed) != 0 || !slices.Equal(d.Channels[2].Component, []int{2}) {
		t.Errorf("hints: %+v", d)
	}
	h5path := filepath.Join(dir, "heat.h5")
	if err := h5test.WriteTree(h5path, []h5test.Node{{Path: "u", Dims: []int{2, 5, 32, 1}, Data: make([]float32, 320),
		Attrs: map[string]any{"dt": 0.05, "domain": []float64{6.28}, "channels": []string{"temperature"}}}}); err != nil {
		t.Fatal(err)
	}
	d, err = Describe(h5path)
	if err != nil {
		t.Fatal(err)
	}
	if d.Layout != ArrayH5 || d.Dim != 1 || d.Dt != 0.05 || math.Abs(d.Domain[0]-6.28) > 1e-12 || !slices.Equal(d.ChannelNames(), []string{"temperature"}) ||
		d.Channels[0].Dataset != "u" || !slices.Equal(d.Assumed, []string{"boundary (no --boundary and no attribute boundary)"}) {
		t.Errorf("HDF5 array with attributes: %+v", d)
	}
}

// TestDescribeArrayRefuses: bad shapes and bad hints, one line each.
func TestDescribeArrayRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, shape ...int) string {
		path := filepath.Join(dir, name)
		n := 1
		for _, d := range shape {
			n *= d
		}
		if err := npy.Write(path, shape, make([]float32, n)); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ok := write("ok.npy", 2, 3, 8, 1)
	for _, tc := range []struct {
		name, path string
		hints      Hints
		want       string
	}{
		{"no channel axis", write("flat.npy", 2, 3, 8), Hints{}, "the array has shape [2 3 8], want [trajectories, frames, x (, y, z), channels]"},
		{"four spatial axes", write("4d.npy", 2, 3, 4, 4, 4, 4, 1), Hints{}, "has shape [2 3 4 4 4 4 1]"},
		{"an empty axis", write("empty.npy", 2, 0, 8, 1), Hints{}, "axis 1 is empty"},
		{"a domain per axis", ok, Hints{Domain: []float64{1, 2}}, "domain [1 2]: want 1 values"},
		{"a negative dt", ok, Hints{Dt: -1}, "dt [-1]: want positive values"},
		{"too many channel names", ok, Hints{Channels: []string{"u", "v"}}, "channels [u v]: want 1 values"},
		{"an unknown boundary", ok, Hints{Boundary: []string{"slip"}}, `boundary "slip"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DescribeWith(tc.path, tc.hints)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line naming %s and containing %q", err, tc.path, tc.want)
			}
		})
	}
	// A hint for a layout that says it all is refused, not dropped.
	well := writeWell(t, wellNodes())
	if _, err := DescribeWith(well, Hints{Dt: 0.5}); err == nil || !strings.Contains(err.Error(), "drop the hints") {
		t.Errorf("a hint on The Well's file: %v", err)
	}
}
