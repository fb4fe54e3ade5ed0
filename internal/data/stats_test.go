package data

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"uhno/internal/data/h5/h5test"
)

// randomCFD writes a 3D CFD file of random values: trajectories in test
// get an offset of 1000, so statistics that saw any of them would be far
// off.
func randomCFD(t *testing.T, n, nt, g int, test []int) (string, map[string][]float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	path := filepath.Join(t.TempDir(), "cfd.hdf5")
	per := nt * g * g * g
	vals := map[string][]float32{}
	var ds []h5test.Dataset
	for c, name := range h5test.CFDFields {
		x := make([]float32, n*per)
		for i := range n {
			off := float32(c) * 3
			if slices.Contains(test, i) {
				off += 1000
			}
			for j := range per {
				x[i*per+j] = off + float32(c+1)*rng.Float32()
			}
		}
		vals[name] = x
		ds = append(ds, h5test.Dataset{Name: name, Dims: []int{n, nt, g, g, g}, Data: x})
	}
	if err := h5test.Write(path, ds, nil); err != nil {
		t.Fatal(err)
	}
	return path, vals
}

// directStats is the textbook two-pass mean and population std of the
// given frames of one field over the training trajectories, with the
// stride applied.
func directStats(vals []float32, train []int, nt, g, s, lo, hi int) (mean, std float64) {
	per := nt * g * g * g
	var xs []float64
	for _, i := range train {
		for f := lo; f < hi; f++ {
			for x := 0; x < g; x += s {
				for y := 0; y < g; y += s {
					for z := 0; z < g; z += s {
						xs = append(xs, float64(vals[i*per+((f*g+x)*g+y)*g+z]))
					}
				}
			}
		}
	}
	for _, v := range xs {
		mean += v
	}
	mean /= float64(len(xs))
	for _, v := range xs {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}

// TestStats checks the training statistics against a direct computation,
// for an input-only, an output-only and an input-and-output field, and
// that the test trajectories never enter them.
func TestStats(t *testing.T) {
	const n, nt, g = 6, 7, 4
	split, err := NewSplit(n, 4, 2, SplitSeeded, 11)
	if err != nil {
		t.Fatal(err)
	}
	path, vals := randomCFD(t, n, nt, g, split.Test)
	d, err := Open(path, Options{Stride: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// H = 2, P = 3: inputs frames 0..3, targets frames 2..4.
	p, err := d.Plan(Sampling{Inputs: []string{"density", "pressure"}, Outputs: []string{"Vx", "density"}, History: 2, Pairs: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ComputeStats(p, split.Train)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Fields, []string{"density", "pressure", "Vx"}) {
		t.Fatalf("fields %v", s.Fields)
	}
	frames := map[string][2]int{"density": {0, 5}, "pressure": {0, 4}, "Vx": {2, 5}}
	for k, f := range s.Fields {
		lo, hi := frames[f][0], frames[f][1]
		m, sd := directStats(vals[f], split.Train, nt, g, 2, lo, hi)
		if math.Abs(s.Mean[k]-m) > 1e-12*math.Abs(m)+1e-15 || math.Abs(s.Std[k]-sd) > 1e-12*sd {
			t.Errorf("%s: mean %v std %v, direct %v %v", f, s.Mean[k], s.Std[k], m, sd)
		}
		if want := int64(len(split.Train) * (hi - lo) * 8); s.Count[k] != want {
			t.Errorf("%s: %d values, want %d", f, s.Count[k], want)
		}
		if s.Mean[k] > 100 {
			t.Errorf("%s: mean %v includes test trajectories", f, s.Mean[k])
		}
	}

	// Normalize and Denormalize are inverse, and normalised training data
	// has zero mean and unit std per field.
	x := make([]float32, 2*3*8)
	for i := range x {
		x[i] = float32(i) * 0.25
	}
	y := slices.Clone(x)
	ch := []string{"Vx", "density", "pressure"}
	s.Normalize(y, ch, 8)
	s.Denormalize(y, ch, 8)
	for i := range x {
		if math.Abs(float64(x[i]-y[i])) > 1e-5 {
			t.Fatalf("round trip: %v -> %v", x[i], y[i])
		}
	}
}

// TestStatsSidecar checks that statistics are stored next to the file,
// reused for the same split and sampling, and recomputed for another split
// or a regenerated file.
func TestStatsSidecar(t *testing.T) {
	fx := burgersFixture(t, 6, 5, 8)
	_, p := fx.plan(t, Sampling{History: 1})
	side := StatsPath(fx.path)
	s1, cached, err := LoadOrComputeStats(p, []int{0, 2, 4}, side)
	if err != nil || cached {
		t.Fatalf("first call: cached %v, %v", cached, err)
	}
	s2, cached, err := LoadOrComputeStats(p, []int{0, 2, 4}, side)
	if err != nil || !cached || !slices.Equal(s1.Mean, s2.Mean) || !slices.Equal(s1.Std, s2.Std) {
		t.Fatalf("second call: cached %v, %v; %v vs %v", cached, err, s1, s2)
	}
	if _, cached, err = LoadOrComputeStats(p, []int{1, 3, 5}, side); err != nil || cached {
		t.Fatalf("another split: cached %v, %v", cached, err)
	}
	var sc sidecar
	raw, _ := os.ReadFile(side)
	if err := json.Unmarshal(raw, &sc); err != nil || sc.Format != statsFormat || len(sc.Entries) != 2 {
		t.Fatalf("sidecar %s: %v, %d entries", side, err, len(sc.Entries))
	}
	if e := sc.Entries[0]; e.File != filepath.Base(fx.path) || e.Train != 3 || e.History != 1 || e.Pairs != 4 {
		t.Errorf("entry describes %+v", e)
	}
	// A regenerated file (new modification time) invalidates the entries.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(fx.path, later, later); err != nil {
		t.Fatal(err)
	}
	if _, cached, err = LoadOrComputeStats(p, []int{0, 2, 4}, side); err != nil || cached {
		t.Errorf("after the file changed: cached %v, %v", cached, err)
	}
	// A direct computation matches.
	s3, err := ComputeStats(p, []int{0, 2, 4})
	if err != nil || !slices.Equal(s3.Mean, s1.Mean) {
		t.Errorf("ComputeStats %v vs cached %v (%v)", s3.Mean, s1.Mean, err)
	}
}
