package predict

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio"

	"uhno/internal/cpu"
	"uhno/internal/data"
	"uhno/internal/data/h5/h5test"
	"uhno/internal/model"
	"uhno/internal/tensor"
)

// tinyModel is a 1D U-HNO of L = 2 on a training grid of 16 (so any grid
// divisible by 4 with at least 8 points fits), one field, history h.
func tinyModel(t *testing.T, h int) Model {
	t.Helper()
	b := cpu.New(2)
	s := model.Spec{Dim: 1, InChannels: h, OutChannels: 1, Levels: 2, C0: 4, WidthMult: 2, K0: 5, M: 3,
		Sigmas: []float64{0.55, 1.2, 2.5}, Groups: 2, MaxRadius: 16, ProjHidden: 8, Mode: model.ModeFull, SPAR: tensor.DefaultSPAR}
	m, err := model.NewUHNO(b, s, 7)
	if err != nil {
		t.Fatal(err)
	}
	st := &data.Stats{Fields: []string{"tensor"}, Mean: []float64{0.5}, Std: []float64{2}, Count: []int64{1}}
	return Model{Net: m, Backend: b, Fields: []string{"tensor"}, History: h, Grid: []int{16}, Domain: []float64{1}, Stats: st, Dt: 0.1}
}

// writeNPY writes values (row-major) of the given shape as <f4 or <f8.
func writeNPY(t *testing.T, path string, shape []int, vals []float64, f64 bool) {
	t.Helper()
	descr, size := "<f4", 4
	if f64 {
		descr, size = "<f8", 8
	}
	buf := npyHeader(descr, shape)
	for _, v := range vals {
		var b [8]byte
		if f64 {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		} else {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(float32(v)))
		}
		buf = append(buf, b[:size]...)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// field returns n*frames*pts smooth values (float32-exact).
func field(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(float32(math.Sin(0.37*float64(i)) + 0.25*math.Cos(0.11*float64(i))))
	}
	return v
}

// readNPY reads an output .npy with npyio (not this package's reader).
func readNPY(t *testing.T, path string) ([]int, []float32) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := npyio.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var v []float32
	if err := r.Read(&v); err != nil {
		t.Fatal(err)
	}
	return r.Header.Descr.Shape, v
}

// leftovers lists what an output at path left beside it: temporary files
// and locks.
func leftovers(path string) []string {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if n := e.Name(); n != base && (strings.HasPrefix(n, base+".") || strings.HasPrefix(n, "."+base+".")) {
			out = append(out, n)
		}
	}
	return out
}

// TestNPYInOut: float32 and float64 .npy input (with and without a time
// axis) give the same float32 .npy output, read back by npyio with shape
// [n, steps+1, x]; frame 0 is the input's last history frame.
func TestNPYInOut(t *testing.T) {
	dir := t.TempDir()
	m := tinyModel(t, 1)
	vals := field(3 * 2 * 16)
	var outs [][]float32
	for _, c := range []struct {
		name  string
		shape []int
		vals  []float64
		f64   bool
	}{
		{"f32.npy", []int{3, 2, 16}, vals, false},
		{"f64.npy", []int{3, 2, 16}, vals, true},
		{"notime.npy", []int{3, 16}, firstFrames(vals, 3, 2, 16), false},
	} {
		in, out := filepath.Join(dir, c.name), filepath.Join(dir, "out-"+c.name)
		writeNPY(t, in, c.shape, c.vals, c.f64)
		res, err := Run(context.Background(), m, Options{Input: in, Output: out, Steps: 4, Batch: 2})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Trajectories != 3 || res.Steps != 4 || !slices.Equal(res.Grid, []int{16}) {
			t.Errorf("%s: result %+v", c.name, res)
		}
		shape, got := readNPY(t, out)
		if !slices.Equal(shape, []int{3, 5, 16}) {
			t.Fatalf("%s: output shape %v, want [3 5 16]", c.name, shape)
		}
		for i := range 3 {
			for j := range 16 {
				if want := float32(vals[i*2*16+j]); got[i*5*16+j] != want {
					t.Fatalf("%s: trajectory %d frame 0 point %d = %v, want the input's %v", c.name, i, j, got[i*5*16+j], want)
				}
			}
		}
		outs = append(outs, got)
		if l := leftovers(out); len(l) > 0 {
			t.Errorf("%s: left %v", c.name, l)
		}
	}
	for k := 1; k < len(outs); k++ {
		if !slices.Equal(outs[0], outs[k]) {
			t.Errorf("output %d differs from the float32 input's", k)
		}
	}
	if slices.Equal(outs[0][16:32], outs[0][32:48]) {
		t.Error("the predicted frames repeat: nothing was rolled out")
	}
}

