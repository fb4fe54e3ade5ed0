package tensor

import (
	"fmt"
	"strings"
)

// This file holds the differentiable operations: each checks shapes, runs
// the backend's forward method, and records a closure that calls the
// backend's backward method. Model code calls only these.

func shapeWith(base []int, ch int) []int {
	s := append([]int(nil), base...)
	s[1] = ch
	return s
}

// Add returns a + b.
func (tp *Tape) Add(a, b *Tensor) *Tensor {
	mustSame("Add", a, b)
	y := tp.out(a.Shape)
	tp.B.Add(y, a, b)
	if tp.needs(a, b) {
		tp.record(y, func() {
			if da := tp.g(a); da != nil {
				tp.B.AddScaled(da, y.Grad, 1)
			}
			if db := tp.g(b); db != nil {
				tp.B.AddScaled(db, y.Grad, 1)
			}
		})
	}
	return y
}

// Sub returns a - b.
func (tp *Tape) Sub(a, b *Tensor) *Tensor {
	mustSame("Sub", a, b)
	y := tp.out(a.Shape)
	tp.B.Sub(y, a, b)
	if tp.needs(a, b) {
		tp.record(y, func() {
			if da := tp.g(a); da != nil {
				tp.B.AddScaled(da, y.Grad, 1)
			}
			if db := tp.g(b); db != nil {
				tp.B.AddScaled(db, y.Grad, -1)
			}
		})
	}
	return y
}

// Mul returns the elementwise product a * b.
func (tp *Tape) Mul(a, b *Tensor) *Tensor {
	mustSame("Mul", a, b)
	y := tp.out(a.Shape)
	tp.B.Mul(y, a, b)
	if tp.needs(a, b) {
		tp.record(y, func() {
			if da := tp.g(a); da != nil {
				tp.B.MulAcc(da, y.Grad, b)
			}
			if db := tp.g(b); db != nil {
				tp.B.MulAcc(db, y.Grad, a)
			}
		})
	}
	return y
}

// Scale returns s * x.
func (tp *Tape) Scale(x *Tensor, s float32) *Tensor {
	y := tp.out(x.Shape)
	tp.B.Scale(y, x, s)
	if tp.needs(x) {
		tp.record(y, func() { tp.B.AddScaled(tp.g(x), y.Grad, s) })
	}
	return y
}

// GELU returns gelu(x) = x Phi(x) (exact erf form).
func (tp *Tape) GELU(x *Tensor) *Tensor {
	y := tp.out(x.Shape)
	tp.B.GELU(y, x)
	if tp.needs(x) {
		tp.record(y, func() { tp.B.GELUBackward(tp.g(x), y.Grad, x) })
	}
	return y
}

// Sigmoid returns 1/(1+exp(-x)).
func (tp *Tape) Sigmoid(x *Tensor) *Tensor {
	y := tp.out(x.Shape)
	tp.B.Sigmoid(y, x)
	if tp.needs(x) {
		tp.record(y, func() { tp.B.SigmoidBackward(tp.g(x), y.Grad, y) })
	}
	return y
}

// Pointwise is the 1x1 convolution y = W x + bias over channels; w is
// [Cout, Cin], bias [Cout] or nil.
func (tp *Tape) Pointwise(x, w, bias *Tensor) *Tensor {
	mustField("Pointwise", x)
	if len(w.Shape) != 2 || w.Shape[1] != x.Channels() {
		panic(fmt.Sprintf("tensor: Pointwise: weight %v does not map %d input channels", w.Shape, x.Channels()))
	}
	if bias != nil && (bias.Numel() != w.Shape[0]) {
		panic(fmt.Sprintf("tensor: Pointwise: bias %v does not match %d output channels", bias.Shape, w.Shape[0]))
	}
	y := tp.out(shapeWith(x.Shape, w.Shape[0]))
	tp.B.Pointwise(y, x, w, bias)
	if tp.needs(x, w, bias) {
		tp.record(y, func() { tp.B.PointwiseBackward(tp.g(x), tp.g(w), tp.g(bias), y.Grad, x, w) })
	}
	return y
}

