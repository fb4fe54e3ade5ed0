package cpu

import "uhno/internal/tensor"

// Finite differences for the H1 term of the loss and the relH1 metric.
//
// Along the chosen axis the field is viewed as [outer, n, inner] (outer:
// batch, channels and the axes before; inner: the axes after), so the
// difference acts on "rows" of inner contiguous values. Row i of the
// n x n difference matrix D has a left coefficient on row i-1, a diagonal
// one and a right one on row i+1 (diffRow). The forward pass is y = D x;
// the backward pass adds D^T dy, written as a gather so that every dx row
// is computed by one goroutine and read-only dy rows are shared.

// diffRow returns row i of D for an axis of n >= 3 points with c = 1/(2h)
// and invH = 1/h. Periodic: -c, 0, c on every row (the neighbours wrap
// around). Otherwise central differences inside, the forward difference
// (x[1]-x[0])/h at i = 0 and the backward difference (x[n-1]-x[n-2])/h at
// i = n-1.
func diffRow(i, n int, periodic bool, c, invH float32) (left, diag, right float32) {
	switch {
	case periodic || (i > 0 && i < n-1):
		return -c, 0, c
	case i == 0:
		return 0, -invH, invH
	default:
		return -invH, invH, 0
	}
}

// diffLayout returns the [outer, n, inner] view of x along spatial axis.
func diffLayout(x *tensor.Tensor, axis int) (outer, n, inner int) {
	outer, n, inner = tensor.AxisLayout(x.Spatial(), axis)
	return x.Batch() * x.Channels() * outer, n, inner
}

// diffCoefs returns c = 1/(2h) and invH = 1/h in float32.
func diffCoefs(h float32) (c, invH float32) {
	return float32(1 / (2 * float64(h))), float32(1 / float64(h))
}

// Diff implements tensor.Backend: y = D x along spatial axis `axis` with
// spacing h: periodic central differences (x[i+1]-x[i-1])/(2h), or, when
// not periodic, central inside and one-sided at the two ends.
func (b *Backend) Diff(y, x *tensor.Tensor, axis int, h float32, periodic bool) {
	X, Y := data(x), data(y)
	outer, n, inner := diffLayout(x, axis)
	c, invH := diffCoefs(h)
	b.parallel(outer, grainFor(2*n*inner), func(lo, hi int) {
		for o := lo; o < hi; o++ {
			xs := X[o*n*inner:][:n*inner]
			ys := Y[o*n*inner:][:n*inner]
			xr := func(i int) []float32 { return xs[i*inner:][:inner] }
			yr := func(i int) []float32 { return ys[i*inner:][:inner] }
			// Inside, y_i = c (x_{i+1} - x_{i-1}), done on the whole block of
			// rows 1..n-2 at once (row i+1 starts inner values after row i).
			diffScaled(ys[inner:(n-1)*inner], xs[2*inner:], xs[:(n-2)*inner], c)
			// The end rows, with the coefficients of diffRow.
			if periodic {
				diffScaled(yr(0), xr(1), xr(n-1), c)
				diffScaled(yr(n-1), xr(0), xr(n-2), c)
			} else {
				diffScaled(yr(0), xr(1), xr(0), invH)
				diffScaled(yr(n-1), xr(n-1), xr(n-2), invH)
			}
		}
	})
}

// diffScaled sets y = s (a - b) elementwise.
func diffScaled(y, a, b []float32, s float32) {
	a, b = a[:len(y)], b[:len(y)]
	for k := range y {
		y[k] = s * (a[k] - b[k])
	}
}

// DiffBackward implements tensor.Backend: dx += D^T dy. Row j of D^T dy is
// right(j-1) dy[j-1] + diag(j) dy[j] + left(j+1) dy[j+1] with the
// coefficients of diffRow (neighbours wrapped when periodic); wherever rows
// j-1 and j+1 are both central it is c (dy[j-1] - dy[j+1]).
func (b *Backend) DiffBackward(dx, dy *tensor.Tensor, axis int, h float32, periodic bool) {
	DX, DY := data(dx), data(dy)
	outer, n, inner := diffLayout(dx, axis)
	c, invH := diffCoefs(h)
	b.parallel(outer, grainFor(2*n*inner), func(lo, hi int) {
		for o := lo; o < hi; o++ {
			gs := DY[o*n*inner:][:n*inner]
			ds := DX[o*n*inner:][:n*inner]
			row := func(i int) []float32 { return gs[i*inner:][:inner] }
			// Rows 2..n-3: both neighbours are central rows.
			if n > 4 {
				diffScaledAcc(ds[2*inner:(n-2)*inner], gs[inner:], gs[3*inner:], c)
			}
			for j := 0; j < n; j++ {
				if j == 2 && n > 4 {
					j = n - 2 // rows 2..n-3 are done
				}
				d := ds[j*inner:][:inner]
				if periodic {
					diffScaledAcc(d, row((j+n-1)%n), row((j+1)%n), c)
					continue
				}
				_, diag, _ := diffRow(j, n, false, c, invH)
				if diag != 0 {
					axpy(d, row(j), diag)
				}
				if j > 0 {
					_, _, right := diffRow(j-1, n, false, c, invH)
					axpy(d, row(j-1), right)
				}
				if j < n-1 {
					left, _, _ := diffRow(j+1, n, false, c, invH)
					axpy(d, row(j+1), left)
				}
			}
		}
	})
}

// diffScaledAcc adds s (a - b) to y elementwise.
func diffScaledAcc(y, a, b []float32, s float32) {
	a, b = a[:len(y)], b[:len(y)]
	for k := range y {
		y[k] += s * (a[k] - b[k])
	}
}
