// Package layout reads what a foreign PDE data file holds (issue 36, "any
// PDE a user brings"): which of the supported layouts it is in, its
// spatial dimension, grid, domain and boundary kind per axis, its
// channels with their names and where each lives, its trajectories,
// frames and time step. It reads metadata only (shapes, attributes,
// coordinate vectors), never the fields, so a file of any size is
// described in about the time it takes to open it.
//
// A Description is what `uhno datagen --from FILE` records and what a task
// made from the file is built on; reading the fields by streaming
// hyperslabs is the data package's job.
//
// Layouts:
//
//   - The Well (PolymathicAI's one HDF5 layout for its sixteen 2D and 3D
//     datasets, the_well/docs/data_format.md): fields in groups t0_fields
//     (scalars), t1_fields (vectors: a trailing axis of n_spatial_dims
//     components) and t2_fields (tensors: two such axes), coordinates and
//     time in dimensions, the boundary kind per axis in
//     boundary_conditions, and the root attributes n_spatial_dims,
//     n_trajectories, dataset_name and grid_type. See well.go.
//   - PDEBench's three layouts of time-dependent data: the root "tensor"
//     (1D advection, Burgers, reaction-diffusion), the CFD fields
//     (density, pressure, Vx, Vy, Vz; 1D to 3D) and the per-sample groups
//     ("0000/data" with "grid/x", "grid/t": 2D diffusion-reaction, shallow
//     water). See pdebench.go.
//   - A plain array [trajectories, frames, x (, y, z), channels] in a .npy
//     file or as the one dataset of an HDF5 file, its lengths, time step,
//     boundaries and channel names given by Hints or the dataset's
//     attributes. See array.go.
//
// Every refusal is one line naming the file, the dataset or attribute at
// fault and what was expected.
package layout

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"uhno/internal/data/h5"
)

// Layout names a supported file layout.
type Layout string

// The supported layouts.
const (
	TheWell Layout = "the-well"
)

// Boundary kinds per axis.
const (
	Periodic = "periodic"
	Wall     = "wall"
	Open     = "open"
)

// Channel is one scalar channel of the data: a field's dataset and, for a
// vector or tensor field, the component it takes from the dataset's
// trailing axes.
type Channel struct {
	// Name is the channel's name in every output: the field's name, with
	// the component's axis names for a vector (velocity_x) or a tensor
	// (stress_xy).
	Name string `json:"name"`
	// Dataset is the dataset's path in the file.
	Dataset string `json:"dataset"`
	// Component indexes the dataset's trailing component axes (none for
	// a scalar field).
	Component []int `json:"component,omitempty"`
}

// Constant is an input the model receives beside the fields that does not
// change over time: a field without a time axis (a coefficient such as
// Darcy's a), or a scalar (one value per trajectory, or for all).
type Constant struct {
	Channel
	// PerTrajectory is true when the value differs between trajectories.
	PerTrajectory bool `json:"per_trajectory"`
	// Scalar is true for a single number (broadcast over the grid), false
	// for a field on the grid.
	Scalar bool `json:"scalar"`
}

// Description is what a data file holds, as a task made from it needs it.
type Description struct {
	Layout Layout `json:"layout"`
	// File is the file described, as given.
	File string `json:"file"`
	// Name is the dataset's own name (The Well's dataset_name).
	Name string `json:"name"`
	// Dim is the number of spatial axes (1 to 3); Axes name them.
	Dim  int      `json:"dim"`
	Axes []string `json:"axes"`
	// Grid is the number of points per axis, Domain the length of each
	// axis (the point spacing times the points on a periodic axis, the
	// distance from the first point to the last otherwise), Boundary the
	// kind per axis (Periodic, Wall or Open).
	Grid     []int     `json:"grid"`
	Domain   []float64 `json:"domain"`
	Boundary []string  `json:"boundary"`
	// Channels are the time-dependent fields, one scalar channel each, in
	// the file's order (scalars, then vectors, then tensors).
	Channels []Channel `json:"channels"`
	// Constants are the time-independent inputs.
	Constants []Constant `json:"constants,omitempty"`
	// Trajectories and Frames count the samples and the time points of
	// each; Dt is the (uniform) time between frames.
	Trajectories int     `json:"trajectories"`
	Frames       int     `json:"frames"`
	Dt           float64 `json:"dt"`
	// Groups are the trajectories' groups in PDEBench's per-sample layout,
	// in order; each channel's Dataset is then relative to its group.
	Groups []string `json:"groups,omitempty"`
	// Assumed lists what neither the file nor the user said and was
	// taken by default (the plain-array layouts: lengths, dt, boundaries,
	// channel names).
	Assumed []string `json:"assumed,omitempty"`
}

