package model

import (
	"fmt"
	"math/rand/v2"

	"uhno/internal/tensor"
)

// Params holds a model's parameters in the llm.c layout: every parameter's
// values live in one flat data buffer and its gradient in one flat gradient
// buffer, and each parameter is a named tensor whose Data and Grad are
// views into them. The optimizer and the checkpoint code work on the flat
// buffers; the layers use the named views.
//
// The order of List is fixed by the architecture (the order in which the
// constructor declares the layers, which is forward order), the views are
// contiguous in that order (Offsets), and the same Spec always gives the
// same order, names and shapes. Every parameter is a leaf with
// RequiresGrad set, and its Grad is allocated up front, so Backward
// accumulates straight into the flat gradient buffer.
type Params struct {
	b          tensor.Backend
	list       []*tensor.Tensor
	offs       []int
	index      map[string]int
	data, grad tensor.Storage
	n          int
}

// List returns the parameters in their fixed order. The slice is shared;
// do not modify it.
func (p *Params) List() []*tensor.Tensor { return p.list }

// Offsets returns the element offset of each parameter (in List order)
// within the flat buffers; parameter i occupies [Offsets()[i],
// Offsets()[i]+List()[i].Numel()).
func (p *Params) Offsets() []int { return p.offs }

// Flat returns the flat data and gradient buffers and their length.
func (p *Params) Flat() (data, grad tensor.Storage, n int) { return p.data, p.grad, p.n }

// Count is the total number of scalar parameters.
func (p *Params) Count() int { return p.n }

// ZeroGrad clears every gradient (one call on the flat gradient buffer).
func (p *Params) ZeroGrad() { p.b.Zero(p.grad) }

// Lookup returns the parameter with the given name, or nil.
func (p *Params) Lookup(name string) *tensor.Tensor {
	i, ok := p.index[name]
	if !ok {
		return nil
	}
	return p.list[i]
}

// Release returns both flat buffers to the backend; the model must not be
// used afterwards.
func (p *Params) Release() {
	p.b.Free(p.data)
	p.b.Free(p.grad)
}

// initRule says how a parameter is initialised (PyTorch's defaults, so that
// a uhno model starts from the same distribution as the yardstick).
type initRule int

const (
	// initUniform draws U(-bound, bound): PyTorch's Conv default for both
	// weight (kaiming_uniform with a = sqrt(5)) and bias, bound =
	// 1/sqrt(fan_in).
	initUniform initRule = iota
	// initSpectral draws bound * U(0, 1), bound = 1/(Cin Cout): the FNO
	// spectral weight initialisation (li2020fourier's code).
	initSpectral
	// initValues copies fixed values (log sigma).
	initValues
)

// paramSpec is one declared parameter before allocation.
type paramSpec struct {
	t      *tensor.Tensor
	rule   initRule
	bound  float64
	values []float32
}

// builder collects parameter declarations in order. Layers are built
// against it first (their tensors have a shape and a name but no memory);
// allocate then gives every tensor its views and initial values. A builder
// that is never allocated only counts (CountUHNO, CountFNO).
type builder struct {
	specs []paramSpec
	names map[string]bool
}

func newBuilder() *builder { return &builder{names: map[string]bool{}} }

func (pb *builder) param(name string, shape []int, rule initRule, bound float64, values []float32) *tensor.Tensor {
	if pb.names[name] {
		panic(fmt.Sprintf("model: parameter %q declared twice", name))
	}
	pb.names[name] = true
	t := &tensor.Tensor{Shape: append([]int(nil), shape...), Name: name}
	pb.specs = append(pb.specs, paramSpec{t: t, rule: rule, bound: bound, values: values})
	return t
}

// count is the number of scalars declared so far.
func (pb *builder) count() int {
	n := 0
	for _, s := range pb.specs {
		n += s.t.Numel()
	}
	return n
}

// allocate draws every parameter's initial values in declaration order
// from a PCG generator seeded with seed (weights before biases, as
// PyTorch), uploads them into one flat buffer, and points each tensor at
// its view.
func (pb *builder) allocate(b tensor.Backend, seed uint64) *Params {
	n := pb.count()
	_, shapeOnly := b.(tensor.ShapeOnly)
	var host []float32
	if !shapeOnly {
		host = make([]float32, n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x75686e6f)) // "uhno"
	p := &Params{b: b, n: n, index: make(map[string]int, len(pb.specs))}
	off := 0
	for _, s := range pb.specs {
		if shapeOnly {
			p.offs = append(p.offs, off)
			off += s.t.Numel()
			continue
		}
		v := host[off : off+s.t.Numel()]
		switch s.rule {
		case initUniform:
			for i := range v {
				v[i] = float32((2*rng.Float64() - 1) * s.bound)
			}
		case initSpectral:
			for i := range v {
				v[i] = float32(rng.Float64() * s.bound)
			}
		case initValues:
			copy(v, s.values)
		}
		p.offs = append(p.offs, off)
		off += len(v)
	}
	p.data = b.Alloc(n)
	p.grad = b.Alloc(n)
	if !shapeOnly {
		b.Upload(p.data, host)
	}
	for i, s := range pb.specs {
		k := s.t.Numel()
		s.t.Data = b.View(p.data, p.offs[i], k)
		s.t.Grad = tensor.NewTensor(b.View(p.grad, p.offs[i], k), s.t.Shape...)
		s.t.SetRequiresGrad(true)
		p.list = append(p.list, s.t)
		p.index[s.t.Name] = i
	}
	return p
}
