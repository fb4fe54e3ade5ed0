package h5

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/hdf5"
)

// testSpec is a Darcy-like file: two datasets per trajectory, attributes of
// every supported type, two coordinates.
func testSpec() Spec {
	return Spec{
		Datasets: []string{"nu", "tensor"},
		Shapes:   [][]int{{8, 8}, {1, 8, 8}},
		Attrs: map[string]any{
			"beta": 1.0, "seed": 7, "solver": "finite volumes", "grid": []int{8, 8},
			"domain": []float64{1, 1}, "tol": float32(1e-6), "steps": int64(12), "big": uint64(1) << 40,
		},
		Coords: map[string][]float32{"x-coordinate": {0, 1, 2, 3, 4, 5, 6, 7}, "y-coordinate": {7, 6, 5, 4, 3, 2, 1, 0}},
	}
}

// testTrajectory encodes i in every value.
func testTrajectory(i int) [][]float32 {
	nu := make([]float32, 64)
	u := make([]float32, 64)
	for j := range nu {
		nu[j] = float32(i*1000 + j)
		u[j] = -float32(i*1000 + j)
	}
	return [][]float32{nu, u}
}

// checkFile verifies that path holds testSpec with n trajectories.
func checkFile(t *testing.T, path string, n int) {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, _ := f.Datasets()
	if want := []string{"nu", "tensor", "x-coordinate", "y-coordinate"}; !slices.Equal(names, want) {
		t.Errorf("datasets %v, want %v", names, want)
	}
	for _, tc := range []struct {
		name string
		want []int
	}{{"nu", []int{n, 8, 8}}, {"tensor", []int{n, 1, 8, 8}}} {
		if got, _ := f.Shape(tc.name); !slices.Equal(got, tc.want) {
			t.Errorf("shape of %s = %v, want %v", tc.name, got, tc.want)
		}
	}
	for i := range n {
		want := testTrajectory(i)
		nu := make([]float32, 64)
		u := make([]float32, 64)
		if err := f.Read("nu", []int{i, 0, 0}, []int{1, 8, 8}, nil, nu); err != nil {
			t.Fatal(err)
		}
		if err := f.Read("tensor", []int{i, 0, 0, 0}, []int{1, 1, 8, 8}, nil, u); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(nu, want[0]) || !slices.Equal(u, want[1]) {
			t.Fatalf("trajectory %d differs from what was written", i)
		}
	}
	x, _, err := f.ReadAll("y-coordinate")
	if err != nil || !slices.Equal(x, []float32{7, 6, 5, 4, 3, 2, 1, 0}) {
		t.Errorf("y-coordinate = %v, %v", x, err)
	}
	attrs := map[string]any{"beta": 1.0, "seed": 7.0, "solver": "finite volumes", "grid": []float64{8, 8},
		"domain": []float64{1, 1}, "tol": float64(float32(1e-6)), "steps": 12.0, "big": float64(1 << 40), CompleteAttr: 1.0, TrajectoriesAttr: float64(n)}
	for name, want := range attrs {
		got, err := f.Attr(name)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("attribute %s = %v (%v), want %v", name, got, err, want)
		}
	}
}

// fakeGen describes a generator's output like a pde.Generator.
type fakeGen struct{}

func (fakeGen) Datasets() []string    { return []string{"tensor"} }
func (fakeGen) Shapes() [][]int       { return [][]int{{3, 4}} }
func (fakeGen) Attrs() map[string]any { return map[string]any{"nu": 0.01} }
func (fakeGen) Coords() map[string][]float32 {
	return map[string][]float32{"x-coordinate": {0, 1, 2, 3}}
}

// TestSpecOf checks that the seed joins the attributes (so another seed
// gives another fingerprint) without touching the generator's map.
func TestSpecOf(t *testing.T) {
	a, b := SpecOf(fakeGen{}, 1), SpecOf(fakeGen{}, 2)
	if a.Attrs[SeedAttr] != uint64(1) || a.Attrs["nu"] != 0.01 || len(fakeGen{}.Attrs()) != 1 {
		t.Errorf("SpecOf attributes %v", a.Attrs)
	}
	if a.Fingerprint(5) == b.Fingerprint(5) || a.Fingerprint(5) == a.Fingerprint(6) || a.Fingerprint(5) != SpecOf(fakeGen{}, 1).Fingerprint(5) {
		t.Error("fingerprints do not follow the seed and count")
	}
}

