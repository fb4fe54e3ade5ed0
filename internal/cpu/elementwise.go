package cpu

import (
	"math"

	"uhno/internal/tensor"
)

const elemGrain = 16384

// Add implements tensor.Backend: y = a + b.
func (b *Backend) Add(y, a, c *tensor.Tensor) {
	Y, A, C := data(y), data(a), data(c)
	b.parallel(len(Y), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			Y[i] = A[i] + C[i]
		}
	})
}

// Sub implements tensor.Backend: y = a - b.
func (b *Backend) Sub(y, a, c *tensor.Tensor) {
	Y, A, C := data(y), data(a), data(c)
	b.parallel(len(Y), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			Y[i] = A[i] - C[i]
		}
	})
}

// Mul implements tensor.Backend: y = a * b.
func (b *Backend) Mul(y, a, c *tensor.Tensor) {
	Y, A, C := data(y), data(a), data(c)
	b.parallel(len(Y), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			Y[i] = A[i] * C[i]
		}
	})
}

// Scale implements tensor.Backend: y = s x.
func (b *Backend) Scale(y, x *tensor.Tensor, s float32) {
	Y, X := data(y), data(x)
	b.parallel(len(Y), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			Y[i] = s * X[i]
		}
	})
}

// AddScaled implements tensor.Backend: y += s x.
func (b *Backend) AddScaled(y, x *tensor.Tensor, s float32) {
	Y, X := data(y), data(x)
	b.parallel(len(Y), elemGrain, func(lo, hi int) {
		axpy(Y[lo:hi], X[lo:hi], s)
	})
}

// MulAcc implements tensor.Backend: y += a * b.
func (b *Backend) MulAcc(y, a, c *tensor.Tensor) {
	Y, A, C := data(y), data(a), data(c)
	b.parallel(len(Y), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			Y[i] += A[i] * C[i]
		}
	})
}

// GELU implements tensor.Backend with the exact form x Phi(x). On amd64
// with cgo it runs the vectorised loop of act_amd64.c (within 2e-6 of the
// float64 reference geluGo, TestGELUFast); elsewhere geluGo itself.
func (b *Backend) GELU(y, x *tensor.Tensor) {
	Y, X := data(y), data(x)
	b.parallel(len(Y), elemGrain, func(lo, hi int) { geluFast(Y[lo:hi], X[lo:hi]) })
}

// GELUBackward implements tensor.Backend: dx += dy (Phi(x) + x phi(x)).
func (b *Backend) GELUBackward(dx, dy, x *tensor.Tensor) {
	DX, DY, X := data(dx), data(dy), data(x)
	b.parallel(len(DX), elemGrain, func(lo, hi int) { geluBackwardFast(DX[lo:hi], DY[lo:hi], X[lo:hi]) })
}

// geluGo is the float64 reference GELU, the oracle for the fast path.
func geluGo(y, x []float32) {
	for i, xv := range x[:len(y)] {
		v := float64(xv)
		y[i] = float32(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
	}
}

// geluBackwardGo is the float64 reference of the GELU derivative.
func geluBackwardGo(dx, dy, x []float32) {
	const invSqrt2Pi = 0.3989422804014327
	for i, xv := range x[:len(dx)] {
		v := float64(xv)
		d := 0.5*(1+math.Erf(v/math.Sqrt2)) + v*invSqrt2Pi*math.Exp(-0.5*v*v)
		dx[i] += dy[i] * float32(d)
	}
}

// Sigmoid implements tensor.Backend.
func (b *Backend) Sigmoid(y, x *tensor.Tensor) {
	Y, X := data(y), data(x)
	b.parallel(len(Y), elemGrain/4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			Y[i] = sigmoid(X[i])
		}
	})
}

// SigmoidBackward implements tensor.Backend: dx += dy y (1-y).
func (b *Backend) SigmoidBackward(dx, dy, y *tensor.Tensor) {
	DX, DY, Y := data(dx), data(dy), data(y)
	b.parallel(len(DX), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			DX[i] += DY[i] * Y[i] * (1 - Y[i])
		}
	})
}

func sigmoid(v float32) float32 {
	return float32(1 / (1 + math.Exp(-float64(v))))
}

// ChannelCopy implements tensor.Backend.
func (b *Backend) ChannelCopy(dst *tensor.Tensor, dstFrom int, src *tensor.Tensor, srcFrom, n int, accumulate bool) {
	D, S := data(dst), data(src)
	sp := dst.SpatialSize()
	cd, cs := dst.Channels(), src.Channels()
	b.parallel(dst.Batch()*n, grainFor(sp), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			bi, c := j/n, j%n
			d := D[(bi*cd+dstFrom+c)*sp:][:sp]
			s := S[(bi*cs+srcFrom+c)*sp:][:sp]
			if accumulate {
				axpy(d, s, 1)
			} else {
				copy(d, s)
			}
		}
	})
}

// MSE implements tensor.Backend: out = mean((a-b)^2), summed in float64
// over fixed chunks in order.
func (b *Backend) MSE(out, a, c *tensor.Tensor) {
	A, C := data(a), data(c)
	n := len(A)
	const grain = 8192
	parts := make([]float64, (n+grain-1)/grain)
	b.parallel(n, grain, func(lo, hi int) {
		var s float64
		for i := lo; i < hi; i++ {
			d := float64(A[i]) - float64(C[i])
			s += d * d
		}
		parts[lo/grain] = s
	})
	var s float64
	for _, p := range parts {
		s += p
	}
	data(out)[0] = float32(s / float64(n))
}

