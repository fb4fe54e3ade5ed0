//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// bf16 autocast (SetPrecision(BF16), package documentation, "bf16 autocast").
//
// The tests below check, for every operation autocast covers, that
//
//  1. the bf16 result is exactly the product of the bf16-rounded operands
//     accumulated in float32: it agrees with the CPU backend computing in
//     float32 on operands rounded on the host (bf16Ref, written apart from
//     the kernels' bit trick) within the float32 sum tolerance of the fp32
//     tests (denseSumTol), which is hundreds of times below the rounding's
//     effect;
//  2. it stays within the bf16 bound of the fp32 result: each product a b
//     becomes a(1+e) b(1+f) with |e|, |f| <= u = 2^-8 (bfloat16 keeps 8
//     significant bits), so |bf16 - fp32| <= (2u + u^2) sum |a_i b_i|,
//     plus the two float32 evaluations' own sum error; the test uses
//     2.01 * 2^-8 * sum |a_i b_i| + 2 denseSumTol;
//  3. it differs from the fp32 result: both runs are the same kernel
//     in the same order, so without the rounding they would be the same
//     bits; at least 90% of the elements must differ (the random inputs
//     are almost never bf16 values) and the largest difference must
//     exceed 2^-16 max sum |a_i b_i|, so a kernel that skipped the
//     rounding fails;
//  4. what autocast leaves in float32 (the bias gradients) is bit for bit
//     the fp32 result.
//
// The measured worst |bf16 - fp32| / sum |a_i b_i| is logged per output.

// bf16U is bfloat16's unit roundoff: 8 significant bits.
const bf16U = 1.0 / (1 << 8)

// bf16Ref rounds a float32 to the nearest bfloat16, ties to even, by
// comparing the two neighbouring bfloat16 values in float64 (no carry
// trick, so it checks the kernels' bf16_round independently). NaN stays
// NaN, Inf stays Inf; beyond the largest bfloat16 the upper neighbour is
// Inf (as IEEE rounding overflows).
func bf16Ref(f float32) float32 {
	if math.IsNaN(float64(f)) {
		return float32(math.NaN())
	}
	if math.IsInf(float64(f), 0) {
		return f
	}
	bits := math.Float32bits(f)
	lo := bits & 0xffff0000
	if lo == bits {
		return f
	}
	sign := bits & 0x80000000
	mag := lo &^ 0x80000000
	hi := (mag + 0x10000) | sign // the next bfloat16 away from zero (0x7f80.. is Inf)
	a, b := float64(math.Float32frombits(lo)), float64(math.Float32frombits(hi))
	if math.IsInf(b, 0) {
		// Halfway to Inf is the next "binade" edge 2^128 in magnitude.
		b = math.Copysign(math.Ldexp(1, 128), b)
	}
	x := float64(f)
	dl, dh := math.Abs(x-a), math.Abs(b-x)
	switch {
	case dl < dh:
		return math.Float32frombits(lo)
	case dh < dl:
		return math.Float32frombits(hi)
	case (lo>>16)&1 == 0:
		return math.Float32frombits(lo)
	default:
		return math.Float32frombits(hi)
	}
}

// gpuBF16Round runs the kernels' bf16_round on xs (bf16_round_test).
func gpuBF16Round(xs []float32) []float32 {
	in, out := gpu.Alloc(len(xs)).(*Buf), gpu.Alloc(len(xs)).(*Buf)
	defer gpu.Free(in)
	defer gpu.Free(out)
	gpu.Upload(in, xs)
	gpu.launch("bf16_round_test", Elementwise(len(xs)), out, in, len(xs))
	got := make([]float32, len(xs))
	gpu.Download(got, out)
	return got
}

