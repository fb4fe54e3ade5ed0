package cpu

import (
	"fmt"
	"math"
	"sync"

	"uhno/internal/tensor"
)

// Spectral convolution (the Fourier branch, Sec. 3.2 and App. C.4), the
// one spectral convolution of every FNO-type layer:
//
//	y = irfftn(R . rfftn(x))
//
// keeping, on every axis but the last, the frequencies [0:K] and [N-K:N]
// (Eq. mode-cap, K = min(K0, N/2)) and, on the last (rfft) axis, the
// frequencies of a list: slot j is frequency modes[j]. FNO and U-HNO keep
// tensor.FirstModes (0..K-1), LogLo-FNO tensor.LogModes; the list only
// changes the last-axis DFT matrices and the factor D below, so both run
// the same code, and 0..K-1 gives the bits of a dedicated [0:K] kernel.
//
// Only the kept modes of rfftn(x) are ever needed, so the transforms are
// truncated DFTs written as small dense matrix products instead of FFTs:
//
//	T   (forward, x real -> kept modes): along the last axis each row of N
//	    reals times an N x 2K_L real matrix (cos, -sin) gives the K_L
//	    complex modes of the list; then along every other axis, from the last but one down
//	    to the first, a 2K x N complex matrix keeps the 2K frequencies
//	    [0:K] and [N-K:N] (Eq. mode-cap, K = min(K0, N/2)).
//	Mix (per kept mode, the complex [B x Cin] x [Cin x Cout] product with
//	    the weight of the mode's corner).
//	R   (inverse, kept modes -> real): every other axis expanded by the
//	    N x 2K matrix exp(+i theta), then the last axis by the 2K x N
//	    matrix (cos, -sin), i.e. y = Re sum_k Z_k exp(+i theta).
//
// numpy's irfftn of a spectrum that is zero outside the kept modes is
// y = R(D . Z) with D_k = c_k / prod(N), where c_k is 1 for the last-axis
// DC bin and 2 for the others (irfft counts every bin 0 < k < N/2 twice
// and drops the imaginary part of DC). The Nyquist bin of the last axis
// is never kept since every listed f has 2f < N, while on a full axis with K = N/2 the
// two blocks [0:N/2] and [N/2:N] cover every frequency, Nyquist included.
// D is applied at the end of the mixing, so y = R(D . Mix_W(T x)).
//
// Backward, with the real inner product <a, b> = Re sum conj(a) b under
// which every stage is real-linear: R^T = T and T^T = R (the same
// matrices transposed), and the adjoint of z = a w is da = dz conj(w), so
//
//	G   = T dy                               (R^T, kept modes of dy)
//	dx += R(D . Mix^H G),  (Mix^H G)[b,i] = sum_o G[b,o] conj(W[i,o])
//	dW += D . sum_b conj(X[b,i]) G[b,o],     X = T x (recomputed).
//
// Kept-mode layout: a spectrum is [fields][2K_0]...[2K_{d-2}][K_L] complex
// numbers (interleaved re, im), K_L = len(modes), where along a full axis index j < K is
// frequency j (positive block) and j >= K is frequency N-2K+j (negative
// block). The corner of a mode follows the yardstick's
// itertools.product over the full axes of (positive, negative): axis a
// (0 <= a <= d-2) contributes bit d-2-a when it is in its negative block,
// so corner 0 is all positive and, in 3D, corner 1 is negative on axis 1
// only. The mode uses weight w[corner, i, o, j_0 mod K_0, ..., j_L, :],
// j_L the slot of its last-axis frequency.
// The K_L last-axis modes of one "mode row" (fixed full-axis indices) are
// contiguous both in a spectrum and in w, so the mixing works row by row
// on vectors of K_L complex lanes and reads spectra and weights in place:
// no transposes, no gathered copy of w.
//
// Kernels: sgemm (real), cgemm (complex, interleaved) and rowmix (the
// per-lane complex mixing) have plain-Go versions and C versions
// (spectral_gemm_amd64.c, AVX2+FMA with a baseline clone) that are about ten
// times faster and are used whenever cgo is on; the tests check one
// against the other.
//
// Cost (2D, B16 C32 64x64 K12): T is 50M + 38M real multiply-adds, R the
// same, the mixing 19M; the backward does T twice (dy and x), two mixings
// and one R, about 500M for forward and backward together.

