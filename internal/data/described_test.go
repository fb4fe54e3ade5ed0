package data

import (
	"fmt"
	"path/filepath"
	"testing"

	"uhno/internal/data/h5/h5test"
	"uhno/internal/data/layout"
	"uhno/internal/data/npy"
)

// code is the value a test file holds at trajectory b, frame t, grid
// point (x, y) and channel c: every value says where it came from.
func code(b, t, x, y, c int) float32 {
	return float32(b*10000 + t*1000 + x*100 + y*10 + c)
}

// checkReads reads two frames of trajectory 1 for every channel of a
// 3-trajectory, 4-frame, 4 x 2 (stride 1) or 2 x 1 (stride 2) file of
// channels named in want (channel index each) and checks each value's
// code.
func checkReads(t *testing.T, desc layout.Description, stride int, want map[string]int) {
	t.Helper()
	ds, err := OpenDescribed(desc, Options{Stride: stride})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	grid := ds.Grid()
	pts := ds.Points()
	fields := ds.Fields()
	dst := make([]float32, 2*len(fields)*pts)
	if err := ds.ReadFrames(dst, 1, 2, 2, fields); err != nil {
		t.Fatal(err)
	}
	for f := range 2 {
		for ci, name := range fields {
			for p := range pts {
				x, y := (p/grid[1])*stride, (p%grid[1])*stride
				if got, w := dst[(f*len(fields)+ci)*pts+p], code(1, 2+f, x, y, want[name]); got != w {
					t.Fatalf("%s (stride %d): frame %d channel %s point (%d, %d): %v, want %v", desc.Layout, stride, 2+f, name, x, y, got, w)
				}
			}
		}
	}
}

// TestOpenDescribed reads a file in each layout through its description
// and finds every value where it was written: The Well's scalar and
// vector fields, PDEBench's per-sample groups and a plain .npy array,
// with and without a stride.
func TestOpenDescribed(t *testing.T) {
	const nb, nt, nx, ny = 3, 4, 4, 2
	dir := t.TempDir()
	fill := func(comps int, perTraj bool) []float32 {
		var v []float32
		for b := range nb {
			if !perTraj && b > 0 {
				break
			}
			for tt := range nt {
				for x := range nx {
					for y := range ny {
						for c := range comps {
							bb := b
							if !perTraj {
								bb = 1 // a group file's data is trajectory 1's here
							}
							v = append(v, code(bb, tt, x, y, c))
						}
					}
				}
			}
		}
		return v
	}
	coords := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i) + 0.5
		}
		return x
	}
	// The Well: density (channel code 0), velocity x and y (codes 0, 1 of
	// its component axis).
	well := filepath.Join(dir, "well.hdf5")
	err := h5test.WriteTree(well, []h5test.Node{
		{Path: "", Attrs: map[string]any{"n_spatial_dims": 2, "n_trajectories": nb, "grid_type": "cartesian"}},
		{Path: "dimensions", Group: true, Attrs: map[string]any{"spatial_dims": []string{"x", "y"}}},
		{Path: "dimensions/time", Dims: []int{nt}, Data: coords(nt)},
		{Path: "dimensions/x", Dims: []int{nx}, Data: coords(nx)},
		{Path: "dimensions/y", Dims: []int{ny}, Data: coords(ny)},
		{Path: "boundary_conditions", Group: true},
		{Path: "boundary_conditions/all", Group: true, Attrs: map[string]any{"associated_dims": []string{"x", "y"}, "bc_type": "periodic"}},
		{Path: "t0_fields", Group: true},
		{Path: "t0_fields/density", Dims: []int{nb, nt, nx, ny}, Data: fill(1, true)},
		{Path: "t1_fields", Group: true},
		{Path: "t1_fields/velocity", Dims: []int{nb, nt, nx, ny, 2}, Data: fill(2, true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	desc, err := layout.Describe(well)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []int{1, 2} {
		checkReads(t, desc, s, map[string]int{"density": 0, "velocity_x": 0, "velocity_y": 1})
	}
	// PDEBench's per-sample groups: trajectory 1 is group 0001.
	groups := filepath.Join(dir, "groups.h5")
	var nodes []h5test.Node
	for b := range nb {
		g := fmt.Sprintf("%04d", b)
		data := make([]float32, nt*nx*ny*2)
		if b == 1 {
			data = fill(2, false)
		}
		nodes = append(nodes, h5test.Node{Path: g, Group: true}, h5test.Node{Path: g + "/data", Dims: []int{nt, nx, ny, 2}, Data: data},
			h5test.Node{Path: g + "/grid", Group: true}, h5test.Node{Path: g + "/grid/x", Dims: []int{nx}, Data: coords(nx)},
			h5test.Node{Path: g + "/grid/y", Dims: []int{ny}, Data: coords(ny)}, h5test.Node{Path: g + "/grid/t", Dims: []int{nt}, Data: coords(nt)})
	}
	if err := h5test.WriteTree(groups, nodes); err != nil {
		t.Fatal(err)
	}
	if desc, err = layout.Describe(groups); err != nil {
		t.Fatal(err)
	}
	for _, s := range []int{1, 2} {
		checkReads(t, desc, s, map[string]int{"data_0": 0, "data_1": 1})
	}
	// A plain .npy array [N, T, X, Y, C] of 3 channels.
	arr := filepath.Join(dir, "plain.npy")
	if err := npy.Write(arr, []int{nb, nt, nx, ny, 3}, fill(3, true)); err != nil {
		t.Fatal(err)
	}
	if desc, err = layout.DescribeWith(arr, layout.Hints{Channels: []string{"u", "v", "p"}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []int{1, 2} {
		checkReads(t, desc, s, map[string]int{"u": 0, "v": 1, "p": 2})
	}
}