// TestBF16Round checks the kernels' rounding on known values (ties to
// even both ways, just above and below a tie, negative values, signed
// zero, subnormals including the carry into the smallest normal, the
// largest finite float32 overflowing to Inf, Inf and NaN, a NaN whose
// payload lies only in the dropped bits), then on 200,000 random bit
// patterns against bf16Ref.
func TestBF16Round(t *testing.T) {
	known := []struct{ in, want uint32 }{
		{0x3f800000, 0x3f800000}, // 1
		{0x3f808000, 0x3f800000}, // 1 + 2^-8: a tie, to the even 1
		{0x3f818000, 0x3f820000}, // 1 + 3 2^-8: a tie, to the even 1 + 2^-6
		{0x3f808001, 0x3f810000}, // just above a tie: up
		{0x3f807fff, 0x3f800000}, // just below a tie: down
		{0xbf818000, 0xbf820000}, // negative tie: to even, magnitude up
		{0xbf80c000, 0xbf810000}, // -(1 + 3 2^-9): nearest, magnitude up
		{0x00000000, 0x00000000}, // +0
		{0x80000000, 0x80000000}, // -0 keeps its sign
		{0x00000001, 0x00000000}, // smallest subnormal: to 0
		{0x00008000, 0x00000000}, // subnormal tie: to the even 0
		{0x00018000, 0x00020000}, // subnormal tie: to even, up
		{0x00008001, 0x00010000}, // subnormal above a tie
		{0x007fffff, 0x00800000}, // largest subnormal: to the smallest normal
		{0x807fffff, 0x80800000}, // and its negative
		{0x7f7fffff, 0x7f800000}, // largest float32: overflows to +Inf
		{0x7f7f7fff, 0x7f7f0000}, // below the last tie: stays finite
		{0xff7fffff, 0xff800000}, // to -Inf
		{0x7f800000, 0x7f800000}, // +Inf
		{0xff800000, 0xff800000}, // -Inf
		{0x40490fdb, 0x40490000}, // pi: 3.140625
	}
	in := make([]float32, len(known))
	for i, k := range known {
		in[i] = math.Float32frombits(k.in)
	}
	got := gpuBF16Round(in)
	for i, k := range known {
		if g := math.Float32bits(got[i]); g != k.want {
			t.Errorf("bf16_round(%#08x = %g) = %#08x (%g), want %#08x", k.in, in[i], g, got[i], k.want)
		}
		if r := math.Float32bits(bf16Ref(in[i])); r != k.want {
			t.Errorf("bf16Ref(%#08x) = %#08x, want %#08x", k.in, r, k.want)
		}
	}
	nans := []float32{math.Float32frombits(0x7fc00000), math.Float32frombits(0x7f800001), math.Float32frombits(0xff80ffff), math.Float32frombits(0x7fbfffff)}
	for i, g := range gpuBF16Round(nans) {
		if !math.IsNaN(float64(g)) || math.Float32bits(g)&0xffff != 0 {
			t.Errorf("bf16_round(NaN %#08x) = %#08x, want a NaN with the low 16 bits clear", math.Float32bits(nans[i]), math.Float32bits(g))
		}
	}
	r := rand.New(rand.NewPCG(14, 16))
	rs := make([]float32, 200000)
	for i := range rs {
		rs[i] = math.Float32frombits(r.Uint32())
	}
	for i, g := range gpuBF16Round(rs) {
		w := bf16Ref(rs[i])
		if math.IsNaN(float64(w)) {
			if !math.IsNaN(float64(g)) {
				t.Fatalf("bf16_round(%#08x) = %#08x, want NaN", math.Float32bits(rs[i]), math.Float32bits(g))
			}
			continue
		}
		if math.Float32bits(g) != math.Float32bits(w) {
			t.Fatalf("bf16_round(%#08x = %g) = %#08x, bf16Ref %#08x", math.Float32bits(rs[i]), rs[i], math.Float32bits(g), math.Float32bits(w))
		}
	}
}

// TestSetPrecision checks the setting's values and its refusal of others.
func TestSetPrecision(t *testing.T) {
	defer gpu.SetPrecision(FP32)
	if p := gpu.Precision(); p != FP32 {
		t.Fatalf("default precision %s, want %s", p, FP32)
	}
	if err := gpu.SetPrecision(BF16); err != nil || gpu.Precision() != BF16 {
		t.Fatalf("SetPrecision(bf16): %v, precision %s", err, gpu.Precision())
	}
	if err := gpu.SetPrecision("fp16"); err == nil {
		t.Fatal("SetPrecision(fp16) accepted")
	}
	if gpu.Precision() != BF16 {
		t.Fatal("a refused SetPrecision changed the precision")
	}
}

// acOp is one operation autocast covers: the four share the signature
// Op(y, x, w, bias) and OpBackward(dx, dw, dbias, dy, x, w).
type acOp struct {
	name string
	fwd  func(be tensor.Backend, y, x, w, bias *tensor.Tensor)
	bwd  func(be tensor.Backend, dx, dw, dbias, dy, x, w *tensor.Tensor)
	// shapes of x, w, y for a batch b, channels cin -> cout and grid sp
	shapes func(b, cin, cout int, sp []int) (xs, ws, ys []int)
	// terms: the number of products in one forward, dx and dw sum (for
	// the float32 tolerance)
	terms func(b, cin, cout int, sp []int) (fwd, dx, dw int)
}

func acGrid(b, c int, sp []int) []int { return append([]int{b, c}, sp...) }

func acTaps(d int) int { return int(math.Pow(3, float64(d))) }