// spectralAxis holds the truncated DFT matrices of one spatial axis with n
// points and k kept modes (per block; on the last axis, the k listed
// frequencies).
type spectralAxis struct {
	n, k int
	// Last (rfft) axis, real matrices:
	// fwd [n][2k] has columns (cos, -sin)(2 pi k n / N) interleaved, so a row
	// of n reals times fwd is the k complex modes; inv [2k][n] is its
	// transpose, mapping k complex modes Z to Re sum_k Z_k exp(+i theta).
	fwd, inv []float32
	// Full axes, complex interleaved matrices over the 2k kept frequencies
	// f_j: fwdc [2k][n] = exp(-2 pi i f_j n / N), invc [n][2k] = conj(fwdc)^T.
	fwdc, invc []float32
}

func newSpectralAxis(n, k int, last bool, freqs []int) *spectralAxis {
	ax := &spectralAxis{n: n, k: k}
	phase := func(f, j int) (float32, float32) {
		t := 2 * math.Pi * float64((f*j)%n) / float64(n)
		return float32(math.Cos(t)), float32(math.Sin(t))
	}
	if last {
		ax.fwd = make([]float32, n*2*k)
		ax.inv = make([]float32, 2*k*n)
		for j := 0; j < n; j++ {
			for f := 0; f < k; f++ {
				c, s := phase(freqs[f], j)
				ax.fwd[j*2*k+2*f], ax.fwd[j*2*k+2*f+1] = c, -s
				ax.inv[2*f*n+j], ax.inv[(2*f+1)*n+j] = c, -s
			}
		}
		return ax
	}
	ax.fwdc = make([]float32, 2*k*n*2)
	ax.invc = make([]float32, n*2*k*2)
	for q := 0; q < 2*k; q++ {
		f := q
		if q >= k {
			f = n - 2*k + q
		}
		for j := 0; j < n; j++ {
			c, s := phase(f, j)
			ax.fwdc[2*(q*n+j)], ax.fwdc[2*(q*n+j)+1] = c, -s
			ax.invc[2*(j*2*k+q)], ax.invc[2*(j*2*k+q)+1] = c, s
		}
	}
	return ax
}

// spectralKey identifies a plan: dimensionality, grid, nominal modes and
// the last-axis frequencies (encoded by modesKey).
type spectralKey struct {
	d, k0 int
	n     [3]int
	modes string
}

// modesKey encodes a last-axis frequency list for spectralKey.
func modesKey(freqs []int) string {
	b := make([]byte, 0, 4*len(freqs))
	for _, f := range freqs {
		b = append(b, byte(f), byte(f>>8), byte(f>>16), byte(f>>24))
	}
	return string(b)
}

// spectralPlan is everything about a SpectralConv call that depends only on
// the grid, K0 and the list: per-axis DFT matrices and the kept-mode
// tables.
type spectralPlan struct {
	d     int
	n, k  [3]int // grid size and kept modes per axis: K (Eq. mode-cap); the list's length on the last
	axes  [3]*spectralAxis
	outer int // prod of the full-axis sizes N_0..N_{d-2}
	modes int // kept modes per field: prod(2K_a, a < d-1) * K_{d-1}
	kvol  int // K0^d, the weight's mode-block size in complex numbers
	// The kept modes come in rows of K_{d-1} consecutive last-axis modes
	// (mode m = row*K_{d-1} + f). Per row: the weight corner and the
	// complex offset of its f = 0 mode inside the K0^d block of
	// w[corner, i, o] (the row's modes follow contiguously). Per last-axis
	// frequency f: the irfftn factor D (see above).
	rowCorner, rowOff []int32
	scale             []float32
	// ones is a unit scale (the low-rank mixing's inner product, which
	// carries no D).
	ones []float32
}