// TestWriterRoundTrip writes trajectories out of order from several
// goroutines and reads every value, attribute and coordinate back.
func TestWriterRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "darcy.hdf5")
	const n = 12
	w, err := Create(path, testSpec(), n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the final path exists before Commit")
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n - 1 - g; i >= 0; i -= 3 {
				if err := w.Write(i, testTrajectory(i)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	committed(t, w, path, n)
	if _, err := os.Stat(path + ".lock"); err == nil {
		t.Error("lock file left after Commit")
	}
	if ok, reason := Existing(path, testSpec(), n); !ok {
		t.Errorf("Existing = false (%s) for the committed file", reason)
	}
	other := testSpec()
	other.Attrs["seed"] = 8
	if ok, reason := Existing(path, other, n); ok || reason != "written with different settings" {
		t.Errorf("Existing with another seed = %v (%s), want false: different settings", ok, reason)
	}
	if ok, reason := Existing(path, testSpec(), n+1); ok || reason != "written with different settings" {
		t.Errorf("Existing with another count = %v (%s)", ok, reason)
	}
	if ok, reason := Existing(filepath.Join(dir, "none.hdf5"), testSpec(), n); ok || reason != "missing" {
		t.Errorf("Existing of a missing file = %v (%s)", ok, reason)
	}
}

// TestWriterCompresses checks that trajectory datasets are gzip-chunked:
// 64 trajectories of 50x64x64 constant values (52 MB raw) must shrink to
// well under a megabyte.
func TestWriterCompresses(t *testing.T) {
	if got := chunkShape([]int{50, 64, 64}); !slices.Equal(got, []uint{1, 50, 64, 64}) {
		t.Errorf("chunk of a 2D trajectory = %v, want one trajectory", got)
	}
	if got := chunkShape([]int{21, 128, 128, 128}); !slices.Equal(got, []uint{1, 1, 16, 128, 128}) {
		t.Errorf("chunk of a 3D trajectory = %v, want [1 1 16 128 128] (1 MiB)", got)
	}
	path := filepath.Join(t.TempDir(), "z.hdf5")
	const n = 64
	w, err := Create(path, Spec{Datasets: []string{"tensor"}, Shapes: [][]int{{50, 64, 64}}}, n)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 50*64*64)
	for i := range x {
		x[i] = 0.25
	}
	for i := range n {
		if err := w.Write(i, [][]float32{x}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	raw := int64(n * len(x) * 4)
	if st.Size() > 1<<20 {
		t.Errorf("file holds %d bytes for %d raw: not compressed", st.Size(), raw)
	}
}

// TestWriterRefuses checks bad specs, non-finite values and committing an
// unfinished file.
func TestWriterRefuses(t *testing.T) {
	dir := t.TempDir()
	specs := []struct {
		name string
		spec Spec
		want string
	}{
		{"no datasets", Spec{}, "0 datasets"},
		{"reserved dataset", Spec{Datasets: []string{"uhno-x"}, Shapes: [][]int{{2}}}, "reserved"},
		{"twice", Spec{Datasets: []string{"a", "a"}, Shapes: [][]int{{2}, {2}}}, "used twice"},
		{"empty shape", Spec{Datasets: []string{"a"}, Shapes: [][]int{{}}}, "positive sizes"},
		{"zero size", Spec{Datasets: []string{"a"}, Shapes: [][]int{{3, 0}}}, "positive sizes"},
		{"slash", Spec{Datasets: []string{"a/b"}, Shapes: [][]int{{2}}}, "without '/'"},
		{"coord clash", Spec{Datasets: []string{"a"}, Shapes: [][]int{{2}}, Coords: map[string][]float32{"a": {1}}}, "used twice"},
		{"bad attr type", Spec{Datasets: []string{"a"}, Shapes: [][]int{{2}}, Attrs: map[string]any{"x": true}}, "has type bool"},
		{"NaN attr", Spec{Datasets: []string{"a"}, Shapes: [][]int{{2}}, Attrs: map[string]any{"x": math.NaN()}}, "finite"},
		{"complete attr", Spec{Datasets: []string{"a"}, Shapes: [][]int{{2}}, Attrs: map[string]any{"complete": 1}}, "reserved"},
	}
	for _, tc := range specs {
		t.Run(tc.name, func(t *testing.T) {
			w, err := Create(filepath.Join(dir, "x.hdf5"), tc.spec, 2)
			if err == nil {
				w.Close()
				t.Fatal("Create succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.hdf5") {
				t.Errorf("error %q lacks %q or the path", err, tc.want)
			}
		})
	}

	path := filepath.Join(dir, "nan.hdf5")
	w, err := Create(path, testSpec(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	bad := testTrajectory(2)
	bad[1][17] = float32(math.Inf(-1))
	err = w.Write(2, bad)
	if err == nil || !strings.Contains(err.Error(), "trajectory 2") || !strings.Contains(err.Error(), `"tensor"`) || !strings.Contains(err.Error(), "-Inf at element 17") {
		t.Errorf("writing Inf: %v", err)
	}
	if w.Done(2) {
		t.Error("a refused trajectory counts as done")
	}
	if err := w.Write(0, testTrajectory(0)); err != nil {
		t.Fatal(err)
	}
	err = w.Commit()
	if err == nil || !strings.Contains(err.Error(), "1 of 3 trajectories written") || !strings.Contains(err.Error(), "[1 2]") {
		t.Errorf("Commit of an unfinished file: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("an unfinished file reached the final path")
	}
}

// TestWriterLock checks that a second writer of the same path is refused
// while the first holds it, and admitted once the first lets go.
func TestWriterLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.hdf5")
	w, err := Create(path, testSpec(), 2)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Create(path, testSpec(), 2)
	if err == nil || !strings.Contains(err.Error(), "another process (pid "+strconv.Itoa(os.Getpid())+") is writing it") || !errors.Is(err, ErrBusy) {
		t.Errorf("second Create: %v", err)
	}
	w.Close()
	w2, err := Create(path, testSpec(), 2)
	if err != nil {
		t.Fatalf("Create after Close: %v", err)
	}
	w2.Close()
}

// TestWriterResume interrupts a write (Close without Commit), then checks
// that the final path never appears, a reader refuses the temporary file,
// and the next Create keeps the verified trajectories, rewrites one whose
// data no longer match its checksum, and discards leftovers that are
// corrupt or were written with other settings.
func TestWriterResume(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.hdf5")
	const n = 6
	w, err := Create(path, testSpec(), n)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{4, 0, 2} {
		if err := w.Write(i, testTrajectory(i)); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the final path exists after an interrupted write")
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "file does not exist") {
		t.Fatalf("Open after interruption: %v", err)
	}
	if _, err := Open(w.tmp); err == nil || !strings.Contains(err.Error(), "incomplete file from an interrupted write (3 of 6 trajectories") {
		t.Fatalf("Open of the temporary file: %v", err)
	}

	// Damage trajectory 2 behind the writer's back: its checksum no longer
	// matches, so it must be rewritten.
	hf, err := hdf5.OpenFile(w.tmp, hdf5.F_ACC_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	d, err := hf.OpenDataset("nu")
	if err != nil {
		t.Fatal(err)
	}
	junk := testTrajectory(5)[0]
	if err := writeSlab(d, []int{2, 0, 0}, []int{1, 8, 8}, &junk); err != nil {
		t.Fatal(err)
	}
	d.Close()
	hf.Close()

	// A second leftover that must be discarded: garbage.
	garbage := path + ".tmp-999999"
	if err := os.WriteFile(garbage, []byte("half a file"), 0o644); err != nil {
		t.Fatal(err)
	}

	w, err = Create(path, testSpec(), n)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Resumed(); got != 2 {
		t.Errorf("resumed %d trajectories, want 2 (0 and 4; 2 fails its checksum)", got)
	}
	if got := w.Remaining(); !slices.Equal(got, []int{1, 2, 3, 5}) {
		t.Errorf("remaining %v, want [1 2 3 5]", got)
	}
	if _, err := os.Stat(garbage); err == nil {
		t.Error("a garbage leftover was kept")
	}
	for _, i := range w.Remaining() {
		if err := w.Write(i, testTrajectory(i)); err != nil {
			t.Fatal(err)
		}
	}
	committed(t, w, path, n)

	// A leftover written with other settings (another seed) is discarded.
	path2 := filepath.Join(dir, "s.hdf5")
	w, err = Create(path2, testSpec(), n)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(1, testTrajectory(1)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	other := testSpec()
	other.Attrs["seed"] = 99
	w, err = Create(path2, other, n)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Resumed() != 0 || len(w.Remaining()) != n {
		t.Errorf("resumed %d trajectories from a leftover written for another seed", w.Resumed())
	}
}

// helperEnv names the file the helper process writes.
const helperEnv = "UHNO_H5_WRITER_HELPER"

// TestWriterHelperProcess is not a test: run by TestWriterKilled in a child
// process, it writes trajectories 3, 1 and 4 of a 6-trajectory file, says
// "ready" and waits to be killed.
func TestWriterHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper for TestWriterKilled")
	}
	w, err := Create(path, testSpec(), 6)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	for _, i := range []int{3, 1, 4} {
		if err := w.Write(i, testTrajectory(i)); err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	os.Exit(3)
}

// TestWriterKilled kills a writing process with SIGKILL (no chance to
// clean up) and checks that nothing appears at the final path, that the
// dead process's lock does not block the next run, and that the next run
// resumes the three trajectories the dead one had written.
func TestWriterKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.hdf5")
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriterHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q (%v)", line, err)
	}
	// The helper holds the lock while alive.
	if _, err := Create(path, testSpec(), 6); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("Create while the helper lives: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the final path exists after the writer was killed")
	}
	w, err := Create(path, testSpec(), 6)
	if err != nil {
		t.Fatalf("Create after the writer died: %v", err)
	}
	if got := w.Remaining(); !slices.Equal(got, []int{0, 2, 5}) {
		t.Errorf("remaining %v, want [0 2 5]", got)
	}
	for _, i := range w.Remaining() {
		if err := w.Write(i, testTrajectory(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, 6)
}

// committed commits w and checks the file at path holds n intact
// trajectories and that no temporary file is left.
func committed(t *testing.T, w *Writer, path string, n int) {
	t.Helper()
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, n)
	if left := leftovers(path); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