var acOps = []acOp{
	{
		name: "Pointwise", fwd: tensor.Backend.Pointwise, bwd: tensor.Backend.PointwiseBackward,
		shapes: func(b, cin, cout int, sp []int) ([]int, []int, []int) {
			return acGrid(b, cin, sp), []int{cout, cin}, acGrid(b, cout, sp)
		},
		terms: func(b, cin, cout int, sp []int) (int, int, int) { return cin, cout, b * tensor.Numel(sp) },
	},
	{
		name: "ConvDown", fwd: tensor.Backend.ConvDown, bwd: tensor.Backend.ConvDownBackward,
		shapes: func(b, cin, cout int, sp []int) ([]int, []int, []int) {
			out := make([]int, len(sp))
			for a, n := range sp {
				out[a] = n / 2
			}
			ws := []int{cout, cin}
			for range sp {
				ws = append(ws, 3)
			}
			return acGrid(b, cin, sp), ws, acGrid(b, cout, out)
		},
		terms: func(b, cin, cout int, sp []int) (int, int, int) {
			return cin * acTaps(len(sp)), cout << len(sp), b * tensor.Numel(sp) >> len(sp)
		},
	},
	{
		name: "Conv3", fwd: tensor.Backend.Conv3, bwd: tensor.Backend.Conv3Backward,
		shapes: func(b, cin, cout int, sp []int) ([]int, []int, []int) {
			return acGrid(b, cin, sp), tensor.Conv3WeightShape(len(sp), cin, cout), acGrid(b, cout, sp)
		},
		terms: func(b, cin, cout int, sp []int) (int, int, int) {
			return cin * acTaps(len(sp)), cout * acTaps(len(sp)), b * tensor.Numel(sp)
		},
	},
	{
		name: "DepthwiseConv", fwd: tensor.Backend.DepthwiseConv, bwd: tensor.Backend.DepthwiseConvBackward,
		shapes: func(b, cin, _ int, sp []int) ([]int, []int, []int) {
			return acGrid(b, cin, sp), tensor.DepthwiseWeightShape(len(sp), cin), acGrid(b, cin, sp)
		},
		terms: func(b, _, _ int, sp []int) (int, int, int) {
			return acTaps(len(sp)), acTaps(len(sp)), b * tensor.Numel(sp)
		},
	},
}

// acCases: 1D, 2D, 3D; for Pointwise and ConvDown channel counts beyond
// one 64-wide tile and K beyond one 16-deep stage, and a weight gradient
// split along K (Pointwise's B S = 2 x 1200); DepthwiseConv uses cin as
// its channel count.
var acCases = map[string][]struct {
	b, cin, cout int
	sp           []int
}{
	"Pointwise":     {{2, 70, 40, []int{37}}, {2, 24, 20, []int{10, 13}}, {2, 3, 5, []int{1200}}, {1, 17, 9, []int{6, 4, 5}}},
	"ConvDown":      {{2, 21, 67, []int{38}}, {2, 8, 16, []int{10, 14}}, {1, 6, 7, []int{6, 4, 8}}},
	"Conv3":         {{2, 5, 4, []int{37}}, {2, 3, 4, []int{10, 13}}, {1, 2, 3, []int{6, 5, 7}}},
	"DepthwiseConv": {{3, 5, 5, []int{37}}, {2, 4, 4, []int{10, 13}}, {2, 3, 3, []int{6, 5, 7}}},
}

// acTensor puts vals on a backend as a tensor of the given shape.
func acTensor(be tensor.Backend, vals []float32, shape ...int) *tensor.Tensor {
	t := tensor.NewTensor(be.Alloc(tensor.Numel(shape)), shape...)
	be.Upload(t.Data, vals)
	return t
}

func acMap(v []float32, f func(float32) float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}

func acAbs(x float32) float32 { return float32(math.Abs(float64(x))) }

// acResult is one evaluation's outputs: y, dx, dw, dbias.
type acResult [4][]float32

// acRun evaluates op forward and backward on be from the given values
// (bias and the initial gradients as given; any nil value: that tensor
// is nil, its gradient skipped, or a zero initial gradient).
func acRun(be tensor.Backend, op acOp, xs, ws, ys []int, x, w, bias, dy, dx0, dw0, db0 []float32) acResult {
	tx, tw, tdy := acTensor(be, x, xs...), acTensor(be, w, ws...), acTensor(be, dy, ys...)
	var tb *tensor.Tensor
	if bias != nil {
		tb = acTensor(be, bias, ys[1])
	}
	ty := tensor.NewTensor(be.Alloc(tensor.Numel(ys)), ys...)
	op.fwd(be, ty, tx, tw, tb)
	init := func(v []float32, shape ...int) *tensor.Tensor {
		t := tensor.NewTensor(be.Alloc(tensor.Numel(shape)), shape...)
		if v != nil {
			be.Upload(t.Data, v)
		}
		return t
	}
	tdx, tdw, tdb := init(dx0, xs...), init(dw0, ws...), init(db0, ys[1])
	op.bwd(be, tdx, tdw, tdb, tdy, tx, tw)
	return acResult{tensor.ToHost(be, ty), tensor.ToHost(be, tdx), tensor.ToHost(be, tdw), tensor.ToHost(be, tdb)}
}

