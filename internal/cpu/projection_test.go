package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// projCases are shapes [B, Cin, S...] with the head's hidden and output
// widths: 1D, 2D and 3D; spatial sizes that leave a partial tile; more
// than projGroupTiles (16) tiles of 256 points per sample; widths that
// leave partial GEMM panels.
var projCases = []struct {
	name      string
	shape     []int
	hid, cout int
}{
	{"1D", []int{2, 3, 37}, 7, 2},
	{"2D", []int{2, 4, 9, 11}, 13, 1},
	{"3D", []int{1, 2, 5, 4, 6}, 6, 3},
	{"2D_groups", []int{3, 5, 70, 67}, 19, 2}, // 19 tiles a sample: two groups
	{"2D_model", []int{2, 3, 64, 64}, 128, 1}, // U-HNO's head at 0.62M
}

// composed is the head as Pointwise, GELU and Pointwise: the reference.
func composed(tp *tensor.Tape, x, w1, b1, w2, b2 *tensor.Tensor) *tensor.Tensor {
	return tp.Pointwise(tp.GELU(tp.Pointwise(x, w1, b1)), w2, b2)
}

// projRun runs the head (fused or composed) forward and backward under an
// MSE against a fixed target and returns y and the five gradients.
func projRun(threads int, fused bool, shape []int, hid, cout int) [][]float32 {
	b := cpu.New(threads)
	tp := tensor.NewTape(b)
	leaf := func(name string, seed uint64, s ...int) *tensor.Tensor {
		t := tensor.NewLeaf(b, name, gradcheck.Random(seed, tensor.Numel(s)), s...)
		t.SetRequiresGrad(true)
		return t
	}
	x := leaf("x", 1, shape...)
	w1, b1 := leaf("w1", 2, hid, shape[1]), leaf("b1", 3, hid)
	w2, b2 := leaf("w2", 4, cout, hid), leaf("b2", 5, cout)
	var y *tensor.Tensor
	if fused {
		y = tp.Projection(x, w1, b1, w2, b2)
	} else {
		y = composed(tp, x, w1, b1, w2, b2)
	}
	ys := append([]int{shape[0], cout}, shape[2:]...)
	target := tensor.NewLeaf(b, "target", gradcheck.Random(6, tensor.Numel(ys)), ys...)
	tp.Backward(tp.MSE(y, target))
	out := [][]float32{tensor.ToHost(b, y)}
	for _, t := range []*tensor.Tensor{x, w1, b1, w2, b2} {
		out = append(out, tensor.ToHost(b, t.Grad))
	}
	return out
}

var projNames = []string{"y", "dx", "dw1", "db1", "dw2", "db2"}

// TestProjectionMatchesComposed: the fused forward and dx have the bits
// of Pointwise, GELU and Pointwise; the weight and bias gradients, summed
// in groups of tiles, agree to float32 rounding.
func TestProjectionMatchesComposed(t *testing.T) {
	for _, c := range projCases {
		t.Run(c.name, func(t *testing.T) {
			f, r := projRun(2, true, c.shape, c.hid, c.cout), projRun(2, false, c.shape, c.hid, c.cout)
			sameBits(t, "y", f[0], r[0])
			sameBits(t, "dx", f[1], r[1])
			for i := 2; i < len(f); i++ {
				scale := 0.0
				for _, v := range r[i] {
					scale = math.Max(scale, math.Abs(float64(v)))
				}
				for j := range f[i] {
					if d := math.Abs(float64(f[i][j] - r[i][j])); d > 1e-5*scale+1e-12 {
						t.Fatalf("%s[%d] = %g, composed %g (largest entry %g)", projNames[i], j, f[i][j], r[i][j], scale)
					}
				}
			}
		})
	}
}

// TestProjectionThreadDeterminism: the same bits with 1, 3 and 4 threads.
func TestProjectionThreadDeterminism(t *testing.T) {
	for _, c := range projCases[:4] {
		one := projRun(1, true, c.shape, c.hid, c.cout)
		for _, threads := range []int{3, 4} {
			other := projRun(threads, true, c.shape, c.hid, c.cout)
			for i := range one {
				sameBits(t, fmt.Sprintf("%s %d threads %s", c.name, threads, projNames[i]), one[i], other[i])
			}
		}
	}
}

