package tensor

import "fmt"

// Tape records operations for reverse-mode automatic differentiation and
// owns the memory of the tensors it creates.
//
// Typical use in a training step:
//
//	y := tp.Pointwise(x, w, b)
//	loss := tp.MSE(y, target)
//	tp.Backward(loss)   // fills w.Grad, b.Grad
//	... optimizer step ...
//	tp.Reset()          // recycles every tensor the step created
//
// A Tape is not safe for concurrent use.
type Tape struct {
	B Backend

	grad  bool     // record backward closures
	nodes []func() // backward closures in forward order
	owned []Storage
	free  map[int][]Storage

	// observe, when set, is told the shape of every tensor the tape
	// creates (SetAllocObserver).
	observe func(shape []int)

	// one holds the value 1, the seed of Backward. It is uploaded once and
	// kept across Reset, so that a step recorded as a CUDA graph (whose
	// body may not copy from the host) can run Backward.
	one Storage
}

// NewTape returns an empty tape on backend b with gradients enabled.
func NewTape(b Backend) *Tape {
	return &Tape{B: b, grad: true, free: map[int][]Storage{}}
}

// SetGrad enables or disables recording (disable for evaluation: no
// backward closures, no gradient memory).
func (tp *Tape) SetGrad(on bool) { tp.grad = on }

// GradEnabled reports whether the tape records operations.
func (tp *Tape) GradEnabled() bool { return tp.grad }

// Len is the number of recorded operations.
func (tp *Tape) Len() int { return len(tp.nodes) }

// alloc takes storage of exactly n elements from the pool (or the backend)
// and marks it as owned by this step. zero clears reused memory.
func (tp *Tape) alloc(n int, zero bool) Storage {
	if l := tp.free[n]; len(l) > 0 {
		s := l[len(l)-1]
		tp.free[n] = l[:len(l)-1]
		if zero {
			tp.B.Zero(s)
		}
		tp.owned = append(tp.owned, s)
		return s
	}
	s := tp.B.Alloc(n)
	tp.owned = append(tp.owned, s)
	return s
}

// SetAllocObserver registers f, called with the shape of every tensor
// the tape creates from then on (operation outputs and their gradients);
// nil removes it. Memory planning (internal/bench.PlanMemory) uses it to
// file a step's allocations by grid: the tape frees nothing before Reset,
// so what it creates in a step is what the step holds at its peak.
func (tp *Tape) SetAllocObserver(f func(shape []int)) { tp.observe = f }

// New returns a zero-filled tensor owned by the tape (valid until Reset).
func (tp *Tape) New(shape ...int) *Tensor {
	if tp.observe != nil {
		tp.observe(shape)
	}
	return &Tensor{Shape: append([]int(nil), shape...), Data: tp.alloc(Numel(shape), true), owner: tp}
}

// out returns an uninitialised tape-owned tensor for an operation to fill.
func (tp *Tape) out(shape []int) *Tensor {
	if tp.observe != nil {
		tp.observe(shape)
	}
	return &Tensor{Shape: append([]int(nil), shape...), Data: tp.alloc(Numel(shape), false), owner: tp}
}

// Reset forgets the recorded operations and returns every tensor created
// since the last Reset to the pool. Tensors and gradients it created must
// not be used afterwards. Gradients of leaves created outside the tape
// (parameters) are kept.
func (tp *Tape) Reset() {
	for _, s := range tp.owned {
		tp.free[s.Len()] = append(tp.free[s.Len()], s)
	}
	tp.owned = tp.owned[:0]
	for i := range tp.nodes {
		tp.nodes[i] = nil
	}
	tp.nodes = tp.nodes[:0]
}

// Release frees the pooled memory back to the backend.
func (tp *Tape) Release() {
	tp.Reset()
	if tp.one != nil {
		tp.B.Free(tp.one)
		tp.one = nil
	}
	for n, l := range tp.free {
		for _, s := range l {
			tp.B.Free(s)
		}
		delete(tp.free, n)
	}
}

