package data

import (
	"fmt"
	"slices"

	"uhno/internal/data/h5"
	"uhno/internal/data/layout"
	"uhno/internal/data/npy"
)

// described is how a Dataset opened from a layout.Description (a user's
// file in The Well's, PDEBench's or a plain-array layout: issue 36) finds
// a channel: the description's channels by name, and for a .npy file its
// header (the file is read in place, without HDF5).
type described struct {
	desc   layout.Description
	chans  map[string]layout.Channel
	consts map[string]layout.Constant
	npy    *npy.Header
}

// OpenDescribed opens the file desc describes as a Dataset whose fields
// are desc's channels (in order), every one with a time axis. Reads are
// hyperslabs of one trajectory and channel, as for the built-in layouts;
// a .npy array is read a trajectory's frames at a time. opt.Stride
// subsamples the grid as for Open; opt.Frames and opt.Grid are checked.
func OpenDescribed(desc layout.Description, opt Options) (*Dataset, error) {
	d := &Dataset{path: desc.File, fields: desc.ChannelNames(), timed: map[string]bool{}, names: map[string]string{},
		n: desc.Trajectories, frames: desc.Frames, stored: slices.Clone(desc.Grid),
		desc: &described{desc: desc, chans: map[string]layout.Channel{}, consts: map[string]layout.Constant{}}}
	for _, c := range desc.Channels {
		if _, dup := d.desc.chans[c.Name]; dup {
			return nil, fmt.Errorf("data: %s: two channels called %q", desc.File, c.Name)
		}
		d.desc.chans[c.Name] = c
		d.timed[c.Name] = true
		d.names[c.Name] = c.Dataset
	}
	for _, c := range desc.Constants {
		if _, dup := d.desc.chans[c.Name]; dup {
			return nil, fmt.Errorf("data: %s: a channel and a constant input are both called %q", desc.File, c.Name)
		}
		if _, dup := d.desc.consts[c.Name]; dup {
			return nil, fmt.Errorf("data: %s: two constant inputs called %q", desc.File, c.Name)
		}
		d.desc.consts[c.Name] = c
		d.constants = append(d.constants, c.Name)
	}
	if len(d.fields) == 0 || d.n < 1 || d.frames < 1 || len(d.stored) == 0 || slices.Contains(d.stored, 0) {
		return nil, fmt.Errorf("data: %s: the description has no channel, trajectory, frame or grid point", desc.File)
	}
	if desc.Layout == layout.ArrayNpy {
		h, err := npy.ReadHeader(desc.File)
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		want := append(append([]int{d.n, d.frames}, d.stored...), len(d.fields))
		if !slices.Equal(h.Shape, want) {
			return nil, fmt.Errorf("data: %s: the array has shape %v, its description %v: the file changed since uhno datagen --from", desc.File, h.Shape, want)
		}
		d.desc.npy = &h
	} else {
		f, err := h5.Open(desc.File)
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		d.file = f
	}
	if opt.Frames > 0 && d.frames != opt.Frames {
		d.Close()
		return nil, fmt.Errorf("data: %s: %d frames per trajectory, want %d", desc.File, d.frames, opt.Frames)
	}
	if opt.Grid != nil && !slices.Equal(d.stored, opt.Grid) {
		d.Close()
		return nil, fmt.Errorf("data: %s: spatial grid %v, want %v", desc.File, d.stored, opt.Grid)
	}
	d.stride = max(opt.Stride, 1)
	for _, g := range d.stored {
		if g%d.stride != 0 {
			d.Close()
			return nil, fmt.Errorf("data: %s: stride %d does not divide the grid %v", desc.File, d.stride, d.stored)
		}
		d.grid = append(d.grid, g/d.stride)
	}
	return d, nil
}

