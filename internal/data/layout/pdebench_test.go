package layout

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
)

// cells returns n cell centres of width h from 0.
func cells(n int, h float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = (float32(i) + 0.5) * h
	}
	return x
}

func zeros(dims ...int) []float32 {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return make([]float32, n)
}

// pdebenchTensor is PDEBench's 1D tensor layout as its Burgers files have
// it (GUIDE section 3): tensor [N, T, X], x-coordinate cell centres,
// t-coordinate one entry longer than the frames, attribute Nu.
func pdebenchTensor(n, t, x int) []h5test.Dataset {
	tc := make([]float32, t+1)
	for i := range tc {
		tc[i] = 0.01 * float32(i)
	}
	return []h5test.Dataset{
		{Name: "tensor", Dims: []int{n, t, x}, Data: zeros(n, t, x)},
		{Name: "x-coordinate", Dims: []int{x}, Data: cells(x, 1/float32(x))},
		{Name: "t-coordinate", Dims: []int{t + 1}, Data: tc},
	}
}

// pdebenchCFD2D is the CFD layout in 2D: density, pressure, Vx, Vy.
func pdebenchCFD2D(n, t, x, y int) []h5test.Dataset {
	var ds []h5test.Dataset
	for _, f := range []string{"density", "pressure", "Vx", "Vy"} {
		ds = append(ds, h5test.Dataset{Name: f, Dims: []int{n, t, x, y}, Data: zeros(n, t, x, y)})
	}
	tc := make([]float32, t+1)
	for i := range tc {
		tc[i] = 0.05 * float32(i)
	}
	return append(ds,
		h5test.Dataset{Name: "x-coordinate", Dims: []int{x}, Data: cells(x, 1/float32(x))},
		h5test.Dataset{Name: "y-coordinate", Dims: []int{y}, Data: cells(y, 1/float32(y))},
		h5test.Dataset{Name: "t-coordinate", Dims: []int{t + 1}, Data: tc})
}

// pdebenchGroups is the per-sample layout of PDEBench's 2D
// diffusion-reaction file: groups 0000.. with data [T, X, Y, 2] and
// grid/x, grid/y, grid/t.
func pdebenchGroups(n, t, x, y, c int) []h5test.Node {
	var ns []h5test.Node
	tc := make([]float32, t)
	for i := range tc {
		tc[i] = 0.25 * float32(i)
	}
	for s := range n {
		g := []string{"0000", "0001", "0002", "0003"}[s]
		ns = append(ns,
			h5test.Node{Path: g, Group: true},
			h5test.Node{Path: g + "/data", Dims: []int{t, x, y, c}, Data: zeros(t, x, y, c)},
			h5test.Node{Path: g + "/grid", Group: true},
			h5test.Node{Path: g + "/grid/x", Dims: []int{x}, Data: cells(x, 2/float32(x))},
			h5test.Node{Path: g + "/grid/y", Dims: []int{y}, Data: cells(y, 2/float32(y))},
			h5test.Node{Path: g + "/grid/t", Dims: []int{t}, Data: tc})
	}
	return ns
}