// firstFrames keeps frame 0 of [n, frames, pts] values.
func firstFrames(v []float64, n, frames, pts int) []float64 {
	var out []float64
	for i := range n {
		out = append(out, v[i*frames*pts:i*frames*pts+pts]...)
	}
	return out
}

// TestPDEBench1DRoundTrip: a PDEBench 1D Burgers file as h5py writes it,
// on a grid of 32 (the model trained on 16), is predicted; the output is
// read back by package data as a PDEBench time series with the input's
// x-coordinate and times from the input's t[0] by the run's step.
func TestPDEBench1DRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "1D_Burgers_Sols_Nu0.01.hdf5"), filepath.Join(dir, "pred.h5")
	if err := h5test.Burgers(in, 3, 4, 32, 0.01); err != nil {
		t.Fatal(err)
	}
	m := tinyModel(t, 1)
	if _, err := Run(context.Background(), m, Options{Input: in, Output: out, Steps: 3, Batch: 2}); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Open(out, data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	if ds.Format() != data.FormatTensor || ds.Len() != 3 || ds.Frames() != 4 || !slices.Equal(ds.Grid(), []int{32}) {
		t.Fatalf("output: format %v, %d trajectories of %d frames on %v; want tensor, 3 of 4 on [32]", ds.Format(), ds.Len(), ds.Frames(), ds.Grid())
	}
	x, err := ds.Coordinate("x-coordinate")
	if err != nil || !slices.Equal(x, h5test.Coordinate(32)) {
		t.Errorf("x-coordinate %v (%v), want the input's cell centres", x, err)
	}
	tc, err := ds.Coordinate("t-coordinate")
	if err != nil || len(tc) != 4 || tc[0] != 0 || math.Abs(float64(tc[3])-0.3) > 1e-6 {
		t.Errorf("t-coordinate %v (%v), want 0, 0.1, 0.2, 0.3", tc, err)
	}
	frame := make([]float32, 4*32)
	if err := ds.ReadFrames(frame, 2, 0, 4, []string{"tensor"}); err != nil {
		t.Fatal(err)
	}
	for j := range 32 {
		if want := h5test.Code(0, 2, 0, j, 3, 4, 32); frame[j] != want {
			t.Fatalf("frame 0 point %d = %v, want the input's %v", j, frame[j], want)
		}
	}
	if l := leftovers(out); len(l) > 0 {
		t.Errorf("left %v", l)
	}
}

