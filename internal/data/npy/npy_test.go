package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rawNpy builds a .npy file by hand: version v, the header dict as given,
// padded as numpy pads it, then body.
func rawNpy(v byte, dict string, body []byte) []byte {
	pre := 10
	if v > 1 {
		pre = 12
	}
	pad := 64 - (pre+len(dict)+1)%64
	head := dict + strings.Repeat(" ", pad%64) + "\n"
	var b bytes.Buffer
	b.WriteString(Magic)
	b.Write([]byte{v, 0})
	if v > 1 {
		_ = binary.Write(&b, binary.LittleEndian, uint32(len(head)))
	} else {
		_ = binary.Write(&b, binary.LittleEndian, uint16(len(head)))
	}
	b.WriteString(head)
	b.Write(body)
	return b.Bytes()
}

func f64s(v ...float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// TestRoundTrip writes an array as numpy.save does and reads its header
// and any run of its elements back.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.npy")
	shape := []int{2, 3, 4, 1}
	data := make([]float32, 24)
	for i := range data {
		data[i] = float32(i) * 0.5
	}
	if err := Write(path, shape, data); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	if h.Descr != "<f4" || !slices.Equal(h.Shape, shape) || h.Offset%64 != 0 {
		t.Fatalf("header %+v", h)
	}
	got := make([]float32, 5)
	if err := Read(path, h, 7, got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, data[7:12]) {
		t.Fatalf("elements 7..11: %v, want %v", got, data[7:12])
	}
	if err := Read(path, h, 22, got); err == nil {
		t.Fatal("a read past the end: no error")
	}
}

// TestHeaders reads headers numpy writes in other versions and types, and
// refuses what is not supported, in one line naming the file.
func TestHeaders(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		raw   []byte
		shape []int
		want  string // a refusal, or "" with shape
	}{
		{"version 2.0, float64, 1-D", rawNpy(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f64s(1, 2.5, -4)), []int{3}, ""},
		{"python 2 long sizes", rawNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1L, 2L), }", f64s(1, 2)), []int{1, 2}, ""},
		{"Fortran order", rawNpy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", make([]byte, 16)), nil, "Fortran-ordered"},
		{"integers", rawNpy(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", make([]byte, 16)), nil, `type "<i8"`},
		{"big-endian", rawNpy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", make([]byte, 8)), nil, `type ">f4"`},
		{"truncated", rawNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", make([]byte, 60)), nil, "truncated"},
		{"not npy", []byte("PK\x03\x04 a zip file"), nil, "not a .npy file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".npy")
			if err := os.WriteFile(path, tc.raw, 0o644); err != nil {
				t.Fatal(err)
			}
			h, err := ReadHeader(path)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line naming %s and containing %q", err, path, tc.want)
				}
				return
			}
			if err != nil || !slices.Equal(h.Shape, tc.shape) {
				t.Fatalf("header %+v, err %v; want shape %v", h, err, tc.shape)
			}
			if tc.name == "version 2.0, float64, 1-D" {
				got := make([]float32, 3)
				if err := Read(path, h, 0, got); err != nil || !slices.Equal(got, []float32{1, 2.5, -4}) {
					t.Fatalf("float64 elements %v, %v", got, err)
				}
			}
		})
	}
}