// TestBF16Autocast runs every covered operation forward and backward in
// fp32 and in bf16 and checks points 1 to 4 of the comment above.
func TestBF16Autocast(t *testing.T) {
	defer gpu.SetPrecision(FP32)
	ref := cpu.New(1)
	for _, op := range acOps {
		worst := [3]float64{}
		for ci, c := range acCases[op.name] {
			xs, ws, ys := op.shapes(c.b, c.cin, c.cout, c.sp)
			kf, kdx, kdw := op.terms(c.b, c.cin, c.cout, c.sp)
			seed := uint64(1000*ci + len(op.name))
			x, w := random(seed+1, tensor.Numel(xs), 1), random(seed+2, tensor.Numel(ws), 1)
			bias, dy := random(seed+3, ys[1], 1), random(seed+4, tensor.Numel(ys), 1)
			dx0, dw0, db0 := random(seed+5, tensor.Numel(xs), 0.1), random(seed+6, tensor.Numel(ws), 0.1), random(seed+7, ys[1], 0.1)
			name := fmt.Sprint(op.name, xs, "->", ys)
			t.Run(name, func(t *testing.T) {
				must(t, gpu.SetPrecision(FP32))
				g32 := acRun(gpu, op, xs, ws, ys, x, w, bias, dy, dx0, dw0, db0)
				must(t, gpu.SetPrecision(BF16))
				g16 := acRun(gpu, op, xs, ws, ys, x, w, bias, dy, dx0, dw0, db0)
				must(t, gpu.SetPrecision(FP32))
				// 1: the CPU in float32 on host-rounded operands.
				rx, rw, rdy := acMap(x, bf16Ref), acMap(w, bf16Ref), acMap(dy, bf16Ref)
				exact := acRun(ref, op, xs, ws, ys, rx, rw, bias, rdy, dx0, dw0, db0)
				// sum |a_i b_i|: the CPU on |operands|, no bias, zero initial gradients.
				ax, aw, ady := acMap(x, acAbs), acMap(w, acAbs), acMap(dy, acAbs)
				abs := acRun(ref, op, xs, ws, ys, ax, aw, nil, ady, nil, nil, nil)
				for o, k := range []int{kf, kdx, kdw} {
					what := [3]string{"forward", "dx", "dw"}[o]
					ftol := denseSumTol(k+1, 1)
					var maxDiff, ratio, maxSum float64
					differ := 0
					for i := range g16[o] {
						if math.Float32bits(g16[o][i]) != math.Float32bits(g32[o][i]) {
							differ++
						}
						got, want32, ex, s := float64(g16[o][i]), float64(g32[o][i]), float64(exact[o][i]), float64(abs[o][i])
						if d := math.Abs(got - ex); !(d <= ftol+1e-6*math.Abs(ex)) {
							t.Fatalf("%s: element %d is %g in bf16, %g on the CPU from bf16-rounded operands (|diff| %.3g > %.3g): the operands are not rounded to bf16 as specified",
								what, i, got, ex, d, ftol)
						}
						d := math.Abs(got - want32)
						if lim := 2.01*bf16U*s + 2*ftol; !(d <= lim) {
							t.Fatalf("%s: element %d is %g in bf16, %g in fp32: |diff| %.3g beyond the bf16 bound %.3g (sum |a b| = %.3g)", what, i, got, want32, d, lim, s)
						}
						maxDiff, maxSum = max(maxDiff, d), max(maxSum, s)
						if s > 0 {
							ratio = max(ratio, d/s)
						}
					}
					// Both runs are the same kernel in the same order: without
					// the rounding they are the same bits.
					if n := len(g16[o]); differ < n*9/10 || maxDiff < maxSum/(1<<16) {
						t.Fatalf("%s: bf16 and fp32 differ in %d of %d elements, by at most %.3g (sum |a b| up to %.3g): the bf16 rounding did not happen",
							what, differ, n, maxDiff, maxSum)
					}
					worst[o] = max(worst[o], ratio)
				}
				// 4: the bias gradient stays float32.
				for i := range g16[3] {
					if math.Float32bits(g16[3][i]) != math.Float32bits(g32[3][i]) {
						t.Fatalf("dbias: element %d is %g in bf16, %g in fp32: the bias gradient must stay float32", i, g16[3][i], g32[3][i])
					}
				}
			})
		}
		t.Logf("%s: worst |bf16 - fp32| / sum |a b|: forward %.3g, dx %.3g, dw %.3g (bound 2.01 * 2^-8 = %.3g)",
			op.name, worst[0], worst[1], worst[2], 2.01*bf16U)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
