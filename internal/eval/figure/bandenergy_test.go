package figure

import (
	"math"
	"path/filepath"
	"testing"
)

func TestBandEnergy(t *testing.T) {
	const steps, n = 10, 64
	field := make([]float32, steps*n)
	var bands [3][]float32
	for b := range bands {
		bands[b] = make([]float32, steps*n)
	}
	for s := range steps {
		for i := range n {
			field[s*n+i] = float32(math.Sin(2 * math.Pi * float64(i-s) / n))
			for b := range bands {
				bands[b][s*n+i] = float32(math.Exp(-float64((i-32)*(i-32)) / float64(4*(b+1))))
			}
		}
	}
	path := filepath.Join(t.TempDir(), "bands.png")
	if err := BandEnergy(path, "Burgers: local band energy", field, bands, steps, n, 0, 1, 0, 1); err != nil {
		t.Fatal(err)
	}
	checkFigure(t, path, 2700, 600)

	bad := bands
	bad[1] = bad[1][1:]
	path = filepath.Join(t.TempDir(), "bad.png")
	checkFailed(t, BandEnergy(path, "", field, bad, steps, n, 0, 1, 0, 1), path, "bands[1] has 639 values, want steps*n = 640")
	zero := bands // a band without energy (a smooth field) is drawn, not refused
	zero[2] = make([]float32, steps*n)
	path = filepath.Join(t.TempDir(), "zero.png")
	if err := BandEnergy(path, "", field, zero, steps, n, 0, 1, 0, 1); err != nil {
		t.Fatal(err)
	}
	checkFigure(t, path, 2700, 600)
}
