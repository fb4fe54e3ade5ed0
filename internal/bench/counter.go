package bench

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"

	"uhno/internal/tensor"
)

// Phases of a training step under which a Counter files its counts (set
// with Counter.SetPhase). Run uses all five; any other label works too.
const (
	PhaseForward   = "forward"   // model.Forward while training
	PhaseLoss      = "loss"      // the objective (Eq. loss)
	PhaseBackward  = "backward"  // Tape.Backward
	PhaseOptimizer = "optimizer" // AdamW and clearing the gradients
	PhaseInference = "inference" // model.Forward with recording off
)

// OpCount is the tally of one operation in one phase.
type OpCount struct {
	Phase string `json:"phase"`
	Op    string `json:"op"` // the tensor.Backend method, e.g. "PointwiseBackward"
	Calls int64  `json:"calls"`
	// FLOPs by the conventions of flops.go; FFT is the part of them that is
	// FFTs (SpectralConv only).
	FLOPs int64 `json:"flops"`
	FFT   int64 `json:"fft_flops,omitempty"`
	// Bytes is the memory traffic the calls must make at least (see
	// rd, wr and acc): the numerator of GB/s.
	Bytes int64 `json:"bytes"`
	// NS is the wall-clock time of the calls in nanoseconds, when the
	// Counter timed them (SetTiming); 0 otherwise.
	NS int64 `json:"ns,omitempty"`
}

// Counter is a tensor.Backend that forwards every call to Inner unchanged
// and counts the call and its FLOPs under the current phase. It holds no
// memory of its own: storage it returns is Inner's, so tensors and models
// built on Inner can be used through a Counter and the other way round.
//
// Counting GaussianConv reads logSigma back to the host (the radius of each
// kernel depends on sigma), which on a GPU is a synchronisation: time on
// the plain backend, count on a Counter (as Run does). Safe for concurrent
// use.
type Counter struct {
	inner tensor.Backend

	mu     sync.Mutex
	phase  string
	timed  bool
	counts map[opKey]*tally
}

type opKey struct{ phase, op string }

type tally struct {
	calls             int64
	flops, fft, bytes float64
	ns                int64
}

var _ tensor.Backend = (*Counter)(nil)

// NewCounter returns a Counter around inner, in phase PhaseForward.
func NewCounter(inner tensor.Backend) *Counter {
	return &Counter{inner: inner, phase: PhaseForward, counts: map[opKey]*tally{}}
}

// Inner is the wrapped backend.
func (c *Counter) Inner() tensor.Backend { return c.inner }

// SetPhase files the following calls under phase.
func (c *Counter) SetPhase(phase string) {
	c.mu.Lock()
	c.phase = phase
	c.mu.Unlock()
}

// Reset clears every count (the phase is kept).
func (c *Counter) Reset() {
	c.mu.Lock()
	clear(c.counts)
	c.mu.Unlock()
}

// Counts returns the tallies sorted by phase (in the order of a training
// step, then inference, then other labels alphabetically) and operation.
func (c *Counter) Counts() []OpCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]OpCount, 0, len(c.counts))
	for k, t := range c.counts {
		out = append(out, OpCount{Phase: k.phase, Op: k.op, Calls: t.calls,
			FLOPs: int64(math.Round(t.flops)), FFT: int64(math.Round(t.fft)), Bytes: int64(math.Round(t.bytes)), NS: t.ns})
	}
	slices.SortFunc(out, func(a, b OpCount) int {
		if r := cmp.Compare(phaseRank(a.Phase), phaseRank(b.Phase)); r != 0 {
			return r
		}
		return cmp.Or(cmp.Compare(a.Phase, b.Phase), cmp.Compare(a.Op, b.Op))
	})
	return out
}

func phaseRank(p string) int {
	switch p {
	case PhaseForward:
		return 0
	case PhaseLoss:
		return 1
	case PhaseBackward:
		return 2
	case PhaseOptimizer:
		return 3
	case PhaseInference:
		return 4
	}
	return 5
}

// Total sums the FLOPs of the given phases (all phases when none given).
func Total(counts []OpCount, phases ...string) int64 {
	var n int64
	for _, oc := range counts {
		if len(phases) == 0 || slices.Contains(phases, oc.Phase) {
			n += oc.FLOPs
		}
	}
	return n
}

