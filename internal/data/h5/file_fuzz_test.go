package h5

import (
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
)

// FuzzOpenMetadata writes a small, valid HDF5 file whose metadata come
// from the fuzzer, then opens and reads it as uhno does: uhno's
// bookkeeping (the format attribute, "complete", the trajectory count,
// the uhno-written dataset's length and type) and one dataset's name,
// shape and element type. The datasets are declared but never written
// (h5test.Declare), so a file of a few kilobytes can declare shapes of
// any size: the reader must not trust them to size an allocation.
//
// The fuzzer drives metadata, not raw bytes. HDF5's metadata are parsed
// by the C library, which is not hardened against arbitrary bytes (its
// CVE list is long) and whose faults Go cannot recover from; a malformed
// file is not something uhno can validate before handing it to the
// library, so raw-byte fuzzing would test libhdf5, not uhno. What uhno
// itself decides from a well-formed file is fuzzed here.
//
// Open and the reads may only give one-line "h5: " errors naming the
// file. When Open succeeds the file is either not uhno's or complete;
// every shape's element count is an int; ReadAll returns exactly that
// many values, which the file's size bounds; and no call allocates more
// than a small multiple of the file's size.
func FuzzOpenMetadata(f *testing.F) {
	const (
		hasFormat = 1 << iota
		completeNum
		completeStr
		hasTrajectories
		hasWritten
		completeArr
	)
	// uhno's own layout, as Writer leaves it: complete, then interrupted.
	f.Add(FormatVersion, uint8(hasFormat|completeNum|hasTrajectories|hasWritten), 1.0, 4.0, uint64(4), uint8(4), "tensor", uint8(3), uint64(4), uint64(51), uint64(128), uint64(0), uint8(0))
	f.Add(FormatVersion, uint8(hasFormat|hasTrajectories|hasWritten), 0.0, 4.0, uint64(4), uint8(4), "tensor", uint8(3), uint64(4), uint64(51), uint64(128), uint64(0), uint8(0))
	// PDEBench's layouts (h5test.Burgers, Darcy, CFD3D): no bookkeeping.
	f.Add("", uint8(0), 0.0, 0.0, uint64(0), uint8(0), "tensor", uint8(3), uint64(10000), uint64(201), uint64(1024), uint64(0), uint8(0))
	f.Add("", uint8(0), 0.0, 0.0, uint64(0), uint8(0), "nu", uint8(3), uint64(10000), uint64(128), uint64(128), uint64(0), uint8(0))
	f.Add("", uint8(0), 0.0, 0.0, uint64(0), uint8(0), "density", uint8(4), uint64(100), uint64(21), uint64(128), uint64(128), uint8(1))
	f.Add("", uint8(0), 0.0, 0.0, uint64(0), uint8(0), "x-coordinate", uint8(1), uint64(1024), uint64(0), uint64(0), uint64(0), uint8(1))
	// Edge cases: a huge bookkeeping dataset, a huge coordinate, another
	// format version, a string "complete", a scalar, a zero-size axis,
	// element types uhno does not read, dims whose product overflows.
	f.Add(FormatVersion, uint8(hasFormat|hasTrajectories|hasWritten), 0.0, 4.0, uint64(1)<<40, uint8(4), "tensor", uint8(3), uint64(4), uint64(51), uint64(128), uint64(0), uint8(0))
	f.Add("", uint8(0), 0.0, 0.0, uint64(0), uint8(0), "x-coordinate", uint8(1), uint64(1)<<40, uint64(0), uint64(0), uint64(0), uint8(0))
	f.Add("uhno-pdebench/0", uint8(hasFormat|completeNum), 1.0, 0.0, uint64(0), uint8(0), "tensor", uint8(2), uint64(1), uint64(1), uint64(0), uint64(0), uint8(0))
	f.Add(FormatVersion, uint8(hasFormat|completeArr), 1.0, 4.0, uint64(4), uint8(4), "tensor", uint8(3), uint64(4), uint64(51), uint64(128), uint64(0), uint8(0))
	f.Add(FormatVersion, uint8(hasFormat|completeStr), 1.0, math.NaN(), uint64(0), uint8(0), "t", uint8(0), uint64(0), uint64(0), uint64(0), uint64(0), uint8(0))
	f.Add("", uint8(0), 0.0, 0.0, uint64(0), uint8(0), "tensor", uint8(3), uint64(4), uint64(0), uint64(16), uint64(0), uint8(2))
	f.Add("", uint8(0), 0.0, 0.0, uint64(0), uint8(0), "tensor", uint8(3), uint64(4), uint64(6), uint64(16), uint64(0), uint8(3))
	f.Add("", uint8(0), 0.0, 0.0, uint64(0), uint8(0), "tensor", uint8(3), uint64(1)<<32, uint64(1)<<32, uint64(1)<<32, uint64(0), uint8(0))

	types := []string{"f32", "f64", "f32be", "i32", "u8"}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, format string, flags uint8, complete, trajectories float64, written uint64, writtenType uint8,
		name string, rank uint8, d0, d1, d2, d3 uint64, dtype uint8) {
		attrs := map[string]any{}
		if flags&hasFormat != 0 {
			attrs[FormatAttr] = format
		}
		switch {
		case flags&completeNum != 0:
			attrs[CompleteAttr] = complete
		case flags&completeStr != 0:
			attrs[CompleteAttr] = format
		case flags&completeArr != 0:
			attrs[CompleteAttr] = []float64{complete, complete}
		}
		if flags&hasTrajectories != 0 {
			attrs[TrajectoriesAttr] = trajectories
		}
		var shapes []h5test.Shape
		if flags&hasWritten != 0 {
			shapes = append(shapes, h5test.Shape{Name: WrittenDataset, Dims: []uint{uint(written)}, Type: types[int(writtenType)%len(types)]})
		}
		if name != WrittenDataset {
			dims := []uint{uint(d0), uint(d1), uint(d2), uint(d3), 7}[:min(int(rank), 5)]
			shapes = append(shapes, h5test.Shape{Name: name, Dims: dims, Type: types[int(dtype)%len(types)]})
		}
		path := filepath.Join(dir, "fuzz.h5")
		os.Remove(path)
		if err := h5test.Declare(path, shapes, attrs); err != nil {
			return // metadata HDF5 itself refuses to write: nothing to read
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		size := st.Size()

		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		readAll(t, path, size, flags&hasFormat != 0)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(16*size+1<<20) {
			t.Fatalf("reading a %d-byte file allocated %d bytes", size, grew)
		}
	})
}

