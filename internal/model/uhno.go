package model

import (
	"fmt"
	"strconv"

	"uhno/internal/tensor"
)

// UHNO is the U-shaped Hybrid Neural Operator (paper Sec. 3, Fig. 1):
//
//	lift (1x1, In -> C_0)
//	encoder, l = 0..L-1:  h = Block_l(h); e_l = h; h = ConvDown_l(h)   (C_l -> C_{l+1}, N_l -> N_l/2)
//	bottleneck:           h = Block_L(h)
//	decoder, l = L-1..0:  h = DecStage_l(h, e_l)                       (C_{l+1} -> C_l, N_{l+1} -> N_l)
//	projection (1x1 -> GELU -> 1x1, C_0 -> ProjHidden -> Out)
//
// with C_l = C0 WidthMult^l. Mode G replaces the U by FlatBlocks blocks of
// width FlatWidth at input resolution. The ablation mode is a switch inside
// the same code (see Spec.Mode and hybrid), never a separate model.
type UHNO struct {
	spec   Spec
	params *Params

	lift   pointwise
	enc    []*block
	down   []convDown
	mid    *block
	dec    []*decStage // forward order: level L-1 first
	flat   []*block    // mode G
	proj   projection
	stages []string

	// testRoute, when set (tests only), replaces the SPAR MUX of every
	// stage (see routeFunc).
	testRoute func(stage int, tp *tensor.Tape, zF, zG, s, hard *tensor.Tensor, centre tensor.SurrogateCentre) *tensor.Tensor
}

var _ Model = (*UHNO)(nil)

// buildUHNO declares the whole architecture on pb (layers in forward
// order).
func buildUHNO(pb *builder, s Spec) *UHNO {
	m := &UHNO{spec: s}
	if s.Mode == ModeNoUShape {
		m.lift = newPointwise(pb, "lift", s.InChannels, s.FlatWidth)
		for i := range s.FlatBlocks {
			name := "flat." + strconv.Itoa(i)
			m.flat = append(m.flat, newBlock(pb, name, s.FlatWidth, s))
			m.stages = append(m.stages, name)
		}
		m.proj = newProjection(pb, "proj", s.FlatWidth, s.ProjHidden, s.OutChannels)
		return m
	}
	ch := s.Channels()
	m.lift = newPointwise(pb, "lift", s.InChannels, ch[0])
	for l := range s.Levels {
		name := "enc." + strconv.Itoa(l)
		m.enc = append(m.enc, newBlock(pb, name, ch[l], s))
		m.down = append(m.down, newConvDown(pb, "down."+strconv.Itoa(l), s.Dim, ch[l], ch[l+1]))
		m.stages = append(m.stages, name)
	}
	m.mid = newBlock(pb, "mid", ch[s.Levels], s)
	m.stages = append(m.stages, "mid")
	for l := s.Levels - 1; l >= 0; l-- {
		name := "dec." + strconv.Itoa(l)
		m.dec = append(m.dec, newDecStage(pb, name, ch[l+1], ch[l], s))
		m.stages = append(m.stages, name)
	}
	m.proj = newProjection(pb, "proj", ch[0], s.ProjHidden, s.OutChannels)
	return m
}

// NewUHNO builds a U-HNO on backend b with parameters initialised from
// seed (PyTorch's default initialisation, see Params). Mode G's automatic
// width and depth are resolved first (ResolveFlat).
func NewUHNO(b tensor.Backend, s Spec, seed uint64) (*UHNO, error) {
	s, err := ResolveFlat(s)
	if err != nil {
		return nil, err
	}
	pb := newBuilder()
	m := buildUHNO(pb, s)
	m.params = pb.allocate(b, seed)
	return m, nil
}

// CountUHNO is the number of parameters NewUHNO(b, s, seed) would hold,
// computed without allocating them. It panics on an invalid spec (call
// Validate first).
func CountUHNO(s Spec) int {
	s, err := ResolveFlat(s)
	if err != nil {
		panic(err.Error())
	}
	pb := newBuilder()
	buildUHNO(pb, s)
	return pb.count()
}

// ResolveFlat validates s and, for mode G, fills a zero FlatBlocks with
// 2L+1 (the U-shape's number of stages) and a zero FlatWidth with the
// multiple of Groups whose parameter count is closest to the Full model of
// the same spec (Tab. ablation-setup: "matched parameters"); it fails if
// that count is not within 10% of Full's. Other modes are returned as
// they are.
func ResolveFlat(s Spec) (Spec, error) {
	if err := s.Validate(); err != nil {
		return s, err
	}
	if s.Mode != ModeNoUShape {
		return s, nil
	}
	if s.FlatBlocks == 0 {
		s.FlatBlocks = 2*s.Levels + 1
	}
	if s.FlatWidth == 0 {
		full := s
		full.Mode = ModeFull
		target := CountUHNO(full)
		w, err := widthForBudget(func(w int) int {
			g := s
			g.FlatWidth = w
			return CountUHNO(g)
		}, target, s.Groups)
		if err != nil {
			return s, fmt.Errorf("model: mode G width matched to Full (%d parameters): %w", target, err)
		}
		s.FlatWidth = w
	}
	return s, nil
}

