package layout

import (
	"slices"
	"strconv"

	"uhno/internal/data/h5"
)

// PDEBench's layouts (GUIDE section 3; read from PDEBench's own loaders):
//
//   - tensor: one root dataset "tensor" [N, T, x...] (1D advection,
//     Burgers, reaction-diffusion), one channel, with root "x-coordinate"
//     (and y, z) and "t-coordinate" (T or T + 1 entries: some of
//     PDEBench's simulators store one step more).
//   - CFD: root datasets "density", "pressure", "Vx" (and "Vy", "Vz") of
//     one shape [N, T, x...], a channel each in that order (PDEBench's
//     stacking), with the same coordinates.
//   - per-sample groups: one group per trajectory ("0000", "0001", ...)
//     holding "data" [T, x..., C] and "grid/x" (y, z) and "grid/t" (2D
//     diffusion-reaction, shallow water, 1D diffusion-sorption); the C
//     channels carry no names in the file and are called data_0, data_1,
//     ... (data alone for one).
//
// PDEBench's files carry no boundary kind; every axis is taken as periodic
// unless the caller says otherwise (Hints.Boundary), and the coordinates
// are cell centres, so a periodic axis is n h long.

// The PDEBench layouts.
const (
	PDEBenchTensor Layout = "pdebench-tensor"
	PDEBenchCFD    Layout = "pdebench-cfd"
	PDEBenchGroups Layout = "pdebench-groups"
)

// cfdFields are the CFD layout's datasets in PDEBench's channel order; a
// file of spatial dimension d has the first 2 + d.
var cfdFields = []string{"density", "pressure", "Vx", "Vy", "Vz"}

// pdebenchReader describes one file in one of PDEBench's layouts.
type pdebenchReader struct {
	f    *h5.File
	file string
	d    Description
}

// axis reads a coordinate dataset and its uniform step (wellReader's
// checks).
func (r *pdebenchReader) axis(path string) ([]float32, float64, error) {
	w := &wellReader{f: r.f, file: r.file}
	x, err := w.coords(path)
	if err != nil {
		return nil, 0, err
	}
	h, err := w.spacing(path, x)
	return x, h, err
}

// grid reads the coordinates of dim spatial axes (names of their datasets
// in coordPaths) and the time coordinate, against a field of frames
// frames on grid.
func (r *pdebenchReader) grid(coordPaths []string, timePath string, grid []int, frames int) error {
	r.d.Dim = len(grid)
	r.d.Grid = slices.Clone(grid)
	for i, p := range coordPaths {
		x, h, err := r.axis(p)
		if err != nil {
			return err
		}
		if len(x) != grid[i] {
			return errorf(r.file, "dataset %s has %d points, the field %d on axis %d", p, len(x), grid[i], i)
		}
		r.d.Axes = append(r.d.Axes, axisNames3[i])
		r.d.Domain = append(r.d.Domain, h*float64(len(x)))
		r.d.Boundary = append(r.d.Boundary, Periodic)
	}
	t, dt, err := r.axis(timePath)
	if err != nil {
		return err
	}
	if len(t) != frames && len(t) != frames+1 {
		return errorf(r.file, "dataset %s has %d times, want the field's %d frames (or one more)", timePath, len(t), frames)
	}
	r.d.Frames, r.d.Dt = frames, dt
	return nil
}

var axisNames3 = []string{"x", "y", "z"}

// rootCoords are the root coordinate datasets of dim axes.
func rootCoords(dim int) []string {
	var out []string
	for _, a := range axisNames3[:dim] {
		out = append(out, a+"-coordinate")
	}
	return out
}

