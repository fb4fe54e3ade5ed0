package data

import (
	"fmt"
	"slices"
	"strings"
)

// Sampling says which input/target pairs a trajectory yields.
//
// A time-dependent trajectory of T frames gives pair k = 0..P-1: input
// frames k..k+H-1 (H = History), stacked as channels frame by frame, and
// target frame k+H. At most T-H windows exist; Pairs takes the first P of
// them (0: all). With the paper's settings (Tab. dataset-config, GUIDE
// section 4):
//
//	1D (burgers, ks, kdv): T = 51, H = 1, P = 50 (all windows): 50 pairs per trajectory
//	2D (adv2d, ac2d, ns2d): T = 50, H = 10; sliding gives T-H = 40 windows,
//	    P = 10 takes the first 10 (input frames 0..9 -> frame 10, ...,
//	    9..18 -> 19: the FNO Navier–Stokes protocol), 8,000 pairs from 800
//	3D CFD: T = 21, H = 1, P = 20: 1,600 pairs from 80 trajectories
//
// A static dataset (Darcy, T = 1) gives one pair: Inputs -> Outputs at
// frame 0 (a -> u); History must be 1.
type Sampling struct {
	// Inputs and Outputs name the fields (datasets) fed to and predicted by
	// the model, in channel order. Nil means the layout's default: all
	// fields for time series and 3D CFD, nu -> tensor for Darcy. The
	// config's names work too: "a" and "u" for Darcy, and any single name
	// for a time series' one field (see Dataset.resolve).
	Inputs, Outputs []string
	// History is H, the number of input frames (0 means 1).
	History int
	// Pairs is P, the pairs taken per trajectory (0 means all).
	Pairs int
	// Constants name time-independent inputs of the file (a described
	// file's Dataset.Constants: a coefficient field, a parameter per
	// trajectory), each one input channel after the H frames
	// (ConstantChannel names them), the same in every window of a
	// trajectory.
	Constants []string
	// Coordinates appends one input channel per grid axis after the
	// fields (and constants), holding the point's coordinate along that
	// axis, linspace(0, 1, N) (CoordinateChannel names them); on
	// time-dependent data after the H frames, the same in every window.
	Coordinates bool
}

// CoordinatePrefix leads the names of coordinate input channels
// (Sampling.Coordinates): "coord:x", "coord:y", "coord:z". No field of a
// data file can be so named (HDF5 dataset names here hold no ':').
const CoordinatePrefix = "coord:"

// CoordinateChannel names the coordinate channel of grid axis a.
func CoordinateChannel(a int) string {
	if a < 3 {
		return CoordinatePrefix + string("xyz"[a])
	}
	return fmt.Sprintf("%saxis%d", CoordinatePrefix, a)
}

// IsCoordinate reports whether an input channel name is a coordinate
// channel rather than a field.
func IsCoordinate(name string) bool { return strings.HasPrefix(name, CoordinatePrefix) }

// ConstantPrefix leads the names of constant input channels
// (Sampling.Constants): "const:" and the constant's name.
const ConstantPrefix = "const:"

// ConstantChannel names the input channel of constant input name.
func ConstantChannel(name string) string { return ConstantPrefix + name }

// IsFixed reports whether an input channel stays the same over a
// trajectory's windows (a constant or a coordinate channel), so a
// rollout keeps it rather than shifting it with the frames.
func IsFixed(name string) bool {
	return IsCoordinate(name) || strings.HasPrefix(name, ConstantPrefix)
}

// resolve maps a field name to its dataset: a dataset name stands for
// itself; Darcy also accepts the paper's names "a" (dataset nu) and "u"
// (dataset tensor); a time series has one field, so any single name (the
// config's physical label, "u" or "vorticity") means "tensor".
func (d *Dataset) resolve(name string) (string, bool) {
	if slices.Contains(d.fields, name) {
		return name, true
	}
	switch d.format {
	case FormatDarcy:
		switch name {
		case "a":
			return "nu", true
		case "u":
			return "tensor", true
		}
	case FormatTensor:
		return "tensor", name != ""
	}
	return "", false
}

// Pair names one sample: trajectory Traj of the file and its first input
// frame Start (the pair's index k within the trajectory).
type Pair struct {
	Traj, Start int
}

// Plan is a Sampling resolved against a Dataset.
type Plan struct {
	d       *Dataset
	inputs  []string
	outputs []string
	union   []string // inputs, then outputs not among them: the resident channels
	inIdx   []int    // position of each input in union
	outIdx  []int
	consts  []string // Sampling.Constants
	history int
	pairs   int
	static  bool
	coords  bool // Sampling.Coordinates
}

