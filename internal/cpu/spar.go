package cpu

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"uhno/internal/tensor"
)

// TopKMask implements tensor.Backend: per sample, ones at the k[b] largest
// scores (ties to the lower flat index), zeros elsewhere.
func (b *Backend) TopKMask(mask, s *tensor.Tensor, k []int) {
	M, S := data(mask), data(s)
	n := s.SpatialSize()
	b.parallel(s.Batch(), 1, func(lo, hi int) {
		scratch := make([]float32, n)
		for bi := lo; bi < hi; bi++ {
			topKInto(M[bi*n:][:n], S[bi*n:][:n], k[bi], scratch)
		}
	})
}

// topKInto writes the top-k mask of scores into mask, using scratch (len n)
// to find the k-th largest value t, the value a sort of the scores puts at
// position n-k (found by selection in a copy, in linear time on average;
// any algorithm finds the same value): every score above t is kept, then
// scores equal to t in index order until k are kept. NaN scores order
// first (smallest, as slices.Sort orders them) and are kept only when k
// exceeds the number of other scores.
func topKInto(mask, scores []float32, k int, scratch []float32) {
	clear(mask)
	if k <= 0 {
		return
	}
	copy(scratch, scores)
	keepTopK(mask, scores, k, selectNth(scratch, len(scores)-k))
}

// keepTopK sets mask (cleared) to ones at the k scores of the top-k rule
// given the k-th largest value t: every score above t, then scores equal
// to t in index order until k are kept; with t NaN, every number and then
// NaNs in index order.
func keepTopK(mask, scores []float32, k int, t float32) {
	kept := 0
	if t != t {
		// k reaches into the NaNs, which sort smallest: keep every number,
		// then NaNs in index order until k are kept.
		for i, v := range scores {
			if v == v {
				mask[i] = 1
				kept++
			}
		}
		for i, v := range scores {
			if kept == k {
				break
			}
			if v != v {
				mask[i] = 1
				kept++
			}
		}
		return
	}
	for i, v := range scores {
		if v > t {
			mask[i] = 1
			kept++
		}
	}
	for i, v := range scores {
		if kept == k {
			break
		}
		if v == t || (v != v && t != t) {
			mask[i] = 1
			kept++
		}
	}
}

// selectNth returns the value at index i of v in slices.Sort's order (NaN
// before every number), reordering v: Hoare partitions around a median of
// three, on the side holding i, falling back to sorting the remaining
// range after 2 log2(n) rounds (so the worst case stays n log n).
func selectNth(v []float32, i int) float32 {
	lo, hi := 0, len(v)-1
	for budget := 2 * bits.Len(uint(len(v))); hi-lo > 16; budget-- {
		if budget == 0 {
			slices.Sort(v[lo : hi+1])
			return v[i]
		}
		// Median of three as the pivot value.
		m := lo + (hi-lo)/2
		a, b, c := v[lo], v[m], v[hi]
		if cmp.Less(b, a) {
			a, b = b, a
		}
		if cmp.Less(c, b) {
			b = c
			if cmp.Less(b, a) {
				b = a
			}
		}
		p := b
		l, r := lo, hi
		for l <= r {
			for cmp.Less(v[l], p) {
				l++
			}
			for cmp.Less(p, v[r]) {
				r--
			}
			if l <= r {
				v[l], v[r] = v[r], v[l]
				l++
				r--
			}
		}
		// v[lo..r] <= p <= v[l..hi], and v[r+1..l-1] == p.
		switch {
		case i <= r:
			hi = r
		case i >= l:
			lo = l
		default:
			return v[i]
		}
	}
	slices.Sort(v[lo : hi+1])
	return v[i]
}

// SPARKeep implements tensor.Backend (Eq. spar-rho): per sample,
// c = std(s)/(mean|s| + eps) (unbiased std unless p says otherwise), rho = clip(rho0 (1 +
// beta tanh(c-1)), rho_min, rho_max), k = ceil(rho N) clamped to [1, N],
// and the top-k mask. stats[b] = (c, rho, k).
func (b *Backend) SPARKeep(hard, stats, s *tensor.Tensor, p tensor.SPARParams) {
	H, ST, S := data(hard), data(stats), data(s)
	n := s.SpatialSize()
	b.parallel(s.Batch(), 1, func(lo, hi int) {
		scratch := make([]float32, n)
		for bi := lo; bi < hi; bi++ {
			sc := S[bi*n:][:n]
			c, rho, k := keepRatio(sc, p)
			ST[bi*3], ST[bi*3+1], ST[bi*3+2] = c, rho, float32(k)
			topKInto(H[bi*n:][:n], sc, k, scratch)
		}
	})
}

