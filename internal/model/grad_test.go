package model

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// checkInputs returns the gradcheck inputs: the input field x, then the
// named parameters with their current values.
func checkInputs(b tensor.Backend, m Model, x []float32, xShape []int, names []string) []gradcheck.Input {
	in := []gradcheck.Input{{Name: "x", Shape: xShape, Data: x}}
	for _, n := range names {
		p := m.Params().Lookup(n)
		in = append(in, gradcheck.Input{Name: n, Shape: p.Shape, Data: host(b, p)})
	}
	return in
}

// bind points the named parameters of m at the gradcheck leaves: their
// values come from the leaves and, when the tape records, their gradients
// go to the leaves' gradients, where gradcheck reads them. The other
// parameters keep their values.
func bind(b tensor.Backend, tp *tensor.Tape, m Model, names []string, leaves []*tensor.Tensor) {
	for i, n := range names {
		p, l := m.Params().Lookup(n), leaves[i]
		p.Data = l.Data
		if tp.GradEnabled() {
			if l.Grad == nil {
				l.Grad = tensor.NewTensor(b.Alloc(l.Numel()), l.Shape...)
			}
			p.Grad = l.Grad
		}
	}
}

// rescale redraws the parameters of m at a point where every layer keeps
// its input's scale, for the gradient checks. At PyTorch's initialisation
// (bound 1/sqrt(fan_in), variance 1/(3 fan_in)) the signal shrinks by about
// sqrt(3) per 1x1 layer and the spectral weights are 1/C^2, so the deep
// parameters of a tiny U-HNO get gradients of 1e-6 of the output: below
// what float32 finite differences resolve (rounding noise in the checked
// sum is about 1e-7 of its size, divided by the step). Here 1x1 and
// stride-2 weights are U(-1, 1) sqrt(3/fan_in) (variance preserving),
// spectral weights U(-1, 1)/sqrt(Cin), biases U(-0.5, 0.5); log sigma
// keeps its value. A gradient check holds at any point, and one with O(1)
// activations exercises every nonlinearity.
func rescale(b tensor.Backend, m Model, seed uint64) {
	for i, p := range m.Params().List() {
		v := gradcheck.Random(seed+uint64(i), p.Numel())
		var scale float64
		switch {
		case strings.HasSuffix(p.Name, ".log_sigma"):
			continue
		case strings.HasSuffix(p.Name, "fourier.w") || strings.HasSuffix(p.Name, "spectral.w"),
			strings.HasSuffix(p.Name, "spectral.u") || strings.HasSuffix(p.Name, "spectral.v"):
			scale = 1 / math.Sqrt(float64(p.Shape[1]))
		case strings.HasSuffix(p.Name, "wavelet.w"): // [Cin, Cout, corner...]: a 1x1 per point
			scale = math.Sqrt(3 / float64(p.Shape[0]))
		case strings.HasSuffix(p.Name, ".b"):
			scale = 0.5
		default:
			scale = math.Sqrt(3 / float64(tensor.Numel(p.Shape[1:])))
		}
		for j := range v {
			v[j] *= float32(scale)
		}
		b.Upload(p.Data, v)
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// checkTol is the relative tolerance of the model checks (gradcheck's
// default step 1e-2). A whole network in float32 carries rounding noise of
// about 1e-6 in the checked sum (its terms are O(1) after rescale), which a
// central difference divides by 2 eps; parameters deep in the U get
// per-coordinate gradients near 1e-3, so up to about 2.5% of noise remains
// on some coordinates (measured: those errors fall as 1/eps, so they are
// rounding, not a formula). A larger step is not a way out: the
// directional check, which moves every coordinate at once, then picks up
// 2-5% of truncation error (measured at eps = 3e-2). 5% sits above both
// while a wrong formula still gives O(1) errors.
const checkTol = 5e-2

// checkGrid has 3 or more points per axis at the coarsest of L = 2 levels,
// so that no Gaussian radius is capped to 0 (a 1-tap kernel does not
// depend on sigma).
func checkGrid(dim int) []int {
	return map[int][]int{1: {16}, 2: {12, 12}, 3: {12, 12, 12}}[dim]
}

// TestGradFullSTE is the end-to-end gradient check of a tiny U-HNO with
// SPAR (1D, 2D, 3D) against finite differences (checkRoutedGrad).
func TestGradFullSTE(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			checkRoutedGrad(t, tiny(dim, ModeFull), 2, 20, 4, 5)
		})
	}
}