// ChannelNames returns the channels' names in order.
func (d *Description) ChannelNames() []string {
	out := make([]string, len(d.Channels))
	for i, c := range d.Channels {
		out[i] = c.Name
	}
	return out
}

// Periodic reports whether every axis is periodic.
func (d *Description) Periodic() bool {
	for _, b := range d.Boundary {
		if b != Periodic {
			return false
		}
	}
	return true
}

// Describe describes path with no hints (DescribeWith).
func Describe(path string) (Description, error) { return DescribeWith(path, Hints{}) }

// DescribeWith opens path and describes it in the first layout it
// matches: a .npy file is a plain array; an HDF5 file is The Well's,
// PDEBench's CFD fields, PDEBench's tensor, PDEBench's per-sample groups,
// or a plain array when its root holds one dataset and nothing else.
// Hints apply to the plain arrays (the other layouts say it all; a hint
// given for one is refused, so nothing the user said is silently
// dropped).
func DescribeWith(path string, hints Hints) (Description, error) {
	if isNpy(path) {
		return describeNpy(path, hints)
	}
	f, err := h5.Open(path)
	if err != nil {
		return Description{}, fmt.Errorf("layout: %w", err)
	}
	defer f.Close()
	d, err := describeH5(f, path, hints)
	if err == nil && d.Layout != ArrayH5 && (hints.Domain != nil || hints.Dt != 0 || hints.Boundary != nil || hints.Channels != nil) {
		return Description{}, errorf(path, "is in %s's layout, which gives its lengths, time step, boundaries and channel names itself: drop the hints", d.Layout)
	}
	return d, err
}

func describeH5(f *h5.File, path string, hints Hints) (Description, error) {
	switch {
	case isWell(f):
		return describeWell(f, path)
	case f.Kind("density") == h5.KindDataset:
		return describeCFD(f, path)
	case f.Kind("tensor") == h5.KindDataset:
		return describeTensor(f, path)
	}
	groups, err := sampleGroups(f)
	if err != nil {
		return Description{}, errorf(path, "%v", err)
	}
	if len(groups) > 0 {
		return describeGroups(f, path, groups)
	}
	if ms, err := f.Members("/"); err == nil && len(ms) == 1 && ms[0].Kind == h5.KindDataset {
		return describeH5Array(f, path, ms[0].Name, hints)
	}
	return Description{}, errorf(path, "none of the supported layouts: The Well's (n_spatial_dims, dimensions/, t0_fields/ ...), "+
		"PDEBench's tensor, CFD fields (density, pressure, Vx ...) or per-sample groups (0000/data), or one array [trajectories, frames, x (, y, z), channels]")
}

// ReadTaskDescription reads the description out of a task file `uhno
// datagen --from` wrote (its "description" key), so that a run whose data
// is that file opens it as it opens any data file (data.Open).
func ReadTaskDescription(path string) (Description, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Description{}, fmt.Errorf("layout: %w", err)
	}
	var tf struct {
		Description *Description `json:"description"`
	}
	if err := json.Unmarshal(raw, &tf); err != nil || tf.Description == nil || tf.Description.File == "" {
		return Description{}, fmt.Errorf("layout: %s: not a task description of uhno datagen --from (%v)", path, err)
	}
	return *tf.Description, nil
}

// baseName is file's name without directory and extension.
func baseName(file string) string {
	return strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
}

// errorf is a refusal of file: one line, the file first.
func errorf(file, format string, a ...any) error {
	return fmt.Errorf("layout: %s: %s", file, strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", " "))
}
