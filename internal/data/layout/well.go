package layout

import (
	"math"
	"slices"
	"strings"

	"uhno/internal/data/h5"
)

// wellGroups are The Well's field groups by tensor rank: a rank-r field
// has r trailing component axes of n_spatial_dims entries each.
var wellGroups = []string{"t0_fields", "t1_fields", "t2_fields"}

// isWell reports whether f has The Well's marks: the root attribute
// n_spatial_dims, the group dimensions and at least one field group.
func isWell(f *h5.File) bool {
	if _, ok, _ := f.AttrOf("/", "n_spatial_dims"); !ok || f.Kind("dimensions") != h5.KindGroup {
		return false
	}
	for _, g := range wellGroups {
		if f.Kind(g) == h5.KindGroup {
			return true
		}
	}
	return false
}

// wellReader describes one file in The Well's layout.
type wellReader struct {
	f    *h5.File
	file string
	d    Description
}

// describeWell describes f, in The Well's layout.
func describeWell(f *h5.File, file string) (Description, error) {
	r := &wellReader{f: f, file: file, d: Description{Layout: TheWell, File: file}}
	for _, step := range []func() error{r.root, r.dimensions, r.time, r.boundaries, r.fields, r.scalars} {
		if err := step(); err != nil {
			return Description{}, err
		}
	}
	if len(r.d.Channels) == 0 {
		return Description{}, errorf(file, "no field varies in time (t0_fields, t1_fields, t2_fields): nothing to learn to advance")
	}
	return r.d, nil
}

// intAttr reads a numeric attribute as an int, refusing a missing,
// non-numeric or fractional one.
func (r *wellReader) intAttr(obj, name string, min int) (int, error) {
	v, ok, err := r.f.AttrOf(obj, name)
	if err != nil {
		return 0, errorf(r.file, "%v", err)
	}
	x, isNum := v.(float64)
	if !ok || !isNum || x != math.Trunc(x) || x < float64(min) {
		return 0, errorf(r.file, "attribute %s of %q is %v, want a whole number >= %d (The Well's layout)", name, obj, v, min)
	}
	return int(x), nil
}

// stringsAttr reads a list-of-strings attribute (a single string counts
// as a list of one); a missing one gives nil.
func (r *wellReader) stringsAttr(obj, name string) ([]string, error) {
	v, ok, err := r.f.AttrOf(obj, name)
	if err != nil {
		return nil, errorf(r.file, "%v", err)
	}
	if !ok {
		return nil, nil
	}
	switch x := v.(type) {
	case []string:
		return x, nil
	case string:
		return []string{x}, nil
	}
	return nil, errorf(r.file, "attribute %s of %q is %v, want a list of strings", name, obj, v)
}

// boolAttr reads a boolean attribute, def when it is missing.
func (r *wellReader) boolAttr(obj, name string, def bool) (bool, error) {
	v, ok, err := r.f.AttrOf(obj, name)
	if err != nil {
		return false, errorf(r.file, "%v", err)
	}
	if !ok {
		return def, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, errorf(r.file, "attribute %s of %q is %v, want a boolean", name, obj, v)
	}
	return b, nil
}

// root reads the root attributes: the grid type (cartesian only), the
// spatial dimension, the trajectories and the dataset's name.
func (r *wellReader) root() error {
	if v, ok, _ := r.f.AttrOf("/", "grid_type"); ok {
		if s, _ := v.(string); !strings.EqualFold(s, "cartesian") {
			return errorf(r.file, "grid_type is %v: only a cartesian grid is supported (uhno's models assume a uniform grid)", v)
		}
	}
	var err error
	if r.d.Dim, err = r.intAttr("/", "n_spatial_dims", 1); err != nil {
		return err
	}
	if r.d.Dim > 3 {
		return errorf(r.file, "n_spatial_dims is %d, want 1 to 3", r.d.Dim)
	}
	if r.d.Trajectories, err = r.intAttr("/", "n_trajectories", 1); err != nil {
		return err
	}
	r.d.Name = baseName(r.file)
	if v, ok, _ := r.f.AttrOf("/", "dataset_name"); ok {
		if s, isStr := v.(string); isStr && s != "" {
			r.d.Name = s
		}
	}
	return nil
}

