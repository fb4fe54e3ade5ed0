package dist

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <stdint.h>

// Open MPI's handles are pointers to global objects (mpi.h:
// OMPI_PREDEFINED_GLOBAL); the functions take them by value.
typedef void *handle;

typedef int (*init_thread_t)(int *, char ***, int, int *);
typedef int (*initialized_t)(int *);
typedef int (*comm_int_t)(handle, int *);
typedef int (*allreduce_t)(const void *, void *, int, handle, handle, handle);
typedef int (*bcast_t)(void *, int, handle, int, handle);
typedef int (*barrier_t)(handle);
typedef int (*finalize_t)(void);
typedef int (*set_errhandler_t)(handle, handle);
typedef int (*error_string_t)(int, char *, int *);


// MPI_THREAD_FUNNELED in every MPI implementation's mpi.h.
#define UHNO_MPI_THREAD_FUNNELED 1
// MPI_IN_PLACE in Open MPI's mpi.h.
#define UHNO_MPI_IN_PLACE ((void *)1)

static int uhno_mpi_init(void *f, void *initialized, int *provided) {
	int done = 0;
	((initialized_t)initialized)(&done);
	if (done) return -1;
	return ((init_thread_t)f)(NULL, NULL, UHNO_MPI_THREAD_FUNNELED, provided);
}
static int uhno_mpi_comm_int(void *f, void *comm, int *out) { return ((comm_int_t)f)(comm, out); }
static int uhno_mpi_allreduce(void *f, void *buf, int count, void *type, void *op, void *comm) {
	return ((allreduce_t)f)(UHNO_MPI_IN_PLACE, buf, count, type, op, comm);
}
static int uhno_mpi_bcast(void *f, void *buf, int count, void *type, int root, void *comm) {
	return ((bcast_t)f)(buf, count, type, root, comm);
}
static int uhno_mpi_barrier(void *f, void *comm) { return ((barrier_t)f)(comm); }
static int uhno_mpi_finalize(void *f) { return ((finalize_t)f)(); }
static int uhno_mpi_set_errhandler(void *f, void *comm, void *eh) { return ((set_errhandler_t)f)(comm, eh); }
static int uhno_mpi_error_string(void *f, int code, char *buf, int *len) { return ((error_string_t)f)(code, buf, len); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"uhno/internal/dlib"
)

// lib is the loaded libmpi: function pointers and Open MPI's handles.
type lib struct {
	path string

	initThread, initialized, commRank, commSize, allreduce, bcast, barrier, finalize, setErrhandler, errorString unsafe.Pointer
	commWorld, float, double, byteType, sum, errorsReturn                                                        unsafe.Pointer
}

// loaded is the process's libmpi and whether MPI was initialised: dlopen
// and MPI_Init are once per process (package documentation, "Global
// state").
var loaded struct {
	sync.Mutex
	lib  *lib
	used bool
}

// loadLib opens the first of names that loads and has every symbol uhno
// needs; the error names every attempt.
func loadLib(names []string) (*lib, error) {
	l := &lib{}
	fields := []struct {
		name string
		dst  *unsafe.Pointer
	}{
		{"MPI_Init_thread", &l.initThread}, {"MPI_Initialized", &l.initialized},
		{"MPI_Comm_rank", &l.commRank}, {"MPI_Comm_size", &l.commSize},
		{"MPI_Allreduce", &l.allreduce}, {"MPI_Bcast", &l.bcast}, {"MPI_Barrier", &l.barrier},
		{"MPI_Finalize", &l.finalize}, {"MPI_Comm_set_errhandler", &l.setErrhandler},
		{"MPI_Error_string", &l.errorString},
		{"ompi_mpi_comm_world", &l.commWorld}, {"ompi_mpi_float", &l.float},
		{"ompi_mpi_double", &l.double}, {"ompi_mpi_byte", &l.byteType},
		{"ompi_mpi_op_sum", &l.sum}, {"ompi_mpi_errors_return", &l.errorsReturn},
	}
	symbols := make([]string, len(fields))
	for i, f := range fields {
		symbols[i] = f.name
	}
	// RTLD_GLOBAL: Open MPI's components resolve libmpi's symbols.
	path, syms, tried := dlib.LoadGlobal(names, symbols)
	if syms != nil {
		l.path = path
		for i, f := range fields {
			*f.dst = syms[i]
		}
		return l, nil
	}
	for i, t := range tried { // a library without Open MPI's symbols
		if strings.Contains(t, " (lacks ") {
			tried[i] = strings.TrimSuffix(t, ")") + ": not Open MPI's ABI)"
		}
	}
	return nil, fmt.Errorf("%w: tried %s; install Open MPI (Debian: apt-get install openmpi-bin libopenmpi-dev) or set %s to its libmpi.so.40",
		errNoLibrary, strings.Join(tried, "; "), EnvLibrary)
}

