package data

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5"
	"uhno/internal/data/h5/h5test"
	"uhno/internal/data/pde"
	"uhno/internal/testutil"
)

// Every solver's metadata describes an h5 file: pde.Generator must keep
// satisfying h5.Describer so SpecOf(generator) works.
var _ h5.Describer = pde.Generator(nil)

// TestOpenLayouts opens each PDEBench layout, with and without a stride,
// and checks what the Dataset reports.
func TestOpenLayouts(t *testing.T) {
	burgers := burgersFixture(t, 4, 6, 16)
	darcy := darcyFixture(t, 3, 8)
	cfd := cfdFixture(t, 3, 4, 8)
	tests := []struct {
		name   string
		fx     fixture
		opt    Options
		format Format
		fields []string
		grid   []int
		attr   string
		value  float64
	}{
		{"burgers", burgers, Options{Frames: 6, Grid: []int{16}}, FormatTensor, []string{"tensor"}, []int{16}, "Nu", 0.01},
		{"burgers stride 4", burgers, Options{Stride: 4}, FormatTensor, []string{"tensor"}, []int{4}, "Nu", 0.01},
		{"darcy stride 2", darcy, Options{Stride: 2, Frames: 1, Grid: []int{8, 8}}, FormatDarcy, []string{"nu", "tensor"}, []int{4, 4}, "beta", 1},
		{"cfd", cfd, Options{Format: FormatCFD}, FormatCFD, h5test.CFDFields, []int{8, 8, 8}, "M", 1},
		{"cfd stride 2", cfd, Options{Stride: 2, Frames: 4, Grid: []int{8, 8, 8}}, FormatCFD, h5test.CFDFields, []int{4, 4, 4}, "eta", 1e-8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(tc.fx.path, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Format() != tc.format || d.Len() != tc.fx.n || d.Frames() != tc.fx.nt ||
				!slices.Equal(d.Fields(), tc.fields) || !slices.Equal(d.Grid(), tc.grid) || !slices.Equal(d.StoredGrid(), tc.fx.stored) {
				t.Errorf("got format %v, %d trajectories, %d frames, fields %v, grid %v (stored %v)",
					d.Format(), d.Len(), d.Frames(), d.Fields(), d.Grid(), d.StoredGrid())
			}
			if v, err := d.Attr(tc.attr); err != nil || v != tc.value {
				t.Errorf("attribute %s = %v (%v), want %v", tc.attr, v, err, tc.value)
			}
			x, err := d.Coordinate("x-coordinate")
			if err != nil {
				t.Fatal(err)
			}
			want := h5test.Coordinate(tc.fx.stored[0])
			s := max(tc.opt.Stride, 1)
			for k := range x {
				if x[k] != want[k*s] {
					t.Fatalf("x-coordinate[%d] = %v, want %v (stride %d)", k, x[k], want[k*s], s)
				}
			}
			if len(x) != tc.grid[0] {
				t.Errorf("x-coordinate has %d values, want %d", len(x), tc.grid[0])
			}
		})
	}
}