// checkRoutedGrad checks the tape's gradient of a U-HNO with SPAR gates
// against finite differences, with the routing held fixed.
//
// The top-k mask makes the network piecewise and the straight-through
// gradient is by design not the derivative of the forward value (which
// does not depend on s through g = g_hard). The check therefore compares
// the tape's gradient with the finite differences of a surrogate that has
// the same value at the base point and whose derivative is exactly the
// STE's (Sec. 3.3):
//
//	r~ = g0 z_F + (1 - g0) z_G + (sigmoid((s - tau0)/T) - sigmoid((s0 - tau0)/T)) (z_F - z_G)
//
// with the hard masks g0, scores s0 and per-sample centres tau0 (0, or
// the smallest kept score for spar.surrogate_centre: threshold) recorded
// at the base point and held fixed. The gradient pass runs the model's
// own tensor.Tape.SPARRoute with the recorded masks; only the
// finite-difference passes evaluate r~ (on the host). So the check
// covers the direct path, the score path through sigmoid'/T, W_2 and W_1
// back into both branches, and every layer before and after, with the
// routing held fixed.
func checkRoutedGrad(t *testing.T, s Spec, modelSeed, rescaleSeed, xSeed, checkSeed uint64) {
	t.Helper()
	dim := s.Dim
	b := newBackend()
	m := mustUHNO(t, b, s, modelSeed)
	rescale(b, m, rescaleSeed)
	grid := checkGrid(dim)
	xShape := append([]int{2, s.InChannels}, grid...)
	x := gradcheck.Random(xSeed, tensor.Numel(xShape))
	temp := float32(s.SPAR.Temperature)

	// Record the base point's masks, scores and centres, by stage (only
	// the routed stages have them).
	hard0, s0 := map[int][]float32{}, map[int][]float32{}
	tau0 := map[int][]float64{}
	m.testRoute = func(stage int, tp *tensor.Tape, zF, zG, sc, hard *tensor.Tensor, centre tensor.SurrogateCentre) *tensor.Tensor {
		h, sv := host(b, hard), host(b, sc)
		hard0[stage], s0[stage] = h, sv
		n := sc.SpatialSize()
		tau := make([]float64, sc.Batch())
		if centre == tensor.CentreThreshold {
			for bi := range tau {
				tau[bi] = math.Inf(1)
				for i := bi * n; i < (bi+1)*n; i++ {
					if h[i] == 1 {
						tau[bi] = math.Min(tau[bi], float64(sv[i]))
					}
				}
			}
		}
		tau0[stage] = tau
		return tp.SPARRoute(zF, zG, hard, sc, temp, centre)
	}
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	m.Forward(tp, tp.FromHost(x, xShape...))
	if len(hard0) == 0 {
		t.Fatal("no stage routed with SPAR")
	}

	m.testRoute = func(stage int, tp *tensor.Tape, zF, zG, sc, hard *tensor.Tensor, centre tensor.SurrogateCentre) *tensor.Tensor {
		g0 := tp.FromHost(hard0[stage], hard.Shape...)
		if tp.GradEnabled() {
			return tp.SPARRoute(zF, zG, g0, sc, temp, centre)
		}
		zf, zg, sv := host(b, zF), host(b, zG), host(b, sc)
		n, c := zF.SpatialSize(), zF.Channels()
		r := make([]float32, len(zf))
		for i := range r {
			bi := i / (c * n)
			j := bi*n + i%n // the pixel's index in [B, 1, spatial]
			g, tau := float64(hard0[stage][j]), tau0[stage][bi]
			ds := sigmoid((float64(sv[j])-tau)/float64(temp)) - sigmoid((float64(s0[stage][j])-tau)/float64(temp))
			f, gg := float64(zf[i]), float64(zg[i])
			r[i] = float32(g*f + (1-g)*gg + ds*(f-gg))
		}
		return tp.FromHost(r, zF.Shape...)
	}
	names := names(m)
	probes := 3
	if dim > 1 {
		// One parameter of every kind at every stage kind.
		names = slices.DeleteFunc(names, func(n string) bool {
			return strings.HasPrefix(n, "enc.1.") || strings.HasPrefix(n, "dec.1.") || strings.Contains(n, ".post.1") || strings.Contains(n, ".post.2")
		})
		probes = 2
	}
	gradcheck.Check(t, b, func(tp *tensor.Tape, in []*tensor.Tensor) *tensor.Tensor {
		bind(b, tp, m, names, in[1:])
		y, _ := m.Forward(tp, in[0])
		return y
	}, checkInputs(b, m, x, xShape, names), gradcheck.Options{MaxProbe: probes, Seed: checkSeed, RelTol: checkTol})
}

// TestGradNoSPAR checks mode F (no top-k: the network is smooth) against
// finite differences for every parameter and the input, in 1D, 2D and 3D.
func TestGradNoSPAR(t *testing.T) {
	for dim := 1; dim <= 3; dim++ {
		t.Run(fmt.Sprintf("%dD", dim), func(t *testing.T) {
			b := newBackend()
			s := tiny(dim, ModeNoSPAR)
			m := mustUHNO(t, b, s, 3)
			rescale(b, m, 30)
			grid := checkGrid(dim)
			xShape := append([]int{2, s.InChannels}, grid...)
			x := gradcheck.Random(6, tensor.Numel(xShape))
			names := names(m)
			gradcheck.Check(t, b, func(tp *tensor.Tape, in []*tensor.Tensor) *tensor.Tensor {
				bind(b, tp, m, names, in[1:])
				y, _ := m.Forward(tp, in[0])
				return y
			}, checkInputs(b, m, x, xShape, names), gradcheck.Options{MaxProbe: 2, Seed: 7, RelTol: checkTol})
		})
	}
}
