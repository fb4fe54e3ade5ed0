package data

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"uhno/internal/data/h5"
	"uhno/internal/data/layout"
)

// Format is one of the file layouts the reader understands (GUIDE
// section 3).
type Format int

const (
	// FormatAuto detects the layout from the dataset names.
	FormatAuto Format = iota
	// FormatTensor is "tensor" [b, t, x...] with 1 to 3 spatial axes:
	// uhno's time-dependent tasks and PDEBench 1D Burgers. One channel.
	FormatTensor
	// FormatDarcy is PDEBench 2D Darcy: "nu" [b, x, y] (the coefficient a)
	// and "tensor" [b, 1, x, y] (the solution u). Static: a -> u.
	FormatDarcy
	// FormatCFD is PDEBench 3D CFD: "density", "pressure", "Vx", "Vy", "Vz",
	// each [b, t, x, y, z]; channels in that order (PDEBench's stacking).
	FormatCFD
)

// CFDFields are the 3D CFD datasets in PDEBench's channel order.
var cfdFields = []string{"density", "pressure", "Vx", "Vy", "Vz"}

// String names the format as the error messages do.
func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case FormatTensor:
		return "time series (tensor [b, t, x...])"
	case FormatDarcy:
		return "2D Darcy (nu [b, x, y], tensor [b, 1, x, y])"
	case FormatCFD:
		return "3D CFD (density, pressure, Vx, Vy, Vz [b, t, x, y, z])"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// fields returns the datasets a format requires, in channel order.
func (f Format) fields() []string {
	switch f {
	case FormatTensor:
		return []string{"tensor"}
	case FormatDarcy:
		return []string{"nu", "tensor"}
	case FormatCFD:
		return slices.Clone(cfdFields)
	}
	return nil
}

// Bounds on the shapes Open accepts. A file's shapes are outside input,
// and HDF5 lets a file of a few kilobytes declare datasets of any size
// that it never stored (reads return the fill value), so a shape alone
// must not size what the pipeline allocates: a split permutes every
// trajectory (NewSplit), a Batcher and CheckFinite hold one trajectory.
// The bounds lie far above PDEBench's largest files (10,000
// trajectories; 21 frames of 128^3 points, 44M values, per field) and
// keep every product a consumer forms (trajectory x frames x fields x
// points) an int.
const (
	// maxTrajectories bounds the trajectories of a file.
	maxTrajectories = 1 << 24
	// maxTrajectoryValues bounds one field of one trajectory, frames x
	// grid points: 2^30 float32 values are 4 GiB.
	maxTrajectoryValues = 1 << 30
)

// Options say how to open a dataset and what to expect in it.
type Options struct {
	// Format forces a layout; FormatAuto detects it.
	Format Format
	// Stride subsamples every spatial axis on read by this integer factor
	// (0 or 1: none). It must divide the stored grid.
	Stride int
	// Frames, when positive, is the number of time frames every trajectory
	// must hold (1 for Darcy).
	Frames int
	// Grid, when set, is the stored spatial grid the file must have (before
	// the stride), e.g. [128, 128] for PDEBench Darcy.
	Grid []int
	// Datasets, when set, name the file's datasets that hold the layout's
	// fields, one per field in channel order (Format must then be given):
	// a file whose time series is called "u" opens as FormatTensor with
	// Datasets ["u"]. The Dataset still calls its fields by the layout's
	// names (Fields); only reads go to these datasets.
	Datasets []string
}

// Dataset is an open trajectory file: b trajectories of T frames, each
// frame holding one value per field (channel) and grid point. Reads go
// through hyperslabs of at most one trajectory. A Dataset is safe for
// concurrent use.
type Dataset struct {
	path   string
	file   *h5.File
	format Format
	fields []string
	timed  map[string]bool // field has a time axis (all but Darcy's nu)
	n      int
	frames int
	stored []int // spatial grid in the file
	grid   []int // spatial grid after the stride
	stride int
	names  map[string]string // field -> the file's dataset holding it
	// desc is set for a Dataset opened from a layout.Description
	// (OpenDescribed); file is nil then for a .npy array. constants are
	// its time-independent inputs (Constants).
	desc      *described
	constants []string

	mu      sync.Mutex
	scratch []float32
}