// Projection returns the projection head y = W2 GELU(W1 x + b1) + b2 at
// every point (paper Sec. 3.2, Q; w1 [hidden, Cin], w2 [Cout, hidden]):
// one fused operation on a Projector backend, else Pointwise, GELU and
// Pointwise. Either way the values are those of the composed operations
// up to rounding (the fused CPU forward gives their bits).
func (tp *Tape) Projection(x, w1, b1, w2, b2 *Tensor) *Tensor {
	p, ok := tp.B.(Projector)
	if !ok || !p.CanProject() || b1 == nil || b2 == nil {
		return tp.Pointwise(tp.GELU(tp.Pointwise(x, w1, b1)), w2, b2)
	}
	mustField("Projection", x)
	if len(w1.Shape) != 2 || w1.Shape[1] != x.Channels() || len(w2.Shape) != 2 || w2.Shape[1] != w1.Shape[0] {
		panic(fmt.Sprintf("tensor: Projection: weights %v and %v do not map %d input channels", w1.Shape, w2.Shape, x.Channels()))
	}
	if b1.Numel() != w1.Shape[0] || b2.Numel() != w2.Shape[0] {
		panic(fmt.Sprintf("tensor: Projection: biases %v and %v do not match weights %v and %v", b1.Shape, b2.Shape, w1.Shape, w2.Shape))
	}
	y := tp.out(shapeWith(x.Shape, w2.Shape[0]))
	p.Projection(y, x, w1, b1, w2, b2)
	if tp.needs(x, w1, b1, w2, b2) {
		tp.record(y, func() { p.ProjectionBackward(tp.g(x), tp.g(w1), tp.g(b1), tp.g(w2), tp.g(b2), y.Grad, x, w1, b1, w2) })
	}
	return y
}

// ConvDown is the kernel-3, stride-2 circular convolution that halves every
// spatial axis (encoder down-sampling, Sec. 3.2). w is [Cout, Cin, 3...].
func (tp *Tape) ConvDown(x, w, bias *Tensor) *Tensor {
	mustField("ConvDown", x)
	d := x.Dims()
	if len(w.Shape) != 2+d || w.Shape[1] != x.Channels() {
		panic(fmt.Sprintf("tensor: ConvDown: weight %v does not fit input %v", w.Shape, x.Shape))
	}
	for i := 0; i < d; i++ {
		if w.Shape[2+i] != 3 {
			panic(fmt.Sprintf("tensor: ConvDown: kernel must be 3 on every axis, weight %v", w.Shape))
		}
	}
	if bias != nil && bias.Numel() != w.Shape[0] {
		panic(fmt.Sprintf("tensor: ConvDown: bias %v does not match %d output channels", bias.Shape, w.Shape[0]))
	}
	shape := shapeWith(x.Shape, w.Shape[0])
	for i := 2; i < len(shape); i++ {
		if shape[i]%2 != 0 || shape[i] < 2 {
			panic(fmt.Sprintf("tensor: ConvDown: spatial axes must be even, input %v", x.Shape))
		}
		shape[i] /= 2
	}
	y := tp.out(shape)
	tp.B.ConvDown(y, x, w, bias)
	if tp.needs(x, w, bias) {
		tp.record(y, func() { tp.B.ConvDownBackward(tp.g(x), tp.g(w), tp.g(bias), y.Grad, x, w) })
	}
	return y
}

// Conv3WeightShape is the shape of a Conv3 (and ConvDown) weight for d
// spatial axes: [cout, cin, 3 (d times)].
func Conv3WeightShape(d, cin, cout int) []int {
	s := []int{cout, cin}
	for i := 0; i < d; i++ {
		s = append(s, 3)
	}
	return s
}

