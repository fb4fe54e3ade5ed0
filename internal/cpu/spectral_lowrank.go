package cpu

import "uhno/internal/tensor"

// LowRankSpectralConv (F-FNO's spectral convolution) reuses
// SpectralConv's plumbing in spectral.go on the uniform modes
// tensor.FirstModes: the truncated DFTs T and R, the kept-mode layout and
// the row-by-row channel mixing. It mixes in two stages through an
// R-channel spectrum, per kept mode k (the weight of its corner):
//
//	X = T x,  Zr[b,j] = sum_i X[b,i] U[i,j]   (no D)
//	          Z[b,o]  = D sum_j Zr[b,j] V[j,o],   y = R Z.
//
// Backward, by SpectralConv's adjoints (D is real and diagonal, so it
// moves freely): with G = T dy and dZr = D sum_o G[b,o] conj V[j,o],
//
//	dV[j,o] += D sum_b conj(Zr[b,j]) G[b,o]   (Zr recomputed from x)
//	dU[i,j] += sum_b conj(X[b,i]) dZr[b,j]
//	dx      += R(sum_j dZr[b,j] conj U[i,j]).

// lastFirstModes is tensor.FirstModes on x's last axis.
func lastFirstModes(x *tensor.Tensor, k0 int) []int {
	return tensor.FirstModes(k0, x.Shape[len(x.Shape)-1])
}

// lowRankMixU is the first stage, zr[b,j] = sum_i xh[b,i] U[i,j] (no D),
// for a layer Cin -> R.
func (b *Backend) lowRankMixU(p *spectralPlan, ws *spectralWork, zr, xh, u []float32, nb, cin, r int) {
	M := p.modes
	b.mixRowsScaled(p, ws, cin, r, nb, r, cin,
		mixArg{data: xh, su: cin * M * 2, sv: M * 2, spectrum: true},
		mixArg{data: u, su: r * p.kvol * 2, sv: p.kvol * 2},
		mixArg{data: zr, su: r * M * 2, sv: M * 2, spectrum: true}, false, p.ones)
}

// LowRankSpectralConv implements tensor.Backend (see the top of this
// file); u is [2^(d-1), Cin, R, K0..., 2], v [2^(d-1), R, Cout, K0..., 2].
func (b *Backend) LowRankSpectralConv(y, x, u, v *tensor.Tensor, k0 int) {
	Y := data(y)
	nb, cin, r, cout := x.Batch(), x.Channels(), u.Shape[2], y.Channels()
	p, ws, ok := b.spectralSetup("LowRankSpectralConv", x, max(cin, cout), k0, lastFirstModes(x, k0))
	if !ok {
		clear(Y)
		return
	}
	defer b.spec.release(ws)
	M := p.modes
	xh := specGrow(&ws.xh, nb*cin*M*2)
	b.spectralT(p, ws, xh, data(x), nb*cin)
	zr := specGrow(&ws.rh, nb*r*M*2)
	b.lowRankMixU(p, ws, zr, xh, data(u), nb, cin, r)
	zh := specGrow(&ws.zh, nb*cout*M*2)
	b.mixRows(p, ws, r, cout, nb, cout, r,
		mixArg{data: zr, su: r * M * 2, sv: M * 2, spectrum: true},
		mixArg{data: data(v), su: cout * p.kvol * 2, sv: p.kvol * 2},
		mixArg{data: zh, su: cout * M * 2, sv: M * 2, spectrum: true}, false)
	b.spectralR(p, ws, Y, zh, nb*cout, false)
}

// LowRankSpectralConvBackward implements tensor.Backend (see the top of
// this file); nil gradients are skipped.
func (b *Backend) LowRankSpectralConvBackward(dx, du, dv, dy, x, u, v *tensor.Tensor, k0 int) {
	if dx == nil && du == nil && dv == nil {
		return
	}
	nb, cin, r, cout := x.Batch(), x.Channels(), u.Shape[2], dy.Channels()
	p, ws, ok := b.spectralSetup("LowRankSpectralConvBackward", x, max(cin, cout), k0, lastFirstModes(x, k0))
	if !ok {
		return
	}
	defer b.spec.release(ws)
	M := p.modes
	gh := specGrow(&ws.gh, nb*cout*M*2)
	b.spectralT(p, ws, gh, data(dy), nb*cout)
	xh := specGrow(&ws.xh, nb*cin*M*2)
	b.spectralT(p, ws, xh, data(x), nb*cin)
	if dv != nil {
		// dv[j,o] += D sum_b conj(zr[b,j]) gh[b,o].
		zr := specGrow(&ws.rh, nb*r*M*2)
		b.lowRankMixU(p, ws, zr, xh, data(u), nb, cin, r)
		b.mixRows(p, ws, r, cout, r, cout, nb,
			mixArg{data: zr, su: M * 2, sv: r * M * 2, spectrum: true, conj: true},
			mixArg{data: gh, su: cout * M * 2, sv: M * 2, spectrum: true},
			mixArg{data: data(dv), su: cout * p.kvol * 2, sv: p.kvol * 2}, true)
	}
	if dx == nil && du == nil {
		return
	}
	// dzr[b,j] = D sum_o gh[b,o] conj(v[j,o]).
	dzr := specGrow(&ws.dh, nb*r*M*2)
	b.mixRows(p, ws, r, cout, nb, r, cout,
		mixArg{data: gh, su: cout * M * 2, sv: M * 2, spectrum: true},
		mixArg{data: data(v), su: p.kvol * 2, sv: cout * p.kvol * 2, conj: true},
		mixArg{data: dzr, su: r * M * 2, sv: M * 2, spectrum: true}, false)
	if du != nil {
		// du[i,j] += sum_b conj(xh[b,i]) dzr[b,j] (D is in dzr).
		b.mixRowsScaled(p, ws, cin, r, cin, r, nb,
			mixArg{data: xh, su: M * 2, sv: cin * M * 2, spectrum: true, conj: true},
			mixArg{data: dzr, su: r * M * 2, sv: M * 2, spectrum: true},
			mixArg{data: data(du), su: r * p.kvol * 2, sv: p.kvol * 2}, true, p.ones)
	}
	if dx != nil {
		// dxh[b,i] = sum_j dzr[b,j] conj(u[i,j]); dx += R dxh.
		zh := specGrow(&ws.zh, nb*cin*M*2)
		b.mixRowsScaled(p, ws, cin, r, nb, cin, r,
			mixArg{data: dzr, su: r * M * 2, sv: M * 2, spectrum: true},
			mixArg{data: data(u), su: p.kvol * 2, sv: r * p.kvol * 2, conj: true},
			mixArg{data: zh, su: cin * M * 2, sv: M * 2, spectrum: true}, false, p.ones)
		b.spectralR(p, ws, data(dx), zh, nb*cin, true)
	}
}