// coords reads a one-dimensional coordinate dataset.
func (r *wellReader) coords(path string) ([]float32, error) {
	if r.f.Kind(path) != h5.KindDataset {
		return nil, errorf(r.file, "no dataset %s (The Well's layout has one per spatial axis and time)", path)
	}
	x, shape, err := r.f.ReadAll(path)
	if err != nil {
		return nil, errorf(r.file, "%v", err)
	}
	if len(shape) != 1 || shape[0] < 2 {
		return nil, errorf(r.file, "dataset %s has shape %v, want one axis of at least 2 points", path, shape)
	}
	if i := h5.FirstNonFinite(x); i >= 0 {
		return nil, errorf(r.file, "dataset %s holds %v at index %d, want finite coordinates", path, x[i], i)
	}
	return x, nil
}

// spacing returns the uniform step of x, refusing a grid whose steps
// differ by more than 1e-3 of the step (float32 coordinates) or do not
// increase.
func (r *wellReader) spacing(path string, x []float32) (float64, error) {
	h := (float64(x[len(x)-1]) - float64(x[0])) / float64(len(x)-1)
	for i := 1; i < len(x); i++ {
		if s := float64(x[i]) - float64(x[i-1]); !(h > 0) || math.Abs(s-h) > 1e-3*h {
			return 0, errorf(r.file, "dataset %s is not uniform and increasing (step %g at index %d, mean %g): uhno needs a uniform grid", path, s, i, h)
		}
	}
	return h, nil
}

// dimensions reads the spatial axes: their names (spatial_dims) and
// coordinates, giving the grid and the point spacing per axis.
func (r *wellReader) dimensions() error {
	axes, err := r.stringsAttr("dimensions", "spatial_dims")
	if err != nil {
		return err
	}
	if len(axes) != r.d.Dim {
		return errorf(r.file, "dimensions@spatial_dims is %v, want %d axis names (n_spatial_dims)", axes, r.d.Dim)
	}
	r.d.Axes = axes
	for _, a := range axes {
		x, err := r.coords("dimensions/" + a)
		if err != nil {
			return err
		}
		h, err := r.spacing("dimensions/"+a, x)
		if err != nil {
			return err
		}
		r.d.Grid = append(r.d.Grid, len(x))
		// Provisionally the periodic length; boundaries turns a
		// non-periodic axis into first-to-last.
		r.d.Domain = append(r.d.Domain, h*float64(len(x)))
	}
	return nil
}

// time reads dimensions/time: the frames and the uniform time step.
func (r *wellReader) time() error {
	t, err := r.coords("dimensions/time")
	if err != nil {
		return err
	}
	if r.d.Dt, err = r.spacing("dimensions/time", t); err != nil {
		return err
	}
	r.d.Frames = len(t)
	return nil
}

// boundaries reads boundary_conditions: every group's associated_dims
// and bc_type give each axis its kind. Every axis needs one; an axis
// named periodic by one group and otherwise by another is refused.
func (r *wellReader) boundaries() error {
	ms, err := r.f.Members("boundary_conditions")
	if err != nil {
		return errorf(r.file, "no group boundary_conditions: The Well's layout gives each axis its boundary kind there")
	}
	kind := map[string]string{}
	for _, m := range ms {
		if m.Kind != h5.KindGroup {
			continue
		}
		g := "boundary_conditions/" + m.Name
		dims, err := r.stringsAttr(g, "associated_dims")
		if err != nil {
			return err
		}
		v, _, _ := r.f.AttrOf(g, "bc_type")
		bc, _ := v.(string)
		bc = strings.ToLower(bc)
		if bc != Periodic && bc != Wall && bc != Open {
			return errorf(r.file, "%s@bc_type is %v, want periodic, wall or open", g, v)
		}
		for _, a := range dims {
			if !slices.Contains(r.d.Axes, a) {
				return errorf(r.file, "%s@associated_dims names %q, not an axis of %v", g, a, r.d.Axes)
			}
			if old, ok := kind[a]; ok && (old == Periodic) != (bc == Periodic) {
				return errorf(r.file, "axis %s is %s in one boundary group and %s in %s", a, old, bc, g)
			}
			if _, ok := kind[a]; !ok || bc == Wall {
				kind[a] = bc
			}
		}
	}
	for i, a := range r.d.Axes {
		k, ok := kind[a]
		if !ok {
			return errorf(r.file, "boundary_conditions gives axis %s no kind (periodic, wall or open)", a)
		}
		r.d.Boundary = append(r.d.Boundary, k)
		if k != Periodic {
			n := float64(r.d.Grid[i])
			r.d.Domain[i] *= (n - 1) / n
		}
	}
	return nil
}

