package tensor

import "fmt"

// DB4 is the scaling (low-pass) filter h of the Daubechies wavelet with
// four vanishing moments and eight taps: "db4" in PyWavelets, MATLAB and
// pytorch_wavelets (which the WNO reference code uses), equal to pywt's
// rec_lo (dec_lo reversed). It is not Numerical Recipes' four-tap "D4"
// (two vanishing moments). The wavelet (high-pass) filter is
// g[t] = (-1)^t h[7-t] (DB4High). The values are Daubechies' (Ten Lectures
// on Wavelets, Table 6.1, N = 4), whose sum of squares is 1 to 1e-15;
// PyWavelets' table agrees with them to 4e-13 but is less precise (its
// sum of squares is 1 - 9e-13).
//
// One level of the periodic transform of a line of even length n is
//
//	a[k] = sum_t h[t] x[(2k+t) mod n],  d[k] = sum_t g[t] x[(2k+t) mod n]
//
// for k < n/2 (written [a | d]); its inverse is
// x[j] = sum_{k,t: 2k+t = j mod n} h[t] a[k] + g[t] d[k]. The alignment
// (output k reads x from 2k on) differs from pywt's "periodization" mode
// by a circular shift of the coefficients; both are orthogonal.
var DB4 = [8]float64{
	0.2303778133088964,
	0.7148465705529154,
	0.6308807679298587,
	-0.0279837694168599,
	-0.1870348117190931,
	0.0308413818355607,
	0.0328830116668852,
	-0.0105974017850690,
}

// DB4High is the db4 wavelet filter g[t] = (-1)^t DB4[7-t].
var DB4High = func() [8]float64 {
	var g [8]float64
	for t := range g {
		g[t] = DB4[7-t]
		if t%2 == 1 {
			g[t] = -g[t]
		}
	}
	return g
}()

// WaveletLevels is the number of decomposition levels of the WNO baseline
// (paper App. "Baseline Configurations": three).
const WaveletLevels = 3

// CheckWaveletGrid reports whether every axis of grid can be halved
// `levels` times: a positive multiple of 2^levels.
func CheckWaveletGrid(grid []int, levels int) error {
	if levels < 1 {
		return fmt.Errorf("wavelet transform with %d levels, want >= 1", levels)
	}
	div := 1 << levels
	for _, n := range grid {
		if n < div || n%div != 0 {
			return fmt.Errorf("a %d-level wavelet transform needs every grid axis to be a multiple of %d, got %v", levels, div, grid)
		}
	}
	return nil
}

// WaveletLayout describes where the coefficients of a `levels`-level
// transform sit along one axis of length n (Mallat's layout, the same on
// every axis): the level-l detail coefficients (l = 1 finest) occupy
// [n/2^l, n/2^(l-1)), and the level-`levels` approximation [0, n/2^levels).
// In d dimensions the level-l corner [0, n/2^(l-1))^d splits into 2^d
// blocks of side n/2^l, one per subband, offset by n/2^l on the axes where
// the subband is high-pass; the all-low block at the origin is transformed
// again at level l+1. The level-J subbands (approximation and the 2^d - 1
// coarsest details) together fill the corner [0, n/2^(J-1))^d.
func WaveletLayout(n, levels int) (approx int, detail []int) {
	for l := 1; l <= levels; l++ {
		detail = append(detail, n>>l)
	}
	return n >> levels, detail
}

// Wavelet is the periodic multi-level db4 wavelet transform of x (inverse
// false) or the reconstruction of a field from its coefficients (inverse
// true); see Backend.Wavelet for the layout. It panics unless every
// spatial axis is a multiple of 2^levels. The transform is orthogonal:
// its backward is the other direction.
func (tp *Tape) Wavelet(x *Tensor, levels int, inverse bool) *Tensor {
	mustField("Wavelet", x)
	if err := CheckWaveletGrid(x.Spatial(), levels); err != nil {
		panic("tensor: Wavelet: " + err.Error())
	}
	y := tp.out(x.Shape)
	tp.B.Wavelet(y, x, levels, inverse)
	if tp.needs(x) {
		tp.record(y, func() { tp.B.WaveletBackward(tp.g(x), y.Grad, levels, inverse) })
	}
	return y
}

// WaveletMixShape is the shape of a WaveletMix weight for a corner of
// corner[a] points on spatial axis a: [cin, cout, corner...].
func WaveletMixShape(cin, cout int, corner []int) []int {
	return append([]int{cin, cout}, corner...)
}

// WaveletMix mixes the channels of the low corner [0, M_0) x ... x
// [0, M_{d-1}) of x with a weight per point, y[b,o,p] = sum_i w[i,o,p]
// x[b,i,p], and zeroes the rest (Backend.WaveletMix). w is [Cin, Cout,
// M_0, ..., M_{d-1}] (WaveletMixShape) with 1 <= M_a <= N_a.
func (tp *Tape) WaveletMix(x, w *Tensor) *Tensor {
	mustField("WaveletMix", x)
	d := x.Dims()
	if len(w.Shape) != d+2 || w.Shape[0] != x.Channels() || w.Shape[1] < 1 {
		panic(fmt.Sprintf("tensor: WaveletMix: weight %v does not fit input %v", w.Shape, x.Shape))
	}
	for a, n := range x.Spatial() {
		if m := w.Shape[2+a]; m < 1 || m > n {
			panic(fmt.Sprintf("tensor: WaveletMix: weight corner %v does not fit input %v", w.Shape[2:], x.Shape))
		}
	}
	y := tp.out(shapeWith(x.Shape, w.Shape[1]))
	tp.B.WaveletMix(y, x, w)
	if tp.needs(x, w) {
		tp.record(y, func() { tp.B.WaveletMixBackward(tp.g(x), tp.g(w), y.Grad, x, w) })
	}
	return y
}
