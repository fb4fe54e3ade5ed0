package eval

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Band indices of BandErrors' result.
const (
	BandLow = iota
	BandMid
	BandHigh
)

// spectrum computes the binned spectral error of frames on one grid. It
// keeps the transform buffers and the band of every Fourier mode, so one
// spectrum serves a whole trajectory; it is not safe for concurrent use.
//
// Each channel's fields are transformed with a real FFT along the last
// axis (the half spectrum, m = 0..N/2) and complex FFTs along the others;
// a mode with 0 < m < N-m stands for itself and its mirror -k, which
// carries the same energy and lies in the same band, so it is counted
// twice (weight 2), m = 0 and m = N/2 once.
type spectrum struct {
	shape []int
	half  int          // last-axis half length N/2 + 1
	code  []uint8      // per half-spectrum mode: band | weight<<2
	d, t  []complex128 // spectra of the error and the truth, one channel
}

// newSpectrum precomputes the band of every mode of g's grid. Wavenumbers
// are the integer DFT frequencies per axis (k = m for m <= N/2, m - N
// above), |k| their Euclidean length and K = min_d floor(N_d/2) the Nyquist
// radius; the bands are thirds of [0, K]:
//
//	low   |k| <  K/3        (k = 0 included)
//	mid   K/3 <= |k| < 2K/3
//	high  |k| >= 2K/3       (the corner modes beyond K included)
//
// compared exactly in integers as 9|k|^2 against K^2 and 4K^2.
func newSpectrum(g Grid) *spectrum {
	D := len(g.Shape)
	nl := g.Shape[D-1]
	s := &spectrum{shape: append([]int(nil), g.Shape...), half: nl/2 + 1}
	K := g.Shape[0] / 2
	for _, n := range g.Shape {
		K = min(K, n/2)
	}
	K2 := K * K
	size := s.half
	for _, n := range g.Shape[:D-1] {
		size *= n
	}
	s.code = make([]uint8, size)
	idx := make([]int, D)
	for f := range s.code {
		// Multi-index of mode f in the [N_0, ..., N_{D-2}, half] layout.
		r := f
		for a := D - 1; a >= 0; a-- {
			n := s.half
			if a < D-1 {
				n = g.Shape[a]
			}
			idx[a] = r % n
			r /= n
		}
		r2 := 0
		for a, m := range idx {
			k := m
			if a < D-1 && m > g.Shape[a]/2 {
				k = m - g.Shape[a]
			}
			r2 += k * k
		}
		band := uint8(BandHigh)
		switch {
		case 9*r2 < K2:
			band = BandLow
		case 9*r2 < 4*K2:
			band = BandMid
		}
		w := uint8(2)
		if m := idx[D-1]; m == 0 || 2*m == nl {
			w = 1
		}
		s.code[f] = band | w<<2
	}
	s.d = make([]complex128, size)
	s.t = make([]complex128, size)
	return s
}

