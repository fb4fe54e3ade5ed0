package figure

import (
	"math"
	"path/filepath"
	"slices"
	"testing"
)

func TestSpaceTime(t *testing.T) {
	const steps, n = 21, 64
	truth, pred := wave(steps, n)
	crashed := slices.Clone(pred)
	for i := 15 * n; i < len(crashed); i++ { // the rollout blows up at frame 15
		crashed[i] = nan()
	}
	crashed[15*n] = float32(math.Inf(1))
	type args struct {
		truth, pred    []float32
		steps, n       int
		x0, x1, t0, t1 float64
	}
	ok := args{truth, pred, steps, n, 0, 1, 0, 2}
	tests := []struct {
		name    string
		mod     func(a *args)
		wantErr string // "" for success
		wantNaN bool   // the figure shows non-finite cells
	}{
		{name: "rollout", mod: func(*args) {}},
		{name: "crashed rollout", mod: func(a *args) { a.pred = crashed }, wantNaN: true},
		{name: "perfect prediction", mod: func(a *args) { a.pred = a.truth }},
		{name: "one frame, one point", mod: func(a *args) {
			a.truth, a.pred, a.steps, a.n = []float32{0.5}, []float32{0.25}, 1, 1
		}},
		{name: "short truth", mod: func(a *args) { a.truth = a.truth[1:] }, wantErr: "truth has 1343 values, want steps*n = 21*64 = 1344"},
		{name: "long pred", mod: func(a *args) { a.pred = append(slices.Clone(a.pred), 0) }, wantErr: "pred has 1345 values"},
		{name: "no steps", mod: func(a *args) { a.steps = 0 }, wantErr: "steps = 0, n = 64: want both >= 1"},
		{name: "inverted x", mod: func(a *args) { a.x0, a.x1 = 1, 0 }, wantErr: "x0 = 1, x1 = 0: want finite x0 < x1"},
		{name: "NaN t1", mod: func(a *args) { a.t1 = math.NaN() }, wantErr: "t0 = 0, t1 = NaN"},
		{name: "infinite t1", mod: func(a *args) { a.t1 = math.Inf(1) }, wantErr: "t0 = 0, t1 = +Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := ok
			tt.mod(&a)
			path := filepath.Join(t.TempDir(), "spacetime.png")
			err := SpaceTime(path, "Burgers", a.truth, a.pred, a.steps, a.n, a.x0, a.x1, a.t0, a.t1)
			if !checkOutcome(t, err, path, tt.wantErr, 2025, 600) {
				return
			}
			if got := countColour(t, path, nanGreen) > 0; got != tt.wantNaN {
				t.Errorf("non-finite colour drawn: %v, want %v", got, tt.wantNaN)
			}
		})
	}
}

func TestSnapshots(t *testing.T) {
	const nx, ny = 24, 16
	field := func(k int, drift float64) []float32 {
		z := make([]float32, nx*ny)
		for i := range nx {
			for j := range ny {
				z[i*ny+j] = float32(math.Sin(float64(i)/4+float64(k))*math.Cos(float64(j)/3) + drift*float64(i*j)/float64(nx*ny))
			}
		}
		return z
	}
	var truth, pred [][]float32
	for k := range 3 {
		truth = append(truth, field(k, 0))
		pred = append(pred, field(k, 0.1*float64(k)))
	}
	labels := []string{"0.25T", "0.5T", "T"}
	withNaN := slices.Clone(pred)
	withNaN[2] = slices.Clone(pred[2])
	withNaN[2][5] = nan()

	tests := []struct {
		name        string
		truth, pred [][]float32
		labels      []string
		nx, ny      int
		wantErr     string
		wantH       int
		wantNaN     bool
	}{
		{name: "three times", truth: truth, pred: pred, labels: labels, nx: nx, ny: ny, wantH: 60 + 3*540},
		{name: "one time", truth: truth[2:], pred: pred[2:], labels: labels[2:], nx: nx, ny: ny, wantH: 60 + 540},
		{name: "a NaN", truth: truth[2:], pred: withNaN[2:], labels: labels[2:], nx: nx, ny: ny, wantH: 60 + 540, wantNaN: true},
		{name: "no labels", truth: nil, pred: nil, labels: nil, nx: nx, ny: ny, wantErr: "labels: no snapshot to draw"},
		{name: "count mismatch", truth: truth, pred: pred[:2], labels: labels, nx: nx, ny: ny, wantErr: "truth has 3 snapshots, pred 2, labels 3"},
		{name: "wrong grid", truth: truth, pred: pred, labels: labels, nx: ny, ny: ny, wantErr: "truth[0] has 384 values, want nx*ny = 16*16 = 256"},
		{name: "short pred", truth: truth, pred: [][]float32{pred[0], pred[1][1:], pred[2]}, labels: labels, nx: nx, ny: ny, wantErr: "pred[1] has 383 values"},
		{name: "empty grid", truth: truth, pred: pred, labels: labels, nx: 0, ny: ny, wantErr: "nx = 0, ny = 16: want both >= 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "snapshots.png")
			err := Snapshots(path, "Navier-Stokes", tt.truth, tt.pred, tt.labels, tt.nx, tt.ny)
			if !checkOutcome(t, err, path, tt.wantErr, 2025, tt.wantH) {
				return
			}
			if got := countColour(t, path, nanGreen) > 0; got != tt.wantNaN {
				t.Errorf("non-finite colour drawn: %v, want %v", got, tt.wantNaN)
			}
		})
	}
}
