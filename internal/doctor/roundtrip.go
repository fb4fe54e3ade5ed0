//go:build cuda || cudaemu

package doctor

import (
	"fmt"

	"uhno/internal/tensor"
)

// roundTripN is the length of doctor's trivial kernel round trip.
const roundTripN = 1000

// roundTrip is doctor's proof that the backend computes: it uploads
// x, launches one elementwise kernel (y = x + x), downloads y and checks
// every element. A launch error panics in the backend (a programming
// error elsewhere); here it is turned into the error doctor reports.
func roundTrip(b tensor.Backend) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("kernel round trip: %v", r)
		}
	}()
	x := make([]float32, roundTripN)
	for i := range x {
		x[i] = float32(i%97) - 48.5
	}
	xs, ys := b.Alloc(roundTripN), b.Alloc(roundTripN)
	defer b.Free(xs)
	defer b.Free(ys)
	b.Upload(xs, x)
	xt, yt := tensor.NewTensor(xs, roundTripN), tensor.NewTensor(ys, roundTripN)
	b.Add(yt, xt, xt)
	y := make([]float32, roundTripN)
	b.Download(y, ys)
	for i := range y {
		if y[i] != 2*x[i] {
			return fmt.Errorf("kernel round trip: element %d of x+x is %g, want %g", i, y[i], 2*x[i])
		}
	}
	return nil
}