// needs reports whether any input requires a gradient while recording.
func (tp *Tape) needs(ts ...*Tensor) bool {
	if !tp.grad {
		return false
	}
	for _, t := range ts {
		if t != nil && t.requiresGrad {
			return true
		}
	}
	return false
}

// record registers a backward closure and marks y as differentiable.
func (tp *Tape) record(y *Tensor, backward func()) {
	y.requiresGrad = true
	tp.nodes = append(tp.nodes, func() {
		if y.Grad != nil { // nothing downstream used y: nothing to do
			backward()
		}
	})
}

// g returns t's gradient tensor, allocating it (zeroed) on first use, or nil
// when t needs no gradient. Gradients of tape-owned tensors come from the
// pool; gradients of leaves (parameters) are allocated once and kept.
func (tp *Tape) g(t *Tensor) *Tensor {
	if t == nil || !t.requiresGrad {
		return nil
	}
	if t.Grad == nil {
		if t.owner == tp {
			t.Grad = tp.New(t.Shape...)
		} else {
			t.Grad = &Tensor{Shape: append([]int(nil), t.Shape...), Data: tp.B.Alloc(t.Numel())}
		}
	}
	return t.Grad
}

// Backward runs the recorded operations in reverse, seeding d(loss)/d(loss)
// = 1. loss must have one element.
func (tp *Tape) Backward(loss *Tensor) {
	if loss.Numel() != 1 {
		panic(fmt.Sprintf("tensor: Backward: loss must have one element, has shape %v", loss.Shape))
	}
	if tp.one == nil {
		tp.one = tp.B.Alloc(1)
		tp.B.Upload(tp.one, []float32{1})
	}
	seed := &Tensor{Shape: append([]int(nil), loss.Shape...), Data: tp.one}
	tp.BackwardWith(loss, seed)
}

// BackwardWith runs the recorded operations in reverse with dL/dy = seed
// (same shape as y). It is the general form used by gradient checks.
func (tp *Tape) BackwardWith(y, seed *Tensor) {
	mustSame("Backward", y, seed)
	if !y.requiresGrad {
		panic("tensor: Backward: output does not depend on any tensor that requires a gradient")
	}
	if y.Grad == nil && y.owner == tp {
		y.Grad = tp.out(y.Shape)
		tp.B.Copy(y.Grad.Data, seed.Data)
	} else {
		tp.B.AddScaled(tp.g(y), seed, 1)
	}
	for i := len(tp.nodes) - 1; i >= 0; i-- {
		tp.nodes[i]()
	}
}

// ZeroGrad clears the gradients of the given leaves (parameters) so the
// next Backward starts from zero.
func (tp *Tape) ZeroGrad(ts ...*Tensor) {
	for _, t := range ts {
		if t.Grad != nil {
			tp.B.Zero(t.Grad.Data)
		}
	}
}

// FromHost returns a tape-owned tensor holding a copy of data.
func (tp *Tape) FromHost(data []float32, shape ...int) *Tensor {
	if len(data) != Numel(shape) {
		panic(fmt.Sprintf("tensor: FromHost: %d values for shape %v", len(data), shape))
	}
	t := tp.out(shape)
	tp.B.Upload(t.Data, data)
	return t
}

// NewLeaf allocates a persistent tensor (not owned by any tape) holding a
// copy of data, for parameters and fixed inputs. Set requiresGrad for
// parameters. The caller frees it with b.Free(t.Data) when done.
func NewLeaf(b Backend, name string, data []float32, shape ...int) *Tensor {
	if data != nil && len(data) != Numel(shape) {
		panic(fmt.Sprintf("tensor: NewLeaf %s: %d values for shape %v", name, len(data), shape))
	}
	t := &Tensor{Shape: append([]int(nil), shape...), Data: b.Alloc(Numel(shape)), Name: name}
	if data != nil {
		b.Upload(t.Data, data)
	}
	return t
}

// ToHost copies a tensor's values into a new host slice.
func ToHost(b Backend, t *Tensor) []float32 {
	out := make([]float32, t.Numel())
	b.Download(out, t.Data)
	return out
}