// Conv3 is the full kernel-3, stride-1 circular convolution C_in -> C_out
// (Conv-FNO's and CNO's "3x3 convolution with circular padding"):
// y[b,o,j] = sum_{i,t} w[o,i,t] x[b,i,(j+t-1) mod N] + bias[o] per axis.
// w is [Cout, Cin, 3...] (Conv3WeightShape), bias [Cout] or nil; the
// output keeps x's spatial shape.
func (tp *Tape) Conv3(x, w, bias *Tensor) *Tensor {
	mustField("Conv3", x)
	d := x.Dims()
	if len(w.Shape) != 2+d || !SameShape(w.Shape, Conv3WeightShape(d, x.Channels(), w.Shape[0])) {
		panic(fmt.Sprintf("tensor: Conv3: weight %v does not fit input %v, want [Cout, %d%s]", w.Shape, x.Shape,
			x.Channels(), strings.Repeat(", 3", d)))
	}
	if bias != nil && bias.Numel() != w.Shape[0] {
		panic(fmt.Sprintf("tensor: Conv3: bias %v does not match %d output channels", bias.Shape, w.Shape[0]))
	}
	y := tp.out(shapeWith(x.Shape, w.Shape[0]))
	tp.B.Conv3(y, x, w, bias)
	if tp.needs(x, w, bias) {
		tp.record(y, func() { tp.B.Conv3Backward(tp.g(x), tp.g(w), tp.g(bias), y.Grad, x, w) })
	}
	return y
}

// StencilMessage is GNO's message passing on a stencil grid graph
// (Backend.StencilMessage): y[b,o,p] = mean_{s in N(p)} sum_i
// k[s,o,i] x[b,i,p+s], with the S offsets given per offset (each of
// x.Dims() integers, |s_a| <= N_a). k holds S*cout*Cin values in
// [S, cout, Cin] order and its first axis is S (the kernel MLP's
// [S, cout*Cin, 1] output fits). periodic wraps around every axis;
// otherwise offsets that leave the grid are dropped from the mean.
func (tp *Tape) StencilMessage(x, k *Tensor, cout int, offsets [][]int, periodic bool) *Tensor {
	mustField("StencilMessage", x)
	d, cin := x.Dims(), x.Channels()
	if len(offsets) == 0 || cout < 1 {
		panic(fmt.Sprintf("tensor: StencilMessage: %d offsets and %d output channels, want >= 1", len(offsets), cout))
	}
	if len(k.Shape) < 1 || k.Shape[0] != len(offsets) || k.Numel() != len(offsets)*cout*cin {
		panic(fmt.Sprintf("tensor: StencilMessage: kernel %v, want %d offsets x %d x %d values", k.Shape, len(offsets), cout, cin))
	}
	flat := make([]int, 0, len(offsets)*d)
	for _, o := range offsets {
		if len(o) != d {
			panic(fmt.Sprintf("tensor: StencilMessage: offset %v for %d spatial axes", o, d))
		}
		for a, v := range o {
			if n := x.Shape[2+a]; v < -n || v > n {
				panic(fmt.Sprintf("tensor: StencilMessage: offset %v does not fit grid %v", o, x.Spatial()))
			}
		}
		flat = append(flat, o...)
	}
	y := tp.out(shapeWith(x.Shape, cout))
	tp.B.StencilMessage(y, x, k, flat, periodic)
	if tp.needs(x, k) {
		tp.record(y, func() { tp.B.StencilMessageBackward(tp.g(x), tp.g(k), y.Grad, x, k, flat, periodic) })
	}
	return y
}

// MooreStencil is the offsets of the radius-1 Chebyshev neighbourhood in d
// dimensions without the centre, 3^d - 1 offsets in row-major order of
// {-1, 0, 1}^d: 2 in 1D, the 8 neighbours of the 3x3 stencil in 2D, 26 in
// 3D (GNO's grid graph).
func MooreStencil(d int) [][]int {
	var out [][]int
	n := 1
	for range d {
		n *= 3
	}
	for t := 0; t < n; t++ {
		o := make([]int, d)
		r, centre := t, true
		for a := d - 1; a >= 0; a-- {
			o[a] = r%3 - 1
			r /= 3
			centre = centre && o[a] == 0
		}
		if !centre {
			out = append(out, o)
		}
	}
	return out
}