// add records one call of op with its FLOPs, the FFT part of them and
// its bytes,
// and returns the function that ends the call: every method defers it
// around its call of Inner, so that with SetTiming on it adds the call's
// wall-clock time.
func (c *Counter) add(op string, flops, fft, bytes float64) func() {
	c.mu.Lock()
	k := opKey{c.phase, op}
	t := c.counts[k]
	if t == nil {
		t = &tally{}
		c.counts[k] = t
	}
	t.calls++
	t.flops += flops
	t.fft += fft
	t.bytes += bytes
	timed := c.timed
	c.mu.Unlock()
	if !timed {
		return noop
	}
	t0 := time.Now()
	return func() {
		d := time.Since(t0)
		c.mu.Lock()
		t.ns += int64(d)
		c.mu.Unlock()
	}
}

func noop() {}

// SetTiming turns the timing of calls on or off (off after NewCounter).
// Timed, each tally also sums the wall-clock time of its calls (OpCount.NS):
// meaningful on a backend whose calls finish before they return (the
// CPU); a GPU backend's calls only enqueue work. Calls are timed where
// they are made, so a call made inside another (none of the backends
// does) would count in both.
func (c *Counter) SetTiming(on bool) {
	c.mu.Lock()
	c.timed = on
	c.mu.Unlock()
}

// numel is the element count of t as float64 (0 for a nil tensor).
func numel(t *tensor.Tensor) float64 {
	if t == nil {
		return 0
	}
	return float64(t.Numel())
}

// flag is 1 for a non-nil tensor and 0 for nil (a gradient that is asked
// for or skipped).
func flag(t *tensor.Tensor) float64 {
	if t == nil {
		return 0
	}
	return 1
}

// The byte counts behind GB/s (docs/DECISIONS.md, D-op-bytes): the least
// traffic an operation must make, 4 bytes per float32 element: every
// tensor it is given to read, once (rd); every tensor it writes, once
// (wr); every tensor it accumulates into (+=), read and written (acc).
// Re-reads, scratch buffers and what the caches absorb are not counted,
// so the GB/s they give is a lower bound on what the memory system
// delivered, comparable with the copy ceiling of a streaming kernel.

// rd is the bytes of reading each tensor once (nil tensors: none).
func rd(ts ...*tensor.Tensor) float64 {
	var n float64
	for _, t := range ts {
		n += numel(t)
	}
	return 4 * n
}

// wr is the bytes of writing each tensor once.
func wr(ts ...*tensor.Tensor) float64 { return rd(ts...) }

// acc is the bytes of accumulating into each tensor: read and write.
func acc(ts ...*tensor.Tensor) float64 { return 2 * rd(ts...) }

// slen is the bytes of a storage (0 for nil).
func slen(s tensor.Storage) float64 {
	if s == nil {
		return 0
	}
	return 4 * float64(s.Len())
}

// channelCopyBytes is ChannelCopy's traffic: the n channels of src read
// and written into dst, dst's slab also read when accumulating.
func channelCopyBytes(src *tensor.Tensor, n int, accumulate bool) float64 {
	slab := 4 * float64(src.Batch()*n*src.SpatialSize())
	if accumulate {
		return 3 * slab
	}
	return 2 * slab
}

// adamWBytes is AdamW's traffic per parameter: p, m and v read and
// written, g read.
const adamWBytes = 28

// Name implements tensor.Backend: the inner backend's name.
func (c *Counter) Name() string { return c.inner.Name() }

// Alloc implements tensor.Backend (no FLOPs).
func (c *Counter) Alloc(n int) tensor.Storage {
	defer c.add("Alloc", 0, 0, 0)()
	return c.inner.Alloc(n)
}

// Free implements tensor.Backend (no FLOPs).
func (c *Counter) Free(s tensor.Storage) {
	defer c.add("Free", 0, 0, 0)()
	c.inner.Free(s)
}

// View implements tensor.Backend (no FLOPs).
func (c *Counter) View(s tensor.Storage, off, n int) tensor.Storage {
	defer c.add("View", 0, 0, 0)()
	return c.inner.View(s, off, n)
}