// Open opens path and checks its layout, shapes and (when opt says) the
// expected frames and grid. Errors are one line and name the path.
func Open(path string, opt Options) (*Dataset, error) {
	if strings.HasSuffix(path, ".json") {
		// A user's file described by uhno datagen --from (task.json).
		desc, err := layout.ReadTaskDescription(path)
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		return OpenDescribed(desc, opt)
	}
	f, err := h5.Open(path)
	if err != nil {
		return nil, err
	}
	d, err := open(f, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	return d, nil
}

func open(f *h5.File, opt Options) (*Dataset, error) {
	path := f.Path()
	names, err := f.Datasets()
	if err != nil {
		return nil, err
	}
	var found []string // datasets that are not coordinates
	for _, n := range names {
		if !strings.HasSuffix(n, "-coordinate") {
			found = append(found, n)
		}
	}
	has := func(want []string) bool {
		for _, w := range want {
			if !slices.Contains(found, w) {
				return false
			}
		}
		return true
	}
	format := opt.Format
	if opt.Datasets != nil {
		if format == FormatAuto || len(opt.Datasets) != len(format.fields()) {
			panic(fmt.Sprintf("data: Open(%s): %d dataset names for format %s", path, len(opt.Datasets), format))
		}
		for _, n := range opt.Datasets {
			if !slices.Contains(names, n) {
				return nil, fmt.Errorf("data: %s: no dataset %q; found [%s]", path, n, strings.Join(names, " "))
			}
		}
	} else if format == FormatAuto {
		for _, c := range []Format{FormatCFD, FormatDarcy, FormatTensor} {
			if has(c.fields()) {
				format = c
				break
			}
		}
		if format == FormatAuto {
			return nil, fmt.Errorf("data: %s: found datasets [%s], want one of: %s; %s; %s", path, strings.Join(names, " "), FormatTensor, FormatDarcy, FormatCFD)
		}
	} else if !has(format.fields()) {
		return nil, fmt.Errorf("data: %s: found datasets [%s], want [%s] (%s)", path, strings.Join(names, " "), strings.Join(format.fields(), " "), format)
	}
	d := &Dataset{path: path, file: f, format: format, fields: format.fields(), timed: map[string]bool{}, names: map[string]string{}}
	shapes := map[string][]int{}
	for i, n := range d.fields {
		d.names[n] = n
		if opt.Datasets != nil {
			d.names[n] = opt.Datasets[i]
		}
		if shapes[n], err = f.Shape(d.names[n]); err != nil {
			return nil, err
		}
	}
	bad := func(name, want string) error {
		return fmt.Errorf("data: %s: dataset %q has shape %v, want %s (%s)", path, d.names[name], shapes[name], want, format)
	}
	switch format {
	case FormatTensor:
		s := shapes["tensor"]
		if len(s) < 3 || len(s) > 5 {
			return nil, bad("tensor", "[b, t, x...] with 1 to 3 spatial axes")
		}
		d.n, d.frames, d.stored = s[0], s[1], s[2:]
		d.timed["tensor"] = true
	case FormatDarcy:
		a, u := shapes["nu"], shapes["tensor"]
		if len(a) != 3 {
			return nil, bad("nu", "[b, x, y]")
		}
		if len(u) != 4 || u[0] != a[0] || u[1] != 1 || u[2] != a[1] || u[3] != a[2] {
			return nil, bad("tensor", fmt.Sprintf("[%d, 1, %d, %d] to match nu %v", a[0], a[1], a[2], a))
		}
		d.n, d.frames, d.stored = a[0], 1, a[1:]
		d.timed["tensor"] = true
	case FormatCFD:
		first := shapes[cfdFields[0]]
		if len(first) != 5 {
			return nil, bad(cfdFields[0], "[b, t, x, y, z]")
		}
		for _, n := range cfdFields {
			if !slices.Equal(shapes[n], first) {
				return nil, bad(n, fmt.Sprintf("%v like %s", first, cfdFields[0]))
			}
			d.timed[n] = true
		}
		d.n, d.frames, d.stored = first[0], first[1], first[2:]
	}
	first := d.fields[0]
	if d.n < 1 || d.frames < 1 || slices.Contains(d.stored, 0) {
		return nil, bad(first, "at least one trajectory, frame and grid point")
	}
	if d.n > maxTrajectories {
		return nil, bad(first, fmt.Sprintf("at most %d trajectories", maxTrajectories))
	}
	values := d.frames
	for _, g := range d.stored {
		if g > maxTrajectoryValues/values {
			return nil, bad(first, fmt.Sprintf("at most %d values per trajectory and field (frames x grid points)", maxTrajectoryValues))
		}
		values *= g
	}
	if opt.Frames > 0 && d.frames != opt.Frames {
		return nil, fmt.Errorf("data: %s: dataset %q has %d frames per trajectory (shape %v), want %d", path, d.names[first], d.frames, shapes[first], opt.Frames)
	}
	if opt.Grid != nil && !slices.Equal(d.stored, opt.Grid) {
		return nil, fmt.Errorf("data: %s: dataset %q has spatial grid %v (shape %v), want %v", path, d.names[first], d.stored, shapes[first], opt.Grid)
	}
	d.stride = max(opt.Stride, 1)
	for _, g := range d.stored {
		if g%d.stride != 0 {
			return nil, fmt.Errorf("data: %s: stride %d does not divide the stored grid %v", path, d.stride, d.stored)
		}
		d.grid = append(d.grid, g/d.stride)
	}
	return d, nil
}

// Close closes the file.
func (d *Dataset) Close() error {
	if d.file == nil {
		return nil
	}
	return d.file.Close()
}

// Path returns the file's path.
func (d *Dataset) Path() string { return d.path }

// Format returns the detected layout.
func (d *Dataset) Format() Format { return d.format }

// Fields returns every field (dataset) in channel order.
func (d *Dataset) Fields() []string { return slices.Clone(d.fields) }

// Len returns the number of trajectories b.
func (d *Dataset) Len() int { return d.n }

// Frames returns the frames per trajectory T (1 for Darcy).
func (d *Dataset) Frames() int { return d.frames }

// StoredGrid returns the spatial grid in the file.
func (d *Dataset) StoredGrid() []int { return slices.Clone(d.stored) }

// Grid returns the spatial grid after the stride: the grid of every frame
// the Dataset returns.
func (d *Dataset) Grid() []int { return slices.Clone(d.grid) }

// Stride returns the spatial subsampling factor.
func (d *Dataset) Stride() int { return d.stride }

// Points returns the number of grid points of one frame, prod(Grid()).
func (d *Dataset) Points() int {
	p := 1
	for _, g := range d.grid {
		p *= g
	}
	return p
}

// Attr returns a root attribute of the file (h5.File.Attr).
func (d *Dataset) Attr(name string) (any, error) {
	if d.file == nil {
		return nil, fmt.Errorf("data: %s: a .npy array has no attributes", d.path)
	}
	return d.file.Attr(name)
}

// Coordinate returns coordinate dataset name ("x-coordinate", ...). A
// spatial coordinate the length of its stored axis is subsampled with the
// stride like the data.
func (d *Dataset) Coordinate(name string) ([]float32, error) {
	if d.file == nil {
		return nil, fmt.Errorf("data: %s: a .npy array has no coordinate %q", d.path, name)
	}
	c, dims, err := d.file.ReadAll(name)
	if err != nil {
		return nil, err
	}
	if len(dims) != 1 {
		return nil, fmt.Errorf("data: %s: coordinate %q has shape %v, want one axis", d.path, name, dims)
	}
	axis := strings.Index("xyz", strings.TrimSuffix(name, "-coordinate"))
	if d.stride > 1 && len(name) == len("x-coordinate") && axis >= 0 && axis < len(d.stored) && len(c) == d.stored[axis] {
		out := make([]float32, 0, len(c)/d.stride)
		for i := 0; i < len(c); i += d.stride {
			out = append(out, c[i])
		}
		return out, nil
	}
	return c, nil
}

// ReadFrames reads frames [t0, t0+nt) of trajectory i for the given fields
// into dst, laid out [nt, len(fields), grid...] (frame-major, then channel
// in the order given), subsampled by the stride. It reads nothing else of
// the file: one hyperslab per field. A NaN or Inf gives an error naming
// the trajectory, field and frame. Out-of-range indices or a dst of the
// wrong length panic (programming errors); an unknown field is an error.
func (d *Dataset) ReadFrames(dst []float32, i, t0, nt int, fields []string) error {
	if i < 0 || i >= d.n || t0 < 0 || nt < 1 || t0+nt > d.frames {
		panic(fmt.Sprintf("data: ReadFrames(%s): trajectory %d frames [%d, %d) outside %d trajectories of %d frames", d.path, i, t0, t0+nt, d.n, d.frames))
	}
	pts := d.Points()
	c := len(fields)
	if len(dst) != nt*c*pts {
		panic(fmt.Sprintf("data: ReadFrames(%s): dst holds %d values, want %d", d.path, len(dst), nt*c*pts))
	}
	for _, name := range fields {
		if !slices.Contains(d.fields, name) {
			return fmt.Errorf("data: %s: no field %q; the %s layout has [%s]", d.path, name, d.format, strings.Join(d.fields, " "))
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for ci, name := range fields {
		buf := dst
		if c > 1 {
			if len(d.scratch) < nt*pts {
				d.scratch = make([]float32, nt*pts)
			}
			buf = d.scratch[:nt*pts]
		}
		if err := d.readField(buf, name, i, t0, nt); err != nil {
			return err
		}
		if j := h5.FirstNonFinite(buf); j >= 0 {
			return fmt.Errorf("data: %s: trajectory %d of dataset %q holds %v at frame %d, grid point %d", d.path, i, d.names[name], buf[j], t0+j/pts, j%pts)
		}
		if c > 1 {
			for f := range nt {
				copy(dst[(f*c+ci)*pts:(f*c+ci+1)*pts], buf[f*pts:(f+1)*pts])
			}
		}
	}
	return nil
}

// readField reads one field's frames as [nt, grid...].
func (d *Dataset) readField(dst []float32, name string, i, t0, nt int) error {
	if d.desc != nil {
		return d.readDescribed(dst, name, i, t0, nt)
	}
	rank := len(d.stored)
	var offset, count, stride []int
	if d.timed[name] {
		offset = append([]int{i, t0}, make([]int, rank)...)
		count = append([]int{1, nt}, d.grid...)
		stride = append([]int{1, 1}, repeat(d.stride, rank)...)
	} else {
		// Darcy's nu: no time axis, one frame.
		offset = append([]int{i}, make([]int, rank)...)
		count = append([]int{1}, d.grid...)
		stride = append([]int{1}, repeat(d.stride, rank)...)
	}
	return d.file.Read(d.names[name], offset, count, stride, dst)
}

// Dataset returns the name of the file's dataset that holds field (the
// field's own name unless Options.Datasets renamed it).
func (d *Dataset) Dataset(field string) string { return d.names[field] }

func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// CheckFinite reads the given trajectories (all when nil) one at a time,
// fields and constant inputs, and returns the first NaN or Inf, naming its
// trajectory, field and frame. progress, when not nil, is called after each trajectory.
func (d *Dataset) CheckFinite(trajs []int, progress func(done, total int)) error {
	if trajs == nil {
		trajs = make([]int, d.n)
		for i := range trajs {
			trajs[i] = i
		}
	}
	buf := make([]float32, d.frames*d.Points())
	for k, i := range trajs {
		for _, name := range d.fields {
			nt := d.frames
			if !d.timed[name] {
				nt = 1
			}
			if err := d.ReadFrames(buf[:nt*d.Points()], i, 0, nt, []string{name}); err != nil {
				return err
			}
		}
		for _, name := range d.constants {
			if err := d.ReadConstant(buf[:d.Points()], name, i); err != nil {
				return err
			}
		}
		if progress != nil {
			progress(k+1, len(trajs))
		}
	}
	return nil
}
