package data

import (
	"slices"
	"testing"
)

// TestFillCoordinate: linspace(0, 1, N) along one axis of a row-major grid,
// constant along the others (known answers).
func TestFillCoordinate(t *testing.T) {
	tests := []struct {
		grid []int
		axis int
		want []float32
	}{
		{[]int{3}, 0, []float32{0, 0.5, 1}},
		{[]int{3, 2}, 0, []float32{0, 0, 0.5, 0.5, 1, 1}},
		{[]int{3, 2}, 1, []float32{0, 1, 0, 1, 0, 1}},
		{[]int{2, 1, 2}, 1, []float32{0, 0, 0, 0}}, // one point along the axis: 0
		{[]int{2, 1, 2}, 2, []float32{0, 1, 0, 1}},
		{[]int{5, 2}, 0, []float32{0, 0, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1, 1}},
	}
	for _, tc := range tests {
		got := make([]float32, len(tc.want))
		FillCoordinate(got, tc.grid, tc.axis)
		if !slices.Equal(got, tc.want) {
			t.Errorf("grid %v axis %d: %v, want %v", tc.grid, tc.axis, got, tc.want)
		}
	}
}

// TestPlanCoordinates: with Sampling.Coordinates a static plan's inputs
// are the field, then x and y (named coord:x, coord:y); the batcher's
// normalisation leaves the coordinate channels as they are and
// normalises the field; the target is unchanged.
func TestPlanCoordinates(t *testing.T) {
	fx := darcyFixture(t, 4, 4)
	_, plain := fx.plan(t, Sampling{})
	_, p := fx.plan(t, Sampling{Coordinates: true})
	if got, want := p.InputChannels(), []string{"nu", "coord:x", "coord:y"}; !slices.Equal(got, want) {
		t.Fatalf("InputChannels %v, want %v", got, want)
	}
	if got := plain.InputChannels(); !slices.Equal(got, []string{"nu"}) {
		t.Fatalf("InputChannels without coordinates %v, want [nu]", got)
	}
	pts := fx.points()
	in, tgt := make([]float32, 3*pts), make([]float32, pts)
	in0, tgt0 := make([]float32, pts), make([]float32, pts)
	pr := Pair{Traj: 2}
	if err := p.ReadPair(pr, in, tgt); err != nil {
		t.Fatal(err)
	}
	if err := plain.ReadPair(pr, in0, tgt0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(in[:pts], in0) || !slices.Equal(tgt, tgt0) {
		t.Fatal("the field channel or the target differs from the plan without coordinates")
	}
	x, y := make([]float32, pts), make([]float32, pts)
	FillCoordinate(x, []int{4, 4}, 0)
	FillCoordinate(y, []int{4, 4}, 1)
	if !slices.Equal(in[pts:2*pts], x) || !slices.Equal(in[2*pts:], y) {
		t.Fatalf("coordinate channels %v %v, want %v %v", in[pts:2*pts], in[2*pts:], x, y)
	}

	// The batcher normalises the field and leaves the coordinates.
	stats := Stats{Fields: []string{"nu", "tensor"}, Mean: []float64{0.5, 0}, Std: []float64{2, 1}}
	b, err := NewBatcher(p, []int{0, 1, 2, 3}, BatchOptions{Batch: 2, Seed: 1, Stats: &stats})
	if err != nil {
		t.Fatal(err)
	}
	bin, btgt := make([]float32, 2*3*pts), make([]float32, 2*pts)
	drawn, err := b.Next(bin, btgt)
	if err != nil {
		t.Fatal(err)
	}
	for k, pr := range drawn {
		if err := p.ReadPair(pr, in, tgt); err != nil {
			t.Fatal(err)
		}
		got := bin[k*3*pts : (k+1)*3*pts]
		for j := range pts {
			if want := float32((float64(in[j]) - 0.5) / 2); got[j] != want {
				t.Fatalf("sample %d point %d: field %v, want (%v - 0.5)/2 = %v", k, j, got[j], in[j], want)
			}
		}
		if !slices.Equal(got[pts:2*pts], x) || !slices.Equal(got[2*pts:], y) {
			t.Fatalf("sample %d: normalisation touched the coordinates: %v %v", k, got[pts:2*pts], got[2*pts:])
		}
	}
}
