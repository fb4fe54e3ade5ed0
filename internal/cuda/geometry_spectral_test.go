package cuda

import (
	"fmt"
	"testing"

	"uhno/internal/tensor"
)

// TestSpectralDims checks the padded layout and the kept-mode map against
// the CPU backend's definition (internal/cpu/spectral.go): along full axis
// a an index f < K is kept at j = f, f >= N-K at j = f-(N-K) with corner
// bit d-2-a set, along the last axis f < K at j = f; the weight offset is
// row-major over the real axes with K0 entries each. Every kept mode must
// map to a distinct (corner, offset) inside the capped box, and their
// number must be Corners*Box = prod(2K_full) K_last.
func TestSpectralDims(t *testing.T) {
	cases := []struct {
		shape []int
		k0    int
	}{
		{[]int{37}, 8}, {[]int{10}, 12}, {[]int{128}, 24},
		{[]int{10, 13}, 3}, {[]int{6, 8}, 12}, {[]int{9, 7}, 4}, {[]int{64, 64}, 12}, {[]int{4, 4}, 12},
		{[]int{6, 5, 7}, 2}, {[]int{4, 6, 8}, 12}, {[]int{16, 16, 16}, 12}, {[]int{3, 5, 6}, 2},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.shape, c.k0), func(t *testing.T) {
			s, ok := NewSpectralDims(c.shape, c.k0)
			if !ok {
				t.Fatal("no modes kept")
			}
			d := len(c.shape)
			if fmt.Sprint(s.Shape()) != fmt.Sprint(c.shape) || s.Half != c.shape[d-1]/2+1 || s.Corners != 1<<(d-1) {
				t.Fatalf("layout %+v", s)
			}
			seen := map[[2]int]bool{}
			for f0 := 0; f0 < s.N[0]; f0++ {
				for f1 := 0; f1 < s.N[1]; f1++ {
					for f2 := 0; f2 < s.Half; f2++ {
						corner, off, kept := s.KeptIndex(f0, f1, f2)
						// The CPU's rule on the real axes.
						f := []int{f0, f1, f2}[3-d:]
						wantKept, wantCorner, wantOff := true, 0, 0
						for a, n := range c.shape {
							k := tensor.ModeCap(c.k0, n)
							j := f[a]
							switch {
							case j < k:
							case a < d-1 && j >= n-k:
								j -= n - k
								wantCorner |= 1 << (d - 2 - a)
							default:
								wantKept = false
							}
							wantOff = wantOff*c.k0 + j
						}
						if kept != wantKept || (kept && (corner != wantCorner || off != wantOff)) {
							t.Fatalf("position %v: got (%v, %d, %d), want (%v, %d, %d)", f, kept, corner, off, wantKept, wantCorner, wantOff)
						}
						if !kept {
							continue
						}
						if off < 0 || off >= s.KVol || corner >= s.Corners || seen[[2]int{corner, off}] {
							t.Fatalf("position %v: corner %d offset %d out of range or repeated", f, corner, off)
						}
						seen[[2]int{corner, off}] = true
					}
				}
			}
			if len(seen) != s.Corners*s.Box {
				t.Fatalf("%d kept modes, want %d", len(seen), s.Corners*s.Box)
			}
		})
	}
	if _, ok := NewSpectralDims([]int{1, 8}, 3); ok {
		t.Error("an axis of length 1 keeps no mode")
	}
	if _, ok := NewSpectralDims([]int{8}, 0); ok {
		t.Error("K0 = 0 keeps no mode")
	}
}

// TestGaussMaxRadius: no sigma gives a larger radius than the launch halo.
func TestGaussMaxRadius(t *testing.T) {
	for _, nmin := range []int{1, 2, 3, 4, 9, 64, 301} {
		for _, mr := range []int{0, 1, 3, 16, 1000} {
			want := 0
			for _, sigma := range []float64{0.01, 0.5, 1, 2.5, 40, 1e6} {
				want = max(want, tensor.GaussianRadius(sigma, mr, nmin))
			}
			if got := GaussMaxRadius(mr, nmin); got != want {
				t.Errorf("GaussMaxRadius(%d, %d) = %d, want %d", mr, nmin, got, want)
			}
		}
	}
}