func newSpectralPlan(key spectralKey, freqs []int) *spectralPlan {
	d := key.d
	p := &spectralPlan{d: d, outer: 1, modes: 1, kvol: 1}
	last := d - 1
	ntot := 1
	for a := 0; a < d; a++ {
		n := key.n[a]
		k := tensor.ModeCap(key.k0, n)
		if a == last {
			k = len(freqs)
		}
		p.n[a], p.k[a] = n, k
		p.axes[a] = newSpectralAxis(n, k, a == last, freqs)
		ntot *= n
		p.kvol *= key.k0
		if a < last {
			p.outer *= n
			p.modes *= 2 * k
		} else {
			p.modes *= k
		}
	}
	kl, nl := p.k[last], p.n[last]
	rows := p.modes / kl
	p.rowCorner = make([]int32, rows)
	p.rowOff = make([]int32, rows)
	for r := 0; r < rows; r++ {
		rest, corner, off, stride := r, 0, 0, key.k0
		for a := last - 1; a >= 0; a-- {
			j := rest % (2 * p.k[a])
			rest /= 2 * p.k[a]
			if j >= p.k[a] {
				corner |= 1 << (d - 2 - a)
			}
			off += (j % p.k[a]) * stride
			stride *= key.k0
		}
		p.rowCorner[r], p.rowOff[r] = int32(corner), int32(off)
	}
	p.scale = make([]float32, kl)
	p.ones = make([]float32, kl)
	for j := range p.scale {
		c := 2.0
		if f := freqs[j]; f == 0 || 2*f == nl {
			c = 1
		}
		p.scale[j] = float32(c / float64(ntot))
		p.ones[j] = 1
	}
	return p
}

// spectralWork is the scratch of one SpectralConv call, reused across calls.
type spectralWork struct {
	t1, t2     []float32 // transform stages (ping-pong)
	xh, gh, zh []float32 // spectra [fields][modes] complex
	rh, dh     []float32 // the low-rank mixing's R-channel spectra
	// pool holds the per-chunk scratch of the channel mixing. At most
	// Backend.threads chunks run at once, so it settles at that many
	// buffers.
	pool chan []float32
}

// take returns a scratch buffer of n floats for one parallel chunk.
func (w *spectralWork) take(n int) []float32 {
	var buf []float32
	select {
	case buf = <-w.pool:
	default:
	}
	if cap(buf) < n {
		buf = make([]float32, n)
	}
	return buf[:n]
}

// give returns a buffer obtained from take.
func (w *spectralWork) give(buf []float32) {
	select {
	case w.pool <- buf:
	default:
	}
}

// spectralCache is the Backend's SpectralConv state: plans per (grid, K0)
// and a free list of scratch workspaces (one per concurrent call).
type spectralCache struct {
	mu    sync.Mutex
	plans map[spectralKey]*spectralPlan
	free  []*spectralWork
	// portable forces the plain-Go kernels even where the C ones are
	// built; tests use it to check the fast path against the plain one.
	portable bool
	// mixCap, when positive, caps the ISA level of the C channel mixing
	// at mixCap-1 (1: baseline, 2: AVX2, 3: AVX-512); 0 runs the widest
	// the CPU has. BenchmarkSpectralConvMixLevels compares the levels.
	mixCap int
}

func (c *spectralCache) acquire(key spectralKey, freqs []int, threads int) (*spectralPlan, *spectralWork) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.plans == nil {
		c.plans = make(map[spectralKey]*spectralPlan)
	}
	p := c.plans[key]
	if p == nil {
		p = newSpectralPlan(key, freqs)
		c.plans[key] = p
	}
	var w *spectralWork
	if n := len(c.free); n > 0 {
		w, c.free = c.free[n-1], c.free[:n-1]
	} else {
		w = &spectralWork{pool: make(chan []float32, threads)}
	}
	return p, w
}

func (c *spectralCache) release(w *spectralWork) {
	c.mu.Lock()
	c.free = append(c.free, w)
	c.mu.Unlock()
}

// specGrow returns (*buf)[:n], reallocating only when the capacity is short.
func specGrow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	return (*buf)[:n]
}

