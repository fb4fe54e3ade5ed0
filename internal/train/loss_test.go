package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"uhno/internal/config"
	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// lossShapes are [B, C, spatial...] shapes of a prediction in 1D/2D/3D.
var lossShapes = []struct {
	name  string
	shape []int
	h     []float64
}{
	{"1D", []int{2, 2, 9}, []float64{1.0 / 9}},
	{"2D", []int{2, 1, 6, 5}, []float64{0.25, 2.0 / 5}},
	{"3D", []int{1, 2, 4, 3, 5}, []float64{0.5, 1.0 / 3, 0.2}},
}

func randVals(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// diffRef is the first difference of x (shape [B, C, spatial...]) along
// spatial axis `axis`, in float64, written per element from the
// definition: (x[i+1] - x[i-1]) / 2h, wrapping when periodic, otherwise
// (x[1] - x[0]) / h and (x[n-1] - x[n-2]) / h at the ends.
func diffRef(x []float32, shape []int, axis int, h float64, periodic bool) []float64 {
	sp := shape[2:]
	n := sp[axis]
	stride := 1
	for a := axis + 1; a < len(sp); a++ {
		stride *= sp[a]
	}
	y := make([]float64, len(x))
	for i := range x {
		pos := (i / stride) % n
		at := func(p int) float64 { return float64(x[i+(p-pos)*stride]) }
		switch {
		case periodic:
			y[i] = (at((pos+1)%n) - at((pos+n-1)%n)) / (2 * h)
		case pos == 0:
			y[i] = (at(1) - at(0)) / h
		case pos == n-1:
			y[i] = (at(n-1) - at(n-2)) / h
		default:
			y[i] = (at(pos+1) - at(pos-1)) / (2 * h)
		}
	}
	return y
}

func mse64(a, b []float64) float64 {
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s / float64(len(a))
}

func f64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// TestLossValues checks every term of Eq. loss against a float64
// computation from the definition, in 1D/2D/3D, periodic and not.
func TestLossValues(t *testing.T) {
	b := cpu.New(2)
	for _, ls := range lossShapes {
		for _, periodic := range []bool{true, false} {
			name := ls.name + "/periodic"
			if !periodic {
				name = ls.name + "/dirichlet"
			}
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(len(ls.shape)), 5))
				n := tensor.Numel(ls.shape)
				p, q := randVals(rng, n), randVals(rng, n)
				zshape := []int{ls.shape[0], 3, ls.shape[2]}
				zf, zg := randVals(rng, tensor.Numel(zshape)), randVals(rng, tensor.Numel(zshape))
				lc := LossConfig{LambdaH1: 0.3, LambdaCBC: 0.7, Spacing: ls.h, Periodic: periodic}

				tp := tensor.NewTape(b)
				pred := tensor.NewLeaf(b, "pred", p, ls.shape...)
				pred.SetRequiresGrad(true)
				aux := Aux{ZF: tp.FromHost(zf, zshape...), ZG: tp.FromHost(zg, zshape...)}
				got := lc.Loss(tp, pred, tp.FromHost(q, ls.shape...), aux).Values(b)

				wantMSE := mse64(f64(p), f64(q))
				var wantH1 float64
				for d, h := range ls.h {
					wantH1 += 0.5 * mse64(diffRef(p, ls.shape, d, h, periodic), diffRef(q, ls.shape, d, h, periodic))
				}
				wantCBC := mse64(f64(zg), f64(zf))
				wantTotal := wantMSE + 0.3*wantH1 + 0.7*wantCBC
				for _, c := range []struct {
					term      string
					got, want float64
				}{{"mse", got.MSE, wantMSE}, {"h1", got.H1, wantH1}, {"cbc", got.CBC, wantCBC}, {"total", got.Total, wantTotal}} {
					if math.Abs(c.got-c.want) > 1e-5*math.Abs(c.want) {
						t.Errorf("%s = %.8g, want %.8g", c.term, c.got, c.want)
					}
				}
			})
		}
	}
}

// TestLossGradient checks the gradient of the total with respect to the
// prediction and both branch features against finite differences, with
// all three terms active.
func TestLossGradient(t *testing.T) {
	b := cpu.New(2)
	for _, ls := range lossShapes {
		t.Run(ls.name, func(t *testing.T) {
			shape := ls.shape
			zshape := []int{shape[0], 2, 7}
			lc := LossConfig{LambdaH1: 0.05, LambdaCBC: 0.5, Spacing: ls.h, Periodic: ls.name != "2D"}
			n := tensor.Numel(shape)
			inputs := []gradcheck.Input{
				{Name: "pred", Shape: shape, Data: gradcheck.Random(1, n)},
				{Name: "target", Shape: shape, Data: gradcheck.Random(2, n), NoGrad: true},
				{Name: "zF", Shape: zshape, Data: gradcheck.Random(3, tensor.Numel(zshape))},
				{Name: "zG", Shape: zshape, Data: gradcheck.Random(4, tensor.Numel(zshape))},
			}
			gradcheck.Check(t, b, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return lc.Loss(tp, v[0], v[1], Aux{ZF: v[2], ZG: v[3]}).Total
			}, inputs, gradcheck.Options{})
		})
	}
}

