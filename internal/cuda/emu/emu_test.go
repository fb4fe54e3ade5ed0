package emu

import (
	"bytes"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"uhno/internal/cuda/emu/emugen"
)

// The tests of the emulator itself: the generated table is current, a
// launch computes, the launch checks refuse what a GPU would reject or
// silently get wrong, guard pages and canaries catch out-of-range
// accesses, barriers hold under every thread order, and the FFT follows
// cuFFT's conventions. The kernels under test are the project's own
// (kernels/*.cu); internal/cuda tests every one of them against the CPU
// backend under this emulator.

func TestGeneratedUpToDate(t *testing.T) {
	want, err := emugen.Generate(filepath.Join("..", "..", "..", "kernels"), "../../../kernels")
	if err != nil {
		t.Fatal(err)
	}
	have, _ := filepath.Glob("k_*.cc")
	for _, p := range have {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is generated from a kernel file that no longer exists: run go generate ./internal/cuda/emu", p)
		}
	}
	for name, b := range want {
		got, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s is stale (kernels/*.cu changed): run go generate ./internal/cuda/emu", name)
		}
	}
}

// dev is device memory holding vals (float32).
func dev(t *testing.T, vals []float32) uintptr {
	t.Helper()
	p, err := Malloc(int64(4 * len(vals)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Free(p); err != nil {
			t.Errorf("free: %v", err)
		}
	})
	if len(vals) > 0 {
		if err := CopyHtoD(p, unsafe.Pointer(&vals[0]), int64(4*len(vals))); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func host(t *testing.T, p uintptr, n int) []float32 {
	t.Helper()
	v := make([]float32, n)
	if err := CopyDtoH(unsafe.Pointer(&v[0]), p, int64(4*n)); err != nil {
		t.Fatal(err)
	}
	return v
}

func kernel(t *testing.T, name string) Kernel {
	t.Helper()
	k, ok := Lookup(name)
	if !ok {
		t.Fatalf("kernel %s not in the table", name)
	}
	return k
}

func i32(v int) uint64 { return uint64(uint32(int32(v))) }

func TestLaunchElementwise(t *testing.T) {
	const n = 1000
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i), float32(2*i+1)
	}
	pa, pb, py := dev(t, a), dev(t, b), dev(t, make([]float32, n))
	// Fewer threads than elements: the grid-stride loop covers the rest.
	err := Launch(kernel(t, "ew_add"), [3]int{2, 1, 1}, [3]int{64, 1, 1}, 0,
		[]uint64{uint64(py), uint64(pa), uint64(pb), i32(n)}, "pppi")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range host(t, py, n) {
		if v != a[i]+b[i] {
			t.Fatalf("y[%d] = %g, want %g", i, v, a[i]+b[i])
		}
	}
}

func TestLaunchChecks(t *testing.T) {
	py, pa := dev(t, make([]float32, 8)), dev(t, make([]float32, 8))
	add := kernel(t, "ew_add")
	var local [8]float32
	cases := []struct {
		name  string
		k     Kernel
		grid  [3]int
		block [3]int
		sh    int
		args  []uint64
		kinds string
		want  string
	}{
		{"too few parameters", add, [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0, []uint64{uint64(py), uint64(pa), i32(8)}, "ppi", "takes 4 parameters"},
		{"a float for an int", add, [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0, []uint64{uint64(py), uint64(pa), uint64(pa), uint64(math.Float32bits(8))}, "pppf", "parameter 3 is of kind 'i'"},
		{"a host pointer", add, [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0, []uint64{uint64(uintptr(unsafe.Pointer(&local[0]))), uint64(pa), uint64(pa), i32(8)}, "pppi", "parameter 0"},
		{"a block of 2048", add, [3]int{1, 1, 1}, [3]int{2048, 1, 1}, 0, []uint64{uint64(py), uint64(pa), uint64(pa), i32(8)}, "pppi", "invalid launch geometry"},
		{"grid y past 65535", add, [3]int{1, 70000, 1}, [3]int{32, 1, 1}, 0, []uint64{uint64(py), uint64(pa), uint64(pa), i32(8)}, "pppi", "invalid launch geometry"},
		{"an empty grid", add, [3]int{0, 1, 1}, [3]int{32, 1, 1}, 0, []uint64{uint64(py), uint64(pa), uint64(pa), i32(8)}, "pppi", "invalid launch geometry"},
		{"shared memory for a kernel without", add, [3]int{1, 1, 1}, [3]int{32, 1, 1}, 256, []uint64{uint64(py), uint64(pa), uint64(pa), i32(8)}, "pppi", "declares none"},
		{"64 KiB of dynamic shared memory", kernel(t, "gauss_forward_pass"), [3]int{1, 1, 1}, [3]int{32, 1, 1}, 65536, nil, "", "more than the 49152"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args, kinds := c.args, c.kinds
			if args == nil { // a correct parameter list for the kernel
				for _, ki := range Kernels() {
					if ki.Name == "gauss_forward_pass" {
						kinds = ki.Kinds
					}
				}
				for _, ch := range kinds {
					if ch == 'p' {
						args = append(args, uint64(py))
					} else {
						args = append(args, 0)
					}
				}
			}
			err := Launch(c.k, c.grid, c.block, c.sh, args, kinds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestCopyChecks(t *testing.T) {
	p := dev(t, make([]float32, 4))
	var h [8]float32
	if err := CopyHtoD(p, unsafe.Pointer(&h[0]), 20); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Errorf("copy of 20 bytes into 16: %v", err)
	}
	if err := CopyDtoH(unsafe.Pointer(&h[0]), uintptr(unsafe.Pointer(&h[4])), 4); err == nil || !strings.Contains(err.Error(), "not a device address") {
		t.Errorf("copy from a host address: %v", err)
	}
	if err := Memset32(p+4, 0, 4); err == nil {
		t.Errorf("memset of 4 words at offset 1 of 4: no error")
	}
	if err := Free(p + 4); err == nil {
		t.Errorf("free of an interior address: no error")
	}
}

// TestCanaryCatchesSlackWrite: an allocation whose size is not a multiple
// of 4 bytes (42) ends 2 bytes before its guard page (starts are at least
// 4-byte aligned), so ew_scale writing one float too many (bytes 40..43)
// lands partly in the canary, and the launch fails naming the kernel and
// the allocation. (Float buffers of any length end at the guard itself:
// TestGuardPageStopsTheProcess runs, in a child process, a launch that
// writes one float past the end of a buffer of 5 floats, and one that
// reads one past the end of its input (allocations end at their guard
// page): each stops the process with the kernel's name, read or write,
// and the allocation.
func TestGuardPageStopsTheProcess(t *testing.T) {
	if mode := os.Getenv("UHNO_EMU_FAULT_CHILD"); mode != "" {
		x := dev(t, make([]float32, 8))
		y := dev(t, make([]float32, 8))
		n := 6
		if mode == "write" {
			y, _ = Malloc(20) // 5 floats
		} else {
			x, _ = Malloc(20)
		}
		Launch(kernel(t, "ew_scale"), [3]int{1, 1, 1}, [3]int{32, 1, 1}, 0,
			[]uint64{uint64(y), uint64(x), uint64(math.Float32bits(2)), i32(n)}, "ppfi")
		t.Fatal("the out-of-range access did not stop the process")
	}
	for _, mode := range []string{"write", "read"} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestGuardPageStopsTheProcess$")
		cmd.Env = append(os.Environ(), "UHNO_EMU_FAULT_CHILD="+mode)
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 {
			t.Fatalf("%s: child: %v, want exit status 2; output:\n%s", mode, err, out)
		}
		for _, want := range []string{"kernel ew_scale", "out-of-bounds " + mode, "thread (5,0,0)", "0 bytes past the end of device allocation"} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("%s: the message lacks %q:\n%s", mode, want, out)
			}
		}
	}
}

// TestBarrierUnderEveryOrder runs mse_partial, whose per-block tree sum
// in shared memory needs every __syncthreads, under the three orders: the
// partial sums must equal the exact ones (the values are small integers,
// so every order of addition is exact).
func TestBarrierUnderEveryOrder(t *testing.T) {
	const n, chunk = 5000, 1024
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = float32(i%7), float32(i%3)
	}
	parts := (n + chunk - 1) / chunk
	pa, pb := dev(t, a), dev(t, b)
	pp, err := Malloc(int64(8 * parts))
	if err != nil {
		t.Fatal(err)
	}
	defer Free(pp)
	defer SetOrder(Forward, 0)
	for _, o := range []Order{Forward, Reverse, Shuffle} {
		SetOrder(o, 42)
		err := Launch(kernel(t, "mse_partial"), [3]int{parts, 1, 1}, [3]int{256, 1, 1}, 0,
			[]uint64{uint64(pp), uint64(pa), uint64(pb), i32(n), i32(chunk)}, "pppii")
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, parts)
		CopyDtoH(unsafe.Pointer(&got[0]), pp, int64(8*parts))
		for p := range parts {
			want := 0.0
			for i := p * chunk; i < min(n, (p+1)*chunk); i++ {
				d := float64(a[i] - b[i])
				want += d * d
			}
			if got[p] != want {
				t.Fatalf("order %v: part %d = %g, want %g", o, p, got[p], want)
			}
		}
	}
}

// TestFFTConventions checks R2C against a direct DFT (unnormalised,
// packed half spectrum, batched) and that C2R of it is prod(N) times the
// input, in 1D, 2D and 3D.
func TestFFTConventions(t *testing.T) {
	for _, shape := range [][]int{{10}, {4, 6}, {3, 4, 5}} {
		real, half := 1, 1
		for i, n := range shape {
			real *= n
			if i == len(shape)-1 {
				half *= n/2 + 1
			} else {
				half *= n
			}
		}
		const batch = 2
		x := make([]float32, batch*real)
		for i := range x {
			x[i] = float32(math.Sin(float64(3*i+1)) + 0.25*float64(i%5))
		}
		px := dev(t, x)
		pz := dev(t, make([]float32, 2*batch*half))
		py := dev(t, make([]float32, batch*real))
		r2c, err := FFTPlan(shape, batch, R2C)
		if err != nil {
			t.Fatal(err)
		}
		c2r, err := FFTPlan(shape, batch, C2R)
		if err != nil {
			t.Fatal(err)
		}
		if err := FFTExec(r2c, px, pz); err != nil {
			t.Fatal(err)
		}
		z := host(t, pz, 2*batch*half)
		// Direct DFT at every kept bin.
		n := append([]int{1, 1, 1}[:3-len(shape)], shape...)
		for b := range batch {
			for k0 := range n[0] {
				for k1 := range n[1] {
					for k2 := range n[2]/2 + 1 {
						var s complex128
						for i0 := range n[0] {
							for i1 := range n[1] {
								for i2 := range n[2] {
									ph := -2 * math.Pi * (float64(k0*i0)/float64(n[0]) + float64(k1*i1)/float64(n[1]) + float64(k2*i2)/float64(n[2]))
									s += complex(float64(x[b*real+(i0*n[1]+i1)*n[2]+i2]), 0) * cmplx.Exp(complex(0, ph))
								}
							}
						}
						at := b*half + (k0*n[1]+k1)*(n[2]/2+1) + k2
						got := complex(float64(z[2*at]), float64(z[2*at+1]))
						if cmplx.Abs(got-s) > 1e-4*float64(real) {
							t.Fatalf("shape %v: bin (%d,%d,%d) of batch %d = %v, want %v", shape, k0, k1, k2, b, got, s)
						}
					}
				}
			}
		}
		if err := FFTExec(c2r, pz, py); err != nil {
			t.Fatal(err)
		}
		for i, v := range host(t, py, batch*real) {
			if want := float64(real) * float64(x[i]); math.Abs(float64(v)-want) > 1e-4*float64(real) {
				t.Fatalf("shape %v: C2R(R2C(x))[%d] = %g, want %d x %g", shape, i, v, real, x[i])
			}
		}
		FFTDestroy(r2c)
		FFTDestroy(c2r)
	}
}

func TestParseOrder(t *testing.T) {
	for _, c := range []struct {
		in   string
		o    Order
		seed uint64
		ok   bool
	}{{"forward", Forward, 0, true}, {"reverse", Reverse, 0, true}, {"shuffle:7", Shuffle, 7, true}, {"shuffle:x", 0, 0, false}, {"random", 0, 0, false}} {
		o, s, err := ParseOrder(c.in)
		if (err == nil) != c.ok || (c.ok && (o != c.o || s != c.seed)) {
			t.Errorf("ParseOrder(%q) = %v, %d, %v", c.in, o, s, err)
		}
	}
}

// TestGoFaultsStillPanic: the emulator's fault handler passes a fault
// outside an emulated kernel on to Go's, so a nil dereference in Go code
// is still a recoverable panic once the handler is installed.
func TestGoFaultsStillPanic(t *testing.T) {
	p, err := Malloc(4) // installs the handler
	if err != nil {
		t.Fatal(err)
	}
	defer Free(p)
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		var q *[4]float32
		q[1] = 2
	}()
	if recovered == nil {
		t.Fatal("a nil dereference did not panic")
	}
}