// describeTensor describes the tensor layout.
func describeTensor(f *h5.File, file string) (Description, error) {
	r := &pdebenchReader{f: f, file: file, d: Description{Layout: PDEBenchTensor, File: file, Name: baseName(file)}}
	shape, err := f.Shape("tensor")
	if err != nil {
		return Description{}, errorf(file, "%v", err)
	}
	if len(shape) < 3 || len(shape) > 5 {
		return Description{}, errorf(file, "dataset tensor has shape %v, want [trajectories, frames, x (, y, z)]", shape)
	}
	r.d.Trajectories = shape[0]
	if err := r.grid(rootCoords(len(shape)-2), "t-coordinate", shape[2:], shape[1]); err != nil {
		return Description{}, err
	}
	r.d.Channels = []Channel{{Name: "u", Dataset: "tensor"}}
	return r.d, nil
}

// describeCFD describes the CFD layout.
func describeCFD(f *h5.File, file string) (Description, error) {
	r := &pdebenchReader{f: f, file: file, d: Description{Layout: PDEBenchCFD, File: file, Name: baseName(file)}}
	shape, err := f.Shape("density")
	if err != nil {
		return Description{}, errorf(file, "%v", err)
	}
	dim := len(shape) - 2
	if dim < 1 || dim > 3 {
		return Description{}, errorf(file, "dataset density has shape %v, want [trajectories, frames, x (, y, z)]", shape)
	}
	for _, name := range cfdFields[:2+dim] {
		s, err := f.Shape(name)
		if err != nil {
			return Description{}, errorf(file, "the CFD layout of %dD needs dataset %s: %v", dim, name, err)
		}
		if !slices.Equal(s, shape) {
			return Description{}, errorf(file, "dataset %s has shape %v, density %v: the fields must agree", name, s, shape)
		}
		r.d.Channels = append(r.d.Channels, Channel{Name: name, Dataset: name})
	}
	r.d.Trajectories = shape[0]
	if err := r.grid(rootCoords(dim), "t-coordinate", shape[2:], shape[1]); err != nil {
		return Description{}, err
	}
	return r.d, nil
}

// describeGroups describes the per-sample group layout: every root group
// holding "data" is a trajectory, and all must agree in shape.
func describeGroups(f *h5.File, file string, groups []string) (Description, error) {
	r := &pdebenchReader{f: f, file: file, d: Description{Layout: PDEBenchGroups, File: file, Name: baseName(file), Groups: groups}}
	first := groups[0]
	shape, err := f.Shape(first + "/data")
	if err != nil {
		return Description{}, errorf(file, "%v", err)
	}
	dim := len(shape) - 2
	if dim < 1 || dim > 3 {
		return Description{}, errorf(file, "dataset %s/data has shape %v, want [frames, x (, y, z), channels]", first, shape)
	}
	for _, g := range groups[1:] {
		s, err := f.Shape(g + "/data")
		if err != nil {
			return Description{}, errorf(file, "%v", err)
		}
		if !slices.Equal(s, shape) {
			return Description{}, errorf(file, "dataset %s/data has shape %v, %s/data %v: every trajectory must agree", g, s, first, shape)
		}
	}
	var coords []string
	for _, a := range axisNames3[:dim] {
		coords = append(coords, first+"/grid/"+a)
	}
	if err := r.grid(coords, first+"/grid/t", shape[1:1+dim], shape[0]); err != nil {
		return Description{}, err
	}
	r.d.Trajectories = len(groups)
	c := shape[len(shape)-1]
	for i := range c {
		name := "data"
		if c > 1 {
			name = "data_" + strconv.Itoa(i)
		}
		r.d.Channels = append(r.d.Channels, Channel{Name: name, Dataset: "data", Component: []int{i}})
	}
	return r.d, nil
}

// sampleGroups returns the root groups holding a dataset "data", in
// name order.
func sampleGroups(f *h5.File) ([]string, error) {
	ms, err := f.Members("/")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range ms {
		if m.Kind == h5.KindGroup && f.Kind(m.Name+"/data") == h5.KindDataset {
			out = append(out, m.Name)
		}
	}
	return out, nil
}