// groupFields lists a field group's datasets: its field_names, or its
// members when it has none.
func (r *wellReader) groupFields(g string) ([]string, error) {
	names, err := r.stringsAttr(g, "field_names")
	if err != nil || names != nil {
		return names, err
	}
	ms, err := r.f.Members(g)
	if err != nil {
		return nil, errorf(r.file, "%v", err)
	}
	for _, m := range ms {
		if m.Kind == h5.KindDataset {
			names = append(names, m.Name)
		}
	}
	return names, nil
}

// fields reads t0_fields, t1_fields and t2_fields: each dataset's shape
// must be [trajectories if sample_varying] [frames if time_varying]
// grid [dim]*rank; a time-varying one gives a channel per component, a
// time-independent one a constant input.
func (r *wellReader) fields() error {
	for rank, g := range wellGroups {
		if r.f.Kind(g) != h5.KindGroup {
			continue
		}
		names, err := r.groupFields(g)
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := r.field(g+"/"+name, name, rank); err != nil {
				return err
			}
		}
	}
	return nil
}

// field adds the channels or constants of one field of the given rank.
func (r *wellReader) field(path, name string, rank int) error {
	if r.f.Kind(path) != h5.KindDataset {
		return errorf(r.file, "field_names lists %s, but there is no such dataset", path)
	}
	sample, err := r.boolAttr(path, "sample_varying", true)
	if err != nil {
		return err
	}
	timed, err := r.boolAttr(path, "time_varying", true)
	if err != nil {
		return err
	}
	if v, ok, _ := r.f.AttrOf(path, "dim_varying"); ok {
		if bs, isBools := v.([]bool); !isBools || slices.Contains(bs, false) {
			return errorf(r.file, "dataset %s has dim_varying %v: a field constant along an axis is not supported", path, v)
		}
	}
	if timed && !sample {
		return errorf(r.file, "dataset %s varies in time but is the same for every trajectory: not supported", path)
	}
	var want []int
	if sample {
		want = append(want, r.d.Trajectories)
	}
	if timed {
		want = append(want, r.d.Frames)
	}
	want = append(want, r.d.Grid...)
	for range rank {
		want = append(want, r.d.Dim)
	}
	got, err := r.f.Shape(path)
	if err != nil {
		return errorf(r.file, "%v", err)
	}
	if !slices.Equal(got, want) {
		return errorf(r.file, "dataset %s has shape %v, want %v (trajectories, frames, grid %v, then %d component axes of %d)",
			path, got, want, r.d.Grid, rank, r.d.Dim)
	}
	for _, c := range r.components(path, name, rank) {
		if timed {
			r.d.Channels = append(r.d.Channels, c)
		} else {
			r.d.Constants = append(r.d.Constants, Constant{Channel: c, PerTrajectory: sample})
		}
	}
	return nil
}

// components names the scalar channels of a rank-r field: the field's
// name for a scalar, name_x for a vector's x component, name_xy for a
// tensor's (x, y) component (the axes' names, row-major).
func (r *wellReader) components(path, name string, rank int) []Channel {
	if rank == 0 {
		return []Channel{{Name: name, Dataset: path}}
	}
	var out []Channel
	for i, a := range r.d.Axes {
		if rank == 1 {
			out = append(out, Channel{Name: name + "_" + a, Dataset: path, Component: []int{i}})
			continue
		}
		for j, b := range r.d.Axes {
			out = append(out, Channel{Name: name + "_" + a + b, Dataset: path, Component: []int{i, j}})
		}
	}
	return out
}

// scalars reads the group scalars: a number per trajectory or for all
// that does not vary in time is a constant input; one that varies in time
// is refused.
func (r *wellReader) scalars() error {
	if r.f.Kind("scalars") != h5.KindGroup {
		return nil
	}
	names, err := r.groupFields("scalars")
	if err != nil {
		return err
	}
	for _, name := range names {
		path := "scalars/" + name
		sample, err := r.boolAttr(path, "sample_varying", false)
		if err != nil {
			return err
		}
		timed, err := r.boolAttr(path, "time_varying", false)
		if err != nil {
			return err
		}
		if timed {
			return errorf(r.file, "scalar %s varies in time: a time-dependent scalar input is not supported", path)
		}
		got, err := r.f.Shape(path)
		if err != nil {
			return errorf(r.file, "%v", err)
		}
		want := []int{1}
		if sample {
			want = []int{r.d.Trajectories}
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && !sample) {
			return errorf(r.file, "scalar %s has shape %v, want %v", path, got, want)
		}
		r.d.Constants = append(r.d.Constants, Constant{Channel: Channel{Name: name, Dataset: path}, PerTrajectory: sample, Scalar: true})
	}
	return nil
}
