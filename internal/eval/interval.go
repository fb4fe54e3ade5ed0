package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval is a point estimate with a two-sided confidence interval.
type Interval struct {
	// Mean is the point estimate: the sample mean for Bootstrap, the
	// observed proportion k/n for Wilson.
	Mean, Low, High float64
	// N is the number of observations behind it: the values used (NaN
	// skipped) for Bootstrap, the trials n for Wilson.
	N int
}

// String formats the interval as "mean [low, high] (n=N)".
func (iv Interval) String() string {
	return fmt.Sprintf("%.4g [%.4g, %.4g] (n=%d)", iv.Mean, iv.Low, iv.High, iv.N)
}

// The paper's interval settings (App. "Bootstrap Confidence Intervals"):
// B = 10,000 resamples, 95% level.
const (
	DefaultResamples = 10000
	DefaultLevel     = 0.95
)

// bootstrapStream separates the bootstrap's random stream from other uses
// of the same seed (PCG's second word).
const bootstrapStream = 0xb007_5742_0000_0001

// mustLevel panics unless 0 < level < 1.
func mustLevel(level float64) {
	if !(level > 0 && level < 1) {
		panic(fmt.Sprintf("eval: confidence level %g, want 0 < level < 1", level))
	}
}

// Bootstrap is the percentile bootstrap interval of the mean of values (one
// value per test trajectory; paper App. "Bootstrap Confidence Intervals":
// B = 10,000 resamples, 95%). Each of the resamples draws len(values)
// values with replacement and takes their mean; Low and High are the
// (1-level)/2 and (1+level)/2 quantiles of those means, interpolated
// linearly between order statistics (numpy's default, Hyndman and Fan's
// type 7). The draws come from a PCG generator seeded by seed, so the same
// values, resamples and seed give the same interval bit for bit.
//
// NaN values are skipped before resampling: they are undefined relative
// errors and the trajectory means of crashed rollouts
// (TrajectoryMetrics.Mean), which the crash rate reports instead. N counts
// the values used. ±Inf values are kept (and give an infinite mean). With
// no value left the interval is all NaN; with one it has zero width.
// resamples < 1 or a level outside (0, 1) panics.
func Bootstrap(values []float64, resamples int, level float64, seed uint64) Interval {
	mustLevel(level)
	if resamples < 1 {
		panic(fmt.Sprintf("eval: %d bootstrap resamples, want >= 1", resamples))
	}
	x := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			x = append(x, v)
		}
	}
	n := len(x)
	if n == 0 {
		return Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	mean := sumInOrder(x) / float64(n)
	if n == 1 {
		return Interval{Mean: mean, Low: mean, High: mean, N: 1}
	}
	rng := rand.New(rand.NewPCG(seed, bootstrapStream))
	means := make([]float64, resamples)
	for b := range means {
		var s float64
		for range n {
			s += x[rng.IntN(n)]
		}
		means[b] = s / float64(n)
	}
	slices.Sort(means)
	alpha := (1 - level) / 2
	return Interval{Mean: mean, Low: quantile7(means, alpha), High: quantile7(means, 1-alpha), N: n}
}

