// Package h5test writes small HDF5 files in PDEBench's layouts for tests,
// the way h5py writes them in PDEBench's own scripts (Data_Merge.py):
// contiguous (unchunked, uncompressed) float32 datasets at the root and
// float64 root attributes, with no uhno bookkeeping. Tests of the readers
// use these files, so the readers are checked against the foreign layout
// rather than against uhno's own writer.
//
// Values follow Code, which encodes where a value sits, so a test can
// decode any value it reads back and check it came from the right
// variable, trajectory, frame and grid point.
package h5test

import (
	"fmt"

	"gonum.org/v1/hdf5"
)

// Dataset is one dataset to write.
type Dataset struct {
	Name string
	Dims []int
	// Data holds prod(Dims) values in row-major order.
	Data []float32
	// Float64 stores the values as float64 (some coordinate arrays are).
	Float64 bool
}

// Write creates path with the datasets and root attributes (float64 or
// string values).
func Write(path string, dsets []Dataset, attrs map[string]any) error {
	f, err := hdf5.CreateFile(path, hdf5.F_ACC_TRUNC)
	if err != nil {
		return fmt.Errorf("h5test: create %s: %v", path, err)
	}
	defer f.Close()
	for _, d := range dsets {
		n := 1
		dims := make([]uint, len(d.Dims))
		for k, v := range d.Dims {
			n *= v
			dims[k] = uint(v)
		}
		if n != len(d.Data) {
			return fmt.Errorf("h5test: %s: %d values for shape %v", d.Name, len(d.Data), d.Dims)
		}
		space, err := hdf5.CreateSimpleDataspace(dims, nil)
		if err != nil {
			return err
		}
		dtype := hdf5.T_IEEE_F32LE
		if d.Float64 {
			dtype = hdf5.T_IEEE_F64LE
		}
		ds, err := f.CreateDataset(d.Name, dtype, space)
		space.Close()
		if err != nil {
			return fmt.Errorf("h5test: %s: %v", d.Name, err)
		}
		if d.Float64 {
			x := make([]float64, n)
			for i, v := range d.Data {
				x[i] = float64(v)
			}
			err = ds.Write(&x)
		} else {
			x := d.Data
			err = ds.Write(&x)
		}
		ds.Close()
		if err != nil {
			return fmt.Errorf("h5test: %s: %v", d.Name, err)
		}
	}
	return writeAttrs(f, attrs)
}

// writeAttrs writes root attributes: float64 and string scalars, and
// []float64 arrays (h5py's f.attrs[name] = value).
func writeAttrs(f *hdf5.File, attrs map[string]any) error {
	root, err := f.OpenGroup("/")
	if err != nil {
		return err
	}
	defer root.Close()
	for name, v := range attrs {
		var (
			space *hdf5.Dataspace
			dtype *hdf5.Datatype
			ptr   any
		)
		switch x := v.(type) {
		case float64:
			space, err = hdf5.CreateDataspace(hdf5.S_SCALAR)
			dtype, ptr = hdf5.T_NATIVE_DOUBLE, &x
		case string:
			space, err = hdf5.CreateDataspace(hdf5.S_SCALAR)
			dtype, ptr = hdf5.T_GO_STRING, &x
		case []float64:
			if len(x) == 0 {
				return fmt.Errorf("h5test: attribute %s: an empty array", name)
			}
			space, err = hdf5.CreateSimpleDataspace([]uint{uint(len(x))}, nil)
			dtype, ptr = hdf5.T_NATIVE_DOUBLE, &x[0]
		default:
			return fmt.Errorf("h5test: attribute %s: type %T", name, v)
		}
		if err != nil {
			return fmt.Errorf("h5test: attribute %s: %v", name, err)
		}
		a, err := root.CreateAttribute(name, dtype, space)
		if err == nil {
			err = a.Write(ptr, dtype)
			a.Close()
		}
		space.Close()
		if err != nil {
			return fmt.Errorf("h5test: attribute %s: %v", name, err)
		}
	}
	return nil
}

// Shape declares a dataset by its dimensions and element type alone.
type Shape struct {
	Name string
	Dims []uint
	// Type is the element type: "f32" (little-endian float32, the
	// default), "f64", "f32be" (big-endian), "i32" or "u8".
	Type string
}

// shapeTypes maps Shape.Type to HDF5 file types.
var shapeTypes = map[string]*hdf5.Datatype{
	"":      hdf5.T_IEEE_F32LE,
	"f32":   hdf5.T_IEEE_F32LE,
	"f64":   hdf5.T_IEEE_F64LE,
	"f32be": hdf5.T_IEEE_F32BE,
	"i32":   hdf5.T_STD_I32LE,
	"u8":    hdf5.T_STD_U8LE,
}

