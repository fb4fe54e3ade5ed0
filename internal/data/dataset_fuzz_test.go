package data

import (
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
)

// FuzzOpenShapes writes a small, valid HDF5 file in one of the layouts
// Open reads (uhno's and PDEBench's 1D Burgers "tensor", 2D Darcy "nu"
// and "tensor", 3D CFD's five fields) whose dataset shapes, element
// types and coordinate length come from the fuzzer, with one shape
// optionally disturbed, then opens it with fuzzed Options and reads from
// it as training does. The datasets are declared, never written
// (h5test.Declare): a file of a few kilobytes can declare any shape, so
// the shapes, not the bytes, are what Open must not trust.
//
// Raw-byte fuzzing of the file is out of scope: HDF5's C library parses
// the bytes, is not hardened against arbitrary input, and its faults are
// beyond what uhno can check or Go can recover (see FuzzOpenMetadata in
// package h5).
//
// Any input may only give a one-line error naming the file. A Dataset
// that opens is consistent: at least one trajectory, frame and grid
// point; the format's fields; the stored grid divided exactly by the
// stride; the frames and grid Options asked for; a trajectory count and a
// trajectory size within the reader's bounds, so every product a
// consumer forms is an int. Its first and last frames read (as the fill
// value, 0), and nothing allocates more than a small multiple of the
// file's size besides the caller's buffer.
func FuzzOpenShapes(f *testing.F) {
	// The layouts of h5test.Burgers, Darcy and CFD3D, and PDEBench's full
	// sizes: layout, rank (1D tensor axes), n, t, x, y, z, disturb,
	// element type, Options (format, stride, frames, grid), coordinate.
	f.Add(uint8(0), uint8(1), uint64(4), uint64(6), uint64(16), uint64(0), uint64(0), uint8(0), uint8(0), uint8(0), int8(1), int64(6), true, uint64(16))
	f.Add(uint8(0), uint8(1), uint64(4), uint64(6), uint64(16), uint64(0), uint64(0), uint8(0), uint8(0), uint8(0), int8(4), int64(0), false, uint64(16))
	f.Add(uint8(0), uint8(1), uint64(10000), uint64(201), uint64(1024), uint64(0), uint64(0), uint8(0), uint8(1), uint8(1), int8(8), int64(201), true, uint64(1024))
	f.Add(uint8(0), uint8(2), uint64(1000), uint64(50), uint64(64), uint64(64), uint64(0), uint8(0), uint8(0), uint8(0), int8(1), int64(50), false, uint64(64))
	f.Add(uint8(1), uint8(2), uint64(3), uint64(1), uint64(8), uint64(8), uint64(0), uint8(0), uint8(0), uint8(2), int8(2), int64(1), true, uint64(8))
	f.Add(uint8(1), uint8(2), uint64(10000), uint64(1), uint64(128), uint64(128), uint64(0), uint8(0), uint8(0), uint8(0), int8(2), int64(1), true, uint64(128))
	f.Add(uint8(2), uint8(3), uint64(3), uint64(4), uint64(8), uint64(8), uint64(8), uint8(0), uint8(0), uint8(3), int8(2), int64(4), true, uint64(8))
	f.Add(uint8(2), uint8(3), uint64(100), uint64(21), uint64(128), uint64(128), uint64(128), uint8(0), uint8(1), uint8(3), int8(2), int64(21), true, uint64(128))
	// Disturbed: a CFD field of another shape, Darcy's u not matching a,
	// a zero axis, a stride that does not divide, element types uhno
	// does not read, declared sizes no file this small can hold.
	f.Add(uint8(2), uint8(3), uint64(3), uint64(4), uint64(8), uint64(8), uint64(8), uint8(3), uint8(0), uint8(0), int8(1), int64(0), false, uint64(8))
	f.Add(uint8(1), uint8(2), uint64(3), uint64(1), uint64(8), uint64(8), uint64(0), uint8(6), uint8(0), uint8(0), int8(1), int64(0), false, uint64(8))
	f.Add(uint8(0), uint8(1), uint64(4), uint64(0), uint64(16), uint64(0), uint64(0), uint8(0), uint8(0), uint8(0), int8(1), int64(0), false, uint64(16))
	f.Add(uint8(0), uint8(1), uint64(4), uint64(6), uint64(16), uint64(0), uint64(0), uint8(0), uint8(0), uint8(0), int8(3), int64(0), false, uint64(16))
	f.Add(uint8(0), uint8(1), uint64(4), uint64(6), uint64(16), uint64(0), uint64(0), uint8(0), uint8(2), uint8(0), int8(1), int64(0), false, uint64(16))
	f.Add(uint8(0), uint8(3), uint64(1)<<40, uint64(1)<<20, uint64(1)<<20, uint64(1)<<20, uint64(1)<<20, uint8(0), uint8(0), uint8(0), int8(1), int64(0), false, uint64(1)<<40)
	f.Add(uint8(0), uint8(3), uint64(1), uint64(1), uint64(1)<<21, uint64(1)<<21, uint64(1)<<21, uint8(0), uint8(0), uint8(0), int8(1), int64(0), false, uint64(0))
	f.Add(uint8(0), uint8(3), uint64(1), uint64(1), uint64(1)<<15, uint64(1)<<15, uint64(1)<<15, uint8(0), uint8(0), uint8(0), int8(1), int64(0), false, uint64(0))
	f.Add(uint8(0), uint8(1), uint64(1)<<40, uint64(1), uint64(1), uint64(0), uint64(0), uint8(0), uint8(0), uint8(0), int8(-1), int64(-1), false, uint64(0))

	types := []string{"f32", "f64", "f32be", "i32"}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, layout, rank uint8, n, nt, x, y, z uint64, disturb, dtype, format uint8, stride int8, frames int64, wantGrid bool, coord uint64) {
		axes := []int{3, 1, 2}[rank%3] // time series: rank 1, 2 or 3
		sp := []uint{uint(x), uint(y), uint(z)}[:[]int{axes, 2, 3}[layout%3]]
		var shapes []h5test.Shape
		typ := types[int(dtype)%len(types)]
		switch layout % 3 {
		case 0: // time series, 1 to 3 spatial axes
			shapes = append(shapes, h5test.Shape{Name: "tensor", Dims: append([]uint{uint(n), uint(nt)}, sp...), Type: typ})
		case 1: // Darcy
			shapes = append(shapes,
				h5test.Shape{Name: "nu", Dims: append([]uint{uint(n)}, sp...), Type: typ},
				h5test.Shape{Name: "tensor", Dims: append([]uint{uint(n), 1}, sp...), Type: typ})
		case 2: // 3D CFD
			for _, name := range h5test.CFDFields {
				shapes = append(shapes, h5test.Shape{Name: name, Dims: append([]uint{uint(n), uint(nt)}, sp...), Type: typ})
			}
		}
		// Disturb one axis of one dataset: it must then fail to match.
		if disturb > 0 {
			s := &shapes[int(disturb)%len(shapes)]
			dims := slices.Clone(s.Dims)
			dims[int(disturb/8)%len(dims)] += uint(disturb)
			s.Dims = dims
		}
		if coord > 0 {
			shapes = append(shapes, h5test.Shape{Name: "x-coordinate", Dims: []uint{uint(coord)}})
		}
		path := filepath.Join(dir, "fuzz.h5")
		os.Remove(path)
		if err := h5test.Declare(path, shapes, map[string]any{"Nu": 0.01}); err != nil {
			return // shapes HDF5 itself refuses to write: nothing to read
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		opt := Options{Format: Format(int(format) % 4), Stride: int(stride), Frames: int(frames)}
		if wantGrid {
			for _, g := range sp {
				opt.Grid = append(opt.Grid, int(g))
			}
		}

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d, err := Open(path, opt)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(16*st.Size()+1<<20) {
			t.Fatalf("opening a %d-byte file allocated %d bytes", st.Size(), grew)
		}
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, path) || strings.ContainsAny(msg, "\n\r") || !(strings.HasPrefix(msg, "data: ") || strings.HasPrefix(msg, "h5: ")) {
				t.Fatalf("error is not one line naming %s: %q", path, msg)
			}
			return
		}
		defer d.Close()
		checkOpened(t, d, opt, st.Size())
	})
}