// ReLU returns max(x, 0).
func (tp *Tape) ReLU(x *Tensor) *Tensor {
	y := tp.out(x.Shape)
	tp.B.ReLU(y, x)
	if tp.needs(x) {
		tp.record(y, func() { tp.B.ReLUBackward(tp.g(x), y.Grad, x) })
	}
	return y
}

// BandResample resamples x's spatial axes to size (one entry per axis,
// each at least 1) by band-limited trigonometric interpolation
// (Backend.BandResample): up-sampling zero-pads the spectrum, and
// down-sampling truncates it, the Nyquist mode of the coarser grid split
// in half. CNO's anti-aliased up- and down-sampling.
func (tp *Tape) BandResample(x *Tensor, size ...int) *Tensor {
	mustField("BandResample", x)
	if len(size) != x.Dims() {
		panic(fmt.Sprintf("tensor: BandResample: %d sizes for input %v", len(size), x.Shape))
	}
	shape := append([]int(nil), x.Shape...)
	for i, n := range size {
		if n < 1 {
			panic(fmt.Sprintf("tensor: BandResample: size %v", size))
		}
		shape[2+i] = n
	}
	y := tp.out(shape)
	tp.B.BandResample(y, x)
	if tp.needs(x) {
		tp.record(y, func() { tp.B.BandResampleBackward(tp.g(x), y.Grad) })
	}
	return y
}

// DepthwiseWeightShape is the shape of a DepthwiseConv weight for c
// channels and d spatial axes: [c, 3 (d times)].
func DepthwiseWeightShape(d, c int) []int {
	s := []int{c}
	for i := 0; i < d; i++ {
		s = append(s, 3)
	}
	return s
}

// DepthwiseConv is the 3-tap-per-axis depthwise circular convolution,
// stride 1: channel c of x [B, C, spatial...] is filtered by its own
// kernel w[c] and shifted by bias[c],
// y[b,c,j] = sum_t w[c,t] x[b,c,(j+t-1) mod N] + bias[c] per axis
// (PyTorch's Conv with groups = C, kernel 3, circular padding 1). w is
// [C, 3, ..., 3] (one 3 per spatial axis; DepthwiseWeightShape), bias [C]
// or nil. The output has x's shape. It is linear in w for fixed x, so
// DepthwiseConv(x, g, nil) with a gradient g as the weight is the
// first-order change of the output along g (model.BranchAngles).
func (tp *Tape) DepthwiseConv(x, w, bias *Tensor) *Tensor {
	mustField("DepthwiseConv", x)
	if !SameShape(w.Shape, DepthwiseWeightShape(x.Dims(), x.Channels())) {
		panic(fmt.Sprintf("tensor: DepthwiseConv: weight %v does not fit input %v, want %v",
			w.Shape, x.Shape, DepthwiseWeightShape(x.Dims(), x.Channels())))
	}
	if bias != nil && bias.Numel() != x.Channels() {
		panic(fmt.Sprintf("tensor: DepthwiseConv: bias %v does not match %d channels", bias.Shape, x.Channels()))
	}
	y := tp.out(x.Shape)
	tp.B.DepthwiseConv(y, x, w, bias)
	if tp.needs(x, w, bias) {
		tp.record(y, func() { tp.B.DepthwiseConvBackward(tp.g(x), tp.g(w), tp.g(bias), y.Grad, x, w) })
	}
	return y
}

// Upsample2x doubles every spatial axis by (bi/tri)linear interpolation,
// clamped at the edges or, with periodic, wrapped around them
// (Backend.Upsample2x).
func (tp *Tape) Upsample2x(x *Tensor, periodic bool) *Tensor {
	mustField("Upsample2x", x)
	shape := append([]int(nil), x.Shape...)
	for i := 2; i < len(shape); i++ {
		shape[i] *= 2
	}
	y := tp.out(shape)
	tp.B.Upsample2x(y, x, periodic)
	if tp.needs(x) {
		tp.record(y, func() { tp.B.Upsample2xBackward(tp.g(x), y.Grad, periodic) })
	}
	return y
}