// spectralSetup checks the call and returns its plan and a workspace whose
// transform scratch fits B*chans fields, keeping the last-axis
// frequencies freqs; ok is false when no mode is kept (an empty list, an
// axis of length 1 or K0 = 0).
func (b *Backend) spectralSetup(op string, x *tensor.Tensor, chans, k0 int, freqs []int) (*spectralPlan, *spectralWork, bool) {
	d := x.Dims()
	if d < 1 || d > 3 {
		panic(fmt.Sprintf("cpu: %s: %d spatial axes, want 1 to 3", op, d))
	}
	if k0 < 0 {
		panic(fmt.Sprintf("cpu: %s: negative K0 %d", op, k0))
	}
	key := spectralKey{d: d, k0: k0, modes: modesKey(freqs)}
	ok := true
	for a, n := range x.Spatial() {
		key.n[a] = n
		if tensor.ModeCap(k0, n) == 0 {
			ok = false
		}
	}
	if err := tensor.CheckModes(freqs, k0, key.n[d-1]); err != nil {
		panic(fmt.Sprintf("cpu: %s: %v", op, err))
	}
	if !ok || len(freqs) == 0 {
		return nil, nil, false
	}
	p, ws := b.spec.acquire(key, freqs, b.threads)
	fields := x.Batch() * chans
	ws.t1 = specGrow(&ws.t1, fields*p.outer*2*p.k[d-1])
	ws.t2 = specGrow(&ws.t2, fields*p.outer*2*p.k[d-1])
	return p, ws, true
}

// SpectralConv implements tensor.Backend: y = R(D . Mix_W(T x)) (see the
// top of this file); w is [2^(d-1), Cin, Cout, K0..., 2], its last mode
// axis read at slots j < len(modes).
func (b *Backend) SpectralConv(y, x, w *tensor.Tensor, k0 int, modes []int) {
	Y := data(y)
	p, ws, ok := b.spectralSetup("SpectralConv", x, max(x.Channels(), w.Shape[2]), k0, modes)
	if !ok {
		clear(Y)
		return
	}
	defer b.spec.release(ws)
	nb, cin, cout := x.Batch(), x.Channels(), y.Channels()
	M := p.modes

	xh := specGrow(&ws.xh, nb*cin*M*2)
	b.spectralT(p, ws, xh, data(x), nb*cin)
	// zh[b,o] = D sum_i xh[b,i] w[i,o], row by row of modes.
	zh := specGrow(&ws.zh, nb*cout*M*2)
	b.mixRows(p, ws, cin, cout, nb, cout, cin,
		mixArg{data: xh, su: cin * M * 2, sv: M * 2, spectrum: true},
		mixArg{data: data(w), su: cout * p.kvol * 2, sv: p.kvol * 2},
		mixArg{data: zh, su: cout * M * 2, sv: M * 2, spectrum: true}, false)
	b.spectralR(p, ws, Y, zh, nb*cout, false)
}

// SpectralConvBackward implements tensor.Backend (see the top of this
// file for the derivation): with G = T dy,
// dx += R(D . sum_o G[.,o] conj(W[.,o])) and
// dw[corner, i, o, mode] += D . sum_b conj(T x)[b,i] G[b,o].
func (b *Backend) SpectralConvBackward(dx, dw, dy, x, w *tensor.Tensor, k0 int, modes []int) {
	if dx == nil && dw == nil {
		return
	}
	p, ws, ok := b.spectralSetup("SpectralConvBackward", x, max(x.Channels(), w.Shape[2]), k0, modes)
	if !ok {
		return
	}
	defer b.spec.release(ws)
	nb, cin, cout := x.Batch(), x.Channels(), dy.Channels()
	M := p.modes

	gh := specGrow(&ws.gh, nb*cout*M*2)
	b.spectralT(p, ws, gh, data(dy), nb*cout)
	if dx != nil {
		// zh[b,i] = D sum_o gh[b,o] conj(w[i,o]).
		zh := specGrow(&ws.zh, nb*cin*M*2)
		b.mixRows(p, ws, cin, cout, nb, cin, cout,
			mixArg{data: gh, su: cout * M * 2, sv: M * 2, spectrum: true},
			mixArg{data: data(w), su: p.kvol * 2, sv: cout * p.kvol * 2, conj: true},
			mixArg{data: zh, su: cin * M * 2, sv: M * 2, spectrum: true}, false)
		b.spectralR(p, ws, data(dx), zh, nb*cin, true)
	}
	if dw != nil {
		// dw[i,o] += D sum_b conj(xh[b,i]) gh[b,o], straight into the
		// kept rows of dw.
		xh := specGrow(&ws.xh, nb*cin*M*2)
		b.spectralT(p, ws, xh, data(x), nb*cin)
		b.mixRows(p, ws, cin, cout, cin, cout, nb,
			mixArg{data: xh, su: M * 2, sv: cin * M * 2, spectrum: true, conj: true},
			mixArg{data: gh, su: cout * M * 2, sv: M * 2, spectrum: true},
			mixArg{data: data(dw), su: cout * p.kvol * 2, sv: p.kvol * 2}, true)
	}
}

