package cuda

import (
	"fmt"

	"uhno/internal/tensor"
)

// Launch geometry and index layout of the Fourier branch (SpectralConv,
// kernels/spectral.cu) and of the Gaussian branch (GaussianConv,
// kernels/gaussian.cu). Untagged, so CI checks them without a GPU.

// SpectralDims is the layout a spectral convolution's kernels index with.
// The spatial axes are front-padded to three: a real field is
// [N[0]][N[1]][N[2]] with N[2] the last (rfft) axis and absent leading axes
// of length 1; its half spectrum (cuFFT's packed R2C output) is
// [N[0]][N[1]][Half], Half = N[2]/2+1. K is Eq. mode-cap's K_eff =
// min(K0, floor(N/2)) per axis, 1 on an absent axis (so that its single
// index 0 is "kept" in the positive block and contributes no corner bit).
type SpectralDims struct {
	D       int    // spatial axes, 1 to 3
	N, K    [3]int // front-padded grid and kept modes per axis
	K0      int    // nominal modes: the weight's mode axes have K0 entries
	Half    int    // N[2]/2 + 1
	Spec    int    // complex values of one field's half spectrum
	Real    int    // real values of one field: prod(N)
	Corners int    // 2^(D-1) weight corners
	KVol    int    // K0^D: complex values of one (corner, i, o) weight block
	Box     int    // kept modes per corner: K[0] K[1] K[2]
}

// NewSpectralDims lays out a grid of the given spatial shape (1 to 3 axes)
// for nominal modes k0. ok is false when some axis keeps no mode (an axis
// of length 1, or k0 = 0): the operation's output is then zero.
func NewSpectralDims(spatial []int, k0 int) (s SpectralDims, ok bool) {
	d := len(spatial)
	if d < 1 || d > 3 {
		panic(fmt.Sprintf("cuda: SpectralConv: %d spatial axes, want 1 to 3", d))
	}
	if k0 < 0 {
		panic(fmt.Sprintf("cuda: SpectralConv: negative K0 %d", k0))
	}
	s = SpectralDims{D: d, N: [3]int{1, 1, 1}, K: [3]int{1, 1, 1}, K0: k0, Corners: 1 << (d - 1), KVol: 1, Box: 1, Real: 1}
	ok = true
	for a, n := range spatial {
		slot := 3 - d + a
		s.N[slot] = n
		s.K[slot] = tensor.ModeCap(k0, n)
		if s.K[slot] == 0 {
			ok = false
		}
		s.KVol *= k0
		s.Box *= s.K[slot]
		s.Real *= n
	}
	s.Half = s.N[2]/2 + 1
	s.Spec = s.N[0] * s.N[1] * s.Half
	return s, ok
}

// Shape returns the real spatial axes (what cuFFT plans are made of).
func (s SpectralDims) Shape() []int { return append([]int(nil), s.N[3-s.D:]...) }

// KeptIndex mirrors the kernels' spec_weight_offset on the list 0..K-1
// (where a last-axis frequency is its own slot): for half-spectrum
// position (f0, f1, f2) it returns the weight corner and the complex
// offset inside a K0^D weight block of the mode kept there, or ok = false
// when the position is not kept. Along a full axis index f < K is the positive
// block (j = f) and f >= N-K the negative block (j = f-(N-K), corner bit
// set); slot 0 gives bit 1 and slot 1 bit 0, which is the CPU backend's
// bit d-2-a of full axis a (itertools.product order of the yardstick).
func (s SpectralDims) KeptIndex(f0, f1, f2 int) (corner, off int, ok bool) {
	if f2 >= s.K[2] {
		return 0, 0, false
	}
	j := [2]int{}
	for slot, f := range [2]int{f0, f1} {
		switch {
		case f < s.K[slot]:
			j[slot] = f
		case f >= s.N[slot]-s.K[slot]:
			j[slot] = f - (s.N[slot] - s.K[slot])
			corner |= 1 << (1 - slot)
		default:
			return 0, 0, false
		}
	}
	return corner, (j[0]*s.K0+j[1])*s.K0 + f2, true
}