// TestProjectionGrad checks the fused head's gradients against finite
// differences in 1D, 2D and 3D, alone and in a chain that uses its output
// twice.
func TestProjectionGrad(t *testing.T) {
	be := cpu.New(2)
	for _, c := range projCases[:3] {
		inputs := []gradcheck.Input{in("x", 1, c.shape...), in("w1", 2, c.hid, c.shape[1]), in("b1", 3, c.hid),
			in("w2", 4, c.cout, c.hid), in("b2", 5, c.cout)}
		t.Run(c.name, func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				return tp.Projection(v[0], v[1], v[2], v[3], v[4])
			}, inputs, gradcheck.Options{})
		})
		t.Run(c.name+"/chain", func(t *testing.T) {
			gradcheck.Check(t, be, func(tp *tensor.Tape, v []*tensor.Tensor) *tensor.Tensor {
				y := tp.Projection(tp.GELU(v[0]), v[1], v[2], v[3], v[4])
				return tp.Mul(y, tp.Sigmoid(y))
			}, inputs, gradcheck.Options{})
		})
	}
}

// TestProjectionBackwardAccumulates: the backward adds into pre-filled
// gradients, for every one of them alone and all together.
func TestProjectionBackwardAccumulates(t *testing.T) {
	be := cpu.New(2)
	shape, hid, cout := []int{2, 3, 300}, 5, 2
	field := func(seed uint64, s ...int) *tensor.Tensor {
		t := tensor.NewTensor(be.Alloc(tensor.Numel(s)), s...)
		be.Upload(t.Data, gradcheck.Random(seed, tensor.Numel(s)))
		return t
	}
	zero := func(s ...int) *tensor.Tensor { return tensor.NewTensor(be.Alloc(tensor.Numel(s)), s...) }
	shapes := [][]int{shape, {hid, shape[1]}, {hid}, {cout, hid}, {cout}}
	x, w1, b1, w2 := field(1, shape...), field(2, shapes[1]...), field(3, hid), field(4, shapes[3]...)
	dy := field(6, shape[0], cout, shape[2])
	base := make([]*tensor.Tensor, 5)
	for i, s := range shapes {
		base[i] = zero(s...)
	}
	be.ProjectionBackward(base[0], base[1], base[2], base[3], base[4], dy, x, w1, b1, w2)
	for sub := 0; sub <= 5; sub++ { // 0..4: that gradient alone; 5: all
		g := make([]*tensor.Tensor, 5)
		for i := range g {
			if sub == 5 || sub == i {
				g[i] = field(uint64(10+i), shapes[i]...)
			}
		}
		be.ProjectionBackward(g[0], g[1], g[2], g[3], g[4], dy, x, w1, b1, w2)
		for i := range g {
			if g[i] == nil {
				continue
			}
			got, b0, pre := tensor.ToHost(be, g[i]), tensor.ToHost(be, base[i]), gradcheck.Random(uint64(10+i), g[i].Numel())
			for j := range got {
				if math.Abs(float64(got[j]-(pre[j]+b0[j]))) > 1e-5*(1+math.Abs(float64(b0[j]))) {
					t.Fatalf("subset %d: %s[%d] = %g, want %g + %g", sub, projNames[i+1], j, got[j], pre[j], b0[j])
				}
			}
		}
	}
}

// composedHead hides the CPU backend's fused head: Tape.Projection
// composes Pointwise, GELU and Pointwise on it.
type composedHead struct{ *cpu.Backend }

func (composedHead) CanProject() bool { return false }

// BenchmarkProjection times the projection head at U-HNO's NS-2D shape at
// 0.62M (batch 16, 3 channels, 64x64, hidden 128, one output) and at
// FNO's (width 26 there), fused and composed, forward and forward with
// backward: go test ./internal/cpu -run - -bench Projection -benchtime 20x.
func BenchmarkProjection(bm *testing.B) {
	for _, cin := range []int{3, 26} {
		for _, head := range []string{"fused", "composed"} {
			cb := cpu.New(0)
			var be tensor.Backend = cb
			if head == "composed" {
				be = composedHead{cb}
			}
			leaf := func(name string, seed uint64, s ...int) *tensor.Tensor {
				t := tensor.NewLeaf(be, name, gradcheck.Random(seed, tensor.Numel(s)), s...)
				t.SetRequiresGrad(true)
				return t
			}
			w1, b1, w2, b2 := leaf("w1", 2, 128, cin), leaf("b1", 3, 128), leaf("w2", 4, 1, 128), leaf("b2", 5, 1)
			bm.Run(fmt.Sprintf("cin=%d/%s", cin, head), func(bm *testing.B) {
				x := leaf("x", 1, 16, cin, 64, 64)
				tp := tensor.NewTape(be)
				var seed *tensor.Tensor
				for bm.Loop() {
					y := tp.Projection(x, w1, b1, w2, b2)
					if seed == nil {
						seed = tensor.NewLeaf(be, "seed", gradcheck.Random(6, y.Numel()), y.Shape...)
					}
					tp.BackwardWith(y, seed)
					tp.Reset()
				}
			})
		}
	}
}