// Upload implements tensor.Backend (no FLOPs).
func (c *Counter) Upload(dst tensor.Storage, src []float32) {
	defer c.add("Upload", 0, 0, slen(dst))()
	c.inner.Upload(dst, src)
}

// Download implements tensor.Backend (no FLOPs).
func (c *Counter) Download(dst []float32, src tensor.Storage) {
	defer c.add("Download", 0, 0, slen(src))()
	c.inner.Download(dst, src)
}

// Zero implements tensor.Backend (no FLOPs).
func (c *Counter) Zero(s tensor.Storage) {
	defer c.add("Zero", 0, 0, slen(s))()
	c.inner.Zero(s)
}

// Copy implements tensor.Backend (no FLOPs).
func (c *Counter) Copy(dst, src tensor.Storage) {
	defer c.add("Copy", 0, 0, slen(dst)+slen(src))()
	c.inner.Copy(dst, src)
}

// Add implements tensor.Backend: 1 FLOP per element.
func (c *Counter) Add(y, a, b *tensor.Tensor) {
	defer c.add("Add", numel(y), 0, wr(y)+rd(a, b))()
	c.inner.Add(y, a, b)
}

// Sub implements tensor.Backend: 1 FLOP per element.
func (c *Counter) Sub(y, a, b *tensor.Tensor) {
	defer c.add("Sub", numel(y), 0, wr(y)+rd(a, b))()
	c.inner.Sub(y, a, b)
}

// Mul implements tensor.Backend: 1 FLOP per element.
func (c *Counter) Mul(y, a, b *tensor.Tensor) {
	defer c.add("Mul", numel(y), 0, wr(y)+rd(a, b))()
	c.inner.Mul(y, a, b)
}

// Scale implements tensor.Backend: 1 FLOP per element.
func (c *Counter) Scale(y, x *tensor.Tensor, s float32) {
	defer c.add("Scale", numel(y), 0, wr(y)+rd(x))()
	c.inner.Scale(y, x, s)
}

// AddScaled implements tensor.Backend: 2 FLOPs per element.
func (c *Counter) AddScaled(y, x *tensor.Tensor, s float32) {
	defer c.add("AddScaled", 2*numel(y), 0, acc(y)+rd(x))()
	c.inner.AddScaled(y, x, s)
}

// MulAcc implements tensor.Backend: 2 FLOPs per element.
func (c *Counter) MulAcc(y, a, b *tensor.Tensor) {
	defer c.add("MulAcc", 2*numel(y), 0, acc(y)+rd(a, b))()
	c.inner.MulAcc(y, a, b)
}

// GELU implements tensor.Backend: geluFwd per element.
func (c *Counter) GELU(y, x *tensor.Tensor) {
	defer c.add("GELU", geluFwd*numel(y), 0, wr(y)+rd(x))()
	c.inner.GELU(y, x)
}

// GELUBackward implements tensor.Backend: geluBwd per element of dx.
func (c *Counter) GELUBackward(dx, dy, x *tensor.Tensor) {
	defer c.add("GELUBackward", geluBwd*numel(dx), 0, acc(dx)+rd(dy, x))()
	c.inner.GELUBackward(dx, dy, x)
}

// Sigmoid implements tensor.Backend: sigmoidFwd per element.
func (c *Counter) Sigmoid(y, x *tensor.Tensor) {
	defer c.add("Sigmoid", sigmoidFwd*numel(y), 0, wr(y)+rd(x))()
	c.inner.Sigmoid(y, x)
}

// SigmoidBackward implements tensor.Backend: sigmoidBwd per element of dx.
func (c *Counter) SigmoidBackward(dx, dy, y *tensor.Tensor) {
	defer c.add("SigmoidBackward", sigmoidBwd*numel(dx), 0, acc(dx)+rd(dy, y))()
	c.inner.SigmoidBackward(dx, dy, y)
}

// Pointwise implements tensor.Backend: 2 B Cout Cin N, plus B Cout N for
// the bias.
func (c *Counter) Pointwise(y, x, w, bias *tensor.Tensor) {
	cin := float64(x.Channels())
	defer c.add("Pointwise", 2*cin*numel(y)+flag(bias)*numel(y), 0, wr(y)+rd(x, w, bias))()
	c.inner.Pointwise(y, x, w, bias)
}