// Spec returns the (resolved) architecture.
func (m *UHNO) Spec() Spec { return m.spec }

// Params implements Model.
func (m *UHNO) Params() *Params { return m.params }

// Name implements Model: "uhno" or "uhno-A" ... "uhno-I".
func (m *UHNO) Name() string {
	if m.spec.Mode == ModeFull {
		return "uhno"
	}
	return "uhno-" + m.spec.Mode
}

// Mode implements Model.
func (m *UHNO) Mode() string { return m.spec.Mode }

// CheckGrid implements Model: every axis must halve L times (mode G: any
// size) and keep at least two points at the coarsest level, so that the
// stride-2 convolution, the up-sampling and the per-sample statistics of
// SPAR are defined.
func (m *UHNO) CheckGrid(grid []int) error {
	if len(grid) != m.spec.Dim {
		return fmt.Errorf("model: %s is %dD, grid %v has %d axes", m.Name(), m.spec.Dim, grid, len(grid))
	}
	div := 1
	if m.spec.Mode != ModeNoUShape {
		div = 1 << m.spec.Levels
	}
	for _, n := range grid {
		if n%div != 0 || n/div < 2 {
			return fmt.Errorf("model: %s with %d levels needs every grid axis to be a multiple of %d with at least 2 points at the coarsest level, got %v", m.Name(), m.spec.Levels, div, grid)
		}
	}
	return nil
}

// Levels describes each routing stage on a given input grid: its name,
// channels, grid and retained Fourier modes K_eff = min(K0, floor(N/2))
// per axis (Eq. mode-cap), in forward order.
func (m *UHNO) Levels(grid []int) ([]Level, error) {
	if err := m.CheckGrid(grid); err != nil {
		return nil, err
	}
	level := func(name string, c, l int) Level {
		g := make([]int, len(grid))
		k := make([]int, len(grid))
		for i, n := range grid {
			g[i] = n >> l
			k[i] = tensor.ModeCap(m.spec.K0, g[i])
		}
		return Level{Name: name, Channels: c, Grid: g, KEff: k}
	}
	var out []Level
	if m.spec.Mode == ModeNoUShape {
		for _, name := range m.stages {
			out = append(out, level(name, m.spec.FlatWidth, 0))
		}
		return out, nil
	}
	ch := m.spec.Channels()
	for l := range m.spec.Levels {
		out = append(out, level(m.stages[l], ch[l], l))
	}
	out = append(out, level("mid", ch[m.spec.Levels], m.spec.Levels))
	for l := m.spec.Levels - 1; l >= 0; l-- {
		out = append(out, level("dec."+strconv.Itoa(l), ch[l], l))
	}
	return out, nil
}

// Level describes one routing stage (see UHNO.Levels).
type Level struct {
	Name     string
	Channels int
	Grid     []int
	KEff     []int
}

// Forward implements Model.
func (m *UHNO) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux) {
	m.mustFit(x)
	var aux Aux
	stage := 0
	run := func(o stageOut) *tensor.Tensor {
		if o.hard != nil {
			aux.Stages = append(aux.Stages, m.stages[stage])
			aux.Masks = append(aux.Masks, o.hard)
			aux.Stats = append(aux.Stats, o.stats)
		}
		aux.ZF, aux.ZG = o.zF, o.zG
		stage++
		return o.h
	}
	h := m.lift.forward(tp, x)
	if m.spec.Mode == ModeNoUShape {
		for _, b := range m.flat {
			h = run(b.forward(tp, h, m.route(stage)))
		}
		return m.proj.forward(tp, h), aux
	}
	skips := make([]*tensor.Tensor, m.spec.Levels)
	for l, b := range m.enc {
		h = run(b.forward(tp, h, m.route(stage)))
		skips[l] = h
		h = m.down[l].forward(tp, h)
	}
	h = run(m.mid.forward(tp, h, m.route(stage)))
	for i, d := range m.dec {
		h = run(d.forward(tp, h, skips[m.spec.Levels-1-i], m.route(stage)))
	}
	return m.proj.forward(tp, h), aux
}

func (m *UHNO) route(stage int) routeFunc {
	if m.testRoute == nil {
		return nil
	}
	return func(tp *tensor.Tape, zF, zG, s, hard *tensor.Tensor, centre tensor.SurrogateCentre) *tensor.Tensor {
		return m.testRoute(stage, tp, zF, zG, s, hard, centre)
	}
}

func (m *UHNO) mustFit(x *tensor.Tensor) {
	if x.Dims() != m.spec.Dim || x.Channels() != m.spec.InChannels {
		panic(fmt.Sprintf("model: %s takes [batch, %d, %d spatial axes], got %v", m.Name(), m.spec.InChannels, m.spec.Dim, x.Shape))
	}
	if err := m.CheckGrid(x.Spatial()); err != nil {
		panic(err.Error())
	}
}