// mixArg is a strided operand of the channel mixing: for the mode row g,
// element (u, v) is the vector of K_{d-1} complex numbers (one per
// last-axis mode of the row) starting at data[base(g) + u*su + v*sv],
// where base(g) is the row's position in a [.., modes] spectrum or, for a
// weight (or its gradient) [corner, Cin, Cout, K0...], the row's corner
// and offset. conj conjugates the operand.
type mixArg struct {
	data     []float32
	su, sv   int
	spectrum bool
	conj     bool
}

// mixBase is the offset of mode row g in a's data, for a layer with cin
// inputs and cout outputs.
func (p *spectralPlan) mixBase(a mixArg, g, cin, cout int) int {
	if a.spectrum {
		return g * p.k[p.d-1] * 2
	}
	return (int(p.rowCorner[g])*cin*cout*p.kvol + int(p.rowOff[g])) * 2
}

// mixRows computes, for every mode row g of a layer with cin inputs and
// cout outputs, out[u, v] (+)= D . sum_r a[u, r] . bm[r, v] with u < P,
// v < Q, r < R and . the complex product per last-axis mode: the channel
// mixing of Sec. 3.2 and its two adjoints. The work is split over (row,
// block of v) pairs, so every output element is summed by one call, in
// the fixed order of r.
func (b *Backend) mixRows(p *spectralPlan, ws *spectralWork, cin, cout, P, Q, R int, a, bm, out mixArg, acc bool) {
	b.mixRowsScaled(p, ws, cin, cout, P, Q, R, a, bm, out, acc, p.scale)
}

// mixRowsScaled is mixRows with the per-last-axis-slot factor scale in
// place of D (p.ones: none).
func (b *Backend) mixRowsScaled(p *spectralPlan, ws *spectralWork, cin, cout, P, Q, R int, a, bm, out mixArg, acc bool, scale []float32) {
	// Work items are (row, block of v); rows alone give enough items
	// except in 1D (one row), where v is split into 8 blocks.
	rows := len(p.rowCorner)
	nq := min(Q, (8+rows-1)/rows)
	qb := (Q + nq - 1) / nq
	nq = (Q + qb - 1) / qb
	kl := p.k[p.d-1]
	b.parallel(rows*nq, specGrain(P*R*qb*kl*4), func(lo, hi int) {
		scratch := ws.take(rowmixScratch(P, qb, R, kl))
		defer ws.give(scratch)
		for it := lo; it < hi; it++ {
			g, v0 := it/nq, (it%nq)*qb
			n := min(qb, Q-v0)
			ao := p.mixBase(a, g, cin, cout)
			bo := p.mixBase(bm, g, cin, cout) + v0*bm.sv
			oo := p.mixBase(out, g, cin, cout) + v0*out.sv
			b.rowmix(P, n, R, kl, a.data[ao:], a.su, a.sv, a.conj, bm.data[bo:], bm.su, bm.sv, bm.conj,
				out.data[oo:], out.su, out.sv, scale, acc, scratch)
		}
	})
}

// specGrain is the parallel chunk size for items costing cost
// multiply-adds each: about 2^18 per chunk, enough to hide the scheduling
// and C-call overhead.
func specGrain(cost int) int {
	return max(1, (1<<18)/max(cost, 1))
}