// checkOpened checks the invariants of a Dataset opened from a file of
// size bytes (see FuzzOpenShapes) and reads its first and last frames.
func checkOpened(t *testing.T, d *Dataset, opt Options, size int64) {
	t.Helper()
	grid, stored := d.Grid(), d.StoredGrid()
	if d.Len() < 1 || d.Frames() < 1 || d.Stride() < 1 || len(grid) < 1 || len(grid) > 3 || len(grid) != len(stored) {
		t.Fatalf("opened %d trajectories of %d frames, grid %v stored %v stride %d", d.Len(), d.Frames(), grid, stored, d.Stride())
	}
	if !slices.Equal(d.Fields(), d.Format().fields()) || (opt.Format != FormatAuto && d.Format() != opt.Format) {
		t.Fatalf("opened format %v with fields %v for Options.Format %v", d.Format(), d.Fields(), opt.Format)
	}
	if (opt.Frames > 0 && d.Frames() != opt.Frames) || (opt.Grid != nil && !slices.Equal(stored, opt.Grid)) {
		t.Fatalf("opened %d frames on %v, Options asked %d frames on %v", d.Frames(), stored, opt.Frames, opt.Grid)
	}
	if d.Format() == FormatDarcy && d.Frames() != 1 {
		t.Fatalf("opened Darcy with %d frames", d.Frames())
	}
	values := uint64(d.Frames() * len(d.Fields()))
	for i, g := range grid {
		if g < 1 || g*d.Stride() != stored[i] {
			t.Fatalf("grid %v is not stored grid %v / stride %d", grid, stored, d.Stride())
		}
		hi, lo := bits.Mul64(values, uint64(stored[i]))
		if hi != 0 || lo > uint64(len(d.Fields()))*maxTrajectoryValues {
			t.Fatalf("one trajectory holds more than %d values per field: %d frames x %d fields on %v", maxTrajectoryValues, d.Frames(), len(d.Fields()), stored)
		}
		values = lo
	}
	if d.Len() > maxTrajectories {
		t.Fatalf("opened %d trajectories", d.Len())
	}
	if d.Points() > 1<<16 {
		return // too large to read here; the bounds above are what matter
	}
	buf := make([]float32, d.Points()*len(d.Fields()))
	for _, at := range [][2]int{{0, 0}, {d.Len() - 1, d.Frames() - 1}} {
		if err := d.ReadFrames(buf, at[0], at[1], 1, d.Fields()); err != nil {
			t.Fatalf("reading frame %d of trajectory %d: %v", at[1], at[0], err)
		}
		for _, v := range buf {
			if v != 0 {
				t.Fatalf("read %v from a dataset never written", v)
			}
		}
	}
	if c, err := d.Coordinate("x-coordinate"); err == nil && int64(len(c)) > size {
		t.Fatalf("read %d coordinates from a %d-byte file", len(c), size)
	}
}