// Declare creates path with datasets of the given shapes and root
// attributes (as Write), writing no values: HDF5 allocates a contiguous
// dataset's storage at its first write, so none is allocated, and reads
// return the fill value 0. A file of a few kilobytes can so declare any
// shape, however large, which is what tests of the readers' shape and
// size checks need (a file whose metadata promise more than it holds).
func Declare(path string, shapes []Shape, attrs map[string]any) error {
	f, err := hdf5.CreateFile(path, hdf5.F_ACC_TRUNC)
	if err != nil {
		return fmt.Errorf("h5test: create %s: %v", path, err)
	}
	defer f.Close()
	for _, s := range shapes {
		dtype, ok := shapeTypes[s.Type]
		if !ok {
			return fmt.Errorf("h5test: %s: element type %q", s.Name, s.Type)
		}
		var space *hdf5.Dataspace
		if len(s.Dims) == 0 {
			space, err = hdf5.CreateDataspace(hdf5.S_SCALAR)
		} else {
			space, err = hdf5.CreateSimpleDataspace(s.Dims, nil)
		}
		if err != nil {
			return fmt.Errorf("h5test: %s: dataspace %v: %v", s.Name, s.Dims, err)
		}
		d, err := f.CreateDataset(s.Name, dtype, space)
		space.Close()
		if err != nil {
			return fmt.Errorf("h5test: %s: %v", s.Name, err)
		}
		d.Close()
	}
	return writeAttrs(f, attrs)
}

// Code is the value stored for variable c of nc, trajectory i of n, frame f
// of nt and flat spatial index j of ns: ((c n + i) nt + f) ns + j. Keep it
// below 2^24 so float32 holds it exactly.
func Code(c, i, f, j, n, nt, ns int) float32 {
	return float32(((c*n+i)*nt+f)*ns + j)
}

// Decode inverts Code.
func Decode(v float32, n, nt, ns int) (c, i, f, j int) {
	x := int(v)
	j = x % ns
	x /= ns
	f = x % nt
	x /= nt
	i = x % n
	c = x / n
	return
}

// Field returns variable c of a [n, nt, spatial...] dataset filled with Code.
func Field(c, n, nt int, spatial []int) []float32 {
	ns := 1
	for _, v := range spatial {
		ns *= v
	}
	out := make([]float32, n*nt*ns)
	for i := range n {
		for f := range nt {
			for j := range ns {
				out[(i*nt+f)*ns+j] = Code(c, i, f, j, n, nt, ns)
			}
		}
	}
	return out
}

// Coordinate returns n cell centres of [0, 1], as PDEBench stores them.
func Coordinate(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = (float32(i) + 0.5) / float32(n)
	}
	return x
}

// Burgers writes a PDEBench 1D Burgers file: tensor [n, nt, nx] (Code with
// c = 0), x-coordinate [nx], t-coordinate [nt+1] (PDEBench stores one more
// time than frames) and attribute Nu.
func Burgers(path string, n, nt, nx int, nu float64) error {
	t := make([]float32, nt+1)
	for i := range t {
		t[i] = float32(i) * 0.01
	}
	return Write(path, []Dataset{
		{Name: "tensor", Dims: []int{n, nt, nx}, Data: Field(0, n, nt, []int{nx})},
		{Name: "x-coordinate", Dims: []int{nx}, Data: Coordinate(nx)},
		{Name: "t-coordinate", Dims: []int{nt + 1}, Data: t},
	}, map[string]any{"Nu": nu})
}

// Darcy writes a PDEBench 2D Darcy file: nu [n, nx, ny] (Code with c = 0,
// nt = 1), tensor [n, 1, nx, ny] (c = 1), coordinates and attribute beta.
func Darcy(path string, n, nx, ny int, beta float64) error {
	return Write(path, []Dataset{
		{Name: "nu", Dims: []int{n, nx, ny}, Data: Field(0, n, 1, []int{nx, ny})},
		{Name: "tensor", Dims: []int{n, 1, nx, ny}, Data: Field(1, n, 1, []int{nx, ny})},
		{Name: "x-coordinate", Dims: []int{nx}, Data: Coordinate(nx)},
		{Name: "y-coordinate", Dims: []int{ny}, Data: Coordinate(ny)},
	}, map[string]any{"beta": beta})
}

// CFDFields are PDEBench's 3D CFD datasets in its channel order.
var CFDFields = []string{"density", "pressure", "Vx", "Vy", "Vz"}

// CFD3D writes a PDEBench 3D CFD file: density, pressure, Vx, Vy, Vz, each
// [n, nt, g, g, g] (Code with c = the channel), coordinates (t-coordinate
// as float64) and attributes eta, zeta, M.
func CFD3D(path string, n, nt, g int) error {
	sp := []int{g, g, g}
	var ds []Dataset
	for c, name := range CFDFields {
		ds = append(ds, Dataset{Name: name, Dims: []int{n, nt, g, g, g}, Data: Field(c, n, nt, sp)})
	}
	t := make([]float32, nt)
	for i := range t {
		t[i] = float32(i) * 0.05
	}
	ds = append(ds,
		Dataset{Name: "x-coordinate", Dims: []int{g}, Data: Coordinate(g)},
		Dataset{Name: "y-coordinate", Dims: []int{g}, Data: Coordinate(g)},
		Dataset{Name: "z-coordinate", Dims: []int{g}, Data: Coordinate(g)},
		Dataset{Name: "t-coordinate", Dims: []int{nt}, Data: t, Float64: true},
	)
	return Write(path, ds, map[string]any{"eta": 1e-8, "zeta": 1e-8, "M": 1.0})
}