// TestRefusals: each bad input is refused in one line that names the file
// and what the run expects, and leaves no output.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	nan := field(3 * 2 * 16)
	nan[1*2*16+5] = math.NaN()
	writeNPY(t, p("channels.npy"), []int{3, 2, 16, 2}, field(3*2*16*2), false)
	writeNPY(t, p("axes.npy"), []int{3, 2, 4, 4, 2}, field(3*2*32), false)
	writeNPY(t, p("history.npy"), []int{3, 1, 16}, field(3*16), false)
	writeNPY(t, p("grid.npy"), []int{3, 2, 18}, field(3*2*18), false)
	writeNPY(t, p("nan.npy"), []int{3, 2, 16}, nan, false)
	if err := h5test.Write(p("u.h5"), []h5test.Dataset{{Name: "u", Dims: []int{3, 2, 16}, Data: h5test.Field(0, 3, 2, []int{16})}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := h5test.Write(p("2d.h5"), []h5test.Dataset{{Name: "tensor", Dims: []int{3, 2, 8, 8}, Data: h5test.Field(0, 3, 2, []int{8, 8})}}, nil); err != nil {
		t.Fatal(err)
	}
	nan32 := h5test.Field(0, 3, 2, []int{16})
	nan32[2*2*16+3] = float32(math.Inf(1)) // frame 0: only the history frames are read
	if err := h5test.Write(p("inf.h5"), []h5test.Dataset{{Name: "tensor", Dims: []int{3, 2, 16}, Data: nan32}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, in, dataset string
		history           int
		want              []string
	}{
		{"channel count", "channels.npy", "", 1, []string{"has 2 channels (last axis), the run expects 1", "[n, (frames), 16]"}},
		{"number of axes (npy)", "axes.npy", "", 1, []string{"shape [3 2 4 4 2] has 5 axes, the run expects", "1D"}},
		{"number of axes (HDF5)", "2d.h5", "", 1, []string{`dataset "tensor"`, "2 spatial axes, the run expects [n, frames >= 1, 16]"}},
		{"history", "history.npy", "", 2, []string{"holds 1 frame(s) per trajectory, need 2 (history 2)", "[n, frames >= 2, 16]"}},
		{"grid", "grid.npy", "", 1, []string{"grid [18]", "trained on [16]", "multiple of 4"}},
		{"NaN (npy)", "nan.npy", "", 1, []string{"holds NaN at index [1, 0, 5]"}},
		{"Inf (HDF5)", "inf.h5", "", 1, []string{`trajectory 2 of dataset "tensor" holds +Inf at frame 0, grid point 3`}},
		{"missing dataset", "u.h5", "v", 1, []string{`no dataset "v"`, "found [u]"}},
		{"default dataset absent", "u.h5", "", 1, []string{"found datasets [u]", "want [tensor]", "--dataset"}},
	} {
		out := p("out-" + strings.ReplaceAll(c.name, " ", "_") + ".h5")
		_, err := Run(context.Background(), tinyModel(t, c.history), Options{Input: p(c.in), Dataset: c.dataset, Output: out, Steps: 2, Batch: 2})
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "predict: ") || !strings.Contains(msg, p(c.in)) {
			t.Errorf("%s: %q: want one line starting predict: and naming %s", c.name, msg, p(c.in))
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q lacks %q", c.name, msg, w)
			}
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: output %s exists", c.name, out)
		}
		if l := leftovers(out); len(l) > 0 {
			t.Errorf("%s: left %v", c.name, l)
		}
	}
	// --dataset picks a dataset of another name.
	if _, err := Run(context.Background(), tinyModel(t, 1), Options{Input: p("u.h5"), Dataset: "u", Output: p("u-pred.npy"), Steps: 2, Batch: 2}); err != nil {
		t.Errorf("--dataset u: %v", err)
	}
}

// TestCancelLeavesNothing: a run cancelled after its first batch leaves
// neither the output nor a temporary file, in both formats.
func TestCancelLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.npy")
	writeNPY(t, in, []int{5, 1, 16}, field(5*16), false)
	for _, name := range []string{"out.npy", "out.h5"} {
		out := filepath.Join(dir, name)
		ctx, cancel := context.WithCancel(context.Background())
		batches := 0
		_, err := Run(ctx, tinyModel(t, 1), Options{Input: in, Output: out, Steps: 2, Batch: 2, Progress: func(done, total int) {
			batches++
			cancel()
		}})
		cancel()
		if !errors.Is(err, context.Canceled) || batches != 1 {
			t.Errorf("%s: err %v after %d batches, want context.Canceled after 1", name, err, batches)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: output exists after a cancelled run", name)
		}
		if l := leftovers(out); len(l) > 0 {
			t.Errorf("%s: left %v", name, l)
		}
	}
}