// mpiComm is a Comm over MPI_COMM_WORLD. Every MPI call runs on the
// goroutine started by openMPI, locked to the OS thread that initialised
// MPI; callers wait for it at most timeout.
type mpiComm struct {
	lib        *lib
	rank, size int
	timeout    time.Duration
	calls      chan func()
	// broken is the error of the call that timed out: the MPI thread may
	// still be inside it, so no later call is made.
	broken error
	closed bool
}

// openMPI loads libmpi and initialises MPI on a thread of its own.
func openMPI(names []string, timeout time.Duration) (*mpiComm, error) {
	loaded.Lock()
	defer loaded.Unlock()
	if loaded.used {
		return nil, errors.New("MPI was already initialised in this process; a process is one rank of one job")
	}
	if loaded.lib == nil {
		l, err := loadLib(names)
		if err != nil {
			return nil, err
		}
		loaded.lib = l
	}
	loaded.used = true
	if _, set := os.LookupEnv("OMPI_MCA_opal_signal"); !set {
		// Keep the Go runtime's signal handlers (package documentation).
		os.Setenv("OMPI_MCA_opal_signal", "")
	}
	c := &mpiComm{lib: loaded.lib, timeout: timeout, calls: make(chan func())}
	ready := make(chan error, 1)
	go c.serve(ready)
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
	case <-time.After(timeout):
		return nil, fmt.Errorf("MPI_Init_thread did not return within %s (is the launcher's runtime reachable?)", timeout)
	}
	return c, nil
}

// serve initialises MPI and then runs every call on this OS thread.
func (c *mpiComm) serve(ready chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread belongs to MPI
	l := c.lib
	var provided C.int
	if rc := C.uhno_mpi_init(l.initThread, l.initialized, &provided); rc != 0 {
		if rc == -1 {
			ready <- errors.New("MPI was already initialised in this process")
		} else {
			ready <- fmt.Errorf("MPI_Init_thread failed: %s", c.errText(rc))
		}
		return
	}
	if provided < C.UHNO_MPI_THREAD_FUNNELED {
		ready <- fmt.Errorf("%s provides thread level %d, uhno needs MPI_THREAD_FUNNELED", l.path, int(provided))
		return
	}
	// Errors come back as codes, not as an abort of the whole job with
	// a multi-line report: uhno turns them into its one-line errors.
	C.uhno_mpi_set_errhandler(l.setErrhandler, l.commWorld, l.errorsReturn)
	var rank, size C.int
	if rc := C.uhno_mpi_comm_int(l.commRank, l.commWorld, &rank); rc != 0 {
		ready <- fmt.Errorf("MPI_Comm_rank: %s", c.errText(rc))
		return
	}
	if rc := C.uhno_mpi_comm_int(l.commSize, l.commWorld, &size); rc != 0 {
		ready <- fmt.Errorf("MPI_Comm_size: %s", c.errText(rc))
		return
	}
	c.rank, c.size = int(rank), int(size)
	ready <- nil
	for f := range c.calls {
		f()
	}
}