// MSEBackward implements tensor.Backend: da += dout 2(a-b)/n, db -= the same.
func (b *Backend) MSEBackward(da, db, dout, a, c *tensor.Tensor) {
	A, C, DA, DB := data(a), data(c), data(da), data(db)
	k := 2 * data(dout)[0] / float32(len(A))
	b.parallel(len(A), elemGrain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			g := k * (A[i] - C[i])
			if DA != nil {
				DA[i] += g
			}
			if DB != nil {
				DB[i] -= g
			}
		}
	})
}

// MeanStd implements tensor.Backend: spatial mean and unbiased std per
// (sample, channel), accumulated in float64.
func (b *Backend) MeanStd(mean, std, x *tensor.Tensor) {
	X, M, S := data(x), data(mean), data(std)
	sp := x.SpatialSize()
	b.parallel(len(M), grainFor(2*sp), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			v := X[j*sp:][:sp]
			var s float64
			for _, e := range v {
				s += float64(e)
			}
			mu := s / float64(sp)
			var q float64
			for _, e := range v {
				d := float64(e) - mu
				q += d * d
			}
			M[j] = float32(mu)
			if sp > 1 {
				S[j] = float32(math.Sqrt(q / float64(sp-1)))
			} else {
				S[j] = 0
			}
		}
	})
}

// MeanStdBackward implements tensor.Backend:
// dx += dmean/N + dstd (x - mean) / ((N-1) std).
func (b *Backend) MeanStdBackward(dx, dmean, dstd, x, mean, std *tensor.Tensor) {
	DX, X, M, S, DM, DS := data(dx), data(x), data(mean), data(std), data(dmean), data(dstd)
	sp := x.SpatialSize()
	b.parallel(len(M), grainFor(sp), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			var gm, gs float32
			if DM != nil {
				gm = DM[j] / float32(sp)
			}
			if DS != nil && S[j] > 0 && sp > 1 {
				gs = DS[j] / (float32(sp-1) * S[j])
			}
			d, v, mu := DX[j*sp:][:sp], X[j*sp:][:sp], M[j]
			for i := range d {
				d[i] += gm + gs*(v[i]-mu)
			}
		}
	})
}

// minFastAdd is the shortest slice axpy and addInterleaved hand to the
// C loops: below it a cgo call (some tens of ns) costs more than it
// saves (BenchmarkAxpy).
const minFastAdd = 256

// axpy computes y += a x: the vector loop of add_amd64.c on long slices,
// axpyGo otherwise (the same bits).
func axpy(y, x []float32, a float32) {
	if haveFastAdd && len(y) >= minFastAdd {
		axpyFast(y, x, a)
		return
	}
	axpyGo(y, x, a)
}

// axpyGo computes y += a x, unrolled by four for the Go compiler.
func axpyGo(y, x []float32, a float32) {
	n := len(y)
	x = x[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		y4 := y[i : i+4 : i+4]
		x4 := x[i : i+4 : i+4]
		y4[0] += a * x4[0]
		y4[1] += a * x4[1]
		y4[2] += a * x4[2]
		y4[3] += a * x4[3]
	}
	for ; i < n; i++ {
		y[i] += a * x[i]
	}
}

// dot returns sum x[i] y[i], accumulated in float32 over four lanes.
func dot(x, y []float32) float32 {
	n := len(x)
	y = y[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		x4 := x[i : i+4 : i+4]
		y4 := y[i : i+4 : i+4]
		s0 += x4[0] * y4[0]
		s1 += x4[1] * y4[1]
		s2 += x4[2] * y4[2]
		s3 += x4[3] * y4[3]
	}
	for ; i < n; i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// ReLU implements tensor.Backend: y = max(x, 0) (a NaN gives 0). On amd64
// with cgo it runs the branch-free C loop of act_amd64.c, bit-identical to
// reluGo.
func (b *Backend) ReLU(y, x *tensor.Tensor) {
	Y, X := data(y), data(x)
	b.parallel(len(Y), elemGrain, func(lo, hi int) { reluFast(Y[lo:hi], X[lo:hi]) })
}

// ReLUBackward implements tensor.Backend: dx += dy where x > 0.
func (b *Backend) ReLUBackward(dx, dy, x *tensor.Tensor) {
	DX, DY, X := data(dx), data(dy), data(x)
	b.parallel(len(DX), elemGrain, func(lo, hi int) { reluBackwardFast(DX[lo:hi], DY[lo:hi], X[lo:hi]) })
}

// reluGo is ReLU's definition in Go: y = x where x > 0, else 0.
func reluGo(y, x []float32) {
	x = x[:len(y)]
	for i, v := range x {
		if v > 0 {
			y[i] = v
		} else {
			y[i] = 0
		}
	}
}

// reluBackwardGo is ReLUBackward's definition in Go: dx += dy where x > 0,
// dx untouched elsewhere.
func reluBackwardGo(dx, dy, x []float32) {
	dy, x = dy[:len(dx)], x[:len(dx)]
	for i := range dx {
		if x[i] > 0 {
			dx[i] += dy[i]
		}
	}
}