// SpectralWeightShape is the shape of a SpectralConv weight for d spatial
// axes: [2^(d-1) corners, Cin, Cout, K0 (d times), 2].
func SpectralWeightShape(d, cin, cout, k0 int) []int {
	s := []int{1 << (d - 1), cin, cout}
	for i := 0; i < d; i++ {
		s = append(s, k0)
	}
	return append(s, 2)
}

// SpectralConv is the Fourier branch's spectral convolution with nominal
// modes k0 (Backend.SpectralConv): every axis but the last keeps
// K = min(k0, N/2) modes per sign (Eq. mode-cap), the last (rfft) axis the
// frequencies modes, slot j of the weight's last mode axis multiplying
// frequency modes[j]. FNO and U-HNO pass FirstModes(k0, N), LogLo-FNO
// LogModes(k0, N). It panics on a weight that does not fit or a list
// that is not increasing in [0, N/2) or is longer than k0.
func (tp *Tape) SpectralConv(x, w *Tensor, k0 int, modes []int) *Tensor {
	mustField("SpectralConv", x)
	d := x.Dims()
	want := SpectralWeightShape(d, x.Channels(), 0, k0)
	if len(w.Shape) != len(want) || w.Shape[0] != want[0] || w.Shape[1] != want[1] {
		panic(fmt.Sprintf("tensor: SpectralConv: weight %v does not fit input %v with K0=%d", w.Shape, x.Shape, k0))
	}
	want[2] = w.Shape[2]
	if !SameShape(w.Shape, want) {
		panic(fmt.Sprintf("tensor: SpectralConv: weight %v, want %v", w.Shape, want))
	}
	if err := CheckModes(modes, k0, x.Shape[len(x.Shape)-1]); err != nil {
		panic(fmt.Sprintf("tensor: SpectralConv: %v", err))
	}
	modes = append([]int(nil), modes...)
	y := tp.out(shapeWith(x.Shape, w.Shape[2]))
	tp.B.SpectralConv(y, x, w, k0, modes)
	if tp.needs(x, w) {
		tp.record(y, func() { tp.B.SpectralConvBackward(tp.g(x), tp.g(w), y.Grad, x, w, k0, modes) })
	}
	return y
}

// CheckModes reports whether modes is a valid last-axis frequency list
// for Backend.SpectralConv on an axis of n points with nominal modes k0:
// at most k0 entries, strictly increasing, each f with 0 <= f and 2f < n.
// Every backend checks its calls with it.
func CheckModes(modes []int, k0, n int) error {
	if len(modes) > k0 {
		return fmt.Errorf("%d modes for K0=%d", len(modes), k0)
	}
	for j, f := range modes {
		if f < 0 || 2*f >= n || (j > 0 && f <= modes[j-1]) {
			return fmt.Errorf("modes %v are not increasing in [0, %d/2)", modes, n)
		}
	}
	return nil
}

// LowRankSpectralConv is F-FNO's spectral convolution with the rank-R
// weight U V per kept mode (Backend.LowRankSpectralConv): u is
// SpectralWeightShape(d, Cin, R, k0) and v SpectralWeightShape(d, R, Cout,
// k0).
func (tp *Tape) LowRankSpectralConv(x, u, v *Tensor, k0 int) *Tensor {
	mustField("LowRankSpectralConv", x)
	checkSpectralWeight("LowRankSpectralConv", x, u, k0, x.Channels(), -1)
	checkSpectralWeight("LowRankSpectralConv", x, v, k0, u.Shape[2], -1)
	y := tp.out(shapeWith(x.Shape, v.Shape[2]))
	tp.B.LowRankSpectralConv(y, x, u, v, k0)
	if tp.needs(x, u, v) {
		tp.record(y, func() { tp.B.LowRankSpectralConvBackward(tp.g(x), tp.g(u), tp.g(v), y.Grad, x, u, v, k0) })
	}
	return y
}

