package dist

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"uhno/internal/dist/disttest"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestDetect reads each launcher's variables, and refuses bad values.
func TestDetect(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want Launch
		err  string
	}{
		{"none", nil, Launch{}, ""},
		{"mpirun", map[string]string{"OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"},
			Launch{Launcher: "Open MPI", Rank: 3, Size: 4, LocalSize: 2}, ""},
		{"hydra", map[string]string{"PMI_SIZE": "2", "PMI_RANK": "1"}, Launch{Launcher: "PMI", Rank: 1, Size: 2}, ""},
		{"pmix rank only", map[string]string{"PMIX_RANK": "0"}, Launch{Launcher: "PMIx"}, ""},
		{"srun", map[string]string{"SLURM_STEP_ID": "0", "SLURM_NTASKS": "8", "SLURM_PROCID": "5", "SLURM_STEP_TASKS_PER_NODE": "4(x2)"},
			Launch{Launcher: "Slurm", Rank: 5, Size: 8, LocalSize: 4}, ""},
		{"srun step size wins", map[string]string{"SLURM_STEP_ID": "1", "SLURM_NTASKS": "8", "SLURM_STEP_NUM_TASKS": "2", "SLURM_PROCID": "1"},
			Launch{Launcher: "Slurm", Rank: 1, Size: 2}, ""},
		{"srun with pmix", map[string]string{"SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "2", "SLURM_PROCID": "1", "PMIX_RANK": "1"},
			Launch{Launcher: "Slurm", Rank: 1, Size: 2}, ""},
		{"sbatch shell is no rank", map[string]string{"SLURM_STEP_ID": "batch", "SLURM_NTASKS": "8", "SLURM_PROCID": "0"}, Launch{}, ""},
		{"salloc shell is no rank", map[string]string{"SLURM_NTASKS": "8", "SLURM_PROCID": "0"}, Launch{}, ""},
		{"bad size", map[string]string{"OMPI_COMM_WORLD_SIZE": "two", "OMPI_COMM_WORLD_RANK": "0"}, Launch{},
			`dist: OMPI_COMM_WORLD_SIZE="two": want a number >= 0`},
		{"rank past size", map[string]string{"PMI_SIZE": "2", "PMI_RANK": "2"}, Launch{},
			"dist: PMI_RANK=2 but PMI_SIZE=2: the rank must be below the job's size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Detect(envOf(c.env))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %s", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// TestOpenAlone: without a launcher Open needs no MPI and gives Single,
// whose collectives leave their buffers alone.
func TestOpenAlone(t *testing.T) {
	c, l, err := Open(Options{Env: envOf(nil), Libraries: []string{"/nonexistent/libmpi.so.40"}})
	if err != nil || l.Launcher != "" {
		t.Fatalf("Open: %v, %+v", err, l)
	}
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("rank %d of %d", c.Rank(), c.Size())
	}
	f := []float32{1, 2}
	b := []byte("x")
	if err := c.AllReduceSum(f); err != nil || f[0] != 1 || f[1] != 2 {
		t.Fatal(f, err)
	}
	if err := c.Broadcast(b, 0); err != nil || string(b) != "x" {
		t.Fatal(err)
	}
	if err := c.Broadcast(b, 1); err == nil {
		t.Fatal("broadcast from rank 1 of 1 accepted")
	}
	if d, err := Agree(c, []uint64{1}); d != nil || err != nil {
		t.Fatal(d, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenWithoutLibrary: a launcher of several ranks and no libmpi is
// a one-line error naming what was tried and what to install; a job of
// one rank runs alone instead.
func TestOpenWithoutLibrary(t *testing.T) {
	lib := []string{"/nonexistent/libmpi.so.40"}
	_, _, err := Open(Options{Env: envOf(map[string]string{"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "1"}), Libraries: lib})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"dist: started by Open MPI as rank 1 of 2, but libmpi not found: tried /nonexistent/libmpi.so.40 (",
		"apt-get install openmpi-bin libopenmpi-dev", EnvLibrary} {
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %q lacks %q or spans lines", err, want)
		}
	}
	c, _, err := Open(Options{Env: envOf(map[string]string{"OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_RANK": "0"}), Libraries: lib})
	if err != nil || c.Size() != 1 {
		t.Fatalf("a job of one without libmpi: %v", err)
	}
}

// helperEnv selects TestMPIHelper's scenario in the mpirun children.
const helperEnv = "UHNO_DIST_TEST_HELPER"

// TestMPIHelper is not a test: TestMPI starts the test binary under
// mpirun with helperEnv set, and each rank then runs one scenario and
// exits (0: passed; otherwise the reason is printed).
func TestMPIHelper(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("a child of TestMPI")
	}
	fail := func(format string, a ...any) {
		fmt.Printf("FAIL: "+format+"\n", a...)
		os.Exit(3)
	}
	c, l, err := Open(Options{Timeout: 3 * time.Second})
	if err != nil {
		fail("%v", err)
	}
	if (mode != "bench" && c.Size() != 3) || l.Size != c.Size() || c.Rank() != l.Rank {
		fail("rank %d of %d, launcher %+v", c.Rank(), c.Size(), l)
	}
	r := c.Rank()
	switch mode {
	case "bench":
		// Not run by the tests: the all-reduce's own cost for
		// docs/PERFORMANCE.md (UHNO_DIST_BENCH_N floats, 50 times after
		// 5 warm-ups, a barrier before each so that no rank's lateness
		// is counted).
		n, _ := strconv.Atoi(os.Getenv("UHNO_DIST_BENCH_N"))
		buf := make([]float32, max(n, 1))
		var total time.Duration
		for i := range 55 {
			if err := c.Barrier(); err != nil {
				fail("%v", err)
			}
			t0 := time.Now()
			if err := c.AllReduceSum(buf); err != nil {
				fail("%v", err)
			}
			if i >= 5 {
				total += time.Since(t0)
			}
		}
		fmt.Printf("rank %d of %d: all-reduce of %d float32: %.3f ms mean over 50\n", r, c.Size(), len(buf), total.Seconds()*1000/50)
		c.Close()
	case "collectives":
		f := []float32{float32(r), 1, 0.5}
		if err := c.AllReduceSum(f); err != nil || f[0] != 3 || f[1] != 3 || f[2] != 1.5 {
			fail("AllReduceSum: %v %v", f, err)
		}
		d := []float64{float64(r) * 1e-12, 1}
		if err := c.AllReduceSum64(d); err != nil || d[0] != 3e-12 || d[1] != 3 {
			fail("AllReduceSum64: %v %v", d, err)
		}
		b := []byte(fmt.Sprintf("rank%d", r))
		if err := c.Broadcast(b, 2); err != nil || string(b) != "rank2" {
			fail("Broadcast: %q %v", b, err)
		}
		w := []float32{float32(r), float32(r)}
		if err := BroadcastFloat32(c, w, 0); err != nil || w[0] != 0 || w[1] != 0 {
			fail("BroadcastFloat32: %v %v", w, err)
		}
		if d, err := Agree(c, []uint64{7, 9}); d != nil || err != nil {
			fail("Agree (same): %v %v", d, err)
		}
		v := uint64(7)
		if r == 1 {
			v = 8
		}
		if d, err := Agree(c, []uint64{v}); err != nil || len(d) != 1 || d[0] != 1 {
			fail("Agree (rank 1 differs): %v %v", d, err)
		}
		if err := c.Barrier(); err != nil {
			fail("Barrier: %v", err)
		}
		if err := c.Close(); err != nil {
			fail("Close: %v", err)
		}
		fmt.Printf("rank %d ok\n", r)
	case "hang":
		// Rank 2 never joins: ranks 0 and 1 must give up after the
		// timeout with the one-line error.
		if r == 2 {
			time.Sleep(30 * time.Second)
			os.Exit(0)
		}
		start := time.Now()
		err := c.AllReduceSum([]float32{1})
		if err == nil || time.Since(start) > 10*time.Second {
			fail("AllReduceSum with a rank missing: %v after %s", err, time.Since(start))
		}
		if c.Barrier() != err {
			fail("a call after the timeout was made")
		}
		fmt.Printf("rank %d: %v\n", r, err)
		os.Exit(4)
	}
}

// TestMPI runs the collectives with three ranks under mpirun, then a job
// whose rank 2 never joins: the others stop after their timeout with a
// one-line error instead of waiting forever.
func TestMPI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mpirun")
	}
	run := func(mode string) (string, error, time.Duration) {
		cmd := disttest.Command(t, 3, []string{helperEnv + "=" + mode}, os.Args[0], "-test.run=^TestMPIHelper$", "-test.count=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		return out.String(), err, time.Since(start)
	}
	out, err, _ := run("collectives")
	if err != nil || strings.Count(out, " ok\n") != 3 {
		t.Fatalf("collectives: %v\n%s", err, out)
	}
	out, err, took := run("hang")
	if err == nil || strings.Contains(out, "FAIL") || took > 25*time.Second {
		t.Fatalf("hang: %v after %s\n%s", err, took, out)
	}
	if !strings.Contains(out, "MPI_Allreduce got no answer from the other ranks within 3s: a rank died or hangs") {
		t.Fatalf("hang: no timeout error\n%s", out)
	}
}

// TestLocal runs the collectives of NewLocal's in-process ranks, and a
// rank left alone times out.
func TestLocal(t *testing.T) {
	cs := NewLocal(3, 0)
	errs := make(chan error, 3)
	for _, c := range cs {
		go func() {
			r := c.Rank()
			f := []float32{float32(r), 1}
			d := []float64{1}
			b := []byte{byte(r)}
			switch err := c.AllReduceSum(f); {
			case err != nil || f[0] != 3 || f[1] != 3:
				errs <- fmt.Errorf("rank %d: AllReduceSum %v %v", r, f, err)
			case c.AllReduceSum64(d) != nil || d[0] != 3:
				errs <- fmt.Errorf("rank %d: AllReduceSum64 %v", r, d)
			case c.Broadcast(b, 1) != nil || b[0] != 1:
				errs <- fmt.Errorf("rank %d: Broadcast %v", r, b)
			case c.Barrier() != nil:
				errs <- fmt.Errorf("rank %d: Barrier", r)
			default:
				errs <- nil
			}
		}()
	}
	for range cs {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	alone := NewLocal(2, 50*time.Millisecond)[0]
	if err := alone.AllReduceSum([]float32{1}); err == nil || err.Error() != "dist: rank 0 of 2: all-reduce got no answer from the other ranks within 50ms: a rank died or hangs" {
		t.Errorf("alone: %v", err)
	}
}
