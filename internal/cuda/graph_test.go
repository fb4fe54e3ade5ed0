//go:build cuda || cudaemu

package cuda

import (
	"math"
	"strings"
	"testing"

	"uhno/internal/cpu"
	"uhno/internal/tensor"
)

// sameBits fails unless got and want are bit for bit equal: a replayed
// graph runs the very kernels of direct execution on the same data.
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d of %d is %g, direct execution gives %g", what, i, len(want), got[i], want[i])
		}
	}
}

// TestGraphCapture captures a few elementwise launches, checks that
// capturing runs nothing, replays the graph twice and compares it with
// direct execution, then changes an input in place (outside the graph)
// and checks that the replay reads the new values.
func TestGraphCapture(t *testing.T) {
	ref := cpu.New(1)
	shape := []int{3, 5, 37}
	n := tensor.Numel(shape)
	a, c := rnd(ref, 1, shape...), rnd(ref, 2, shape...)
	y, z := both(ref, nil, shape...), both(ref, nil, shape...)
	step := func() { // overwrites y and z from a and c only: replays are idempotent
		gpu.Add(y.g, a.g, c.g)
		gpu.Mul(z.g, y.g, a.g)
		gpu.GELU(y.g, z.g)
		gpu.Scale(z.g, y.g, -0.75)
		gpu.Sigmoid(y.g, z.g)
	}
	direct := func() (yv, zv []float32) {
		step()
		return tensor.ToHost(gpu, y.g), tensor.ToHost(gpu, z.g)
	}
	wantY, wantZ := direct()

	gpu.Zero(y.g.Data)
	gpu.Zero(z.g.Data)
	g, err := gpu.Capture(step)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Destroy(); err != nil {
			t.Error(err)
		}
	}()
	sameBits(t, "after capture, y (nothing may run)", tensor.ToHost(gpu, y.g), make([]float32, n))
	sameBits(t, "after capture, z (nothing may run)", tensor.ToHost(gpu, z.g), make([]float32, n))

	for rep := 0; rep < 2; rep++ {
		if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		sameBits(t, "replay y", tensor.ToHost(gpu, y.g), wantY)
		sameBits(t, "replay z", tensor.ToHost(gpu, z.g), wantZ)
	}

	// New input values in the same buffer: the graph reads them.
	gpu.Upload(a.g.Data, random(3, n, 2))
	if err := g.Launch(); err != nil {
		t.Fatal(err)
	}
	gotY, gotZ := tensor.ToHost(gpu, y.g), tensor.ToHost(gpu, z.g)
	wantY, wantZ = direct()
	sameBits(t, "replay on new input, y", gotY, wantY)
	sameBits(t, "replay on new input, z", gotZ, wantZ)
}

// TestGraphCaptureSPARKeep captures a whole SPAR gate (statistics, radix
// select, mask): it enqueues only device work, so after one direct
// warm-up call (which creates its scratch buffers) it is capturable, and a
// replay on new scores matches direct execution.
func TestGraphCaptureSPARKeep(t *testing.T) {
	ref := cpu.New(1)
	shape := []int{2, 1, 33, 35, 37}
	n := tensor.Numel(shape)
	s := both(ref, random(1, n, 1), shape...)
	hard, stats := both(ref, nil, shape...), both(ref, nil, 2, 3)
	step := func() { gpu.SPARKeep(hard.g, stats.g, s.g, tensor.DefaultSPAR) }
	step() // warm-up: scratch buffers exist before capture

	g, err := gpu.Capture(step)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Destroy()
	for rep, seed := range []uint64{2, 3} {
		gpu.Upload(s.g.Data, random(seed, n, float64(rep+1)))
		if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		gotH, gotS := tensor.ToHost(gpu, hard.g), tensor.ToHost(gpu, stats.g)
		step()
		sameBits(t, "replayed SPARKeep mask", gotH, tensor.ToHost(gpu, hard.g))
		sameBits(t, "replayed SPARKeep stats", gotS, tensor.ToHost(gpu, stats.g))
	}
}

// TestGraphCaptureRejectsSync: a step that waits for the device (Download)
// cannot be captured; Capture returns an error, ends the capture, and the
// stream works normally afterwards.
func TestGraphCaptureRejectsSync(t *testing.T) {
	ref := cpu.New(1)
	a, y := rnd(ref, 1, 2, 3, 5), both(ref, nil, 2, 3, 5)
	g, err := gpu.Capture(func() {
		gpu.Scale(y.g, a.g, 2)
		tensor.ToHost(gpu, y.g)
	})
	if err == nil {
		g.Destroy()
		t.Fatal("capturing a Download succeeded")
	}
	if !strings.Contains(strings.ToLower(err.Error()), "capture") {
		t.Fatalf("unexpected error: %v", err)
	}
	gpu.Scale(y.g, a.g, 2)
	ref.Scale(y.c, a.c, 2)
	agree(t, "Scale after a failed capture", y, 0, 0)
}