// CanProject implements tensor.Projector: the wrapped backend's answer,
// so that a counted or timed step runs what an uncounted one runs.
func (c *Counter) CanProject() bool {
	p, ok := c.inner.(tensor.Projector)
	return ok && p.CanProject()
}

// Projection implements tensor.Projector (called only when CanProject).
// FLOPs: those of the Pointwise, GELU and Pointwise it fuses, the model's
// arithmetic (the backward's recomputation is not counted); bytes: what
// the fused operation moves (x, y and the weights; no hidden tensor).
func (c *Counter) Projection(y, x, w1, b1, w2, b2 *tensor.Tensor) {
	hid := float64(w1.Shape[0])
	pts := numel(x) / float64(x.Channels())
	flops := pts*hid*(2*float64(x.Channels())+1+geluFwd) + numel(y)*(2*hid+1)
	defer c.add("Projection", flops, 0, wr(y)+rd(x, w1, b1, w2, b2))()
	c.inner.(tensor.Projector).Projection(y, x, w1, b1, w2, b2)
}

// ProjectionBackward implements tensor.Projector: the FLOPs of the
// composed backward (PointwiseBackward twice, GELUBackward), as
// Projection counts.
func (c *Counter) ProjectionBackward(dx, dw1, db1, dw2, db2, dy, x, w1, b1, w2 *tensor.Tensor) {
	hid, cin := float64(w1.Shape[0]), float64(x.Channels())
	pts := numel(x) / cin
	gemm2 := 2 * hid * numel(dy)
	gemm1 := 2 * cin * hid * pts
	flops := gemm2 + flag(dw2)*gemm2 + flag(db2)*numel(dy) + geluBwd*hid*pts + flag(dx)*gemm1 + flag(dw1)*gemm1 + flag(db1)*hid*pts
	defer c.add("ProjectionBackward", flops, 0, acc(dx, dw1, db1, dw2, db2)+rd(dy, x, w1, b1, w2))()
	c.inner.(tensor.Projector).ProjectionBackward(dx, dw1, db1, dw2, db2, dy, x, w1, b1, w2)
}

// PointwiseBackward implements tensor.Backend: 2 B Cin Cout N for each of
// dx and dw, B Cout N for dbias.
func (c *Counter) PointwiseBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	cin := float64(x.Channels())
	gemm := 2 * cin * numel(dy)
	defer c.add("PointwiseBackward", flag(dx)*gemm+flag(dw)*gemm+flag(dbias)*numel(dy), 0, acc(dx, dw, dbias)+rd(dy, x, w))()
	c.inner.PointwiseBackward(dx, dw, dbias, dy, x, w)
}

// convTaps is the number of weights per (output, input) channel pair of
// ConvDown: 3^d.
func convTaps(d int) float64 { return math.Pow(3, float64(d)) }

// ConvDown implements tensor.Backend: 2 B Cout Cin 3^d N_out, plus
// B Cout N_out for the bias.
func (c *Counter) ConvDown(y, x, w, bias *tensor.Tensor) {
	cin := float64(x.Channels())
	defer c.add("ConvDown", 2*cin*convTaps(x.Dims())*numel(y)+flag(bias)*numel(y), 0, wr(y)+rd(x, w, bias))()
	c.inner.ConvDown(y, x, w, bias)
}

// ConvDownBackward implements tensor.Backend: 2 B Cout Cin 3^d N_out for
// each of dx and dw, B Cout N_out for dbias.
func (c *Counter) ConvDownBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	conv := 2 * float64(x.Channels()) * convTaps(x.Dims()) * numel(dy)
	defer c.add("ConvDownBackward", flag(dx)*conv+flag(dw)*conv+flag(dbias)*numel(dy), 0, acc(dx, dw, dbias)+rd(dy, x, w))()
	c.inner.ConvDownBackward(dx, dw, dbias, dy, x, w)
}

// Conv3 implements tensor.Backend: 2 B Cout Cin 3^d N, plus B Cout N for
// the bias.
func (c *Counter) Conv3(y, x, w, bias *tensor.Tensor) {
	cin := float64(x.Channels())
	defer c.add("Conv3", 2*cin*convTaps(x.Dims())*numel(y)+flag(bias)*numel(y), 0, wr(y)+rd(x, w, bias))()
	c.inner.Conv3(y, x, w, bias)
}

