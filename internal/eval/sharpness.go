package eval

import (
	"fmt"
	"math"
	"slices"
)

// Sharpness measures how much of a field lies in sharp, localised
// features (issue 20, "Three Burgers regimes"): the share of its spectral
// energy in each band of BandErrors, and its largest one-cell jump.
type Sharpness struct {
	// Share is the fraction of sum |U(k)|^2 in BandLow, BandMid and
	// BandHigh (thirds of the Nyquist radius K; in 1D low is k < N/6 of
	// the rfft range 0..N/2); the three sum to 1. The energy is that of
	// the field as given, mean included. Read from float32 data, shares
	// below about 1e-14 are rounding, not signal.
	Share [3]float64
	// Jump is the largest difference between neighbouring grid points,
	// along any axis (wrapped on a periodic grid), over the field's range
	// max - min: near 0 for a smooth field on a fine grid, near 1 where a
	// front crosses the whole range within one cell. 0 for a constant
	// field. Channels are taken one at a time and the largest counts.
	Jump float64
}

// SharpnessMeter computes Sharpness frame by frame on one grid and keeps
// the mean over the frames added. It reuses its transform buffers, so it
// is not safe for concurrent use.
type SharpnessMeter struct {
	g       Grid
	spec    *spectrum
	frames  int
	sum     Sharpness
	maxJump float64
}

// NewSharpnessMeter returns a meter for frames on g.
func NewSharpnessMeter(g Grid) *SharpnessMeter {
	return &SharpnessMeter{g: g, spec: newSpectrum(g)}
}

// Add measures one frame ([channels, grid...], as the other metrics take
// it), adds it to the mean and returns it. A frame of the wrong length
// panics. An all-zero frame has no shares: it adds NaN shares, as a
// relative metric against nothing does.
func (m *SharpnessMeter) Add(frame []float32) Sharpness {
	P := m.g.points()
	if len(frame) != m.g.Channels*P {
		panic(fmt.Sprintf("eval: SharpnessMeter: frame has %d values, want %d channels x %d points", len(frame), m.g.Channels, P))
	}
	var energy, unused [3]float64
	var s Sharpness
	for c := range m.g.Channels {
		f := frame[c*P : (c+1)*P]
		m.spec.transform(f, f)
		m.spec.accumulate(&unused, &energy)
		s.Jump = math.Max(s.Jump, jumpOverRange(m.g, f))
	}
	total := energy[0] + energy[1] + energy[2]
	for b := range s.Share {
		s.Share[b] = energy[b] / total
	}
	m.frames++
	for b := range s.Share {
		m.sum.Share[b] += s.Share[b]
	}
	m.sum.Jump += s.Jump
	m.maxJump = math.Max(m.maxJump, s.Jump)
	return s
}

// Mean returns the mean Sharpness over the frames added, the number of
// frames and the largest Jump of any one frame.
func (m *SharpnessMeter) Mean() (mean Sharpness, frames int, maxJump float64) {
	if m.frames == 0 {
		return Sharpness{}, 0, 0
	}
	n := float64(m.frames)
	for b := range mean.Share {
		mean.Share[b] = m.sum.Share[b] / n
	}
	mean.Jump = m.sum.Jump / n
	return mean, m.frames, m.maxJump
}

// jumpOverRange is Sharpness.Jump of one channel.
func jumpOverRange(g Grid, f []float32) float64 {
	lo, hi := slices.Min(f), slices.Max(f)
	if hi == lo {
		return 0
	}
	jump := 0.0
	for a := range g.Shape {
		outer, n, inner := axisLayout(g.Shape, a)
		for o := range outer {
			for i := range n {
				next := i + 1
				if next == n {
					if !g.Periodic {
						break
					}
					next = 0
				}
				p, q := f[(o*n+i)*inner:][:inner], f[(o*n+next)*inner:][:inner]
				for j := range p {
					jump = math.Max(jump, math.Abs(float64(q[j])-float64(p[j])))
				}
			}
		}
	}
	return jump / (float64(hi) - float64(lo))
}