// spectralT writes the kept modes of fields real fields src [fields][N...]
// into dst [fields][modes] (complex): the truncated, unnormalised rfftn.
func (b *Backend) spectralT(p *spectralPlan, ws *spectralWork, dst, src []float32, fields int) {
	last := p.d - 1
	ax := p.axes[last]
	nl, kl := ax.n, ax.k
	rows := fields * p.outer
	out := dst
	if p.d > 1 {
		out = ws.t1
	}
	b.parallel(rows, specGrain(nl*2*kl), func(lo, hi int) {
		b.sgemm(hi-lo, 2*kl, nl, src[lo*nl:], nl, ax.fwd, 2*kl, out[lo*2*kl:], 2*kl, false)
	})
	cur, other := ws.t1, ws.t2
	for a := last - 1; a >= 0; a-- {
		ax := p.axes[a]
		pre, post := p.split(fields, a)
		out := other
		if a == 0 {
			out = dst
		}
		n, m := ax.n, 2*ax.k
		b.parallel(pre, specGrain(m*n*post*4), func(lo, hi int) {
			for q := lo; q < hi; q++ {
				b.cgemm(m, n, post, ax.fwdc, n, cur[q*n*post*2:], post, out[q*m*post*2:], post, false)
			}
		})
		cur, other = out, cur
	}
}

// spectralR maps spectra src [fields][modes] to real fields dst
// [fields][N...]: dst (+)= Re sum_k src_k exp(+i theta(k, n)), the
// unnormalised inverse restricted to the kept modes and the adjoint of
// spectralT.
func (b *Backend) spectralR(p *spectralPlan, ws *spectralWork, dst, src []float32, fields int, acc bool) {
	last := p.d - 1
	cur, other := src, ws.t1
	for a := 0; a < last; a++ {
		ax := p.axes[a]
		pre, post := p.split(fields, a)
		out := other
		n, m := ax.n, 2*ax.k
		b.parallel(pre, specGrain(m*n*post*4), func(lo, hi int) {
			for q := lo; q < hi; q++ {
				b.cgemm(n, m, post, ax.invc, m, cur[q*m*post*2:], post, out[q*n*post*2:], post, false)
			}
		})
		if a == 0 {
			cur, other = out, ws.t2
		} else {
			cur, other = out, cur
		}
	}
	ax := p.axes[last]
	nl, kl := ax.n, ax.k
	b.parallel(fields*p.outer, specGrain(nl*2*kl), func(lo, hi int) {
		b.sgemm(hi-lo, nl, 2*kl, cur[lo*2*kl:], 2*kl, ax.inv, nl, dst[lo*nl:], nl, acc)
	})
}

// split returns, for the stage along full axis a, the number of
// independent (field, earlier axes) slabs and the number of complex values
// after axis a: the data is [pre][axis a][post] with the later full axes
// already (or still) in mode space and the last axis in mode space.
func (p *spectralPlan) split(fields, a int) (pre, post int) {
	pre = fields
	for c := 0; c < a; c++ {
		pre *= p.n[c]
	}
	post = p.k[p.d-1]
	for c := a + 1; c < p.d-1; c++ {
		post *= 2 * p.k[c]
	}
	return pre, post
}

// sgemm computes c = a bm (c += a bm when acc) for row-major real
// matrices a [m x k] (row stride lda), bm [k x n] (ldb) and c [m x n]
// (ldc), with the C kernel where it is built.
func (b *Backend) sgemm(m, n, k int, a []float32, lda int, bm []float32, ldb int, c []float32, ldc int, acc bool) {
	if specHaveC && !b.spec.portable {
		sgemmC(m, n, k, a, lda, bm, ldb, c, ldc, acc)
		return
	}
	sgemmGo(m, n, k, a, lda, bm, ldb, c, ldc, acc)
}

// cgemm computes out = g in (out += g in when acc) for complex matrices
// stored interleaved (re, im): g [m x n], in [n x p], out [m x p]; the
// strides ldg, ldi, ldo count complex numbers.
func (b *Backend) cgemm(m, n, p int, g []float32, ldg int, in []float32, ldi int, out []float32, ldo int, acc bool) {
	if specHaveC && !b.spec.portable {
		cgemmC(m, n, p, g, ldg, in, ldi, out, ldo, acc)
		return
	}
	cgemmGo(m, n, p, g, ldg, in, ldi, out, ldo, acc)
}