// readDescribed reads channel name's frames [t0, t0+nt) of trajectory i
// as [nt, grid...].
func (d *Dataset) readDescribed(dst []float32, name string, i, t0, nt int) error {
	c := d.desc.chans[name]
	if d.desc.npy != nil {
		return d.readNpy(dst, c, i, t0, nt)
	}
	path := c.Dataset
	var offset, count, stride []int
	if d.desc.desc.Layout == layout.PDEBenchGroups {
		// One group per trajectory: [T, x..., C].
		path = d.desc.desc.Groups[i] + "/" + c.Dataset
	} else {
		offset, count, stride = []int{i}, []int{1}, []int{1}
	}
	offset, count, stride = append(offset, t0), append(count, nt), append(stride, 1)
	for _, g := range d.grid {
		offset, count, stride = append(offset, 0), append(count, g), append(stride, d.stride)
	}
	for _, k := range c.Component {
		offset, count, stride = append(offset, k), append(count, 1), append(stride, 1)
	}
	return d.file.Read(path, offset, count, stride, dst)
}

// readNpy reads a plain .npy array's channel: the trajectory's frames
// [t0, t0+nt) whole (every channel, interleaved last), then channel
// c.Component[0] of every kept grid point.
func (d *Dataset) readNpy(dst []float32, c layout.Channel, i, t0, nt int) error {
	nc := len(d.fields)
	pts := 1
	for _, g := range d.stored {
		pts *= g
	}
	block := make([]float32, nt*pts*nc)
	if err := npy.Read(d.path, *d.desc.npy, ((i*d.frames)+t0)*pts*nc, block); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	out := d.Points()
	for f := range nt {
		for p := range out {
			dst[f*out+p] = block[(f*pts+d.storedIndex(p))*nc+c.Component[0]]
		}
	}
	return nil
}

// storedIndex maps point p of the strided grid to its flat index in the
// stored grid (row-major).
func (d *Dataset) storedIndex(p int) int {
	idx, mul := 0, 1
	for a := len(d.grid) - 1; a >= 0; a-- {
		q := p % d.grid[a]
		p /= d.grid[a]
		idx += q * d.stride * mul
		mul *= d.stored[a]
	}
	return idx
}

// Constants names the time-independent inputs of a described file
// (layout.Description.Constants: a field without a time axis, or a
// scalar), in the description's order; none for the built-in layouts.
func (d *Dataset) Constants() []string { return slices.Clone(d.constants) }

// ReadConstant reads constant input name of trajectory i onto the grid
// (after the stride) into dst, Points() values: a field as the file holds
// it for that trajectory (or for all, when it is the same for every one),
// a scalar repeated at every point. A NaN or Inf is an error naming the
// dataset and trajectory.
func (d *Dataset) ReadConstant(dst []float32, name string, i int) error {
	c, ok := d.constInfo(name)
	if !ok {
		return fmt.Errorf("data: %s: no constant input %q; the file has %v", d.path, name, d.constants)
	}
	if i < 0 || i >= d.n || len(dst) != d.Points() {
		panic(fmt.Sprintf("data: ReadConstant(%s): trajectory %d of %d, %d values for %d points", d.path, i, d.n, len(dst), d.Points()))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var offset, count, stride []int
	if c.PerTrajectory {
		offset, count, stride = []int{i}, []int{1}, []int{1}
	}
	if c.Scalar {
		var v [1]float32
		dims, err := d.file.Shape(c.Dataset)
		if err != nil {
			return fmt.Errorf("data: %w", err)
		}
		if len(offset) == 0 && len(dims) == 1 {
			offset, count, stride = []int{0}, []int{1}, []int{1}
		}
		if err := d.file.Read(c.Dataset, offset, count, stride, v[:]); err != nil {
			return fmt.Errorf("data: %w", err)
		}
		for p := range dst {
			dst[p] = v[0]
		}
	} else {
		for _, g := range d.grid {
			offset, count, stride = append(offset, 0), append(count, g), append(stride, d.stride)
		}
		for _, k := range c.Component {
			offset, count, stride = append(offset, k), append(count, 1), append(stride, 1)
		}
		if err := d.file.Read(c.Dataset, offset, count, stride, dst); err != nil {
			return fmt.Errorf("data: %w", err)
		}
	}
	if j := h5.FirstNonFinite(dst); j >= 0 {
		return fmt.Errorf("data: %s: constant input %q (dataset %q) holds %v for trajectory %d at grid point %d", d.path, name, c.Dataset, dst[j], i, j)
	}
	return nil
}

// constInfo returns constant input name's description.
func (d *Dataset) constInfo(name string) (layout.Constant, bool) {
	if d.desc == nil {
		return layout.Constant{}, false
	}
	c, ok := d.desc.consts[name]
	return c, ok
}