// gaussSharedMax bounds the dynamic shared memory of a Gaussian pass:
// 40 KiB, leaving room under the default 48 KiB for the kernels' static
// arrays (the block reduction of gauss_backward_last, 2 KiB).
const gaussSharedMax = 40 << 10

// gaussBlockThreads is the thread count a Gaussian pass block aims at.
const gaussBlockThreads = 256

// GaussTile is the launch of one Gaussian pass along a spatial axis of a
// stack of planes viewed as [outer, n, inner] (axis of n points, inner the
// product of the later axes). A block owns one outer index, TN consecutive
// points of the axis and TI consecutive inner columns: it stages the rows
// [n0-R, n0+TN+R) (circularly wrapped) of those columns in shared memory,
// R the largest radius any kernel of the call can have, and each thread
// (tx < TI, ty < BY) computes rows ty, ty+BY, ... of column tx.
// Grid.X = outer * InnerTiles (outer index major), Grid.Y = NTiles.
type GaussTile struct {
	Geometry
	TI, BY, TN         int // inner columns, thread rows and axis points per block
	InnerTiles, NTiles int
	R                  int // halo (the maximum radius)
}

// nextPow2 is the smallest power of two >= v (v >= 1).
func nextPow2(v int) int {
	p := 1
	for p < v {
		p *= 2
	}
	return p
}

// GaussPass returns the tile of a pass over [outer, n, inner] with halo
// rmax, staging `arrays` input planes (1 forward, 2 for the backward's
// (u, w) pairs). The inner tile is the next power of two of inner up to
// 32 (a warp reads 32 consecutive floats; a last-axis pass, inner = 1,
// has lines of n contiguous floats instead), the axis tile up to 64
// points, both shrunk until the staged rows fit in gaussSharedMax.
func GaussPass(outer, n, inner, rmax, arrays int) (GaussTile, error) {
	if outer < 1 || n < 1 || inner < 1 || rmax < 0 || arrays < 1 {
		return GaussTile{}, fmt.Errorf("cuda: Gaussian pass over [%d, %d, %d] with radius %d", outer, n, inner, rmax)
	}
	if 2*rmax+1 > n {
		return GaussTile{}, fmt.Errorf("cuda: Gaussian radius %d on an axis of %d points", rmax, n)
	}
	ti := min(32, nextPow2(inner))
	tn := min(n, 64)
	fits := func() bool { return (tn+2*rmax)*ti*arrays*4 <= gaussSharedMax }
	for !fits() && ti > 1 {
		ti /= 2
	}
	for !fits() && tn > 1 {
		tn /= 2
	}
	if !fits() {
		return GaussTile{}, fmt.Errorf("cuda: Gaussian radius %d needs %d bytes of shared memory per column, more than %d",
			rmax, (1+2*rmax)*arrays*4, gaussSharedMax)
	}
	// Thread rows: enough for the tile's points (rounded up to a power of
	// two) and for at least one warp, at most gaussBlockThreads in all.
	by := min(gaussBlockThreads/ti, max(nextPow2(tn), 32/ti))
	t := GaussTile{TI: ti, BY: by, TN: tn, R: rmax, InnerTiles: ceilDiv(inner, ti), NTiles: ceilDiv(n, tn)}
	t.Grid = Dim3{outer * t.InnerTiles, t.NTiles, 1}
	t.Block = Dim3{ti, by, 1}
	t.Shared = (tn + 2*rmax) * ti * arrays * 4
	if t.Grid.X > 1<<31-1 || t.Grid.Y > maxGridY {
		return GaussTile{}, fmt.Errorf("cuda: Gaussian pass over [%d, %d, %d]: grid %+v too large", outer, n, inner, t.Grid)
	}
	return t, nil
}

// GaussMaxRadius is the largest radius tensor.GaussianRadius can return on
// a grid whose smallest axis has nmin points: min(maxRadius (if > 0),
// (nmin-1)/2). The launch geometry uses it so that no radius is read back
// from the device.
func GaussMaxRadius(maxRadius, nmin int) int {
	r := (nmin - 1) / 2
	if maxRadius > 0 && maxRadius < r {
		r = maxRadius
	}
	return max(r, 0)
}