func writeRoot(t *testing.T, ds []h5test.Dataset) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pdebench.hdf5")
	if err := h5test.Write(path, ds, map[string]any{"Nu": 0.01}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDescribePDEBench describes a file in each of PDEBench's three
// layouts of time-dependent data.
func TestDescribePDEBench(t *testing.T) {
	d, err := Describe(writeRoot(t, pdebenchTensor(3, 6, 16)))
	if err != nil {
		t.Fatal(err)
	}
	if d.Layout != PDEBenchTensor || d.Dim != 1 || !slices.Equal(d.Grid, []int{16}) || d.Trajectories != 3 || d.Frames != 6 ||
		!slices.Equal(d.ChannelNames(), []string{"u"}) || math.Abs(d.Domain[0]-1) > 1e-6 || math.Abs(d.Dt-0.01) > 1e-7 || !d.Periodic() {
		t.Errorf("tensor layout: %+v", d)
	}
	d, err = Describe(writeRoot(t, pdebenchCFD2D(2, 4, 8, 16)))
	if err != nil {
		t.Fatal(err)
	}
	if d.Layout != PDEBenchCFD || d.Dim != 2 || !slices.Equal(d.Grid, []int{8, 16}) || d.Trajectories != 2 || d.Frames != 4 ||
		!slices.Equal(d.ChannelNames(), []string{"density", "pressure", "Vx", "Vy"}) || !slices.Equal(d.Axes, []string{"x", "y"}) {
		t.Errorf("CFD layout: %+v", d)
	}
	path := filepath.Join(t.TempDir(), "2D_diff-react_NA_NA.h5")
	if err := h5test.WriteTree(path, pdebenchGroups(3, 5, 8, 4, 2)); err != nil {
		t.Fatal(err)
	}
	d, err = Describe(path)
	if err != nil {
		t.Fatal(err)
	}
	if d.Layout != PDEBenchGroups || d.Name != "2D_diff-react_NA_NA" || d.Dim != 2 || !slices.Equal(d.Grid, []int{8, 4}) ||
		d.Trajectories != 3 || d.Frames != 5 || !slices.Equal(d.Groups, []string{"0000", "0001", "0002"}) ||
		!slices.Equal(d.ChannelNames(), []string{"data_0", "data_1"}) || !slices.Equal(d.Channels[1].Component, []int{1}) ||
		math.Abs(d.Domain[1]-2) > 1e-6 || math.Abs(d.Dt-0.25) > 1e-7 {
		t.Errorf("per-sample groups: %+v", d)
	}
}

// TestDescribePDEBenchRefuses: damaged variants of each layout, each
// refused in one line naming the file and the dataset.
func TestDescribePDEBenchRefuses(t *testing.T) {
	groupsPath := func(ns []h5test.Node) string {
		path := filepath.Join(t.TempDir(), "groups.h5")
		if err := h5test.WriteTree(path, ns); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfd := pdebenchCFD2D(2, 4, 8, 16)
	cfdNoVy := slices.DeleteFunc(slices.Clone(cfd), func(d h5test.Dataset) bool { return d.Name == "Vy" })
	cfdBadP := slices.Clone(cfd)
	cfdBadP[1] = h5test.Dataset{Name: "pressure", Dims: []int{2, 4, 8, 8}, Data: zeros(2, 4, 8, 8)}
	tens := pdebenchTensor(3, 6, 16)
	tensBadX := slices.Clone(tens)
	tensBadX[1] = h5test.Dataset{Name: "x-coordinate", Dims: []int{12}, Data: cells(12, 0.1)}
	tensBadT := slices.Clone(tens)
	tensBadT[2] = h5test.Dataset{Name: "t-coordinate", Dims: []int{3}, Data: []float32{0, 0.01, 0.02}}
	tensNonUniform := slices.Clone(tens)
	xs := cells(16, 1.0/16)
	xs[5] += 0.01
	tensNonUniform[1] = h5test.Dataset{Name: "x-coordinate", Dims: []int{16}, Data: xs}
	ragged := pdebenchGroups(3, 5, 8, 4, 2)
	for i := range ragged {
		if ragged[i].Path == "0002/data" {
			ragged[i].Dims, ragged[i].Data = []int{4, 8, 4, 2}, zeros(4, 8, 4, 2)
		}
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"CFD without Vy", writeRoot(t, cfdNoVy), "needs dataset Vy"},
		{"CFD fields of two shapes", writeRoot(t, cfdBadP), "dataset pressure has shape [2 4 8 8], density [2 4 8 16]"},
		{"tensor and coordinates disagree", writeRoot(t, tensBadX), "dataset x-coordinate has 12 points, the field 16"},
		{"too few times", writeRoot(t, tensBadT), "dataset t-coordinate has 3 times, want the field's 6 frames"},
		{"a non-uniform grid", writeRoot(t, tensNonUniform), "dataset x-coordinate is not uniform"},
		{"a tensor of one frame axis too few", writeRoot(t, []h5test.Dataset{{Name: "tensor", Dims: []int{3, 16}, Data: zeros(3, 16)}}), "dataset tensor has shape [3 16]"},
		{"trajectories of two shapes", groupsPath(ragged), "dataset 0002/data has shape [4 8 4 2], 0000/data [5 8 4 2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Describe(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line naming %s and containing %q", err, tc.path, tc.want)
			}
		})
	}
}