// checkSpectralWeight panics unless w is a spectral weight
// [2^(d-1), cin, Cout, k0 (d times), 2] for x's dimension (any Cout when
// cout < 0).
func checkSpectralWeight(op string, x, w *Tensor, k0, cin, cout int) {
	want := SpectralWeightShape(x.Dims(), cin, max(cout, 0), k0)
	if cout < 0 && len(w.Shape) == len(want) {
		want[2] = w.Shape[2]
	}
	if k0 < 1 || !SameShape(w.Shape, want) {
		panic(fmt.Sprintf("tensor: %s: weight %v does not fit input %v with K0=%d, want %v", op, w.Shape, x.Shape, k0, want))
	}
}

// GaussianConv is the depthwise circular Gaussian convolution of the
// multi-scale Gaussian branch; logSigma is [S, G] and x has S*C channels
// (see Backend.GaussianConv).
func (tp *Tape) GaussianConv(x, logSigma *Tensor, opt GaussOpts) *Tensor {
	mustField("GaussianConv", x)
	if len(logSigma.Shape) != 2 {
		panic(fmt.Sprintf("tensor: GaussianConv: logSigma must be [scales, groups], got %v", logSigma.Shape))
	}
	s, g := logSigma.Shape[0], logSigma.Shape[1]
	if x.Channels()%(s*g) != 0 {
		panic(fmt.Sprintf("tensor: GaussianConv: %d channels are not divisible into %d scales x %d groups", x.Channels(), s, g))
	}
	y := tp.out(x.Shape)
	tp.B.GaussianConv(y, x, logSigma, opt)
	if tp.needs(x, logSigma) {
		tp.record(y, func() { tp.B.GaussianConvBackward(tp.g(x), tp.g(logSigma), y.Grad, x, logSigma, opt) })
	}
	return y
}

// Concat joins fields along channels.
func (tp *Tape) Concat(xs ...*Tensor) *Tensor {
	if len(xs) == 0 {
		panic("tensor: Concat: no inputs")
	}
	c := 0
	for _, x := range xs {
		mustField("Concat", x)
		if len(x.Shape) != len(xs[0].Shape) || x.Shape[0] != xs[0].Shape[0] || !SameShape(x.Shape[2:], xs[0].Shape[2:]) {
			panic(fmt.Sprintf("tensor: Concat: %v and %v differ outside channels", xs[0].Shape, x.Shape))
		}
		c += x.Channels()
	}
	y := tp.out(shapeWith(xs[0].Shape, c))
	off := 0
	for _, x := range xs {
		tp.B.ChannelCopy(y, off, x, 0, x.Channels(), false)
		off += x.Channels()
	}
	if tp.needs(xs...) {
		tp.record(y, func() {
			off := 0
			for _, x := range xs {
				if dx := tp.g(x); dx != nil {
					tp.B.ChannelCopy(dx, 0, y.Grad, off, x.Channels(), true)
				}
				off += x.Channels()
			}
		})
	}
	return y
}

// Slice returns channels [from, from+n) of x.
func (tp *Tape) Slice(x *Tensor, from, n int) *Tensor {
	mustField("Slice", x)
	if from < 0 || n < 1 || from+n > x.Channels() {
		panic(fmt.Sprintf("tensor: Slice: channels [%d, %d) out of range for %v", from, from+n, x.Shape))
	}
	y := tp.out(shapeWith(x.Shape, n))
	tp.B.ChannelCopy(y, 0, x, from, n, false)
	if tp.needs(x) {
		tp.record(y, func() { tp.B.ChannelCopy(tp.g(x), from, y.Grad, 0, n, true) })
	}
	return y
}

// MeanStd returns the per-(sample, channel) spatial mean and unbiased
// standard deviation, each [B, C].
func (tp *Tape) MeanStd(x *Tensor) (mean, std *Tensor) {
	mustField("MeanStd", x)
	mean = tp.out(x.Shape[:2])
	std = tp.out(x.Shape[:2])
	tp.B.MeanStd(mean, std, x)
	if tp.needs(x) {
		// One closure for both outputs: it runs when either received a gradient.
		mean.requiresGrad, std.requiresGrad = true, true
		tp.nodes = append(tp.nodes, func() {
			if mean.Grad != nil || std.Grad != nil {
				tp.B.MeanStdBackward(tp.g(x), mean.Grad, std.Grad, x, mean, std)
			}
		})
	}
	return mean, std
}