// TestLossZeroWeights checks that a term with weight 0 is reported but
// leaves the gradient alone: with both weights 0 the prediction's gradient
// is exactly that of the MSE, 2 (p - q) / n, and the branch features get
// none; and that a missing branch pair skips the CBC term.
func TestLossZeroWeights(t *testing.T) {
	b := cpu.New(1)
	shape := []int{2, 1, 8}
	rng := rand.New(rand.NewPCG(9, 9))
	p, q, zf, zg := randVals(rng, 16), randVals(rng, 16), randVals(rng, 16), randVals(rng, 16)

	tp := tensor.NewTape(b)
	pred := tensor.NewLeaf(b, "pred", p, shape...)
	pred.SetRequiresGrad(true)
	zF := tensor.NewLeaf(b, "zF", zf, shape...)
	zF.SetRequiresGrad(true)
	zG := tensor.NewLeaf(b, "zG", zg, shape...)
	zG.SetRequiresGrad(true)
	lc := LossConfig{Spacing: []float64{0.125}, Periodic: true}
	terms := lc.Loss(tp, pred, tp.FromHost(q, shape...), Aux{ZF: zF, ZG: zG})
	vals := terms.Values(b)
	if vals.Total != vals.MSE || vals.H1 <= 0 || vals.CBC <= 0 {
		t.Fatalf("weights 0: got %+v, want total = mse and positive h1, cbc for the log", vals)
	}
	tp.Backward(terms.Total)
	g := tensor.ToHost(b, pred.Grad)
	for i := range g {
		want := 2 * (float64(p[i]) - float64(q[i])) / 16
		if math.Abs(float64(g[i])-want) > 1e-6 {
			t.Fatalf("dL/dpred[%d] = %g, want the MSE gradient %g", i, g[i], want)
		}
	}
	if zF.Grad != nil || zG.Grad != nil {
		t.Fatalf("lambda_CBC = 0 gave the branch features a gradient")
	}
	if !tp.GradEnabled() {
		t.Fatalf("Loss left the tape's recording off")
	}

	tp.Reset()
	terms = LossConfig{LambdaCBC: 1, Spacing: []float64{0.125}, Periodic: true}.Loss(tp, pred, tp.FromHost(q, shape...), Aux{ZF: zF})
	if terms.CBC != nil {
		t.Fatalf("CBC computed with ZG missing")
	}
	if v := terms.Values(b); v.Total != v.MSE {
		t.Fatalf("missing branch pair: total %g, want the MSE %g", v.Total, v.MSE)
	}
}

// TestLossConfigFor checks the ablation modes C, D and E and the grid
// spacing and boundary taken from the configuration.
func TestLossConfigFor(t *testing.T) {
	base := config.Config{
		PDE:   config.PDE{Domain: []float64{1, 2}, Grid: []int{64, 32}, Boundary: "periodic"},
		Loss:  config.Loss{LambdaH1: 1e-3, LambdaCBC: 5e-3},
		Model: config.Model{Ablation: "full"},
	}
	tests := []struct {
		ablation, boundary string
		h1, cbc            float64
		periodic           bool
	}{
		{"full", "periodic", 1e-3, 5e-3, true},
		{"A", "periodic", 1e-3, 5e-3, true},
		{"C", "periodic", 1e-3, 0, true},
		{"D", "periodic", 0, 5e-3, true},
		{"E", "dirichlet", 0, 0, false},
		{"full", "dirichlet", 1e-3, 5e-3, false},
	}
	for _, tt := range tests {
		c := base
		c.Model.Ablation, c.PDE.Boundary = tt.ablation, tt.boundary
		lc := LossConfigFor(c)
		if lc.LambdaH1 != tt.h1 || lc.LambdaCBC != tt.cbc || lc.Periodic != tt.periodic {
			t.Errorf("%s/%s: got %+v, want h1 %g cbc %g periodic %v", tt.ablation, tt.boundary, lc, tt.h1, tt.cbc, tt.periodic)
		}
		if len(lc.Spacing) != 2 || lc.Spacing[0] != 1.0/64 || lc.Spacing[1] != 2.0/32 {
			t.Errorf("%s: spacing %v, want [1/64 1/16]", tt.ablation, lc.Spacing)
		}
	}
}