// rowmix computes out[u, v, :] = scale . sum_r a[u, r, :] . bm[r, v, :]
// (out += when acc) for u < P, v < Q, r < R, where each element is a
// vector of L interleaved complex numbers, . is the complex product per
// lane, the strides (in floats) are au, ar for a, br, bv for bm and ou, ov
// for out, and conja, conjb conjugate a and bm. It is the channel mixing
// of one row of modes, with the C kernel where it is built.
func (b *Backend) rowmix(P, Q, R, L int, a []float32, au, ar int, conja bool, bm []float32, br, bv int, conjb bool,
	out []float32, ou, ov int, scale []float32, acc bool, scratch []float32) {
	if specHaveC && !b.spec.portable {
		if b.spec.mixCap > 0 && rowmixLevel(b.spec.mixCap-1, P, Q, R, L, a, au, ar, conja, bm, br, bv, conjb, out, ou, ov, scale, acc, scratch) {
			return
		}
		rowmixC(P, Q, R, L, a, au, ar, conja, bm, br, bv, conjb, out, ou, ov, scale, acc, scratch)
		return
	}
	rowmixGo(P, Q, R, L, a, au, ar, conja, bm, br, bv, conjb, out, ou, ov, scale, acc)
}

// sgemmGo is the plain-Go sgemm: each row of c is a sequence of axpy
// updates with the rows of bm.
func sgemmGo(m, n, k int, a []float32, lda int, bm []float32, ldb int, c []float32, ldc int, acc bool) {
	for i := 0; i < m; i++ {
		ci := c[i*ldc:][:n]
		if !acc {
			clear(ci)
		}
		for p, av := range a[i*lda:][:k] {
			axpy(ci, bm[p*ldb:][:n], av)
		}
	}
}

// cgemmGo is the plain-Go cgemm: each row of out is a sequence of complex
// axpy updates with the rows of in.
func cgemmGo(m, n, p int, g []float32, ldg int, in []float32, ldi int, out []float32, ldo int, acc bool) {
	for i := 0; i < m; i++ {
		oi := out[2*i*ldo:][:2*p]
		if !acc {
			clear(oi)
		}
		gi := g[2*i*ldg:][:2*n]
		for j := 0; j < n; j++ {
			caxpy(oi, in[2*j*ldi:][:2*p], gi[2*j], gi[2*j+1])
		}
	}
}

// caxpy computes y += (ar + i ai) x for interleaved complex vectors.
func caxpy(y, x []float32, ar, ai float32) {
	x = x[:len(y)]
	for q := 0; q+1 < len(y); q += 2 {
		xr, xi := x[q], x[q+1]
		y[q] += ar*xr - ai*xi
		y[q+1] += ar*xi + ai*xr
	}
}

// rowmixGo is the plain-Go rowmix.
func rowmixGo(P, Q, R, L int, a []float32, au, ar int, conja bool, bm []float32, br, bv int, conjb bool,
	out []float32, ou, ov int, scale []float32, acc bool) {
	sa, sb := float32(1), float32(1)
	if conja {
		sa = -1
	}
	if conjb {
		sb = -1
	}
	for u := 0; u < P; u++ {
		for v := 0; v < Q; v++ {
			o := out[u*ou+v*ov:][:2*L]
			for l, s := range scale[:L] {
				var re, im float32
				for r := 0; r < R; r++ {
					x := a[u*au+r*ar+2*l:][:2]
					y := bm[r*br+v*bv+2*l:][:2]
					xr, xi, yr, yi := x[0], sa*x[1], y[0], sb*y[1]
					re += xr*yr - xi*yi
					im += xr*yi + xi*yr
				}
				if acc {
					o[2*l] += s * re
					o[2*l+1] += s * im
				} else {
					o[2*l], o[2*l+1] = s*re, s*im
				}
			}
		}
	}
}
