package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// normalSample draws n values from N(mu, sigma^2).
func normalSample(rng *rand.Rand, n int, mu, sigma float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = mu + sigma*rng.NormFloat64()
	}
	return x
}

// TestBootstrapCoverage draws 1000 synthetic test sets of 100 normal
// values and checks that the 95% percentile interval covers the true mean
// about 95% of the time. For n = 100 the percentile interval's coverage is
// about 94.5% (it is z-based and uses the plug-in variance); with 1000
// repetitions the binomial spread is 0.7%, so [0.92, 0.98] is more than
// three spreads either way.
func TestBootstrapCoverage(t *testing.T) {
	const (
		reps, n, resamples = 1000, 100, 1000
		mu, sigma          = 3.0, 2.0
	)
	rng := rand.New(rand.NewPCG(42, 1))
	covered := 0
	for r := range reps {
		iv := Bootstrap(normalSample(rng, n, mu, sigma), resamples, 0.95, uint64(r))
		if iv.Low <= mu && mu <= iv.High {
			covered++
		}
	}
	if c := float64(covered) / reps; c < 0.92 || c > 0.98 {
		t.Errorf("coverage %.3f of the true mean, want about 0.95", c)
	} else {
		t.Logf("coverage %.3f", c)
	}
}

// TestBootstrapWidth checks the interval against normal theory on a large
// sample with the paper's B = 10,000: the width is close to 2 z s/sqrt(n)
// and the interval sits around the sample mean.
func TestBootstrapWidth(t *testing.T) {
	x := normalSample(rand.New(rand.NewPCG(9, 9)), 400, -1, 0.5)
	iv := Bootstrap(x, DefaultResamples, DefaultLevel, 1)
	var m, ss float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	se := math.Sqrt(ss/float64(len(x))) / math.Sqrt(float64(len(x)))
	if iv.N != 400 || math.Abs(iv.Mean-m) > 1e-12 {
		t.Errorf("N %d mean %v, want 400 and the sample mean %v", iv.N, iv.Mean, m)
	}
	if r := (iv.High - iv.Low) / (2 * 1.959964 * se); r < 0.93 || r > 1.07 {
		t.Errorf("width / normal-theory width = %.3f, want about 1", r)
	}
	if c := (iv.Low + iv.High) / 2; math.Abs(c-m) > 0.1*se {
		t.Errorf("interval centre %v, sample mean %v (se %v)", c, m, se)
	}
}

// TestBootstrapSeedAndNaN checks reproducibility by seed, the NaN rule and
// the degenerate cases.
func TestBootstrapSeedAndNaN(t *testing.T) {
	x := normalSample(rand.New(rand.NewPCG(1, 1)), 50, 0, 1)
	a := Bootstrap(x, 2000, 0.95, 7)
	if b := Bootstrap(x, 2000, 0.95, 7); a != b {
		t.Errorf("same seed: %v then %v", a, b)
	}
	if c := Bootstrap(x, 2000, 0.95, 8); c == a {
		t.Errorf("seeds 7 and 8 give the same interval %v", a)
	}
	if c := Bootstrap(x, 2000, 0.9, 7); !(c.Low > a.Low && c.High < a.High) {
		t.Errorf("90%% interval %v is not inside the 95%% one %v", c, a)
	}
	withNaN := append([]float64{math.NaN()}, x[:20]...)
	withNaN = append(withNaN, math.NaN())
	withNaN = append(withNaN, x[20:]...)
	if b := Bootstrap(withNaN, 2000, 0.95, 7); b != a {
		t.Errorf("NaN values not skipped: %v, want %v", b, a)
	}
	for _, tc := range []struct {
		name   string
		values []float64
		want   Interval
	}{
		{"empty", nil, Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}},
		{"all NaN", []float64{math.NaN(), math.NaN()}, Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}},
		{"one value", []float64{math.NaN(), 2.5}, Interval{Mean: 2.5, Low: 2.5, High: 2.5, N: 1}},
		{"constant", []float64{4, 4, 4, 4}, Interval{Mean: 4, Low: 4, High: 4, N: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Bootstrap(tc.values, 100, 0.95, 1)
			same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
			if got.N != tc.want.N || !same(got.Mean, tc.want.Mean) || !same(got.Low, tc.want.Low) || !same(got.High, tc.want.High) {
				t.Errorf("Bootstrap = %v, want %v", got, tc.want)
			}
		})
	}
	mustPanic(t, "level", func() { Bootstrap(x, 100, 1, 1) })
	mustPanic(t, "resamples", func() { Bootstrap(x, 0, 0.95, 1) })
}