// keepRatio evaluates Eq. spar-rho for one sample's scores, in float64.
func keepRatio(s []float32, p tensor.SPARParams) (c, rho float32, k int) {
	n := len(s)
	var sum, sumAbs float64
	for _, v := range s {
		sum += float64(v)
		sumAbs += math.Abs(float64(v))
	}
	mean := sum / float64(n)
	var q float64
	for _, v := range s {
		d := float64(v) - mean
		q += d * d
	}
	div := float64(n)
	if p.UnbiasedStd {
		div = float64(n - 1)
	}
	std := 0.0
	if div > 0 {
		std = math.Sqrt(q / div)
	}
	c64 := std / (sumAbs/float64(n) + p.Eps)
	r := p.Rho0 * (1 + p.Beta*math.Tanh(c64-1))
	r = math.Min(math.Max(r, p.RhoMin), p.RhoMax)
	c, rho = float32(c64), float32(r)
	k = CeilKeep(r, n)
	return c, rho, k
}

// CeilKeep is k = ceil(rho N) of Alg. 1, evaluated in float64 with a
// 1e-9 tolerance so that a product that is an integer up to rounding (rho =
// 0.1, N = 10) is not bumped to the next integer; k is clamped to [1, N].
func CeilKeep(rho float64, n int) int {
	k := int(math.Ceil(rho*float64(n) - 1e-9))
	return max(1, min(k, n))
}

// SPARRoute implements tensor.Backend: r = zF where hard = 1, zG elsewhere.
func (b *Backend) SPARRoute(r, zF, zG, hard *tensor.Tensor) {
	R, F, G, H := data(r), data(zF), data(zG), data(hard)
	c, sp := zF.Channels(), zF.SpatialSize()
	b.parallel(zF.Batch()*c, grainFor(sp), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			bi := j / c
			h := H[bi*sp:][:sp]
			rr, f, g := R[j*sp:][:sp], F[j*sp:][:sp], G[j*sp:][:sp]
			for i := range rr {
				rr[i] = g[i] + h[i]*(f[i]-g[i])
			}
		}
	})
}

// SPARRouteBackward implements tensor.Backend (App. A.1):
// direct path dzF += g dr, dzG += (1-g) dr with g = hard (Eq.
// spar-direct); score path ds += sum_c dr (zF - zG) sigmoid'((s - tau)/T) / T
// (Eq. spar-score-grad) with tau = 0, or with centre CentreThreshold the
// sample's threshold tau_k (sparThreshold).
func (b *Backend) SPARRouteBackward(dzF, dzG, ds, dr, zF, zG, hard, s *tensor.Tensor, temperature float32, centre tensor.SurrogateCentre) {
	DR, F, G, H := data(dr), data(zF), data(zG), data(hard)
	c, sp := zF.Channels(), zF.SpatialSize()
	if dzF != nil || dzG != nil {
		DF, DG := data(dzF), data(dzG)
		b.parallel(zF.Batch()*c, grainFor(sp), func(lo, hi int) {
			for j := lo; j < hi; j++ {
				h := H[(j/c)*sp:][:sp]
				d := DR[j*sp:][:sp]
				if DF != nil {
					df := DF[j*sp:][:sp]
					for i := range df {
						df[i] += h[i] * d[i]
					}
				}
				if DG != nil {
					dg := DG[j*sp:][:sp]
					for i := range dg {
						dg[i] += (1 - h[i]) * d[i]
					}
				}
			}
		})
	}
	if ds != nil {
		DS, S := data(ds), data(s)
		b.parallel(zF.Batch(), 1, func(lo, hi int) {
			acc := make([]float32, sp)
			for bi := lo; bi < hi; bi++ {
				clear(acc)
				for ch := 0; ch < c; ch++ {
					off := (bi*c + ch) * sp
					d, f, g := DR[off:][:sp], F[off:][:sp], G[off:][:sp]
					for i := range acc {
						acc[i] += d[i] * (f[i] - g[i])
					}
				}
				dsr, sr := DS[bi*sp:][:sp], S[bi*sp:][:sp]
				thr := centre == tensor.CentreThreshold
				var tau float32
				if thr {
					tau = sparThreshold(sr, H[bi*sp:][:sp])
				}
				for i := range dsr {
					v := sr[i]
					if thr {
						v -= tau
					}
					sg := sigmoid(v / temperature)
					dsr[i] += acc[i] * sg * (1 - sg) / temperature
				}
			}
		})
	}
}

// sparThreshold is the hard decision's threshold tau_k of one sample: the
// smallest score s among the pixels with hard = 1, which is the k-th
// largest score (ties at the threshold share its value). NaN scores are
// skipped; it is 0 when no other pixel is kept (SPARKeep always keeps
// k >= 1).
func sparThreshold(s, hard []float32) float32 {
	tau, any := float32(0), false
	for i, h := range hard {
		if v := s[i]; h != 0 && v == v && (!any || v < tau) {
			tau, any = s[i], true
		}
	}
	return tau
}
