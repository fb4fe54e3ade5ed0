// Package gradcheck compares the gradients computed by a tensor.Tape with
// central finite differences, for the operator tests of every backend.
//
// The scalar under test is L = sum_i w_i y_i, where y = f(inputs) is the
// operation's output and w is a fixed random weighting, summed on the host
// in float64. Its gradient is obtained from the tape by seeding dL/dy = w.
//
// Float32 tolerances. The operations run in float32, so L carries a
// rounding error of roughly 1e-7 * sqrt(n) * |y| and a central difference
// with step eps adds that error divided by 2 eps, plus a truncation error
// of order eps^2 |f”'|. With the default eps = 1e-2 both stay near 1e-4
// relative for the O(1) inputs the tests use, so a relative tolerance of
// 1e-2 cannot hide a wrong formula (those give O(1) relative errors) but
// does not flag rounding. Two checks run: per-coordinate on a random
// subset of coordinates, and a directional derivative along a random
// direction (which averages rounding noise over all coordinates).
package gradcheck

import (
	"math"
	"math/rand/v2"
	"testing"

	"uhno/internal/tensor"
)

// Input is one argument of the function under test.
type Input struct {
	Name  string
	Shape []int
	Data  []float32
	// NoGrad marks inputs that are constants (masks, targets).
	NoGrad bool
}

// Options tune the check; zero values take the defaults in brackets.
type Options struct {
	Eps      float64 // finite-difference step [1e-2]
	RelTol   float64 // relative tolerance [1e-2]
	MaxProbe int     // coordinates probed per input [48]
	Seed     uint64  // seed for the weighting, probes and direction [1]
}

func (o *Options) defaults() {
	if o.Eps == 0 {
		o.Eps = 1e-2
	}
	if o.RelTol == 0 {
		o.RelTol = 1e-2
	}
	if o.MaxProbe == 0 {
		o.MaxProbe = 48
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// Func builds the operation under test on a tape from leaf tensors that
// hold the inputs (in the order given).
type Func func(tp *tensor.Tape, in []*tensor.Tensor) *tensor.Tensor

// Check fails t if the tape's gradient of any input that needs one differs
// from finite differences beyond the tolerance.
func Check(t testing.TB, b tensor.Backend, f Func, inputs []Input, opt Options) {
	t.Helper()
	opt.defaults()
	rng := rand.New(rand.NewPCG(opt.Seed, 99))

	// Analytic gradient.
	tp := tensor.NewTape(b)
	leaves := make([]*tensor.Tensor, len(inputs))
	for i, in := range inputs {
		leaves[i] = tensor.NewLeaf(b, in.Name, in.Data, in.Shape...)
		leaves[i].SetRequiresGrad(!in.NoGrad)
	}
	y := f(tp, leaves)
	w := make([]float32, y.Numel())
	for i := range w {
		w[i] = float32(rng.Float64()*2 - 1)
	}
	tp.BackwardWith(y, tp.FromHost(w, y.Shape...))
	grads := make([][]float32, len(inputs))
	for i, in := range inputs {
		if in.NoGrad {
			continue
		}
		if leaves[i].Grad == nil {
			grads[i] = make([]float32, len(in.Data))
		} else {
			grads[i] = tensor.ToHost(b, leaves[i].Grad)
		}
	}
	tp.Release()

	// loss evaluates L at perturbed inputs.
	loss := func(data [][]float32) float64 {
		tp := tensor.NewTape(b)
		tp.SetGrad(false)
		ls := make([]*tensor.Tensor, len(inputs))
		for i, in := range inputs {
			ls[i] = tensor.NewLeaf(b, in.Name, data[i], in.Shape...)
		}
		out := tensor.ToHost(b, f(tp, ls))
		tp.Release()
		var s float64
		for i, v := range out {
			s += float64(w[i]) * float64(v)
		}
		return s
	}
	cur := make([][]float32, len(inputs))
	for i, in := range inputs {
		cur[i] = append([]float32(nil), in.Data...)
	}

	for i, in := range inputs {
		if in.NoGrad {
			continue
		}
		g := grads[i]
		var rms float64
		for _, v := range g {
			rms += float64(v) * float64(v)
		}
		rms = math.Sqrt(rms / float64(len(g)))
		if rms == 0 {
			t.Errorf("%s: analytic gradient is identically zero", in.Name)
			continue
		}
		// Per-coordinate probes.
		probes := rng.Perm(len(g))
		if len(probes) > opt.MaxProbe {
			probes = probes[:opt.MaxProbe]
		}
		bad := 0
		for _, j := range probes {
			orig := cur[i][j]
			cur[i][j] = orig + float32(opt.Eps)
			lp := loss(cur)
			cur[i][j] = orig - float32(opt.Eps)
			lm := loss(cur)
			cur[i][j] = orig
			fd := (lp - lm) / (2 * opt.Eps)
			an := float64(g[j])
			if math.Abs(fd-an) > opt.RelTol*math.Max(math.Abs(an), rms) {
				if bad < 5 {
					t.Errorf("%s[%d]: analytic %.6g, finite difference %.6g (gradient rms %.3g)", in.Name, j, an, fd, rms)
				}
				bad++
			}
		}
		// Directional derivative along a random unit-scale direction.
		dir := make([]float32, len(g))
		var want float64
		for j := range dir {
			dir[j] = float32(rng.Float64()*2 - 1)
			want += float64(dir[j]) * float64(g[j])
		}
		plus := perturbed(cur, i, dir, opt.Eps)
		minus := perturbed(cur, i, dir, -opt.Eps)
		fd := (loss(plus) - loss(minus)) / (2 * opt.Eps)
		scale := rms * math.Sqrt(float64(len(g))/3) // typical |<dir, g>|
		if math.Abs(fd-want) > opt.RelTol*math.Max(math.Abs(want), scale) {
			t.Errorf("%s: directional derivative analytic %.6g, finite difference %.6g", in.Name, want, fd)
		}
	}
}

func perturbed(cur [][]float32, i int, dir []float32, eps float64) [][]float32 {
	out := make([][]float32, len(cur))
	copy(out, cur)
	p := make([]float32, len(cur[i]))
	for j := range p {
		p[j] = cur[i][j] + float32(eps)*dir[j]
	}
	out[i] = p
	return out
}

// Random returns n values uniform in [-1, 1) from a seeded generator.
func Random(seed uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.Float64()*2 - 1)
	}
	return out
}