// Conv3Backward implements tensor.Backend: 2 B Cout Cin 3^d N for each of
// dx and dw, B Cout N for dbias.
func (c *Counter) Conv3Backward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	conv := 2 * float64(x.Channels()) * convTaps(x.Dims()) * numel(dy)
	defer c.add("Conv3Backward", flag(dx)*conv+flag(dw)*conv+flag(dbias)*numel(dy), 0, acc(dx, dw, dbias)+rd(dy, x, w))()
	c.inner.Conv3Backward(dx, dw, dbias, dy, x, w)
}

// ReLU implements tensor.Backend: one comparison per element.
func (c *Counter) ReLU(y, x *tensor.Tensor) {
	defer c.add("ReLU", numel(y), 0, wr(y)+rd(x))()
	c.inner.ReLU(y, x)
}

// ReLUBackward implements tensor.Backend: one comparison and one add per
// element of dx.
func (c *Counter) ReLUBackward(dx, dy, x *tensor.Tensor) {
	defer c.add("ReLUBackward", 2*numel(dx), 0, acc(dx)+rd(dy, x))()
	c.inner.ReLUBackward(dx, dy, x)
}

// bandFLOPs is 2 N_in multiply-adds per output point of every axis pass of
// BandResample, the axes applied in order from the sizes `from` to `to`
// over `planes` planes.
func bandFLOPs(planes int, from, to []int) float64 {
	cur := append([]int(nil), from...)
	var f float64
	for a := range cur {
		if cur[a] == to[a] {
			continue
		}
		nin := cur[a]
		cur[a] = to[a]
		f += 2 * float64(nin) * float64(planes*tensor.Numel(cur))
	}
	return f
}

// BandResample implements tensor.Backend: see bandFLOPs.
func (c *Counter) BandResample(y, x *tensor.Tensor) {
	defer c.add("BandResample", bandFLOPs(x.Batch()*x.Channels(), x.Spatial(), y.Spatial()), 0, wr(y)+rd(x))()
	c.inner.BandResample(y, x)
}

// BandResampleBackward implements tensor.Backend: the transposed passes,
// from dy's sizes to dx's.
func (c *Counter) BandResampleBackward(dx, dy *tensor.Tensor) {
	defer c.add("BandResampleBackward", flag(dx)*bandFLOPs(dy.Batch()*dy.Channels(), dy.Spatial(), dx.Spatial()), 0, acc(dx)+rd(dy))()
	c.inner.BandResampleBackward(dx, dy)
}

// DepthwiseConv implements tensor.Backend: 2 B C 3^d N (one multiply-add
// per tap and output point), plus B C N for the bias.
func (c *Counter) DepthwiseConv(y, x, w, bias *tensor.Tensor) {
	defer c.add("DepthwiseConv", 2*convTaps(x.Dims())*numel(y)+flag(bias)*numel(y), 0, wr(y)+rd(x, w, bias))()
	c.inner.DepthwiseConv(y, x, w, bias)
}

// DepthwiseConvBackward implements tensor.Backend: 2 B C 3^d N for each
// of dx and dw, B C N for dbias.
func (c *Counter) DepthwiseConvBackward(dx, dw, dbias, dy, x, w *tensor.Tensor) {
	conv := 2 * convTaps(x.Dims()) * numel(dy)
	defer c.add("DepthwiseConvBackward", flag(dx)*conv+flag(dw)*conv+flag(dbias)*numel(dy), 0, acc(dx, dw, dbias)+rd(dy, x, w))()
	c.inner.DepthwiseConvBackward(dx, dw, dbias, dy, x, w)
}

// StencilMessage implements tensor.Backend: 2 B Cout Cin S N (one
// multiply-add per offset, channel pair and point; dropped edges of a
// non-periodic grid are counted too), plus B Cout N for the mean.
func (c *Counter) StencilMessage(y, x, k *tensor.Tensor, offsets []int, periodic bool) {
	s := float64(len(offsets) / x.Dims())
	defer c.add("StencilMessage", 2*s*float64(x.Channels())*numel(y)+numel(y), 0, wr(y)+rd(x, k))()
	c.inner.StencilMessage(y, x, k, offsets, periodic)
}