// Plan resolves s against the dataset, checking fields, history and pair
// count.
func (d *Dataset) Plan(s Sampling) (*Plan, error) {
	p := &Plan{d: d, inputs: s.Inputs, outputs: s.Outputs, history: max(s.History, 1), static: d.frames == 1, coords: s.Coordinates}
	if p.inputs == nil {
		p.inputs = d.fields
		if d.format == FormatDarcy {
			p.inputs = []string{"nu"}
		}
	}
	if p.outputs == nil {
		p.outputs = d.fields
		if d.format == FormatDarcy {
			p.outputs = []string{"tensor"}
		}
	}
	p.inputs, p.outputs, p.consts = slices.Clone(p.inputs), slices.Clone(p.outputs), slices.Clone(s.Constants)
	for i, c := range p.consts {
		if !slices.Contains(d.constants, c) {
			return nil, fmt.Errorf("data: %s: no constant input %q; the file has [%s]", d.path, c, strings.Join(d.constants, " "))
		}
		if slices.Contains(p.consts[:i], c) {
			return nil, fmt.Errorf("data: %s: constant input %q listed twice", d.path, c)
		}
	}
	if len(p.inputs) == 0 || len(p.outputs) == 0 {
		return nil, fmt.Errorf("data: %s: sampling needs at least one input and one output field", d.path)
	}
	for _, list := range [][]string{p.inputs, p.outputs} {
		for i, f := range list {
			ds, ok := d.resolve(f)
			if !ok {
				return nil, fmt.Errorf("data: %s: no field %q; the %s layout has [%s]", d.path, f, d.format, strings.Join(d.fields, " "))
			}
			if slices.Contains(list[:i], ds) {
				return nil, fmt.Errorf("data: %s: field %q (dataset %q) listed twice", d.path, f, ds)
			}
			list[i] = ds
		}
	}
	p.union = slices.Clone(p.inputs)
	for _, f := range p.outputs {
		if !slices.Contains(p.union, f) {
			p.union = append(p.union, f)
		}
	}
	for _, f := range p.inputs {
		p.inIdx = append(p.inIdx, slices.Index(p.union, f))
	}
	for _, f := range p.outputs {
		p.outIdx = append(p.outIdx, slices.Index(p.union, f))
	}
	if p.static {
		if p.history != 1 || s.Pairs > 1 {
			return nil, fmt.Errorf("data: %s: static data (1 frame per sample) gives one pair of history 1; got history %d, %d pairs", d.path, p.history, s.Pairs)
		}
		p.pairs = 1
		return p, nil
	}
	windows := d.frames - p.history
	if windows < 1 {
		return nil, fmt.Errorf("data: %s: history %d leaves no target among %d frames", d.path, p.history, d.frames)
	}
	p.pairs = s.Pairs
	if p.pairs == 0 {
		p.pairs = windows
	}
	if p.pairs < 0 || p.pairs > windows {
		return nil, fmt.Errorf("data: %s: %d pairs per trajectory, want 1..%d (frames %d - history %d)", d.path, s.Pairs, windows, d.frames, p.history)
	}
	return p, nil
}

// Dataset returns the dataset the plan reads.
func (p *Plan) Dataset() *Dataset { return p.d }

// Static reports a static plan (Darcy: a -> u).
func (p *Plan) Static() bool { return p.static }

// History returns H.
func (p *Plan) History() int { return p.history }

// PairsPerTrajectory returns P.
func (p *Plan) PairsPerTrajectory() int { return p.pairs }

// Span is the number of leading frames the pairs touch: P+H, or 1 for a
// static plan. Frames beyond it are never read for training.
func (p *Plan) Span() int {
	if p.static {
		return 1
	}
	return p.pairs + p.history
}

// Resident returns the fields a trajectory's cached frames hold: the
// inputs, then the outputs that are not inputs.
func (p *Plan) Resident() []string { return slices.Clone(p.union) }

// Constants returns the constant inputs (Sampling.Constants).
func (p *Plan) Constants() []string { return slices.Clone(p.consts) }

// InputChannels names the field behind each input channel: the inputs
// repeated for each of the H frames (frame-major), then the constant
// inputs (ConstantChannel), then the coordinate channels
// (CoordinateChannel) when the plan has them.
func (p *Plan) InputChannels() []string {
	var c []string
	for range p.history {
		c = append(c, p.inputs...)
	}
	for _, k := range p.consts {
		c = append(c, ConstantChannel(k))
	}
	if p.coords {
		for a := range p.d.grid {
			c = append(c, CoordinateChannel(a))
		}
	}
	return c
}

// inChannels is len(InputChannels()).
func (p *Plan) inChannels() int {
	n := p.history*len(p.inputs) + len(p.consts)
	if p.coords {
		n += len(p.d.grid)
	}
	return n
}

// TargetChannels names the field behind each target channel.
func (p *Plan) TargetChannels() []string { return slices.Clone(p.outputs) }

// InputShape is the shape of a batch of b inputs: [b, H*len(inputs)
// (+ one per constant, + one per grid axis with coordinates), grid...].
func (p *Plan) InputShape(b int) []int {
	return append([]int{b, p.inChannels()}, p.d.grid...)
}

