package model

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// lossOf is a scalar that depends on the output and the CBC features.
func lossOf(tp *tensor.Tape, y *tensor.Tensor, aux Aux) *tensor.Tensor {
	target := tp.New(y.Shape...)
	loss := tp.MSE(y, target)
	if aux.ZF != nil {
		loss = tp.Add(loss, tp.MSE(aux.ZF, aux.ZG))
	}
	return loss
}

// gradGrids have at least 4 points per axis at the coarsest level, so the
// Gaussian radius is not capped to 0 there (a radius-0 kernel is the
// identity and gives log sigma no gradient).
func gradGrid(dim int) []int {
	return map[int][]int{1: {16}, 2: {16, 16}, 3: {16, 16, 16}}[dim]
}

// TestParamsLayout checks the llm.c layout: views are contiguous in List
// order, gradients land in the flat gradient buffer, every parameter of
// every mode receives a gradient, and ZeroGrad clears them.
func TestParamsLayout(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		for _, mode := range Modes() {
			if dim == 3 && mode != ModeFull && mode != ModeNoUShape {
				continue // the 3D wiring is the same code; keep the test fast
			}
			t.Run(fmt.Sprintf("%dD/%s", dim, mode), func(t *testing.T) {
				b := newBackend()
				s := tiny(dim, mode)
				m := mustUHNO(t, b, s, 1)
				p := m.Params()
				data, grad, n := p.Flat()
				if n != p.Count() || data.Len() != n || grad.Len() != n {
					t.Fatalf("flat buffers %d/%d for count %d", data.Len(), grad.Len(), p.Count())
				}
				flatData := make([]float32, n)
				b.Download(flatData, data)
				off := 0
				for i, q := range p.List() {
					if p.Offsets()[i] != off || !q.RequiresGrad() || q.Grad == nil || p.Lookup(q.Name) != q {
						t.Fatalf("%s: offset %d (want %d), requiresGrad %v, grad %v", q.Name, p.Offsets()[i], off, q.RequiresGrad(), q.Grad != nil)
					}
					if !sameBits(host(b, q), flatData[off:off+q.Numel()]) {
						t.Fatalf("%s is not a view of the flat buffer at %d", q.Name, off)
					}
					off += q.Numel()
				}
				if off != n || CountUHNO(s) != n {
					t.Fatalf("views cover %d, CountUHNO %d, Count %d", off, CountUHNO(s), n)
				}

				tp := tensor.NewTape(b)
				y, aux := m.Forward(tp, input(tp, 3, 2, s.InChannels, gradGrid(dim)))
				tp.Backward(lossOf(tp, y, aux))
				flatGrad := make([]float32, n)
				b.Download(flatGrad, grad)
				for i, q := range p.List() {
					g := flatGrad[p.Offsets()[i] : p.Offsets()[i]+q.Numel()]
					if !sameBits(host(b, q.Grad), g) {
						t.Fatalf("%s: gradient is not a view of the flat gradient buffer", q.Name)
					}
					var ss float64
					for _, v := range g {
						ss += float64(v) * float64(v)
					}
					if ss == 0 || math.IsNaN(ss) {
						t.Errorf("%s: gradient norm^2 %g (disconnected parameter?)", q.Name, ss)
					}
				}
				p.ZeroGrad()
				b.Download(flatGrad, grad)
				for _, v := range flatGrad {
					if v != 0 {
						t.Fatal("ZeroGrad left a non-zero gradient")
					}
				}
			})
		}
	}
}

// TestDeterminism: the same seed gives bit-identical parameters, outputs
// and gradients, on 1 or 2 backend threads; another seed gives other
// parameters.
func TestDeterminism(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		run := func(threads int, seed uint64) (params, out, grad []float32) {
			b := cpu.New(threads)
			m := mustUHNO(t, b, tiny(dim, ModeFull), seed)
			tp := tensor.NewTape(b)
			y, aux := m.Forward(tp, input(tp, 3, 2, 2, gradGrid(dim)))
			tp.Backward(lossOf(tp, y, aux))
			data, g, n := m.Params().Flat()
			params, grad = make([]float32, n), make([]float32, n)
			b.Download(params, data)
			b.Download(grad, g)
			return params, host(b, y), grad
		}
		p1, y1, g1 := run(1, 7)
		p2, y2, g2 := run(2, 7)
		if !sameBits(p1, p2) || !sameBits(y1, y2) || !sameBits(g1, g2) {
			t.Errorf("%dD: seed 7 on 1 and 2 threads: parameters equal %v, outputs %v, gradients %v", dim, sameBits(p1, p2), sameBits(y1, y2), sameBits(g1, g2))
		}
		p3, _, _ := run(2, 8)
		if sameBits(p1, p3) {
			t.Errorf("%dD: seeds 7 and 8 give the same parameters", dim)
		}
	}
}

// TestInitialisation checks PyTorch's default ranges: 1x1 and stride-2
// weights and biases within 1/sqrt(fan_in), spectral weights in [0,
// 1/(Cin Cout)), log sigma = log of the initial sigmas per group.
func TestInitialisation(t *testing.T) {
	b := newBackend()
	s := tiny(2, ModeFull)
	m := mustUHNO(t, b, s, 3)
	for _, q := range m.Params().List() {
		v := host(b, q)
		lo, hi := 0.0, 0.0
		switch {
		case strings.HasSuffix(q.Name, ".log_sigma"):
			for i, x := range v {
				if want := float32(math.Log(s.Sigmas[i/s.Groups])); x != want {
					t.Errorf("%s[%d] = %g, want log %g", q.Name, i, x, s.Sigmas[i/s.Groups])
				}
			}
			continue
		case strings.HasSuffix(q.Name, ".fourier.w"): // [corners, Cin, Cout, K0.., 2]
			lo, hi = 0, 1/float64(q.Shape[1]*q.Shape[2])
		default:
			w := q
			if strings.HasSuffix(q.Name, ".b") { // bias: fan_in of its weight
				w = m.Params().Lookup(strings.TrimSuffix(q.Name, "b") + "w")
			}
			fan := tensor.Numel(w.Shape[1:])
			lo, hi = -1/math.Sqrt(float64(fan)), 1/math.Sqrt(float64(fan))
		}
		var mn, mx float64 = math.Inf(1), math.Inf(-1)
		for _, x := range v {
			mn, mx = math.Min(mn, float64(x)), math.Max(mx, float64(x))
		}
		if mn < lo-1e-7 || mx > hi+1e-7 || (len(v) >= 16 && mx-mn < 0.5*(hi-lo)) {
			t.Errorf("%s %v: values in [%g, %g], want spread over [%g, %g]", q.Name, q.Shape, mn, mx, lo, hi)
		}
	}
}