// StencilMessageBackward implements tensor.Backend: 2 B Cout Cin S N for
// each of dx and dk, plus B Cout N to scale dy.
func (c *Counter) StencilMessageBackward(dx, dk, dy, x, k *tensor.Tensor, offsets []int, periodic bool) {
	s := float64(len(offsets) / x.Dims())
	m := 2 * s * float64(x.Channels()) * numel(dy)
	defer c.add("StencilMessageBackward", flag(dx)*m+flag(dk)*m+numel(dy), 0, acc(dx, dk)+rd(dy, x, k))()
	c.inner.StencilMessageBackward(dx, dk, dy, x, k, offsets, periodic)
}

// waveletFLOPs is one direction of the d-dimensional db4 transform of
// `planes` planes: at level l every real axis filters the corner of side
// N/2^(l-1) with 8 low-pass and 8 high-pass taps per pair of outputs, one
// multiply-add each, so 16 FLOPs per point of the corner and axis.
func waveletFLOPs(planes int, sp []int, levels int) float64 {
	var f float64
	for l := 1; l <= levels; l++ {
		corner := 1.0
		for _, n := range sp {
			corner *= float64(n >> (l - 1))
		}
		f += 16 * float64(len(sp)) * corner
	}
	return float64(planes) * f
}

// Wavelet implements tensor.Backend: see waveletFLOPs.
func (c *Counter) Wavelet(y, x *tensor.Tensor, levels int, inverse bool) {
	defer c.add("Wavelet", waveletFLOPs(x.Batch()*x.Channels(), x.Spatial(), levels), 0, wr(y)+rd(x))()
	c.inner.Wavelet(y, x, levels, inverse)
}

// WaveletBackward implements tensor.Backend: one transform, plus B C N
// for the accumulation.
func (c *Counter) WaveletBackward(dx, dy *tensor.Tensor, levels int, inverse bool) {
	defer c.add("WaveletBackward", flag(dx)*(waveletFLOPs(dy.Batch()*dy.Channels(), dy.Spatial(), levels)+numel(dy)), 0, acc(dx)+rd(dy))()
	c.inner.WaveletBackward(dx, dy, levels, inverse)
}

// WaveletMix implements tensor.Backend: 2 B Cin Cout M^d.
func (c *Counter) WaveletMix(y, x, w *tensor.Tensor) {
	defer c.add("WaveletMix", 2*float64(x.Batch())*numel(w), 0, wr(y)+rd(x, w))()
	c.inner.WaveletMix(y, x, w)
}

// WaveletMixBackward implements tensor.Backend: 2 B Cin Cout M^d for each
// of dx and dw.
func (c *Counter) WaveletMixBackward(dx, dw, dy, x, w *tensor.Tensor) {
	mix := 2 * float64(x.Batch()) * numel(w)
	defer c.add("WaveletMixBackward", flag(dx)*mix+flag(dw)*mix, 0, acc(dx, dw)+rd(dy, x, w))()
	c.inner.WaveletMixBackward(dx, dw, dy, x, w)
}

// Upsample2x implements tensor.Backend: see upsampleFLOPs.
func (c *Counter) Upsample2x(y, x *tensor.Tensor, periodic bool) {
	defer c.add("Upsample2x", upsampleFLOPs(x.Batch()*x.Channels(), x.SpatialSize(), x.Dims()), 0, wr(y)+rd(x))()
	c.inner.Upsample2x(y, x, periodic)
}

// Upsample2xBackward implements tensor.Backend: the forward's count.
func (c *Counter) Upsample2xBackward(dx, dy *tensor.Tensor, periodic bool) {
	f := 0.0
	if dx != nil {
		f = upsampleFLOPs(dx.Batch()*dx.Channels(), dx.SpatialSize(), dx.Dims())
	}
	defer c.add("Upsample2xBackward", f, 0, acc(dx)+rd(dy))()
	c.inner.Upsample2xBackward(dx, dy, periodic)
}

// SpectralConv implements tensor.Backend: see spectralFLOPs.
func (c *Counter) SpectralConv(y, x, w *tensor.Tensor, k0 int, modes []int) {
	f, fft := spectralFLOPs(x.Batch(), x.Channels(), y.Channels(), x.Spatial(), k0, len(modes))
	defer c.add("SpectralConv", f, fft, wr(y)+rd(x, w))()
	c.inner.SpectralConv(y, x, w, k0, modes)
}

