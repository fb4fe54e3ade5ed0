package predict

import (
	"fmt"
	"slices"
	"strings"

	"uhno/internal/data"
	"uhno/internal/data/layout"
)

// source is an input file opened for reading trajectories' frames.
type source interface {
	// Len is the number of trajectories, Frames the frames of each, Grid
	// the spatial grid and Fields the number of fields.
	Len() int
	Frames() int
	Grid() []int
	// Read reads frames [t0, t0+nt) of trajectory i into dst, laid out
	// [nt, fields, points]; a NaN or Inf is an error naming its index.
	Read(dst []float32, i, t0, nt int) error
	// Coord returns a coordinate dataset ("x-coordinate", "t-coordinate")
	// when the file has one, else nil.
	Coord(name string) []float32
	// Constant reads constant input name of trajectory i onto the grid
	// (data.Dataset.ReadConstant); an error where the file has none.
	Constant(dst []float32, name string, i int) error
	// Where names the file and dataset for messages; Shape is the shape
	// found, as the file stores it.
	Where() string
	Shape() []int
	Close() error
}

// cfdFields are the 3D CFD fields in PDEBench's order (data.FormatCFD).
var cfdFields = []string{"density", "pressure", "Vx", "Vy", "Vz"}

// h5Source reads an HDF5 file through package data.
type h5Source struct {
	ds     *data.Dataset
	fields []string
	names  []string // the file's datasets holding fields
}

// openH5 opens path for a model of the given fields; datasets (comma
// separated, one per field) overrides the datasets read, which are
// otherwise the fields' own names.
func openH5(path string, fields []string, datasets string) (*h5Source, error) {
	if strings.HasSuffix(path, ".json") || (!slices.Equal(fields, []string{"tensor"}) && !slices.Equal(fields, cfdFields)) {
		return openDescribed(path, fields, datasets)
	}
	var format data.Format
	switch {
	case slices.Equal(fields, []string{"tensor"}):
		format = data.FormatTensor
	case slices.Equal(fields, cfdFields):
		format = data.FormatCFD
	default:
		return nil, fmt.Errorf("predict: the run predicts fields %v; predict reads HDF5 time series (tensor) and 3D CFD (%s) only", fields, strings.Join(cfdFields, ", "))
	}
	opt := data.Options{Format: format}
	if datasets != "" {
		opt.Datasets = strings.Split(datasets, ",")
		if len(opt.Datasets) != len(fields) {
			return nil, fmt.Errorf("predict: %s: --dataset names %d dataset(s) (%s), the run has %d field(s) (%s): give one per field, comma-separated",
				path, len(opt.Datasets), datasets, len(fields), strings.Join(fields, ", "))
		}
	}
	ds, err := data.Open(path, opt)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "data: ")
		if datasets == "" && strings.Contains(msg, "found datasets") {
			msg += "; pick the dataset(s) with --dataset"
		}
		return nil, fmt.Errorf("predict: %s", msg)
	}
	s := &h5Source{ds: ds, fields: fields}
	for _, f := range fields {
		s.names = append(s.names, ds.Dataset(f))
	}
	return s, nil
}

// openDescribed opens a run's input in the layout of a described task
// (issue 36): a task.json of uhno datagen --from, or a file in any layout
// package layout reads (The Well, PDEBench's, one HDF5 array) whose
// channels are the run's fields, by name and in order.
func openDescribed(path string, fields []string, datasets string) (*h5Source, error) {
	if datasets != "" {
		return nil, fmt.Errorf("predict: %s: --dataset picks datasets of the tensor and CFD layouts; a described file names its channels itself", path)
	}
	var desc layout.Description
	var err error
	if strings.HasSuffix(path, ".json") {
		desc, err = layout.ReadTaskDescription(path)
	} else {
		desc, err = layout.Describe(path)
	}
	if err != nil {
		return nil, fmt.Errorf("predict: the run predicts fields %v: %w", fields, err)
	}
	if got := desc.ChannelNames(); !slices.Equal(got, fields) {
		return nil, fmt.Errorf("predict: %s holds channels %v, the run predicts %v", path, got, fields)
	}
	ds, err := data.OpenDescribed(desc, data.Options{})
	if err != nil {
		return nil, fmt.Errorf("predict: %s", strings.TrimPrefix(err.Error(), "data: "))
	}
	s := &h5Source{ds: ds, fields: fields}
	for _, f := range fields {
		s.names = append(s.names, ds.Dataset(f))
	}
	return s, nil
}

func (s *h5Source) Len() int     { return s.ds.Len() }
func (s *h5Source) Frames() int  { return s.ds.Frames() }
func (s *h5Source) Grid() []int  { return s.ds.Grid() }
func (s *h5Source) Close() error { return s.ds.Close() }
func (s *h5Source) Shape() []int {
	return append([]int{s.ds.Len(), s.ds.Frames()}, s.ds.Grid()...)
}

func (s *h5Source) Where() string {
	q := make([]string, len(s.names))
	for i, n := range s.names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return fmt.Sprintf("%s (dataset %s)", s.ds.Path(), q[0])
	}
	return fmt.Sprintf("%s (datasets %s)", s.ds.Path(), strings.Join(q, ", "))
}

func (s *h5Source) Read(dst []float32, i, t0, nt int) error {
	if err := s.ds.ReadFrames(dst, i, t0, nt, s.fields); err != nil {
		return fmt.Errorf("predict: %s", strings.TrimPrefix(err.Error(), "data: "))
	}
	return nil
}

func (s *h5Source) Constant(dst []float32, name string, i int) error {
	if err := s.ds.ReadConstant(dst, name, i); err != nil {
		return fmt.Errorf("predict: the run takes constant input %q: %s", name, strings.TrimPrefix(err.Error(), "data: "))
	}
	return nil
}

func (s *h5Source) Coord(name string) []float32 {
	c, err := s.ds.Coordinate(name)
	if err != nil {
		return nil
	}
	return c
}