// errText is MPI_Error_string of code.
func (c *mpiComm) errText(code C.int) string {
	buf := make([]byte, 512) // MPI_MAX_ERROR_STRING is 256 in Open MPI
	var n C.int
	if C.uhno_mpi_error_string(c.lib.errorString, code, (*C.char)(unsafe.Pointer(&buf[0])), &n) != 0 || n <= 0 {
		return fmt.Sprintf("MPI error %d", int(code))
	}
	return strings.Join(strings.Fields(string(buf[:n])), " ")
}

// do runs call on the MPI thread and waits for it, at most timeout when
// limited. name names the call in errors.
func (c *mpiComm) do(name string, limited bool, call func() C.int) error {
	if c.broken != nil {
		return c.broken
	}
	if c.closed {
		return fmt.Errorf("dist: %s after Close", name)
	}
	done := make(chan C.int, 1)
	c.calls <- func() { done <- call() }
	var expire <-chan time.Time
	if limited {
		t := time.NewTimer(c.timeout)
		defer t.Stop()
		expire = t.C
	}
	select {
	case rc := <-done:
		if rc != 0 {
			c.broken = fmt.Errorf("dist: rank %d of %d: %s failed: %s (another rank probably died)", c.rank, c.size, name, c.errText(rc))
			return c.broken
		}
		return nil
	case <-expire:
		c.broken = fmt.Errorf("dist: rank %d of %d: %s got no answer from the other ranks within %s: a rank died or hangs (raise --dist-timeout if rank 0's checkpoints or probes take longer)",
			c.rank, c.size, name, c.timeout)
		return c.broken
	}
}

func (c *mpiComm) Rank() int { return c.rank }
func (c *mpiComm) Size() int { return c.size }

// maxCount keeps each MPI call's element count within an int.
const maxCount = 1 << 30

func (c *mpiComm) AllReduceSum(buf []float32) error {
	for lo := 0; lo < len(buf); lo += maxCount {
		part := buf[lo:min(lo+maxCount, len(buf))]
		p := unsafe.Pointer(&part[0])
		err := c.do("MPI_Allreduce", true, func() C.int {
			return C.uhno_mpi_allreduce(c.lib.allreduce, p, C.int(len(part)), c.lib.float, c.lib.sum, c.lib.commWorld)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *mpiComm) AllReduceSum64(buf []float64) error {
	for lo := 0; lo < len(buf); lo += maxCount {
		part := buf[lo:min(lo+maxCount, len(buf))]
		p := unsafe.Pointer(&part[0])
		err := c.do("MPI_Allreduce", true, func() C.int {
			return C.uhno_mpi_allreduce(c.lib.allreduce, p, C.int(len(part)), c.lib.double, c.lib.sum, c.lib.commWorld)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *mpiComm) Broadcast(buf []byte, root int) error {
	if root < 0 || root >= c.size {
		return fmt.Errorf("dist: broadcast from rank %d in a job of %d", root, c.size)
	}
	for lo := 0; lo < len(buf); lo += maxCount {
		part := buf[lo:min(lo+maxCount, len(buf))]
		p := unsafe.Pointer(&part[0])
		err := c.do("MPI_Bcast", true, func() C.int {
			return C.uhno_mpi_bcast(c.lib.bcast, p, C.int(len(part)), c.lib.byteType, C.int(root), c.lib.commWorld)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *mpiComm) Barrier() error {
	return c.do("MPI_Barrier", false, func() C.int { return C.uhno_mpi_barrier(c.lib.barrier, c.lib.commWorld) })
}

// Close calls MPI_Finalize (within the timeout) unless a call failed.
func (c *mpiComm) Close() error {
	if c.closed || c.broken != nil {
		return c.broken
	}
	err := c.do("MPI_Finalize", true, func() C.int { return C.uhno_mpi_finalize(c.lib.finalize) })
	c.closed = true
	if c.broken == nil {
		close(c.calls)
	}
	return err
}
