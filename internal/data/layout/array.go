package layout

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"uhno/internal/data/h5"
	"uhno/internal/data/npy"
)

// The plain-array layouts: one array [trajectories, frames, x (, y, z),
// channels] in a .npy file or as the one dataset of an HDF5 file. The
// array says nothing of its grid's lengths, time step, boundaries or
// channel names: Hints give them (datagen's flags), else an HDF5
// dataset's attributes (domain, dt, boundary, channels), else each axis is
// 1 long and periodic, dt is 1 and the channels are c0, c1, ...; what was
// assumed is listed in Description.Assumed.
const (
	ArrayNpy Layout = "array-npy"
	ArrayH5  Layout = "array-h5"
)

// Hints are what a user says of a file that does not say it itself; a
// zero field is not given.
type Hints struct {
	Domain   []float64 // length per axis
	Dt       float64   // time between frames
	Boundary []string  // kind per axis: periodic, wall or open
	Channels []string  // channel names
}

// describeArray describes an array of shape from file (dataset: its
// HDF5 path, "" for a .npy file), with hints, else attrs, else defaults.
func describeArray(file, dataset string, shape []int, hints Hints, attrs func(string) (any, bool)) (Description, error) {
	lay := ArrayNpy
	if dataset != "" {
		lay = ArrayH5
	}
	what := "the array"
	if dataset != "" {
		what = "dataset " + dataset
	}
	if len(shape) < 4 || len(shape) > 6 {
		return Description{}, errorf(file, "%s has shape %v, want [trajectories, frames, x (, y, z), channels]", what, shape)
	}
	for i, d := range shape {
		if d < 1 {
			return Description{}, errorf(file, "%s has shape %v: axis %d is empty", what, shape, i)
		}
	}
	dim := len(shape) - 3
	d := Description{Layout: lay, File: file, Name: baseName(file), Dim: dim, Axes: slices.Clone(axisNames3[:dim]),
		Grid: slices.Clone(shape[2 : 2+dim]), Trajectories: shape[0], Frames: shape[1]}
	if attrs == nil {
		attrs = func(string) (any, bool) { return nil, false }
	}
	var err error
	if d.Domain, err = floatsHint("domain", hints.Domain, attrs, dim, 1, file); err != nil {
		return Description{}, err
	}
	d.Assumed = append(d.Assumed, assumedNote("domain", hints.Domain != nil, attrs)...)
	dts, err := floatsHint("dt", nonZero(hints.Dt), attrs, 1, 1, file)
	if err != nil {
		return Description{}, err
	}
	d.Dt = dts[0]
	d.Assumed = append(d.Assumed, assumedNote("dt", hints.Dt != 0, attrs)...)
	if d.Boundary, err = stringsHint("boundary", hints.Boundary, attrs, dim, Periodic, file); err != nil {
		return Description{}, err
	}
	d.Assumed = append(d.Assumed, assumedNote("boundary", hints.Boundary != nil, attrs)...)
	for _, b := range d.Boundary {
		if b != Periodic && b != Wall && b != Open {
			return Description{}, errorf(file, "boundary %q: want periodic, wall or open per axis", b)
		}
	}
	c := shape[len(shape)-1]
	names, err := stringsHint("channels", hints.Channels, attrs, c, "", file)
	if err != nil {
		return Description{}, err
	}
	d.Assumed = append(d.Assumed, assumedNote("channels", hints.Channels != nil, attrs)...)
	for i, n := range names {
		if n == "" {
			n = "c" + strconv.Itoa(i)
		}
		d.Channels = append(d.Channels, Channel{Name: n, Dataset: dataset, Component: []int{i}})
	}
	return d, nil
}

func nonZero(x float64) []float64 {
	if x == 0 {
		return nil
	}
	return []float64{x}
}

// floatsHint is the hint, else the attribute, else n copies of def; each
// value must be positive, and there must be n of them.
func floatsHint(key string, hint []float64, attrs func(string) (any, bool), n int, def float64, file string) ([]float64, error) {
	v := hint
	if v == nil {
		if a, ok := attrs(key); ok {
			switch x := a.(type) {
			case float64:
				v = []float64{x}
			case []float64:
				v = x
			default:
				return nil, errorf(file, "attribute %s is %v, want %d positive numbers", key, a, n)
			}
		}
	}
	if v == nil {
		v = slices.Repeat([]float64{def}, n)
	}
	if len(v) != n {
		return nil, errorf(file, "%s %v: want %d values", key, v, n)
	}
	for _, x := range v {
		if !(x > 0) {
			return nil, errorf(file, "%s %v: want positive values", key, v)
		}
	}
	return v, nil
}

// stringsHint is the hint, else the attribute, else n copies of def.
func stringsHint(key string, hint []string, attrs func(string) (any, bool), n int, def, file string) ([]string, error) {
	v := hint
	if v == nil {
		if a, ok := attrs(key); ok {
			switch x := a.(type) {
			case string:
				v = strings.Split(x, ",")
			case []string:
				v = x
			default:
				return nil, errorf(file, "attribute %s is %v, want %d names", key, a, n)
			}
		}
	}
	if v == nil {
		return slices.Repeat([]string{def}, n), nil
	}
	if len(v) != n {
		return nil, errorf(file, "%s %v: want %d values", key, v, n)
	}
	return v, nil
}

// assumedNote says key was assumed when neither a hint nor an attribute
// gave it.
func assumedNote(key string, hinted bool, attrs func(string) (any, bool)) []string {
	if hinted {
		return nil
	}
	if _, ok := attrs(key); ok {
		return nil
	}
	return []string{fmt.Sprintf("%s (no --%s and no attribute %s)", key, key, key)}
}

// describeNpy describes a .npy file.
func describeNpy(path string, hints Hints) (Description, error) {
	h, err := npy.ReadHeader(path)
	if err != nil {
		return Description{}, fmt.Errorf("layout: %w", err)
	}
	return describeArray(path, "", h.Shape, hints, nil)
}

// describeH5Array describes an HDF5 file whose root holds one dataset.
func describeH5Array(f *h5.File, path, dataset string, hints Hints) (Description, error) {
	shape, err := f.Shape(dataset)
	if err != nil {
		return Description{}, errorf(path, "%v", err)
	}
	attrs := func(key string) (any, bool) {
		v, ok, err := f.AttrOf(dataset, key)
		return v, ok && err == nil
	}
	return describeArray(path, dataset, shape, hints, attrs)
}

// isNpy reports whether path names a .npy file.
func isNpy(path string) bool { return strings.EqualFold(filepath.Ext(path), ".npy") }
