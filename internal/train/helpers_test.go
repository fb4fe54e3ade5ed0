package train

import (
	"math"
	"math/rand/v2"

	"uhno/internal/tensor"
)

// flatParams is a ParamSet laid out as internal/model lays it out: one
// flat data buffer and one flat gradient buffer, each parameter a named
// view of both.
type flatParams struct {
	b          tensor.Backend
	data, grad tensor.Storage
	n          int
	list       []*tensor.Tensor
}

type paramSpec struct {
	name  string
	shape []int
	scale float64 // init std; 0 means zeros
}

func newFlatParams(b tensor.Backend, specs []paramSpec, seed uint64) *flatParams {
	n := 0
	for _, s := range specs {
		n += tensor.Numel(s.shape)
	}
	fp := &flatParams{b: b, data: b.Alloc(n), grad: b.Alloc(n), n: n}
	rng := rand.New(rand.NewPCG(seed, 1))
	host := make([]float32, n)
	off := 0
	for _, s := range specs {
		k := tensor.Numel(s.shape)
		for i := range k {
			host[off+i] = float32(rng.NormFloat64() * s.scale)
		}
		p := tensor.NewTensor(b.View(fp.data, off, k), s.shape...)
		p.Name = s.name
		p.SetRequiresGrad(true)
		p.Grad = tensor.NewTensor(b.View(fp.grad, off, k), s.shape...)
		fp.list = append(fp.list, p)
		off += k
	}
	b.Upload(fp.data, host)
	return fp
}

func (fp *flatParams) List() []*tensor.Tensor                   { return fp.list }
func (fp *flatParams) Flat() (data, grad tensor.Storage, n int) { return fp.data, fp.grad, fp.n }
func (fp *flatParams) Count() int                               { return fp.n }
func (fp *flatParams) ZeroGrad()                                { fp.b.Zero(fp.grad) }

// host returns a copy of the flat parameter buffer.
func (fp *flatParams) host() []float32 {
	out := make([]float32, fp.n)
	fp.b.Download(out, fp.data)
	return out
}

// tinyModel is a one-level hybrid block with the interface and the
// auxiliary outputs of U-HNO, small enough for exact resume tests:
//
//	h  = GELU(W1 x + b1)            lifting
//	zF = SpectralConv(h)            Fourier branch
//	zG = Wg h                       stand-in local branch
//	s  = Ws [zF; zG] + bs           SPAR score
//	r  = SPARRoute(zF, zG, top-k(s))
//	y  = Wo r + bo                  projection
type tinyModel struct {
	p       *flatParams
	width   int
	k0      int
	forward func() // called at the start of every Forward (tests hook it)
}

func newTinyModel(b tensor.Backend, cin, cout, width int, seed uint64) *tinyModel {
	const k0 = 3
	specs := []paramSpec{
		{"lift.w", []int{width, cin}, 1 / math.Sqrt(float64(cin))},
		{"lift.b", []int{width}, 0},
		{"fourier.w", tensor.SpectralWeightShape(1, width, width, k0), 0.3 / float64(width)},
		{"gauss.w", []int{width, width}, 1 / math.Sqrt(float64(width))},
		{"spar.w", []int{1, 2 * width}, 1 / math.Sqrt(float64(2*width))},
		{"spar.b", []int{1}, 0},
		{"proj.w", []int{cout, width}, 1 / math.Sqrt(float64(width))},
		{"proj.b", []int{cout}, 0},
	}
	return &tinyModel{p: newFlatParams(b, specs, seed), width: width, k0: k0}
}

func (m *tinyModel) Name() string     { return "tiny" }
func (m *tinyModel) Params() ParamSet { return m.p }

func (m *tinyModel) Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux) {
	if m.forward != nil {
		m.forward()
	}
	l := m.p.list
	h := tp.GELU(tp.Pointwise(x, l[0], l[1]))
	zF := tp.SpectralConv(h, l[2], m.k0, tensor.FirstModes(m.k0, h.Shape[len(h.Shape)-1]))
	zG := tp.Pointwise(h, l[3], nil)
	s := tp.Pointwise(tp.Concat(zF, zG), l[4], l[5])
	hard, stats := tp.SPARKeep(s, tensor.DefaultSPAR)
	r := tp.SPARRoute(zF, zG, hard, s, float32(tensor.DefaultSPAR.Temperature), tensor.CentreZero)
	return tp.Pointwise(r, l[6], l[7]), Aux{ZF: zF, ZG: zG, Stats: []*tensor.Tensor{stats}}
}

// memStream is an in-memory batch stream with the data.Batcher contract:
// each epoch a PCG permutation of the pool (seeded by seed and epoch), so
// the order is a pure function of the seed and the batches drawn.
type memStream struct {
	in, tgt      [][]float32 // the pool of pairs
	batch, grid  int
	seed         uint64
	epoch, pos   int
	perm         []int
	nanAt, drawn int // a NaN target in batch nanAt (1-based; 0: never)
}

// newMemStream builds a pool of pairs u -> the advected and damped
// u(x - 1 cell) * 0.9: a linear, translation-invariant map the tiny model
// can learn.
func newMemStream(pool, batch, grid int, seed uint64) *memStream {
	rng := rand.New(rand.NewPCG(seed, 2))
	s := &memStream{batch: batch, grid: grid, seed: seed}
	for range pool {
		u := make([]float32, grid)
		for k := 1; k <= 3; k++ {
			a, ph := rng.NormFloat64()/float64(k), rng.Float64()*2*math.Pi
			for j := range u {
				u[j] += float32(a * math.Sin(2*math.Pi*float64(k*j)/float64(grid)+ph))
			}
		}
		v := make([]float32, grid)
		for j := range v {
			v[j] = 0.9 * u[(j+grid-1)%grid]
		}
		s.in, s.tgt = append(s.in, u), append(s.tgt, v)
	}
	s.startEpoch(0)
	return s
}

func (s *memStream) startEpoch(e int) {
	s.epoch, s.pos = e, 0
	s.perm = rand.New(rand.NewPCG(s.seed, uint64(e))).Perm(len(s.in))
}

func (s *memStream) Next(in, tgt []float32) error {
	s.drawn++
	for k := range s.batch {
		if s.pos == len(s.perm) {
			s.startEpoch(s.epoch + 1)
		}
		i := s.perm[s.pos]
		s.pos++
		copy(in[k*s.grid:], s.in[i])
		copy(tgt[k*s.grid:], s.tgt[i])
	}
	if s.drawn == s.nanAt {
		tgt[0] = float32(math.NaN())
	}
	return nil
}

func (s *memStream) InputShape() []int  { return []int{s.batch, 1, s.grid} }
func (s *memStream) TargetShape() []int { return []int{s.batch, 1, s.grid} }

// valSet returns a fixed validation set from another pool.
func (s *memStream) valSet(batches int) *ValSet {
	vs := &ValSet{}
	other := newMemStream(batches*s.batch, s.batch, s.grid, s.seed+1000)
	for range batches {
		vb := ValBatch{In: make([]float32, s.batch*s.grid), Tgt: make([]float32, s.batch*s.grid),
			InShape: other.InputShape(), TgtShape: other.TargetShape()}
		other.Next(vb.In, vb.Tgt)
		vs.Batches = append(vs.Batches, vb)
	}
	return vs
}
