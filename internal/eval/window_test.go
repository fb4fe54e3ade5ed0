package eval

import (
	"slices"
	"testing"

	"uhno/internal/data"
)

// TestShiftWindow: two samples of 3 history frames of 2 values and one
// coordinate channel of 2 values: a step drops each sample's oldest
// frame, appends its prediction and leaves the coordinates alone.
func TestShiftWindow(t *testing.T) {
	x := []float32{
		1, 1, 2, 2, 3, 3, 90, 91, // sample 0: frames 1, 2, 3; coordinates
		5, 5, 6, 6, 7, 7, 80, 81, // sample 1
	}
	y := []float32{4, 4, 8, 8}
	shiftWindow(x, y, 2, 8, 2, 6)
	want := []float32{2, 2, 3, 3, 4, 4, 90, 91, 6, 6, 7, 7, 8, 8, 80, 81}
	if !slices.Equal(x, want) {
		t.Fatalf("after a step: %v, want %v", x, want)
	}
	inCh := []string{"u", "u", "u", data.CoordinateChannel(0)}
	if n := fixedChannels(inCh); n != 1 {
		t.Fatalf("fixedChannels(%v) = %d, want 1", inCh, n)
	}
	if n := fixedChannels([]string{"u", "v"}); n != 0 {
		t.Fatalf("no coordinates: %d", n)
	}
	inCh = []string{"u", "u", data.ConstantChannel("k"), data.ConstantChannel("Re"), data.CoordinateChannel(0)}
	if n := fixedChannels(inCh); n != 3 {
		t.Fatalf("fixedChannels(%v) = %d, want 3 (two constants, one coordinate)", inCh, n)
	}
}