// readAll opens path and reads everything the package offers on it,
// checking the results (see FuzzOpenMetadata).
func readAll(t *testing.T, path string, size int64, uhnoFile bool) {
	t.Helper()
	checkErr := func(err error) {
		t.Helper()
		msg := err.Error()
		if !strings.HasPrefix(msg, "h5: "+path) || strings.ContainsAny(msg, "\n\r") {
			t.Fatalf("error is not one line starting with \"h5: %s\": %q", path, msg)
		}
	}
	f, err := Open(path)
	if err != nil {
		checkErr(err)
		return
	}
	defer f.Close()
	if uhnoFile {
		if v, err := f.AttrString(FormatAttr); err != nil || v != FormatVersion {
			t.Fatalf("opened a file with %s %q (%v)", FormatAttr, v, err)
		}
		if c, err := f.AttrFloat(CompleteAttr); err != nil || c != 1 {
			t.Fatalf("opened an incomplete uhno file: %s = %v (%v)", CompleteAttr, c, err)
		}
	}
	for _, a := range []string{FormatAttr, CompleteAttr, TrajectoriesAttr, "missing"} {
		if _, err := f.Attr(a); err != nil {
			checkErr(err)
		}
	}
	names, err := f.Datasets()
	if err != nil {
		checkErr(err)
		return
	}
	for _, name := range names {
		dims, err := f.Shape(name)
		if err != nil {
			checkErr(err)
			continue
		}
		n := uint64(1)
		for _, d := range dims {
			hi, lo := bits.Mul64(n, uint64(d))
			if d < 0 || hi != 0 || lo > math.MaxInt64 {
				t.Fatalf("dataset %q: shape %v has no int element count", name, dims)
			}
			n = lo
		}
		vals, got, err := f.ReadAll(name)
		if err != nil {
			checkErr(err)
		} else if uint64(len(vals)) != n || n > uint64(size) || len(got) != len(dims) {
			t.Fatalf("dataset %q of shape %v: ReadAll returned %d values of shape %v from a %d-byte file", name, dims, len(vals), got, size)
		}
		if n == 0 || len(dims) == 0 {
			continue
		}
		// One element at the far corner: a fill value, 0, or an error.
		offset, count := make([]int, len(dims)), make([]int, len(dims))
		for k, d := range dims {
			offset[k], count[k] = d-1, 1
		}
		one := make([]float32, 1)
		if err := f.Read(name, offset, count, nil, one); err != nil {
			checkErr(err)
		} else if one[0] != 0 {
			t.Fatalf("dataset %q: read %v from a dataset never written", name, one[0])
		}
	}
}

// TestReadBookkeepingType checks that a bookkeeping dataset of another
// element type than Writer's is refused before it is read: gonum reads in
// the file's element type, and a uhno-written of float32 was written four
// bytes per element into a buffer of one (FuzzOpenMetadata found the heap
// corruption).
func TestReadBookkeepingType(t *testing.T) {
	tests := []struct {
		typ  string
		read func(f *File) error
		ok   bool
	}{
		{"u8", func(f *File) error { return f.readUint8("uhno-b", make([]uint8, 5)) }, true},
		{"f32", func(f *File) error { return f.readUint8("uhno-b", make([]uint8, 5)) }, false},
		{"f64", func(f *File) error { return f.readUint8("uhno-b", make([]uint8, 5)) }, false},
		{"i32", func(f *File) error { return f.readUint32("uhno-b", make([]uint32, 5)) }, false},
		{"u8", func(f *File) error { return f.readUint32("uhno-b", make([]uint32, 5)) }, false},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "b.h5")
		if err := h5test.Declare(path, []h5test.Shape{{Name: "uhno-b", Dims: []uint{5}, Type: tt.typ}}, nil); err != nil {
			t.Fatal(err)
		}
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		err = tt.read(f)
		f.Close()
		if (err == nil) != tt.ok || (err != nil && !strings.Contains(err.Error(), "unsigned integers")) {
			t.Errorf("%s dataset: got %v, want ok %v", tt.typ, err, tt.ok)
		}
	}
}