// TopKMask returns the per-sample top-k mask of s [B, 1, spatial...]; k has
// one entry per sample. It carries no gradient.
func (tp *Tape) TopKMask(s *Tensor, k []int) *Tensor {
	mustField("TopKMask", s)
	if s.Channels() != 1 || len(k) != s.Batch() {
		panic(fmt.Sprintf("tensor: TopKMask: scores %v with %d k values", s.Shape, len(k)))
	}
	n := s.SpatialSize()
	for _, kk := range k {
		if kk < 0 || kk > n {
			panic(fmt.Sprintf("tensor: TopKMask: k=%d outside [0, %d]", kk, n))
		}
	}
	m := tp.out(s.Shape)
	tp.B.TopKMask(m, s, k)
	return m
}

// SPARKeep returns the hard top-k mask of Eq. spar-rho and the per-sample
// statistics [B, 3] = (contrast c, keep-ratio rho, k). No gradient.
func (tp *Tape) SPARKeep(s *Tensor, p SPARParams) (hard, stats *Tensor) {
	mustField("SPARKeep", s)
	if s.Channels() != 1 {
		panic(fmt.Sprintf("tensor: SPARKeep: scores must have one channel, got %v", s.Shape))
	}
	hard = tp.out(s.Shape)
	stats = tp.out([]int{s.Batch(), 3})
	tp.B.SPARKeep(hard, stats, s, p)
	return hard, stats
}

// SPARRoute is the straight-through per-pixel MUX r = g zF + (1-g) zG with
// g = hard in the forward pass and dg/ds = sigmoid'((s - tau)/T)/T in the
// backward pass (Sec. 3.3, App. A.1), tau = 0 or the per-sample threshold
// tau_k as centre says (Backend.SPARRouteBackward).
func (tp *Tape) SPARRoute(zF, zG, hard, s *Tensor, temperature float32, centre SurrogateCentre) *Tensor {
	mustSame("SPARRoute", zF, zG)
	mustSame("SPARRoute", hard, s)
	if s.Channels() != 1 || s.Batch() != zF.Batch() || !SameShape(s.Spatial(), zF.Spatial()) {
		panic(fmt.Sprintf("tensor: SPARRoute: scores %v do not match features %v", s.Shape, zF.Shape))
	}
	r := tp.out(zF.Shape)
	tp.B.SPARRoute(r, zF, zG, hard)
	if tp.needs(zF, zG, s) {
		tp.record(r, func() {
			tp.B.SPARRouteBackward(tp.g(zF), tp.g(zG), tp.g(s), r.Grad, zF, zG, hard, s, temperature, centre)
		})
	}
	return r
}

// MSE returns mean((a-b)^2) as a one-element tensor.
func (tp *Tape) MSE(a, b *Tensor) *Tensor {
	mustSame("MSE", a, b)
	y := tp.out([]int{1})
	tp.B.MSE(y, a, b)
	if tp.needs(a, b) {
		tp.record(y, func() { tp.B.MSEBackward(tp.g(a), tp.g(b), y.Grad, a, b) })
	}
	return y
}

// Diff is the first derivative along spatial axis `axis` with spacing h:
// periodic central differences, or central inside and one-sided at the
// boundary when periodic is false (Darcy).
func (tp *Tape) Diff(x *Tensor, axis int, h float32, periodic bool) *Tensor {
	mustField("Diff", x)
	if axis < 0 || axis >= x.Dims() {
		panic(fmt.Sprintf("tensor: Diff: axis %d outside the %d spatial axes of %v", axis, x.Dims(), x.Shape))
	}
	if x.Spatial()[axis] < 3 {
		panic(fmt.Sprintf("tensor: Diff: axis %d of %v needs at least 3 points", axis, x.Shape))
	}
	y := tp.out(x.Shape)
	tp.B.Diff(y, x, axis, h, periodic)
	if tp.needs(x) {
		tp.record(y, func() { tp.B.DiffBackward(tp.g(x), y.Grad, axis, h, periodic) })
	}
	return y
}