// TestQuantile7 checks the interpolation against numpy.quantile's default
// (linear): np.quantile([1, 2, 3, 4], [0, .25, .5, .9, 1]) = [1, 1.75, 2.5,
// 3.7, 4].
func TestQuantile7(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	for _, tc := range []struct{ p, want float64 }{{0, 1}, {0.25, 1.75}, {0.5, 2.5}, {0.9, 3.7}, {1, 4}} {
		if got := quantile7(x, tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("quantile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// TestWilson checks the Wilson score interval against published values:
// Newcombe (1998), "Two-sided confidence intervals for the single
// proportion: comparison of seven methods", Statistics in Medicine 17,
// 857-872, Table II, method 3 (score interval without continuity
// correction), 95%, quoted to 4 decimals; and against the closed forms at
// k = 0 (Low = 0, High = z^2/(n+z^2)) and the symmetry k <-> n-k.
func TestWilson(t *testing.T) {
	if z := zFor(0.95); math.Abs(z-1.959963984540054) > 1e-9 {
		t.Errorf("z(0.95) = %v", z)
	}
	if z := zFor(0.90); math.Abs(z-1.6448536269514722) > 1e-9 {
		t.Errorf("z(0.90) = %v", z)
	}
	for _, tc := range []struct {
		k, n      int
		low, high float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0.0000, 0.1611},
		{1, 29, 0.0061, 0.1718},
	} {
		iv := Wilson(tc.k, tc.n, 0.95)
		if math.Abs(iv.Low-tc.low) > 5e-5 || math.Abs(iv.High-tc.high) > 5e-5 {
			t.Errorf("Wilson(%d/%d) = [%.5f, %.5f], Newcombe 1998: [%.4f, %.4f]", tc.k, tc.n, iv.Low, iv.High, tc.low, tc.high)
		}
		if iv.Mean != float64(tc.k)/float64(tc.n) || iv.N != tc.n {
			t.Errorf("Wilson(%d/%d): mean %v n %d", tc.k, tc.n, iv.Mean, iv.N)
		}
	}
	for _, n := range []int{1, 10, 100, 263} {
		for _, level := range []float64{0.9, 0.95, 0.99} {
			z := zFor(level)
			iv := Wilson(0, n, level)
			if want := z * z / (float64(n) + z*z); iv.Low != 0 || math.Abs(iv.High-want) > 1e-12 {
				t.Errorf("Wilson(0/%d, %v) = %v, want [0, %v]", n, level, iv, want)
			}
			for k := 0; k <= n; k += max(1, n/7) {
				a, b := Wilson(k, n, level), Wilson(n-k, n, level)
				if math.Abs(a.Low-(1-b.High)) > 1e-12 || math.Abs(a.High-(1-b.Low)) > 1e-12 {
					t.Errorf("Wilson(%d/%d) = %v and Wilson(%d/%d) = %v are not mirror images", k, n, a, n-k, n, b)
				}
				if !(a.Low <= a.Mean && a.Mean <= a.High) {
					t.Errorf("Wilson(%d/%d) = %v does not contain k/n", k, n, a)
				}
			}
		}
	}
	if iv := Wilson(0, 0, 0.95); !math.IsNaN(iv.Low) || !math.IsNaN(iv.High) || iv.N != 0 {
		t.Errorf("Wilson(0/0) = %v, want NaN", iv)
	}
	mustPanic(t, "events", func() { Wilson(3, 2, 0.95) })
	mustPanic(t, "level", func() { Wilson(1, 2, 0) })
}