// SpectralConvBackward implements tensor.Backend: see
// spectralBackwardFLOPs.
func (c *Counter) SpectralConvBackward(dx, dw, dy, x, w *tensor.Tensor, k0 int, modes []int) {
	f, fft := spectralBackwardFLOPs(x.Batch(), x.Channels(), dy.Channels(), x.Spatial(), k0, len(modes), dx != nil, dw != nil)
	defer c.add("SpectralConvBackward", f, fft, acc(dx, dw)+rd(dy, x, w))()
	c.inner.SpectralConvBackward(dx, dw, dy, x, w, k0, modes)
}

// LowRankSpectralConv implements tensor.Backend: see lowRankFLOPs.
func (c *Counter) LowRankSpectralConv(y, x, u, v *tensor.Tensor, k0 int) {
	f, fft := lowRankFLOPs(x.Batch(), x.Channels(), u.Shape[2], y.Channels(), x.Spatial(), k0)
	defer c.add("LowRankSpectralConv", f, fft, wr(y)+rd(x, u, v))()
	c.inner.LowRankSpectralConv(y, x, u, v, k0)
}

// LowRankSpectralConvBackward implements tensor.Backend: see
// lowRankBackwardFLOPs.
func (c *Counter) LowRankSpectralConvBackward(dx, du, dv, dy, x, u, v *tensor.Tensor, k0 int) {
	f, fft := lowRankBackwardFLOPs(x.Batch(), x.Channels(), u.Shape[2], dy.Channels(), x.Spatial(), k0, dx != nil, du != nil, dv != nil)
	defer c.add("LowRankSpectralConvBackward", f, fft, acc(dx, du, dv)+rd(dy, x, u, v))()
	c.inner.LowRankSpectralConvBackward(dx, du, dv, dy, x, u, v, k0)
}

// taps reads logSigma back and sums 2r+1 over x's channels.
func (c *Counter) taps(x, logSigma *tensor.Tensor, opt tensor.GaussOpts) float64 {
	ls := tensor.ToHost(c.inner, logSigma)
	return gaussTaps(x.Channels(), x.Spatial(), ls, logSigma.Shape[0], logSigma.Shape[1], opt)
}

// GaussianConv implements tensor.Backend: see gaussFLOPs.
func (c *Counter) GaussianConv(y, x, logSigma *tensor.Tensor, opt tensor.GaussOpts) {
	defer c.add("GaussianConv", gaussFLOPs(x.Batch(), x.SpatialSize(), x.Dims(), c.taps(x, logSigma, opt)), 0, wr(y)+rd(x, logSigma))()
	c.inner.GaussianConv(y, x, logSigma, opt)
}

// GaussianConvBackward implements tensor.Backend: see gaussBackwardFLOPs.
func (c *Counter) GaussianConvBackward(dx, dlogSigma, dy, x, logSigma *tensor.Tensor, opt tensor.GaussOpts) {
	f := 0.0
	if dx != nil || dlogSigma != nil {
		f = gaussBackwardFLOPs(x.Batch(), x.Channels(), x.SpatialSize(), x.Dims(), c.taps(x, logSigma, opt), dx != nil, dlogSigma != nil)
	}
	defer c.add("GaussianConvBackward", f, 0, acc(dx, dlogSigma)+rd(dy, x, logSigma))()
	c.inner.GaussianConvBackward(dx, dlogSigma, dy, x, logSigma, opt)
}

// ChannelCopy implements tensor.Backend: a copy is free, accumulation is
// 1 FLOP per element copied.
func (c *Counter) ChannelCopy(dst *tensor.Tensor, dstFrom int, src *tensor.Tensor, srcFrom, n int, accumulate bool) {
	f := 0.0
	if accumulate {
		f = float64(dst.Batch() * n * dst.SpatialSize())
	}
	defer c.add("ChannelCopy", f, 0, channelCopyBytes(src, n, accumulate))()
	c.inner.ChannelCopy(dst, dstFrom, src, srcFrom, n, accumulate)
}

// MeanStd implements tensor.Backend: meanStdFwd per element of x.
func (c *Counter) MeanStd(mean, std, x *tensor.Tensor) {
	defer c.add("MeanStd", meanStdFwd*numel(x), 0, wr(mean, std)+rd(x))()
	c.inner.MeanStd(mean, std, x)
}