// RatioBootstrap is the percentile bootstrap interval of a ratio of sums,
// sum(num) / sum(den), over pairs (num[i], den[i]), one pair per test
// trajectory: each resample draws len pairs with replacement and takes
// the ratio of their sums (the pooled band errors, D-band-pooled). Pairs
// with a NaN are skipped; the ratio follows relative (0/0 is 0, x/0 NaN).
// Quantiles, seeding and the degenerate cases are Bootstrap's. num and den
// of different lengths, resamples < 1 or a level outside (0, 1) panic.
func RatioBootstrap(num, den []float64, resamples int, level float64, seed uint64) Interval {
	mustLevel(level)
	if resamples < 1 || len(num) != len(den) {
		panic(fmt.Sprintf("eval: ratio bootstrap of %d numerators and %d denominators with %d resamples", len(num), len(den), resamples))
	}
	var xs, ys []float64
	for i := range num {
		if !math.IsNaN(num[i]) && !math.IsNaN(den[i]) {
			xs, ys = append(xs, num[i]), append(ys, den[i])
		}
	}
	n := len(xs)
	if n == 0 {
		return Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	ratio := relative(sumInOrder(xs), sumInOrder(ys))
	if n == 1 {
		return Interval{Mean: ratio, Low: ratio, High: ratio, N: 1}
	}
	rng := rand.New(rand.NewPCG(seed, bootstrapStream))
	rs := make([]float64, resamples)
	for b := range rs {
		var sx, sy float64
		for range n {
			i := rng.IntN(n)
			sx += xs[i]
			sy += ys[i]
		}
		rs[b] = relative(sx, sy)
	}
	// A resample whose denominators are all zero has an undefined ratio;
	// the quantiles are of the defined ones.
	rs = slices.DeleteFunc(rs, math.IsNaN)
	if len(rs) == 0 {
		return Interval{Mean: ratio, Low: math.NaN(), High: math.NaN(), N: n}
	}
	slices.Sort(rs)
	alpha := (1 - level) / 2
	return Interval{Mean: ratio, Low: quantile7(rs, alpha), High: quantile7(rs, 1-alpha), N: n}
}

// SeedBootstrap is the interval of a model's score over training seeds
// and test trajectories: values[s][i] is trajectory i's value for the run
// of seed s, every seed scored on the same test trajectories (one data
// file, one split: D-data-seed). The value is the mean over seeds of each
// seed's mean over its trajectories (NaN skipped, as Bootstrap does); each
// resample draws len(values) seeds with replacement and one set of
// trajectory indices with replacement, shared by the seeds drawn (the
// trajectories are paired across seeds), and takes the same mean of
// means, so the interval holds both the training variance (between
// seeds) and the test variance (between trajectories). Quantiles and
// seeding are Bootstrap's. With one seed it is Bootstrap's interval over
// trajectories (other draws, the same kind of interval). Seeds of
// different trajectory counts, resamples < 1 or a level outside (0, 1)
// panic.
func SeedBootstrap(values [][]float64, resamples int, level float64, seed uint64) Interval {
	mustLevel(level)
	if resamples < 1 {
		panic(fmt.Sprintf("eval: %d bootstrap resamples, want >= 1", resamples))
	}
	S := len(values)
	if S == 0 {
		return Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	n := len(values[0])
	for _, v := range values {
		if len(v) != n {
			panic(fmt.Sprintf("eval: seeds scored on %d and %d trajectories, want the same test trajectories", n, len(v)))
		}
	}
	// meanOf is the mean over the seeds in ss of each one's mean over
	// the trajectories in idx (NaN values skipped; a seed with none left
	// is skipped too).
	meanOf := func(ss, idx []int) float64 {
		var total float64
		k := 0
		for _, s := range ss {
			var sum float64
			m := 0
			for _, i := range idx {
				if v := values[s][i]; !math.IsNaN(v) {
					sum += v
					m++
				}
			}
			if m > 0 {
				total += sum / float64(m)
				k++
			}
		}
		if k == 0 {
			return math.NaN()
		}
		return total / float64(k)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	seeds := make([]int, S)
	for s := range seeds {
		seeds[s] = s
	}
	mean := meanOf(seeds, all)
	if math.IsNaN(mean) {
		return Interval{Mean: mean, Low: math.NaN(), High: math.NaN(), N: S}
	}
	rng := rand.New(rand.NewPCG(seed, bootstrapStream))
	ms := make([]float64, 0, resamples)
	ss, idx := make([]int, S), make([]int, n)
	for range resamples {
		for j := range ss {
			ss[j] = rng.IntN(S)
		}
		for j := range idx {
			idx[j] = rng.IntN(n)
		}
		if m := meanOf(ss, idx); !math.IsNaN(m) {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return Interval{Mean: mean, Low: math.NaN(), High: math.NaN(), N: S}
	}
	slices.Sort(ms)
	alpha := (1 - level) / 2
	return Interval{Mean: mean, Low: quantile7(ms, alpha), High: quantile7(ms, 1-alpha), N: S}
}

// sumInOrder adds x in order.
func sumInOrder(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

// quantile7 is the p-quantile of sorted x by linear interpolation between
// order statistics: position h = (len-1) p (Hyndman and Fan type 7).
func quantile7(sorted []float64, p float64) float64 {
	h := float64(len(sorted)-1) * p
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := h - float64(lo)
	if f == 0 {
		return sorted[lo]
	}
	return sorted[lo] + f*(sorted[lo+1]-sorted[lo])
}

// zFor is the two-sided standard normal quantile for a confidence level:
// Φ^{-1}((1+level)/2), 1.959964 at 95%.
func zFor(level float64) float64 {
	return distuv.UnitNormal.Quantile((1 + level) / 2)
}

// Wilson is the Wilson score interval (Wilson 1927; without continuity
// correction, Newcombe 1998 method 3) for a proportion of k events in n
// trials, the crash rate's interval in the paper (App. "Bootstrap
// Confidence Intervals"):
//
//	p = k/n, center = (p + z^2/(2n)) / (1 + z^2/n),
//	half = z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/(4n^2)),
//
// with z the two-sided normal quantile of level. Mean is p; the limits
// are clamped to [0, 1] against rounding (analytically Low = 0 at k = 0
// and High = 1 at k = n). n = 0 gives an all-NaN interval; k outside
// 0..n, n < 0 or a level outside (0, 1) panics.
func Wilson(k, n int, level float64) Interval {
	mustLevel(level)
	if n < 0 || k < 0 || k > n {
		panic(fmt.Sprintf("eval: Wilson interval of %d events in %d trials", k, n))
	}
	if n == 0 {
		return Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	z := zFor(level)
	nf := float64(n)
	p := float64(k) / nf
	z2n := z * z / nf
	center := (p + z2n/2) / (1 + z2n)
	half := z / (1 + z2n) * math.Sqrt(p*(1-p)/nf+z2n/(4*nf))
	low, high := max(center-half, 0), min(center+half, 1)
	if k == 0 {
		low = 0
	}
	if k == n {
		high = 1
	}
	return Interval{Mean: p, Low: low, High: high, N: n}
}