// TestReadFrames reads windows of trajectories in every layout and checks
// each value's variable, trajectory, frame and grid point.
func TestReadFrames(t *testing.T) {
	t.Run("cfd window with stride", func(t *testing.T) {
		fx := cfdFixture(t, 3, 4, 8)
		d, err := Open(fx.path, Options{Stride: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		pts := d.Points()
		dst := make([]float32, 2*5*pts)
		if err := d.ReadFrames(dst, 1, 2, 2, d.Fields()); err != nil {
			t.Fatal(err)
		}
		for f := range 2 {
			for c := range 5 {
				checkBlock(t, fx, 2, dst[(f*5+c)*pts:(f*5+c+1)*pts], c, 1, 2+f, "cfd")
			}
		}
		// Channels come in the order asked for.
		dst = dst[:2*pts]
		if err := d.ReadFrames(dst, 2, 3, 1, []string{"Vz", "density"}); err != nil {
			t.Fatal(err)
		}
		checkBlock(t, fx, 2, dst[:pts], 4, 2, 3, "Vz")
		checkBlock(t, fx, 2, dst[pts:], 0, 2, 3, "density")
	})
	t.Run("darcy", func(t *testing.T) {
		fx := darcyFixture(t, 3, 8)
		d, err := Open(fx.path, Options{Stride: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		dst := make([]float32, 2*16)
		if err := d.ReadFrames(dst, 2, 0, 1, []string{"nu", "tensor"}); err != nil {
			t.Fatal(err)
		}
		checkBlock(t, fx, 2, dst[:16], 0, 2, 0, "nu")
		checkBlock(t, fx, 2, dst[16:], 1, 2, 0, "tensor")
	})
	t.Run("burgers", func(t *testing.T) {
		fx := burgersFixture(t, 4, 6, 16)
		d := fx.open(t)
		dst := make([]float32, 6*16)
		if err := d.ReadFrames(dst, 3, 0, 6, []string{"tensor"}); err != nil {
			t.Fatal(err)
		}
		for f := range 6 {
			checkBlock(t, fx, 1, dst[f*16:(f+1)*16], 0, 3, f, "burgers")
		}
	})
}

// TestOpenErrors checks the one-line error of every kind of bad input.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, ds []h5test.Dataset) string {
		p := filepath.Join(dir, name)
		if err := h5test.Write(p, ds, nil); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zeros := func(dims ...int) h5test.Dataset {
		n := 1
		for _, v := range dims {
			n *= v
		}
		return h5test.Dataset{Dims: dims, Data: make([]float32, n)}
	}
	named := func(name string, d h5test.Dataset) h5test.Dataset { d.Name = name; return d }
	cfd := func(vz []int) []h5test.Dataset {
		var ds []h5test.Dataset
		for _, n := range h5test.CFDFields {
			dims := []int{2, 3, 4, 4, 4}
			if n == "Vz" {
				dims = vz
			}
			ds = append(ds, named(n, zeros(dims...)))
		}
		return ds
	}
	burgers := burgersFixture(t, 4, 6, 16)
	raw, err := os.ReadFile(burgers.path)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.hdf5")
	if err := os.WriteFile(truncated, raw[:len(raw)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		opt  Options
		want []string
	}{
		{"missing", filepath.Join(dir, "3D_CFD_Rand_M1.0_Eta1e-08_Zeta1e-08_periodic_Train.hdf5"), Options{},
			[]string{"3D_CFD_Rand_M1.0_Eta1e-08_Zeta1e-08_periodic_Train.hdf5", "does not exist", "doi:10.18419/darus-2986"}},
		{"truncated", truncated, Options{}, []string{"truncated.hdf5", "truncated or corrupt"}},
		{"unknown datasets", file("odd.hdf5", []h5test.Dataset{named("u", zeros(2, 3, 4)), named("x-coordinate", zeros(4))}), Options{},
			[]string{"odd.hdf5", "found datasets [u x-coordinate]", "want one of", "tensor [b, t, x...]", "nu [b, x, y], tensor [b, 1, x, y]", "density, pressure, Vx, Vy, Vz"}},
		{"forced darcy", burgers.path, Options{Format: FormatDarcy},
			[]string{"found datasets [t-coordinate tensor x-coordinate]", "want [nu tensor] (2D Darcy"}},
		{"cfd missing Vz", file("cfd4.hdf5", cfd(nil)[:4]), Options{Format: FormatCFD},
			[]string{"cfd4.hdf5", "found datasets [Vx Vy density pressure]", "want [density pressure Vx Vy Vz]"}},
		{"tensor rank 2", file("r2.hdf5", []h5test.Dataset{named("tensor", zeros(2, 3))}), Options{},
			[]string{"r2.hdf5", `dataset "tensor" has shape [2 3]`, "[b, t, x...]"}},
		{"darcy mismatch", file("d.hdf5", []h5test.Dataset{named("nu", zeros(2, 4, 4)), named("tensor", zeros(2, 1, 4, 8))}), Options{},
			[]string{"d.hdf5", `dataset "tensor" has shape [2 1 4 8]`, "want [2, 1, 4, 4] to match nu [2 4 4]"}},
		{"cfd shapes differ", file("c.hdf5", cfd([]int{2, 3, 4, 4, 2})), Options{},
			[]string{"c.hdf5", `dataset "Vz" has shape [2 3 4 4 2]`, "want [2 3 4 4 4] like density"}},
		{"frames", burgers.path, Options{Frames: 51},
			[]string{"1D_Burgers_Sols_Nu0.01.hdf5", `"tensor" has 6 frames`, "want 51"}},
		{"grid", burgers.path, Options{Grid: []int{1024}},
			[]string{`"tensor" has spatial grid [16]`, "want [1024]"}},
		{"stride", burgers.path, Options{Stride: 3}, []string{"stride 3 does not divide the stored grid [16]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(tc.path, tc.opt)
			if err == nil {
				d.Close()
				t.Fatal("Open succeeded")
			}
			testutil.ErrorSays(t, err, tc.want...)
		})
	}
}

// TestNonFinite puts a NaN in trajectory 2, frame 3 and an Inf in
// trajectory 1's Vy: reads of those trajectories fail naming the
// trajectory, dataset and frame; other trajectories read fine.
func TestNonFinite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nan.hdf5")
	const n, nt, nx = 4, 5, 8
	x := h5test.Field(0, n, nt, []int{nx})
	x[(2*nt+3)*nx+5] = float32(math.NaN())
	if err := h5test.Write(path, []h5test.Dataset{{Name: "tensor", Dims: []int{n, nt, nx}, Data: x}}, nil); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]float32, nt*nx)
	if err := d.ReadFrames(buf, 1, 0, nt, []string{"tensor"}); err != nil {
		t.Errorf("clean trajectory: %v", err)
	}
	err = d.ReadFrames(buf, 2, 0, nt, []string{"tensor"})
	want := path + `: trajectory 2 of dataset "tensor" holds NaN at frame 3, grid point 5`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("NaN: got %v, want %q", err, want)
	}
	if err := d.CheckFinite(nil, nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckFinite: got %v, want %q", err, want)
	}

	cfdPath := filepath.Join(t.TempDir(), "cfd.hdf5")
	var ds []h5test.Dataset
	for c, name := range h5test.CFDFields {
		v := h5test.Field(c, 2, 3, []int{2, 2, 2})
		if name == "Vy" {
			v[(1*3+2)*8+7] = float32(math.Inf(1))
		}
		ds = append(ds, h5test.Dataset{Name: name, Dims: []int{2, 3, 2, 2, 2}, Data: v})
	}
	if err := h5test.Write(cfdPath, ds, nil); err != nil {
		t.Fatal(err)
	}
	dc, err := Open(cfdPath, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	buf = make([]float32, 3*5*8)
	err = dc.ReadFrames(buf, 1, 0, 3, dc.Fields())
	want = `trajectory 1 of dataset "Vy" holds +Inf at frame 2, grid point 7`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Inf: got %v, want %q", err, want)
	}
}