// TestGaussPass checks the tiles of every pass the cuda-tagged tests and
// the paper's sizes launch, and some extremes: block limits, the shared
// memory bound (with the 2 KiB static reduction array of
// gauss_backward_last), power-of-two blocks of at most 256 threads (the
// reductions' tree and static array need it), and, by simulating the
// kernels' loops, that every output point is written exactly once and
// every tap reads a staged tile row.
func TestGaussPass(t *testing.T) {
	type pass struct{ outer, n, inner, rmax int }
	var passes []pass
	for _, dims := range [][]int{
		{37}, {300}, {19, 18}, {4, 4}, {2, 8}, {70, 45}, {64, 64}, {9, 12, 10}, {8, 8, 8}, {33, 40, 37},
		{128}, {1024}, {128, 128}, {32, 32, 32}, {64, 64, 64}, {5000},
	} {
		nmin := dims[0]
		for _, n := range dims {
			nmin = min(nmin, n)
		}
		for _, mr := range []int{0, 2, 16} {
			rmax := GaussMaxRadius(mr, nmin)
			for a := range dims {
				outer, inner := 3, 1
				for i, m := range dims {
					if i < a {
						outer *= m
					} else if i > a {
						inner *= m
					}
				}
				passes = append(passes, pass{outer, dims[a], inner, rmax})
			}
		}
	}
	for _, p := range passes {
		for _, arrays := range []int{1, 2} {
			tl, err := GaussPass(p.outer, p.n, p.inner, p.rmax, arrays)
			if err != nil {
				t.Fatalf("%+v arrays %d: %v", p, arrays, err)
			}
			th := tl.Block.X * tl.Block.Y * tl.Block.Z
			if tl.Block.X != tl.TI || tl.Block.Y != tl.BY || tl.Block.Z != 1 || th > gaussBlockThreads || th&(th-1) != 0 {
				t.Fatalf("%+v: block %+v (TI %d, BY %d)", p, tl.Block, tl.TI, tl.BY)
			}
			if th < 32 && tl.TI*nextPow2(tl.TN) >= 32 {
				t.Fatalf("%+v: block of %d threads, less than a warp", p, th)
			}
			if tl.Shared != (tl.TN+2*p.rmax)*tl.TI*arrays*4 || tl.Shared > gaussSharedMax || tl.Shared+256*8 > 48<<10 {
				t.Fatalf("%+v: shared %d bytes", p, tl.Shared)
			}
			if tl.Grid.X != p.outer*tl.InnerTiles || tl.Grid.Y != tl.NTiles || tl.Grid.Y > maxGridY || tl.Grid.Z != 1 {
				t.Fatalf("%+v: grid %+v", p, tl.Grid)
			}
			if tl.InnerTiles*tl.TI < p.inner || (tl.InnerTiles-1)*tl.TI >= p.inner ||
				tl.NTiles*tl.TN < p.n || (tl.NTiles-1)*tl.TN >= p.n {
				t.Fatalf("%+v: tiles %+v do not cover [%d, %d] tightly", p, tl, p.n, p.inner)
			}
			if p.outer*p.n*p.inner*(2*p.rmax+1) <= 1<<22 {
				simulateGaussPass(t, p.outer, p.n, p.inner, p.rmax, tl)
			}
		}
	}
	if _, err := GaussPass(1, 8, 1, 4, 1); err == nil {
		t.Error("radius 4 on 8 points accepted")
	}
	if _, err := GaussPass(1, 1<<14, 1, 6000, 2); err == nil {
		t.Error("a halo beyond shared memory accepted")
	}
}

