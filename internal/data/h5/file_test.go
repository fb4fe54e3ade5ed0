package h5

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
	"uhno/internal/testutil"
)

// TestReadPDEBenchLayouts reads files written the way PDEBench's h5py
// scripts write them (contiguous float32, root attributes) and checks
// shapes, attributes and hyperslab values, with and without a stride.
func TestReadPDEBenchLayouts(t *testing.T) {
	dir := t.TempDir()
	burgers := filepath.Join(dir, "1D_Burgers_Sols_Nu0.01.hdf5")
	darcy := filepath.Join(dir, "2D_DarcyFlow_beta1.0_Train.hdf5")
	cfd := filepath.Join(dir, "3D_CFD_Rand_M1.0_Eta1e-08_Zeta1e-08_periodic_Train.hdf5")
	if err := h5test.Burgers(burgers, 4, 6, 16, 0.01); err != nil {
		t.Fatal(err)
	}
	if err := h5test.Darcy(darcy, 3, 8, 8, 1.0); err != nil {
		t.Fatal(err)
	}
	if err := h5test.CFD3D(cfd, 3, 4, 8); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path     string
		datasets []string
		shape    map[string][]int
		attr     string
		value    float64
	}{
		{burgers, []string{"t-coordinate", "tensor", "x-coordinate"},
			map[string][]int{"tensor": {4, 6, 16}, "t-coordinate": {7}}, "Nu", 0.01},
		{darcy, []string{"nu", "tensor", "x-coordinate", "y-coordinate"},
			map[string][]int{"nu": {3, 8, 8}, "tensor": {3, 1, 8, 8}}, "beta", 1.0},
		{cfd, []string{"Vx", "Vy", "Vz", "density", "pressure", "t-coordinate", "x-coordinate", "y-coordinate", "z-coordinate"},
			map[string][]int{"density": {3, 4, 8, 8, 8}, "Vz": {3, 4, 8, 8, 8}}, "M", 1.0},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			f, err := Open(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			names, err := f.Datasets()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names, tc.datasets) {
				t.Errorf("Datasets = %v, want %v", names, tc.datasets)
			}
			for name, want := range tc.shape {
				got, err := f.Shape(name)
				if err != nil || !slices.Equal(got, want) {
					t.Errorf("Shape(%s) = %v, %v; want %v", name, got, err, want)
				}
			}
			v, err := f.AttrFloat(tc.attr)
			if err != nil || v != tc.value {
				t.Errorf("attribute %s = %v, %v; want %v", tc.attr, v, err, tc.value)
			}
		})
	}

	// One time window of one 3D trajectory, subsampled by 2 in space:
	// trajectory 2, frames 1..2 of Vy (channel 3).
	f, err := Open(cfd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dst := make([]float32, 2*4*4*4)
	if err := f.Read("Vy", []int{2, 1, 0, 0, 0}, []int{1, 2, 4, 4, 4}, []int{1, 1, 2, 2, 2}, dst); err != nil {
		t.Fatal(err)
	}
	for fr := range 2 {
		for x := range 4 {
			for y := range 4 {
				for z := range 4 {
					got := dst[((fr*4+x)*4+y)*4+z]
					want := h5test.Code(3, 2, fr+1, (2*x*8+2*y)*8+2*z, 3, 4, 512)
					if got != want {
						t.Fatalf("Vy[2, %d, %d, %d, %d] = %v, want %v", fr+1, 2*x, 2*y, 2*z, got, want)
					}
				}
			}
		}
	}
	// float64 coordinates are converted.
	tc, dims, err := f.ReadAll("t-coordinate")
	if err != nil || !slices.Equal(dims, []int{4}) || tc[3] != float32(0.15) {
		t.Errorf("t-coordinate = %v %v %v, want 4 values ending in 0.15", tc, dims, err)
	}
	// A selection outside the dataset is an error naming it.
	err = f.Read("Vy", []int{3, 0, 0, 0, 0}, []int{1, 1, 1, 1, 1}, nil, dst[:1])
	if err == nil || !strings.Contains(err.Error(), `dataset "Vy"`) || !strings.Contains(err.Error(), "outside shape") {
		t.Errorf("out-of-range read: %v", err)
	}
}

// TestOpenBadFiles checks the one-line error of each kind of bad file.
func TestOpenBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.hdf5")
	if err := h5test.CFD3D(good, 2, 3, 8); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// An incomplete uhno file: a writer's temporary file moved into place
	// by hand before Commit.
	incomplete := filepath.Join(dir, "incomplete.hdf5")
	w, err := Create(filepath.Join(dir, "src.hdf5"), testSpec(), 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(1, testTrajectory(1)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := os.Rename(w.tmp, incomplete); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"missing", filepath.Join(dir, "2D_DarcyFlow_beta1.0_Train.hdf5"),
			[]string{"2D_DarcyFlow_beta1.0_Train.hdf5", "file does not exist", "DaRUS", "doi:10.18419/darus-2986", "uhno datagen"}},
		{"directory", dir, []string{dir, "is a directory"}},
		{"empty", write("empty.hdf5", nil), []string{"empty.hdf5", "empty file"}},
		{"not HDF5", write("text.hdf5", []byte("this is not an HDF5 file at all")), []string{"text.hdf5", "not an HDF5 file"}},
		{"truncated", write("truncated.hdf5", raw[:len(raw)/2]), []string{"truncated.hdf5", "cannot open as HDF5", "truncated or corrupt"}},
		{"incomplete", incomplete, []string{"incomplete.hdf5", "incomplete file from an interrupted write", "1 of 4 trajectories"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Open(tc.path)
			if err == nil {
				f.Close()
				t.Fatalf("Open(%s) succeeded", tc.path)
			}
			testutil.ErrorSays(t, err, tc.want...)
		})
	}
}

// TestCorruptChunkRead smashes bytes inside the compressed trajectory
// data of a committed file: the read of that trajectory fails (zlib's
// checksum) with an error naming the path, instead of returning garbage.
func TestCorruptChunkRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.hdf5")
	spec := Spec{Datasets: []string{"tensor"}, Shapes: [][]int{{8, 64, 64}}}
	w, err := Create(path, spec, 4)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 4 {
		x := make([]float32, 8*64*64)
		for j := range x {
			x[j] = rng.Float32()
		}
		if err := w.Write(i, [][]float32{x}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// 512 KiB of incompressible data against a few KiB of metadata: five
	// eighths into the file lies inside a chunk.
	at := len(raw) * 5 / 8
	for i := at; i < at+64; i++ {
		raw[i] ^= 0xa5
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var failed []int
	var last error
	dst := make([]float32, 8*64*64)
	for i := range 4 {
		if err := f.Read("tensor", []int{i, 0, 0, 0}, []int{1, 8, 64, 64}, nil, dst); err != nil {
			failed = append(failed, i)
			last = err
		}
	}
	if len(failed) != 1 {
		t.Fatalf("reads of trajectories %v failed, want exactly one", failed)
	}
	if msg := last.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "HDF5 read failed") || strings.Contains(msg, "\n") {
		t.Errorf("error %q does not name the path and the failed read on one line", msg)
	}
}