// MeanStdBackward implements tensor.Backend: meanStdBwd per element of dx.
func (c *Counter) MeanStdBackward(dx, dmean, dstd, x, mean, std *tensor.Tensor) {
	defer c.add("MeanStdBackward", meanStdBwd*numel(dx), 0, acc(dx)+rd(dmean, dstd, x, mean, std))()
	c.inner.MeanStdBackward(dx, dmean, dstd, x, mean, std)
}

// TopKMask implements tensor.Backend: comparisons only, 0 FLOPs.
func (c *Counter) TopKMask(mask, s *tensor.Tensor, k []int) {
	defer c.add("TopKMask", 0, 0, wr(mask)+rd(s))()
	c.inner.TopKMask(mask, s, k)
}

// SPARKeep implements tensor.Backend: the contrast statistics, sparKeepFwd
// per point (the keep-ratio is O(B), the top-k selection comparisons).
func (c *Counter) SPARKeep(hard, stats, s *tensor.Tensor, p tensor.SPARParams) {
	defer c.add("SPARKeep", sparKeepFwd*numel(s), 0, wr(hard, stats)+rd(s))()
	c.inner.SPARKeep(hard, stats, s, p)
}

// SPARRoute implements tensor.Backend: routeFwd per element of r.
func (c *Counter) SPARRoute(r, zF, zG, hard *tensor.Tensor) {
	defer c.add("SPARRoute", routeFwd*numel(r), 0, wr(r)+rd(zF, zG, hard))()
	c.inner.SPARRoute(r, zF, zG, hard)
}

// SPARRouteBackward implements tensor.Backend: routeDzF and routeDzG per
// element for the direct paths, routeDsElem per element plus routeDsPix
// per pixel for the score path.
func (c *Counter) SPARRouteBackward(dzF, dzG, ds, dr, zF, zG, hard, s *tensor.Tensor, temperature float32, centre tensor.SurrogateCentre) {
	f := routeDzF*numel(dzF) + routeDzG*numel(dzG)
	if ds != nil {
		f += routeDsElem*numel(dr) + routeDsPix*numel(ds)
	}
	defer c.add("SPARRouteBackward", f, 0, acc(dzF, dzG, ds)+rd(dr, zF, zG, hard, s))()
	c.inner.SPARRouteBackward(dzF, dzG, ds, dr, zF, zG, hard, s, temperature, centre)
}

// MSE implements tensor.Backend: mseFwd per element.
func (c *Counter) MSE(out, a, b *tensor.Tensor) {
	defer c.add("MSE", mseFwd*numel(a), 0, wr(out)+rd(a, b))()
	c.inner.MSE(out, a, b)
}

// MSEBackward implements tensor.Backend: mseBwdEach per element for each
// of da and db.
func (c *Counter) MSEBackward(da, db, dout, a, b *tensor.Tensor) {
	defer c.add("MSEBackward", mseBwdEach*(numel(da)+numel(db)), 0, acc(da, db)+rd(dout, a, b))()
	c.inner.MSEBackward(da, db, dout, a, b)
}

// Diff implements tensor.Backend: diffFwd per element.
func (c *Counter) Diff(y, x *tensor.Tensor, axis int, h float32, periodic bool) {
	defer c.add("Diff", diffFwd*numel(y), 0, wr(y)+rd(x))()
	c.inner.Diff(y, x, axis, h, periodic)
}

// DiffBackward implements tensor.Backend: diffBwd per element of dx.
func (c *Counter) DiffBackward(dx, dy *tensor.Tensor, axis int, h float32, periodic bool) {
	defer c.add("DiffBackward", diffBwd*numel(dx), 0, acc(dx)+rd(dy))()
	c.inner.DiffBackward(dx, dy, axis, h, periodic)
}

// AdamW implements tensor.Backend: adamWElem per parameter.
func (c *Counter) AdamW(p, g, m, v tensor.Storage, n int, h tensor.AdamWHyper) {
	defer c.add("AdamW", adamWElem*float64(n), 0, adamWBytes*float64(n))()
	c.inner.AdamW(p, g, m, v, n, h)
}
