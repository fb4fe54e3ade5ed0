package eval

import "math"

// LocalBandEnergy measures where in space a 1D periodic field holds its
// low-, mid- and high-frequency energy (paper Fig. motivation (a):
// "wavelet-band energy, localized near shocks"). At every grid point x the
// field is multiplied by a periodic Hann window of width points centred
// on x, and the energy |F(k)|^2 of the windowed signal's DFT is summed
// over the same three thirds of the window's wavenumbers as E_b uses for
// the whole field (App. "Evaluation Metrics"): low 0 < k < K/3 (the mean,
// k = 0, is left out: it is the local level, not its variation), mid
// K/3 <= k < 2K/3, high 2K/3 <= k <= K, K = width/2. The result is
// [3][n], band-major.
//
// It is a short-time Fourier transform rather than the wavelet transform
// the paper names (uhno has no wavelet transform outside the WNO
// baseline's); both localise energy in space and scale, and the figure's
// point, that the mid and high bands light up only near fronts, does not
// depend on the choice. width must be even, >= 6 and <= len(field).
func LocalBandEnergy(field []float32, width int) [3][]float64 {
	n := len(field)
	if width < 6 || width%2 != 0 || width > n {
		panic("eval: LocalBandEnergy: width must be even, >= 6 and <= the field's length")
	}
	var out [3][]float64
	for b := range out {
		out[b] = make([]float64, n)
	}
	win := make([]float64, width)
	for j := range win { // periodic Hann window, centred at j = width/2
		win[j] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(j)/float64(width))
	}
	K := width / 2
	seg := make([]float64, width)
	for x := range n {
		for j := range width {
			seg[j] = win[j] * float64(field[((x+j-width/2)%n+n)%n])
		}
		for k := 1; k <= K; k++ {
			var re, im float64
			for j, v := range seg {
				a := -2 * math.Pi * float64(k*j) / float64(width)
				re += v * math.Cos(a)
				im += v * math.Sin(a)
			}
			e := re*re + im*im
			switch {
			case 3*k < K:
				out[0][x] += e
			case 3*k < 2*K:
				out[1][x] += e
			default:
				out[2][x] += e
			}
		}
	}
	return out
}