// TestReadOwnFiles writes a file with h5.Writer (as `uhno datagen` does)
// and reads it through the same Dataset reader as PDEBench's files.
func TestReadOwnFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ns2d.hdf5")
	const n, nt, g = 3, 12, 8
	spec := h5.Spec{
		Datasets: []string{"tensor"}, Shapes: [][]int{{nt, g, g}},
		Attrs:  map[string]any{"nu": 1e-3, "seed": 0},
		Coords: map[string][]float32{"x-coordinate": h5test.Coordinate(g), "y-coordinate": h5test.Coordinate(g)},
	}
	w, err := h5.Create(path, spec, n)
	if err != nil {
		t.Fatal(err)
	}
	all := h5test.Field(0, n, nt, []int{g, g})
	per := nt * g * g
	for i := range n {
		if err := w.Write(i, [][]float32{all[i*per : (i+1)*per]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	fx := fixture{path, n, nt, []int{g, g}}
	d, err := Open(path, Options{Frames: nt, Grid: []int{g, g}, Stride: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Format() != FormatTensor || !slices.Equal(d.Fields(), []string{"tensor"}) {
		t.Errorf("format %v fields %v", d.Format(), d.Fields())
	}
	buf := make([]float32, 3*16)
	if err := d.ReadFrames(buf, 2, 9, 3, []string{"tensor"}); err != nil {
		t.Fatal(err)
	}
	for f := range 3 {
		checkBlock(t, fx, 2, buf[f*16:(f+1)*16], 0, 2, 9+f, "own file")
	}
}