// parallelFor runs fn over [0, n) split into one contiguous chunk per
// available CPU, or in the calling goroutine when the work (n items of
// cost each) is small. Each chunk's result must not depend on the split.
func parallelFor(n, cost int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 || n*cost < 1<<16 {
		fn(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// transform fills s.d and s.t with the spectra of pred-truth and truth of
// one channel (P values each). The DFT is unnormalised; only ratios of
// energies are used.
func (s *spectrum) transform(pred, truth []float32) {
	D := len(s.shape)
	nl := s.shape[D-1]
	lines := len(s.d) / s.half
	parallelFor(lines, nl, func(lo, hi int) {
		plan := fourier.NewFFT(nl)
		bd, bt := make([]float64, nl), make([]float64, nl)
		for l := lo; l < hi; l++ {
			p, t := pred[l*nl:(l+1)*nl], truth[l*nl:(l+1)*nl]
			for i := range p {
				bt[i] = float64(t[i])
				bd[i] = float64(p[i]) - bt[i]
			}
			plan.Coefficients(s.d[l*s.half:(l+1)*s.half], bd)
			plan.Coefficients(s.t[l*s.half:(l+1)*s.half], bt)
		}
	})
	// The other axes of the [N_0, ..., N_{D-2}, half] array.
	layout := append(append([]int(nil), s.shape[:D-1]...), s.half)
	for a := 0; a < D-1; a++ {
		outer, n, inner := axisLayout(layout, a)
		// Lines are taken in blocks of up to 8 neighbours along the inner
		// axis so that each strided gather reads whole cache lines.
		const blk = 8
		nb := (inner + blk - 1) / blk
		parallelFor(outer*nb, n*blk, func(lo, hi int) {
			plan := fourier.NewCmplxFFT(n)
			buf := make([]complex128, blk*n)
			for q := lo; q < hi; q++ {
				o, j0 := q/nb, (q%nb)*blk
				w := min(blk, inner-j0)
				base := o*n*inner + j0
				for _, arr := range [2][]complex128{s.d, s.t} {
					for i := 0; i < n; i++ {
						row := arr[base+i*inner:][:w]
						for j, v := range row {
							buf[j*n+i] = v
						}
					}
					for j := 0; j < w; j++ {
						line := buf[j*n : (j+1)*n]
						plan.Coefficients(line, line)
					}
					for i := 0; i < n; i++ {
						row := arr[base+i*inner:][:w]
						for j := range row {
							row[j] = buf[j*n+i]
						}
					}
				}
			}
		})
	}
}

// accumulate adds the weighted band energies of the current spectra:
// num[b] += sum |D(k)|^2, den[b] += sum |U(k)|^2 over the modes of band b.
// Sequential, so the sums do not depend on the number of CPUs.
func (s *spectrum) accumulate(num, den *[3]float64) {
	for f, c := range s.code {
		w := float64(c >> 2)
		b := c & 3
		d, t := s.d[f], s.t[f]
		num[b] += w * (real(d)*real(d) + imag(d)*imag(d))
		den[b] += w * (real(t)*real(t) + imag(t)*imag(t))
	}
}

// BandSum holds the two sums of E_b for each band: Num[b] = sum over the
// band's modes of |Û(k)-U(k)|^2 and Den[b] = sum of |U(k)|^2, of one frame
// or, added up, of several. Its Errors are E_b of one frame or, for a
// sum over frames and trajectories, the pooled E_b (docs/DECISIONS.md,
// D-band-pooled).
type BandSum struct {
	Num, Den [3]float64
}

// Add returns the band-wise sum of s and o.
func (s BandSum) Add(o BandSum) BandSum {
	for b := range s.Num {
		s.Num[b] += o.Num[b]
		s.Den[b] += o.Den[b]
	}
	return s
}

// Errors returns Num[b] / Den[b] per band (0 for 0/0, NaN for a numerator
// over a zero denominator: relative).
func (s BandSum) Errors() [3]float64 {
	var e [3]float64
	for b := range e {
		e[b] = relative(s.Num[b], s.Den[b])
	}
	return e
}

// sums returns the band sums of a frame on the spectrum's grid with
// channels channels.
func (s *spectrum) sums(channels int, pred, truth []float32) BandSum {
	P := len(pred) / channels
	var bs BandSum
	for c := 0; c < channels; c++ {
		s.transform(pred[c*P:(c+1)*P], truth[c*P:(c+1)*P])
		s.accumulate(&bs.Num, &bs.Den)
	}
	return bs
}

// BandErrors is the binned spectral error of the paper (App. "Evaluation
// Metrics"),
//
//	E_b(û,u) = sum_{k in K_b} |Û(k)-U(k)|^2 / sum_{k in K_b} |U(k)|^2,
//
// for B = 3 bands, indexed BandLow, BandMid, BandHigh: thirds of the
// Nyquist radius K = min_d floor(N_d/2) in integer wavenumbers (see
// newSpectrum; the corners of the spectrum beyond K belong to the high
// band). Each channel is transformed on its own and the numerator and the
// denominator are summed over channels before the division, so a
// multi-channel frame is one field, as in RelL2. A band without truth
// energy gives 0 when the error has none there either, NaN otherwise
// (undefined; means in this package skip NaN).
func BandErrors(g Grid, pred, truth []float32) [3]float64 {
	g.mustFrame(pred, truth)
	return newSpectrum(g).sums(g.Channels, pred, truth).Errors()
}