// simulateGaussPass runs the index arithmetic of kernels/gaussian.cu
// (gauss_block, gauss_stage, the output loop) for every thread of the
// grid at the largest radius and checks that each point of [outer, n,
// inner] is written once and that every tap a thread reads lies in a row
// it staged (rows [rmax-r, tn+rmax+r) hold axis points n0-rmax+t mod n).
func simulateGaussPass(t *testing.T, outer, n, inner, rmax int, tl GaussTile) {
	t.Helper()
	hits := make([]int, outer*n*inner)
	r := rmax
	for bx := 0; bx < tl.Grid.X; bx++ {
		for by := 0; by < tl.Grid.Y; by++ {
			o := bx / tl.InnerTiles
			n0 := by * tl.TN
			staged := make([]int, tl.TN+2*rmax) // tile row -> axis point, -1 when not staged
			for k := range staged {
				staged[k] = -1
			}
			for tx := 0; tx < tl.Block.X; tx++ {
				for ty := 0; ty < tl.Block.Y; ty++ {
					for row := rmax - r + ty; row < tl.TN+rmax+r; row += tl.Block.Y {
						staged[row] = ((n0-rmax+row)%n + n) % n
					}
				}
			}
			for tx := 0; tx < tl.Block.X; tx++ {
				j := (bx%tl.InnerTiles)*tl.Block.X + tx
				if j >= inner {
					continue
				}
				for ty := 0; ty < tl.Block.Y; ty++ {
					for row := ty; row < tl.TN && n0+row < n; row += tl.Block.Y {
						i := n0 + row
						hits[(o*n+i)*inner+j]++
						for d := -r; d <= r; d++ {
							got := staged[row+rmax+d]
							if want := ((i+d)%n + n) % n; got != want {
								t.Fatalf("[%d %d %d] r %d tile %+v: tap %d of point %d reads row %d (point %d), want point %d",
									outer, n, inner, rmax, tl, d, i, row+rmax+d, got, want)
							}
						}
					}
				}
			}
		}
	}
	for k, h := range hits {
		if h != 1 {
			t.Fatalf("[%d %d %d] r %d: point %d written %d times", outer, n, inner, rmax, k, h)
		}
	}
}

// TestGaussPartials simulates gauss_backward_last's partial layout and
// gauss_dlogsigma's enumeration: the partials each pair sums are exactly
// the blocks whose plane belongs to the pair, each once.
func TestGaussPartials(t *testing.T) {
	for _, c := range []struct{ batch, ch, scales, groups, n, inner int }{
		{2, 12, 3, 2, 37, 1}, {1, 24, 3, 4, 20, 22}, {2, 6, 3, 2, 70, 45}, {1, 3, 3, 1, 33, 40 * 37},
	} {
		tl, err := GaussPass(c.batch*c.ch, c.n, c.inner, 2, 2)
		if err != nil {
			t.Fatal(err)
		}
		perScl := c.ch / c.scales
		perGrp := perScl / c.groups
		pairs := c.scales * c.groups
		owner := make([]int, tl.Grid.X*tl.Grid.Y) // pair of each block, as gauss_block computes it
		for by := 0; by < tl.Grid.Y; by++ {
			for bx := 0; bx < tl.Grid.X; bx++ {
				ch := (bx / tl.InnerTiles) % c.ch // planeOuter = 1 on axis 0
				owner[by*tl.Grid.X+bx] = (ch/perScl)*c.groups + (ch%perScl)/perGrp
			}
		}
		used := make([]int, len(owner))
		for pair := 0; pair < pairs; pair++ {
			first := (pair/c.groups)*perScl + (pair%c.groups)*perGrp
			gridX := c.batch * c.ch * tl.InnerTiles
			count := c.batch * perGrp * tl.InnerTiles * tl.NTiles
			for q := 0; q < count; q++ {
				rest := q
				it := rest % tl.InnerTiles
				rest /= tl.InnerTiles
				ty := rest % tl.NTiles
				rest /= tl.NTiles
				cc := rest % perGrp
				b := rest / perGrp
				idx := ty*gridX + (b*c.ch+first+cc)*tl.InnerTiles + it
				if owner[idx] != pair {
					t.Fatalf("%+v: pair %d sums partial %d of pair %d", c, pair, idx, owner[idx])
				}
				used[idx]++
			}
		}
		for i, u := range used {
			if u != 1 {
				t.Fatalf("%+v: partial %d summed %d times", c, i, u)
			}
		}
	}
}