// TargetShape is the shape of a batch of b targets: [b, len(outputs), grid...].
func (p *Plan) TargetShape(b int) []int {
	return append([]int{b, len(p.outputs)}, p.d.grid...)
}

// Pairs lists the pairs of the given trajectories, trajectory by
// trajectory, k = 0..P-1 within each.
func (p *Plan) Pairs(trajs []int) []Pair {
	out := make([]Pair, 0, len(trajs)*p.pairs)
	for _, i := range trajs {
		for k := range p.pairs {
			out = append(out, Pair{Traj: i, Start: k})
		}
	}
	return out
}

// ReadResident reads the Span leading frames of trajectory i for the
// resident fields (ReadBlock from frame 0). The batcher caches this
// block; PairFrom cuts pairs out of it.
func (p *Plan) ReadResident(dst []float32, i int) error {
	return p.ReadBlock(dst, i, 0, p.Span())
}

// ResidentLen is the length of one ReadResident block.
func (p *Plan) ResidentLen() int { return p.BlockLen(p.Span()) }

// ReadBlock reads frames [t0, t0+nt) of trajectory i for the resident
// fields, [nt, len(Resident()), grid...], followed by the trajectory's
// constant inputs, [len(Constants()), grid...]: the block PairFrom cuts
// pairs out of.
func (p *Plan) ReadBlock(dst []float32, i, t0, nt int) error {
	pts := p.d.Points()
	frames := nt * len(p.union) * pts
	if err := p.d.ReadFrames(dst[:frames], i, t0, nt, p.union); err != nil {
		return err
	}
	for j, c := range p.consts {
		if err := p.d.ReadConstant(dst[frames+j*pts:frames+(j+1)*pts], c, i); err != nil {
			return err
		}
	}
	return nil
}

// BlockLen is the length of a ReadBlock block of nt frames.
func (p *Plan) BlockLen(nt int) int { return (nt*len(p.union) + len(p.consts)) * p.d.Points() }

// PairFrom copies pair k of a block (ReadBlock's layout, of any number of
// frames) into in (InputChannels: H*len(inputs) channels of the grid,
// then the constants, then the coordinates) and tgt (len(outputs)
// channels).
func (p *Plan) PairFrom(block []float32, k int, in, tgt []float32) {
	pts := p.d.Points()
	nu := len(p.union)
	tail := len(block) - len(p.consts)*pts
	at := func(frame, field int) []float32 {
		o := (frame*nu + field) * pts
		return block[o : o+pts]
	}
	c := 0
	for h := range p.history {
		for _, u := range p.inIdx {
			copy(in[c*pts:(c+1)*pts], at(k+h, u))
			c++
		}
	}
	for j := range p.consts {
		copy(in[c*pts:(c+1)*pts], block[tail+j*pts:tail+(j+1)*pts])
		c++
	}
	if p.coords {
		for a := range p.d.grid {
			FillCoordinate(in[c*pts:(c+1)*pts], p.d.grid, a)
			c++
		}
	}
	tf := k + p.history
	if p.static {
		tf = 0
	}
	for j, u := range p.outIdx {
		copy(tgt[j*pts:(j+1)*pts], at(tf, u))
	}
}

// ReadPair reads one pair straight from the file: only the frames of its
// window (H+1 frames; 1 for static), for evaluation or for trajectories too
// large to cache. in and tgt are one sample each (InputShape(1),
// TargetShape(1)).
func (p *Plan) ReadPair(pr Pair, in, tgt []float32) error {
	if pr.Start < 0 || pr.Start >= p.pairs {
		panic(fmt.Sprintf("data: ReadPair: start %d outside 0..%d", pr.Start, p.pairs-1))
	}
	nf := p.history + 1
	t0 := pr.Start
	if p.static {
		nf, t0 = 1, 0
	}
	block := make([]float32, p.BlockLen(nf))
	if err := p.ReadBlock(block, pr.Traj, t0, nf); err != nil {
		return err
	}
	// The block starts at frame Start, so the pair is k = 0 within it.
	p.PairFrom(block, 0, in, tgt)
	return nil
}

// FillCoordinate writes into dst (one channel of a row-major grid of the
// given shape) each point's coordinate along axis a: i/(N-1) for index i
// of N along that axis (linspace(0, 1, N); 0 when N is 1), the grid of the
// FNO reference code (li2020fourier, fourier_2d.py get_grid).
func FillCoordinate(dst []float32, grid []int, a int) {
	inner := 1
	for _, n := range grid[a+1:] {
		inner *= n
	}
	n := grid[a]
	for j := range dst {
		i := (j / inner) % n
		v := float32(0)
		if n > 1 {
			v = float32(float64(i) / float64(n-1))
		}
		dst[j] = v
	}
}
